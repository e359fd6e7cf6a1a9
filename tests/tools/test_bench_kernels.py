"""bench/kernels.py, the per-kernel profile of a bench model: a smoke run on
the smallest SqueezeNet, its JSON rows (with the kernels' times inside the
profiled model), and a bad model name."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunBench = Callable[..., CompletedProcess[str]]
"""The run_bench fixture (tests/tools/conftest.py)."""


def test_every_distinct_kernel_is_timed_and_ranked(tmp_path: Path, run_bench: RunBench) -> None:
    out = tmp_path / "kernels.json"
    done = run_bench(
        "kernels.py", "squeezenet", "--small", "--repeat", "1", "--in-model", "--json", out
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())
    assert len(rows) > 5
    times = [row["ms_per_run"] for row in rows]
    assert times == sorted(times, reverse=True)
    assert all(row["ms_per_call"] > 0 and row["calls"] >= 1 for row in rows)
    assert abs(sum(row["share"] for row in rows) - 1.0) < 1e-6
    kinds = {row["kind"] for row in rows}
    assert any("micro_kernel" in kind for kind in kinds), kinds
    assert "sum of kernels:" in done.stdout
    # every distinct kernel is found among the profiled model's calls
    assert all(row["in_model_ms_per_call"] is not None for row in rows)
    assert sum(row["in_model_ms_per_call"] > 0 for row in rows) > len(rows) // 2
    assert "in the model:" in done.stdout


def test_an_unknown_model_is_a_usage_error(run_bench: RunBench) -> None:
    done = run_bench("kernels.py", "no_such_model")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr
