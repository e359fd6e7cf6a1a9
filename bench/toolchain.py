"""Model latency with each toolchain xtc can link with: the system's cc and
libgomp, and zig cc with each OpenMP runtime that pip installed here (GCC's
libgomp from the xgboost wheel; Intel's libiomp5 when intel-openmp is
installed).

    XTC_NUM_THREADS=2 python bench/toolchain.py [--model resnet50] [--rounds 7]
                                                [--repeat 3] [--number 2]

The model (tools/make_model's builders, random weights) is compiled once per
variant; the code is the same, what differs is the linker and the runtime
that runs the parallel loops. Each variant is timed in a process of its own
(one OpenMP runtime per process), in rounds that alternate the variants, so
that a neighbour's load on a shared machine falls on all of them alike.
The table gives, per variant, the median over the rounds of each round's
median and of each round's fastest run (ms; on a loaded machine the
fastest runs are the ones no neighbour slowed), the fastest run of all, and
the ratio of the medians to the first variant's.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import xtc
from xtc.runtime import toolchain
from xtc.tools.make_model import MODELS


@dataclass(frozen=True)
class Variant:
    label: str
    pip_openmp: str | None
    """The pip distribution whose OpenMP runtime is used; None: the system's tools."""


def variants() -> list[Variant]:
    """The system's tools where present, then zig cc with each pip runtime."""
    found: list[Variant] = []
    system_libgomp = ctypes.util.find_library("gomp")
    if shutil.which("cc") and system_libgomp:
        found.append(Variant(f"cc + {system_libgomp}", None))
    if toolchain._zig_binary() is not None:
        sonames: set[str] = set()
        for runtime in toolchain.pip_openmp_runtimes():
            if runtime.soname not in sonames:  # xgboost and xgboost-cpu bundle the same one
                sonames.add(runtime.soname)
                distribution = runtime.origin.split()[1]  # "pip: <distribution> <version>"
                found.append(Variant(f"zig cc + {runtime.soname}", distribution))
    return found


@contextlib.contextmanager
def toolchain_of(variant: Variant) -> Iterator[None]:
    """XTC_TOOLCHAIN and the pip runtimes as `variant` needs them."""
    saved_runtimes = toolchain.PIP_OPENMP_RUNTIMES
    saved_choice = os.environ.pop(toolchain.TOOLCHAIN_VARIABLE, None)
    if variant.pip_openmp is not None:
        os.environ[toolchain.TOOLCHAIN_VARIABLE] = "pip"
        toolchain.PIP_OPENMP_RUNTIMES = tuple(
            r for r in saved_runtimes if r[0] == variant.pip_openmp
        )
    try:
        yield
    finally:
        toolchain.PIP_OPENMP_RUNTIMES = saved_runtimes
        os.environ.pop(toolchain.TOOLCHAIN_VARIABLE, None)
        if saved_choice is not None:
            os.environ[toolchain.TOOLCHAIN_VARIABLE] = saved_choice


def one_round_ms(artifact: Path, repeat: int, number: int) -> tuple[float, float]:
    """`xtc run --print-time` in a new process: its median and its fastest
    block (ms per run)."""
    command = [sys.executable, "-m", "xtc.tools.cli", "run", str(artifact), "--print-time"]
    command += ["--repeat", str(repeat), "--number", str(number)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    values = lines[lines.index("Execution time summary:") + 2].split()
    return float(values[1]), float(values[3])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="resnet50", choices=sorted(MODELS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--number", type=int, default=2)
    args = parser.parse_args(argv)
    chosen = variants()
    if not chosen:
        print("no toolchain to compare: neither cc with libgomp nor zig cc", file=sys.stderr)
        return 1
    model = MODELS[args.model]()
    with tempfile.TemporaryDirectory(prefix="xtc-bench-toolchain-") as folder:
        artifacts: list[Path] = []
        for i, variant in enumerate(chosen):
            with toolchain_of(variant):
                compiled = xtc.compile(model)
            print(f"{variant.label}: {compiled.manifest['toolchain']}", file=sys.stderr)
            artifacts.append(compiled.export(Path(folder) / f"variant{i}.tar"))
        rounds: list[list[tuple[float, float]]] = [[] for _ in chosen]
        for n in range(args.rounds):
            for times, artifact in zip(rounds, artifacts, strict=True):
                times.append(one_round_ms(artifact, args.repeat, args.number))
            row = " ".join(f"{times[-1][0]:8.2f}" for times in rounds)
            print(f"round {n + 1} medians: {row} ms", file=sys.stderr)
    threads = os.environ.get("XTC_NUM_THREADS", "all cores")
    print(f"{args.model}, {threads} threads, {args.rounds} rounds of {args.repeat}x{args.number}")
    heads = ("median (ms)", "fastest median", "best (ms)", "ratio")
    print(f"{'variant':<36} " + " ".join(f"{h:>14}" for h in heads))
    base = statistics.median(t[0] for t in rounds[0])
    for variant, times in zip(chosen, rounds, strict=True):
        median = statistics.median(t[0] for t in times)
        fastest = statistics.median(t[1] for t in times)
        values = (median, fastest, min(t[1] for t in times), median / base)
        print(f"{variant.label:<36} " + " ".join(f"{v:>14.3f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
