"""The ONNX coverage table (docs/reference/onnx-coverage.md): every
operator ONNX defines, whether xtc has a converter for it, how many of its
node cases pass on the interpreter path, and every case that does not pass
with its reason.

It is rendered by `python -m xtc.tools.gen_docs` from the converters and
from the conformance results committed beside it (docs/reference/
conformance.json, written by `xtc conformance --json`); the conformance
test runs the cases again and fails when that file no longer says which
cases pass."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import onnx.defs

RESULTS_FILE = "conformance.json"
"""The conformance results in docs/reference/ the table is rendered from."""
REFRESH = "xtc conformance --json docs/reference/conformance.json && python -m xtc.tools.gen_docs"
DOMAINS = {"": "ai.onnx", "ai.onnx.ml": "ai.onnx.ml", "ai.onnx.preview.training": "training"}
DOMAIN_OF_LABEL = {label: domain for domain, label in DOMAINS.items()}
REASON_WIDTH = 160


def onnx_ops() -> list[tuple[str, str]]:
    """(domain label, op type) of every operator the installed onnx defines
    in DOMAINS, sorted."""
    ops = {
        (DOMAINS[s.domain], s.name)
        for s in onnx.defs.get_all_schemas()
        if s.domain in DOMAINS and not s.deprecated
    }
    return sorted(ops)


def reason(detail: str) -> str:
    """A case's failure in one table cell: its first line, shapes and names
    kept, cut to REASON_WIDTH characters."""
    text = " ".join(detail.split()) or "(no message)"
    if len(text) > REASON_WIDTH:
        text = text[: REASON_WIDTH - 1] + "…"
    return text.replace("|", "\\|")


def _pattern(text: str) -> str:
    """A reason with its names and numbers blanked: failures of one cause
    read alike."""
    return re.sub(r"'[^']*'|\d+", "…", text)


def coverage_page(results: Sequence[Mapping[str, Any]], converters: Iterable[str]) -> str:
    """The page: a summary, one row per ONNX operator, one per case not passed."""
    cases = [r for r in results if r.get("path", "interp") == "interp"]
    supported = set(converters)
    by_op: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for case in cases:
        by_op[case["op"]].append(case)
    passed = sum(c["status"] == "passed" for c in cases)
    lines = [
        "# ONNX coverage",
        "",
        f"{passed} of ONNX's {len(cases)} node cases pass on the interpreter path, every "
        "input of a case fed at run time (inputs that determine shapes are specialized "
        "on their values). Native code passes what the interpreter does but for a few "
        "(`xtc conformance --compiled`). Regenerate after a change in coverage:",
        "",
        f"    {REFRESH}",
        "",
        "## Operators",
        "",
        "| operator | domain | converter | node cases passed | why the others do not pass |",
        "|---|---|---|---|---|",
    ]
    for domain, op in onnx_ops():
        # A converter is known by its op's full domain (ai.onnx.preview.training.Adam).
        label = op if domain == "ai.onnx" else f"{DOMAIN_OF_LABEL[domain]}.{op}"
        mine = by_op.get(op, [])
        ok = sum(c["status"] == "passed" for c in mine)
        failures = Counter(_pattern(reason(c["detail"])) for c in mine if c["status"] != "passed")
        why = "; ".join(
            f"{pattern} ({n})" if n > 1 else pattern for pattern, n in failures.most_common(2)
        )
        if not mine and op not in supported:
            why = "no converter; no node case"
        has = "yes" if op in supported or label in supported else "no"
        lines.append(f"| {op} | {domain} | {has} | {ok}/{len(mine)} | {why} |")
    lines += [
        "",
        "## Cases not passed",
        "",
        "| case | operator | status | reason |",
        "|---|---|---|---|",
    ]
    for case in sorted(cases, key=lambda c: (c["op"], c["name"])):
        if case["status"] != "passed":
            lines.append(
                f"| {case['name']} | {case['op']} | {case['status']} | {reason(case['detail'])} |"
            )
    return "\n".join(lines) + "\n"


def not_passed(results: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Case name -> status of the interpreter-path cases that do not pass."""
    return {
        r["name"]: r["status"]
        for r in results
        if r.get("path", "interp") == "interp" and r["status"] != "passed"
    }
