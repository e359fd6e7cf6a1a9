"""Where a model's run time goes, kernel by kernel, timed inside the model
(`xtc compile --profile`, then `xtc run --profile`; tvmc run --profile).

A model compiled with `profile` has a model function that reads the cycle
counter around each of its kernel calls and around the whole run
(passes/tir_profile_calls.py), adding the cycles to a table its library
exports (the manifest's "profile": the table's symbol and the kernels of
its rows). `profile_runs` zeroes the table, runs the model, and turns each
kernel's cycles into its share of the timed runs' wall time: the rows sum
to the run time, the model function's own work (its copies, the arena)
and the call from Python being the row `(model function)`. Kernels run as
they do in the model: after their producers, with the caches as those
leave them (bench/kernels.py times them alone).
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MODEL_FUNCTION_ROW = "(model function)"
"""The row of the run's time outside the kernels."""


class NotProfiledError(ValueError):
    """The model was compiled without `profile`."""


@dataclass(frozen=True)
class KernelTime:
    """One kernel's time in a run of the model: its calls per run, their
    milliseconds per run, and that share of the run."""

    kernel: str
    calls: float
    ms: float
    share: float

    @property
    def us_per_call(self) -> float:
        return self.ms * 1000.0 / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class ProfileResult:
    """The kernels' times over `runs` runs of `run_ms` each (the mean),
    largest first; the model function's own time is the last row."""

    runs: int
    run_ms: float
    rows: tuple[KernelTime, ...]

    def table(self) -> str:
        """The table `xtc run --profile` prints."""
        width = max([len("kernel"), *(len(r.kernel) for r in self.rows)])
        heads = ["calls", "ms/run", "us/call", "percent"]
        lines = [
            f"Profile of {self.runs} runs, {self.run_ms:.4f} ms per run:",
            f"{'kernel':<{width}} " + " ".join(f"{h:>10}" for h in heads),
        ]
        for row in self.rows:
            values = [f"{row.calls:g}", f"{row.ms:.4f}", f"{row.us_per_call:.1f}"]
            values.append(f"{100.0 * row.share:.1f}")
            lines.append(f"{row.kernel:<{width}} " + " ".join(f"{v:>10}" for v in values))
        return "\n".join(lines) + "\n"


def profile_runs(
    library: ctypes.CDLL, manifest: Mapping[str, Any], run: Callable[[], None], runs: int
) -> ProfileResult:
    """Times `runs` calls of `run` (the model on its buffers, warmed up by
    the caller) and reads the library's profile table over them."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    kernels, table = _table(library, manifest)
    ctypes.memset(table, 0, ctypes.sizeof(table))
    started = time.perf_counter()
    for _ in range(runs):
        run()
    run_ms = (time.perf_counter() - started) * 1000.0 / runs
    counts = list(table)
    run_cycles = counts[0]
    rows = []
    for row, kernel in enumerate(kernels, start=1):
        cycles, calls = counts[2 * row], counts[2 * row + 1]
        share = cycles / run_cycles if run_cycles > 0 else 0.0
        rows.append(KernelTime(kernel, calls / runs, share * run_ms, share))
    rows.sort(key=lambda r: r.ms, reverse=True)
    own = max(0.0, 1.0 - sum(r.share for r in rows))
    rows.append(KernelTime(MODEL_FUNCTION_ROW, 1.0, own * run_ms, own))
    return ProfileResult(runs, run_ms, tuple(rows))


def _table(
    library: ctypes.CDLL, manifest: Mapping[str, Any]
) -> tuple[list[str], ctypes.Array[ctypes.c_int64]]:
    """The kernels of the profile table's rows 1..K, and the table itself
    (K + 1 rows of cycles and count) in the library."""
    entry = manifest.get("profile")
    if not isinstance(entry, Mapping):
        raise NotProfiledError(
            "the model was compiled without profiling: compile it with `xtc compile --profile` "
            "(xtc.compile(..., profile=True))"
        )
    kernels = [str(k) for k in entry.get("kernels", [])]
    cells = 2 * (len(kernels) + 1)
    return kernels, (ctypes.c_int64 * cells).in_dll(library, str(entry["table"]))
