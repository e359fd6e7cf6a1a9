"""Compile time and memory of the bench models.

    python bench/compile.py [--models resnet18,resnet50,...] (bench/models.py's MODEL_NAMES)
                            [--repeat N] [--small] [--json out.json]

Each model (bench/models.py's builders, random weights) is saved as ONNX and
compiled `--repeat` times by `xtc compile --timing` in a fresh process, so
the process's peak resident memory is the compile's. Each repeat compiles
twice: cold, into an empty compile cache (XDG_CACHE_HOME a new folder), then
warm, the same compile again with that cache (a hit). The table gives, per
model, the median wall time of the cold compile (xtc's own report, from
reading the model to the artifact), the fastest, the median warm compile,
the stages that take longest (from the --timing report of the median cold
run), the peak memory (of the cold compiles; the warm ones' in the JSON)
and the model's weights, and the ratio of the two (DESIGN's bar: peak <=
2 x weights + 400 MB).

The bench times xtc, not Python compiling xtc's sources: it byte-compiles
xtc's package once (`compileall`) and runs its compiles without
PYTHONDONTWRITEBYTECODE, as a Python that caches bytecode (the default)
runs them. With that variable set and no cached bytecode, as on this
project's hosts, every compile process and its workers' fork server
compile xtc's sources again: ResNet-50's warm compile took 1.0-1.1 s that
way against 0.7-0.8 s with cached bytecode, its cold compile 9-10 s
against 7-8 s (Xeon, 2 cores).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).parent))

from models import MODEL_NAMES, build_model  # noqa: E402 - bench/models.py, beside this script

REPORT_ROW = re.compile(r"^ +(\d+\.\d{4}) \( *\d+\.\d%\)  (\S.*?)(?: \(x\d+\))?$")
PEAK = "XTC_BENCH_PEAK_KB="
# VmHWM, not getrusage's ru_maxrss: a child's maxrss starts at its parent's
# size at the fork (exec does not reset it); the high-water mark of its own
# address space does.
_CHILD = f"""
import sys
from xtc.tools.cli import main
try:
    main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
else:
    code = 0
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print("{PEAK}" + peak, file=sys.stderr)
sys.exit(code)
"""


@dataclass
class Row:
    model: str
    seconds: list[float] = field(default_factory=lambda: [])
    peak_mb: list[float] = field(default_factory=lambda: [])
    warm_seconds: list[float] = field(default_factory=lambda: [])
    warm_peak_mb: list[float] = field(default_factory=lambda: [])
    weights_mb: float = 0.0
    stages: dict[str, float] = field(default_factory=lambda: {})
    error: str = ""


def compile_once(
    model_path: Path, output: Path, cache: Path
) -> tuple[float, float, dict[str, float]]:
    """One `xtc compile --timing` with the compile cache in `cache`:
    (seconds, peak MB, top-level stage seconds)."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, "compile", str(model_path), "--timing", "-o", str(output)],
        capture_output=True,
        text=True,
        check=False,
        env=_child_environment(cache),
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip().splitlines()[-1] if result.stderr else "failed")
    stages: dict[str, float] = {}
    total = 0.0
    peak_kb = 0
    for line in result.stderr.splitlines():
        if line.startswith(PEAK):
            peak_kb = int(line[len(PEAK) :])
        match = REPORT_ROW.match(line)
        if match is None:
            continue
        seconds, name = float(match.group(1)), match.group(2)
        if name == "Total":
            total = seconds
        else:  # a top-level scope (nested ones are indented, and do not match)
            stages[name] = stages.get(name, 0.0) + seconds
    return total, peak_kb / 1024, stages


def _child_environment(cache: Path) -> dict[str, str]:
    """This process's environment with the compile cache in `cache`, zig's
    cache kept (_zig_cache) and bytecode cached (the module doc)."""
    environment = dict(os.environ, XDG_CACHE_HOME=str(cache))
    environment["ZIG_GLOBAL_CACHE_DIR"] = str(_zig_cache())
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def byte_compile_xtc() -> None:
    """Writes the bytecode of xtc's modules that have none (the module
    doc); quiet, and a folder it cannot write is left as it is."""
    import xtc

    hidden = re.compile(r"[/\\]\.")  # an editable install's .venv and .git
    compileall.compile_dir(Path(xtc.__file__).parent, quiet=2, rx=hidden)


def _zig_cache() -> Path:
    """zig cc's own cache (compiler-rt, built once), kept out of the cold
    runs' empty XDG_CACHE_HOME: the bench times xtc, not zig's first build."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("ZIG_GLOBAL_CACHE_DIR") or Path(base) / "zig")


def weights_mb(model: onnx.ModelProto) -> float:
    return sum(len(t.raw_data) for t in model.graph.initializer) / 2**20


def bench(names: Sequence[str], repeat: int, small: bool) -> list[Row]:
    rows: list[Row] = []
    byte_compile_xtc()
    with tempfile.TemporaryDirectory(prefix="xtc-bench-compile-") as scratch:
        for name in names:
            model = build_model(name, small, bert_layers=2)
            path = Path(scratch) / f"{name}.onnx"
            onnx.save(model, path)
            row = Row(name, weights_mb=weights_mb(model))
            runs: list[tuple[float, dict[str, float]]] = []
            try:
                for i in range(repeat):
                    cache = Path(scratch) / f"cache-{name}-{i}"
                    output = Path(scratch) / f"{name}.tar"
                    seconds, peak, stages = compile_once(path, output, cache)
                    row.seconds.append(seconds)
                    row.peak_mb.append(peak)
                    runs.append((seconds, stages))
                    seconds, peak, _ = compile_once(path, output, cache)
                    row.warm_seconds.append(seconds)
                    row.warm_peak_mb.append(peak)
                    shutil.rmtree(cache)
            except RuntimeError as e:
                row.error = str(e)
            if runs:
                runs.sort(key=lambda r: r[0])
                row.stages = runs[len(runs) // 2][1]
            rows.append(row)
            print(format_row(row), flush=True)
    return rows


def format_row(row: Row) -> str:
    if row.error:
        return f"{row.model:<14} error: {row.error}"
    top = sorted(row.stages.items(), key=lambda kv: -kv[1])[:4]
    peak = max(row.peak_mb)
    bar = 2 * row.weights_mb + 400
    return (
        f"{row.model:<14} {statistics.median(row.seconds):7.2f} {min(row.seconds):7.2f} "
        f"{statistics.median(row.warm_seconds):7.2f} "
        f"{peak:8.0f} {row.weights_mb:8.1f} {peak / max(bar, 1e-9):6.2f}   "
        + ", ".join(f"{name} {seconds:.2f}" for name, seconds in top)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODEL_NAMES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--small",
        action="store_true",
        help="the small models of bench/models.py --small (a smoke test)",
    )
    parser.add_argument("--json", help="write the rows as JSON")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODEL_NAMES]
    if unknown or args.repeat < 1:
        parser.error(f"unknown model {', '.join(unknown)}" if unknown else "--repeat >= 1")
    print(
        f"{'model':<14} {'median s':>7} {'best s':>7} {'warm s':>7} {'peak MB':>8} {'weights':>8} "
        f"{'/ bar':>6}   longest stages (s, median run)"
    )
    rows = bench(names, args.repeat, args.small)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if any(r.error for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
