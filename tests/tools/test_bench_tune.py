"""bench/tune.py, tuned against untuned models and onnxruntime: a smoke run
on a tiny model (the numbers are the bench's business, not a test's), and
its helpers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from subprocess import CompletedProcess
from types import ModuleType, SimpleNamespace

from xtc.driver.records import ErrorKind, MeasureResult
from xtc.tune.measure import MeasureInput, Runner

RunBench = Callable[..., CompletedProcess[str]]
"""The run_bench fixture (tests/tools/conftest.py)."""

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_model_is_tuned_compiled_and_timed(tmp_path: Path, run_bench: RunBench) -> None:
    output = tmp_path / "result.json"
    result = run_bench(
        "tune.py",
        "--models",
        "resnet18",
        "--small",
        "--time-budget",
        "5m",
        "--max-trials",
        "6",
        "--tasks",
        "2",
        "--records-dir",
        str(tmp_path),
        "--threads",
        "1",
        "--repeat",
        "1",
        "--number",
        "2",
        "--kernels-in-model",
        "--json",
        str(output),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = json.loads(output.read_text())["models"]
    assert row["match"] == "ok" and row["trials"] > 0 and row["tuned_kernels"] > 0
    assert row["untuned_ms"] > 0 and row["tuned_ms"] > 0 and row["ort_ms"] > 0
    # each kernel's time in the profiled models, the tuned ones marked
    kernels = row["kernels"]
    assert sum(k["tuned"] for k in kernels) == row["tuned_kernels"]
    assert all(k["untuned_ms"] >= 0 and k["tuned_ms"] >= 0 for k in kernels)
    assert "(model function)" in {k["kernel"] for k in kernels}
    assert "resnet18: each kernel in the model" in result.stdout
    records = [json.loads(line) for line in (tmp_path / "resnet18.jsonl").open()]
    assert 0 < len({r["key"] for r in records}) <= 2  # --tasks 2: two kernels tuned
    assert "resnet18" in result.stdout


def test_curves_are_timed_again_into_one_table(tmp_path: Path, run_bench: RunBench) -> None:
    output = tmp_path / "curves.json"
    result = run_bench(
        "tune.py",
        *("--curves", "--kernels", "1", "--trials", "4", "--seeds", "1"),
        *("--retime-rounds", "1", "--threads", "1", "--json", str(output)),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    curves = json.loads(output.read_text())["curves"]
    (table,) = curves["retimed_gflops"].values()
    assert table and table == sorted(table, reverse=True)
    for curve in curves["curves"]:
        assert len(curve["retimed"]) == len(curve["gflops"]) == 4
        assert curve["retimed"][-1] in table
    assert curves["retimed"]["pairs"] == 1
    assert "timed again" in result.stdout


def bench_tune() -> ModuleType:
    """bench/tune.py as a module."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import tune  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return tune


def test_trials_to_reach() -> None:
    trials_to_reach = bench_tune().trials_to_reach
    assert trials_to_reach([1.0, 2.0, 2.0, 5.0], 2.0) == 2
    assert trials_to_reach([1.0, 2.0], 3.0) is None


class ScriptedRunner(Runner):
    """Answers each config's `name` with the next of its scripted costs
    (seconds; None: the candidate failed), and keeps the order asked."""

    def __init__(self, costs: dict[str, list[float | None]]) -> None:
        self.costs = {name: list(values) for name, values in costs.items()}
        self.asked: list[str] = []

    def measure(self, inputs: Sequence[MeasureInput]) -> list[MeasureResult]:
        results = []
        for item in inputs:
            name = str(item.config["name"])
            self.asked.append(name)
            cost = self.costs[name].pop(0)
            results.append(
                MeasureResult(costs=(cost,))
                if cost is not None
                else MeasureResult(error=ErrorKind.RUN, message="scripted")
            )
        return results


def test_retime_takes_each_schedules_median_over_shuffled_rounds() -> None:
    tune = bench_tune()
    task = SimpleNamespace(flops=2e9)
    configs = {("a",): {"name": "a"}, ("b",): {"name": "b"}, ("c",): {"name": "c"}}
    runner = ScriptedRunner({"a": [1.0, 2.0, 4.0], "b": [1.0, None, 1.0], "c": [None] * 3})
    table = tune.retime(task, configs, runner, rounds=3, seed=0)
    assert table == {("a",): 1.0, ("b",): 2.0}  # GFLOP/s: 2e9 flops / 2 s, 1 s
    assert sorted(runner.asked) == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    rounds = [runner.asked[i : i + 3] for i in range(0, 9, 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)


def test_near_the_top_picks_the_schedules_to_time_again() -> None:
    tune = bench_tune()
    one = tune.Tried(
        configs={("a",): {"n": 1}, ("b",): {"n": 2}, ("c",): {"n": 3}},
        gflops={("a",): [100.0, 80.0], ("b",): [50.0, 60.0, 40.0], ("c",): [91.0]},
    )
    other = tune.Tried(configs={("d",): {"n": 4}}, gflops={("d",): [89.0]})
    near, rest = tune.near_the_top([one, other], window=0.1)
    assert near == {("a",): {"n": 1}, ("c",): {"n": 3}}
    assert rest == {("b",): 50.0, ("d",): 89.0}


def test_best_so_far_reads_the_table_and_skips_failures() -> None:
    tune = bench_tune()
    table = {("a",): 3.0, ("b",): 5.0}
    curve = tune.best_so_far([("a",), None, ("gone",), ("b",), ("a",)], table)
    assert curve == [3.0, 3.0, 3.0, 5.0, 5.0]


def test_compare_curves_counts_the_trials_xgb_needs() -> None:
    tune = bench_tune()
    task = SimpleNamespace(name="k")
    curves = [
        tune.Curve("k", "random", 0, retimed=[1.0, 2.0, 4.0, 4.0]),
        tune.Curve("k", "xgb", 0, retimed=[3.0, 4.0, 4.0, 4.0]),
        tune.Curve("k", "random", 1, retimed=[1.0, 1.0, 1.0, 9.0]),
        tune.Curve("k", "xgb", 1, retimed=[1.0, 2.0, 2.0, 2.0]),
    ]
    result = tune.compare_curves(curves, [task], 2, lambda c: c.retimed, reach=0.0)
    assert result["pairs"] == 2 and result["xgb_reached"] == 1
    assert result["xgb_fraction_of_random_trials"] == (2 / 4 + 2.0) / 2
