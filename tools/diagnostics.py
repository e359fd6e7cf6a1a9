"""Diagnostics and MLIR's `--verify-diagnostics` annotations.

A `Diagnostic` prints as `file:line:col: severity: message`. An annotation in
a comment, `// expected-error {{text}}`, says that a diagnostic of that
severity whose message contains `text` is produced on a line: its own, or the
one that `@+N` / `@-N` name, `@above` (the last line before it that holds no
annotation), `@below` (the next such line) or `@unknown` (no location).
`expected-error-re {{a {{[0-9]+}} b}}` matches the `{{...}}` parts as regular
expressions. `check_diagnostics` pairs the diagnostics produced with the
annotations, as MLIR's SourceMgrDiagnosticVerifierHandler does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

Severity = Literal["error", "warning", "note", "remark"]


@dataclass(frozen=True)
class Diagnostic:
    """One message about the input; `line` is None where no place is known."""

    file: str
    line: int | None
    col: int | None
    message: str
    severity: Severity = "error"
    context: str = ""  # source lines printed under the message

    def location(self) -> str:
        if self.line is None:
            return self.file
        if self.col is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.col}"

    def render(self) -> str:
        head = f"{self.location()}: {self.severity}: {self.message}"
        return f"{head}\n{self.context}" if self.context else head


@dataclass(frozen=True)
class Expectation:
    """An `expected-<severity>` annotation written at `at_line:at_col`: a
    diagnostic of `severity` on `line` (None: at no location) whose message
    `pattern` finds."""

    severity: Severity
    line: int | None
    text: str
    pattern: re.Pattern[str]
    at_line: int
    at_col: int

    def matches(self, diagnostic: Diagnostic) -> bool:
        return (
            diagnostic.severity == self.severity
            and diagnostic.line == self.line
            and self.pattern.search(diagnostic.message) is not None
        )


# The keyword, when a `@` or `{` follows it: prose that mentions
# "expected-error annotations" is not an annotation.
_KEYWORD = re.compile(r"expected-(?P<severity>error|warning|note|remark)(?P<re>-re)?(?=\s*[@{])")
_REST = re.compile(r"\s*(?:@(?P<where>[+-]\d+|above|below|unknown))?\s*\{\{(?P<text>.*)\}\}\s*$")


def parse_expectations(
    text: str, file: str, first_line: int = 1
) -> tuple[list[Expectation], list[Diagnostic]]:
    """The annotations in the comments of `text`, whose first line is line
    `first_line` of `file`, and a diagnostic for each malformed one."""
    lines = text.split("\n")
    last_line = first_line + len(lines) - 1
    expectations: list[Expectation] = []
    problems: list[Diagnostic] = []
    previous_plain_line: int | None = None
    waiting_for_next_line: list[Expectation] = []
    for number, line in enumerate(lines, start=first_line):
        comment = line.find("//")
        keyword = _KEYWORD.search(line, comment) if comment >= 0 else None
        if keyword is None:
            expectations.extend(_placed(e, number) for e in waiting_for_next_line)
            waiting_for_next_line.clear()
            previous_plain_line = number
            continue
        col = keyword.start() + 1
        try:
            expectation, where = _parse_annotation(line, keyword, number)
            target = _target_line(where, number, previous_plain_line)
        except ValueError as e:
            problems.append(Diagnostic(file, number, col, str(e)))
            continue
        if where == "below":
            waiting_for_next_line.append(expectation)
        elif target is not None and not first_line <= target <= last_line:
            problems.append(
                Diagnostic(
                    file,
                    number,
                    col,
                    f"{keyword.group(0)}@{where} points at line {target}, "
                    f"outside lines {first_line}-{last_line} of its input",
                )
            )
        else:
            expectations.append(_placed(expectation, target))
    problems.extend(
        Diagnostic(file, e.at_line, e.at_col, f"expected-{e.severity}@below has no line below it")
        for e in waiting_for_next_line
    )
    return expectations, problems


def _parse_annotation(line: str, keyword: re.Match[str], number: int) -> tuple[Expectation, str]:
    rest = _REST.match(line, keyword.end())
    if rest is None:
        raise ValueError(
            f"malformed {keyword.group(0)}: write {keyword.group(0)}[@+N|@-N|@above|@below"
            "|@unknown] {{message}}"
        )
    text = rest.group("text")
    pattern = _mixed_pattern(text) if keyword.group("re") else re.compile(re.escape(text))
    severity = cast(Severity, keyword.group("severity"))
    expectation = Expectation(severity, None, text, pattern, number, rest.start("text") + 1)
    return expectation, rest.group("where") or ""


def _target_line(where: str, number: int, previous_plain_line: int | None) -> int | None:
    """The line an annotation written on line `number` expects its
    diagnostic on; None for `@unknown` (and for `@below`, placed later)."""
    if where in ("unknown", "below"):
        return None
    if where == "above":
        if previous_plain_line is None:
            raise ValueError("@above has no line above it")
        return previous_plain_line
    return number + int(where or "0")


def _placed(expectation: Expectation, line: int | None) -> Expectation:
    return Expectation(
        expectation.severity,
        line,
        expectation.text,
        expectation.pattern,
        expectation.at_line,
        expectation.at_col,
    )


def _mixed_pattern(text: str) -> re.Pattern[str]:
    """`-re` text: literal, except the regular expressions inside `{{...}}`."""
    parts: list[str] = []
    rest = text
    while (start := rest.find("{{")) >= 0:
        end = rest.find("}}", start + 2)
        if end < 0:
            raise ValueError(f"regex '{{{{' with no '}}}}' in {{{{{text}}}}}")
        parts += [re.escape(rest[:start]), f"(?:{rest[start + 2 : end]})"]
        rest = rest[end + 2 :]
    parts.append(re.escape(rest))
    try:
        return re.compile("".join(parts))
    except re.error as e:
        raise ValueError(f"bad regex in {{{{{text}}}}}: {e}") from e


def check_diagnostics(
    expectations: Sequence[Expectation], produced: Sequence[Diagnostic], file: str
) -> list[Diagnostic]:
    """The failures, in line order: each diagnostic that no annotation
    expects, and each annotation that no diagnostic meets."""
    unmet = list(expectations)
    failures: list[Diagnostic] = []
    for diagnostic in produced:
        met = next((i for i, e in enumerate(unmet) if e.matches(diagnostic)), None)
        if met is None:
            message = f"unexpected {diagnostic.severity}: {diagnostic.message}"
            failures.append(
                Diagnostic(
                    diagnostic.file,
                    diagnostic.line,
                    diagnostic.col,
                    message,
                    context=diagnostic.context,
                )
            )
        else:
            del unmet[met]
    failures += [
        Diagnostic(file, e.at_line, e.at_col, f'expected {e.severity} "{e.text}" was not produced')
        for e in unmet
    ]
    return sorted(failures, key=lambda d: (d.line or 0, d.col or 0))
