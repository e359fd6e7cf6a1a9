"""Tuning a model (tune/tuning.py, `xtc.tune`, `xtc tune`): measured
records that a compile applies, resuming from a records file, Ctrl-C
keeping every finished record, one clear error for each bad request, and
the same tuning on a local Ray instance."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.driver.records import Record, RecordWriter, Target, load_records
from xtc.ops.space import config_key
from xtc.tune.measure import MeasureInput, MeasureOptions, MeasureResult, Runner
from xtc.tune.task import extract_tasks
from xtc.tune.tuning import TuneError, tune_model

FAST = MeasureOptions(threads=1, repeat=2, min_repeat_ms=1)


def two_layer_model(m: int = 24, k: int = 32, n: int = 64) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((k, n)).astype(np.float32)
    w2 = rng.standard_normal((n, n)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w1"], ["h"]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("MatMul", ["r", "w2"], ["y"]),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class SyntheticRunner(Runner):
    """Costs from a formula of the config (no worker): fast and exact."""

    def __init__(self, interrupt_after: int | None = None) -> None:
        self.calls = 0
        self.interrupt_after = interrupt_after

    def measure(self, inputs: Sequence[MeasureInput]) -> list[MeasureResult]:
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        return [MeasureResult(costs=(1e-6 * (1 + len(config_key(i.config)) % 7),)) for i in inputs]


def test_tuning_writes_records_that_a_compile_applies(tmp_path: Path) -> None:
    model = two_layer_model()
    records = tmp_path / "records.jsonl"
    summary = tune_model(model, records, trials=12, tuner="random", batch_size=4, options=FAST)
    assert summary.trials == 12 and not summary.interrupted
    read = load_records(records)
    tasks = {t.key for t in extract_tasks(model) if len(t.space()) > 1}
    assert {r.key for r in read} == tasks
    assert all(r.ok for r in read), [r.message for r in read if not r.ok]
    assert sum(len(s.costs) for s in summary.tasks) >= 12
    for s in summary.tasks:
        assert s.best_cost <= s.default_cost
    compiled = xtc.compile(model, tuning_records=records)
    assert len(compiled.manifest["tuning"]["tuned_kernels"]) == len(tasks)
    x = np.random.default_rng(2).standard_normal((24, 32)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    np.testing.assert_allclose(compiled.run([x])[0], expected, rtol=1e-4, atol=1e-4)
    assert "model (kernels, estimated)" in summary.table()


def test_tuning_resumes_without_measuring_a_config_twice(tmp_path: Path) -> None:
    model = two_layer_model()
    records = tmp_path / "records.jsonl"
    runner = SyntheticRunner()
    tune_model(model, records, trials=10, tuner="xgb", batch_size=5, runner=runner)
    first = load_records(records)
    summary = tune_model(model, records, trials=10, tuner="xgb", batch_size=5, runner=runner)
    assert summary.trials == 10
    later = load_records(records)[len(first) :]
    measured_before = {(r.key, config_key(r.config)) for r in first}
    # only the end-of-tuning remeasurements (the default and the best) repeat
    repeated = [r for r in later if (r.key, config_key(r.config)) in measured_before]
    assert len(repeated) <= 4 * len({r.key for r in later}), len(repeated)
    fresh = [r for r in later if (r.key, config_key(r.config)) not in measured_before]
    assert len(fresh) >= 10


def test_a_stale_record_is_learnt_but_its_config_counts_as_unmeasured(tmp_path: Path) -> None:
    """Resuming from a record that measured steps today's recipe of its
    config no longer makes (xtc changed since): the config is not taken as
    measured (the default is measured anew, not given the stale time), the
    cost model learns the record, and the summary counts it."""
    model = two_layer_model()
    task = next(t for t in extract_tasks(model) if len(t.space()) > 1)
    default = task.default()
    other = next(c for c in task.space() if task.steps(c) != task.steps(default))
    measured = Record.of(task, other, MeasureResult(costs=(1e-9,)), Target.host())
    records = tmp_path / "records.jsonl"
    with RecordWriter(records) as writer:
        writer.write([replace(measured, config=default)])
    summary = tune_model(model, records, trials=4, batch_size=4, runner=SyntheticRunner())
    assert summary.stale_records == 1
    (mine,) = [s for s in summary.tasks if s.task.key == task.key]
    assert mine.default_cost > 1e-9
    later = load_records(records)[1:]
    assert any(r.key == task.key and r.config == default for r in later)
    assert not any(r.is_stale(task.steps(r.config)) for r in later)


def test_a_record_outside_todays_space_is_left_out_and_kept(tmp_path: Path) -> None:
    """Resuming from a record whose config today's space no longer has (a
    knob added since): tuning goes on without it, the summary counts it,
    and the file keeps it."""
    model = two_layer_model()
    task = next(t for t in extract_tasks(model) if len(t.space()) > 1)
    default = task.default()
    older = {k: v for k, v in default.items() if k != sorted(default)[-1]}
    measured = Record.of(task, default, MeasureResult(costs=(1e-9,)), Target.host())
    records = tmp_path / "records.jsonl"
    with RecordWriter(records) as writer:
        writer.write([replace(measured, config=older)])
    summary = tune_model(model, records, trials=4, batch_size=4, runner=SyntheticRunner())
    assert summary.outside_records == 1 and summary.stale_records == 0
    (mine,) = [s for s in summary.tasks if s.task.key == task.key]
    assert mine.default_cost > 1e-9
    kept = load_records(records)
    assert kept[0].config == older and len(kept) > 1


def test_ctrl_c_keeps_every_finished_record(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    runner = SyntheticRunner(interrupt_after=3)  # defaults, then two rounds
    summary = tune_model(two_layer_model(), records, trials=100, batch_size=4, runner=runner)
    assert summary.interrupted
    lines = records.read_text().splitlines()
    assert len(lines) == len(summary.tasks) + 2 * 4
    assert all(json.loads(line)["costs"] for line in lines)


def test_bad_requests_get_one_clear_error(tmp_path: Path) -> None:
    model = two_layer_model()
    with pytest.raises(TuneError, match="unknown tuner 'best'"):
        tune_model(model, tmp_path / "r.jsonl", tuner="best")
    with pytest.raises(TuneError, match="time budget must be positive"):
        tune_model(model, tmp_path / "r.jsonl", time_budget_s=0)
    other = tmp_path / "other.jsonl"
    tune_model(two_layer_model(8, 16, 32), other, trials=2, runner=SyntheticRunner())
    with pytest.raises(TuneError, match="none of its records is of a kernel of this model"):
        tune_model(model, other, trials=2, runner=SyntheticRunner())
    (tmp_path / "bad.jsonl").write_text("{\n")
    with pytest.raises(TuneError, match="line 1: not an xtc tuning record"):
        tune_model(model, tmp_path / "bad.jsonl", trials=2, runner=SyntheticRunner())


def test_the_tune_command(tmp_path: Path) -> None:
    model = tmp_path / "mlp.onnx"
    onnx.save(two_layer_model(), model)
    records = tmp_path / "mlp.jsonl"
    task = next(t for t in extract_tasks(two_layer_model()) if len(t.space()) > 1)
    other = next(c for c in task.space() if task.steps(c) != task.steps(task.default()))
    stale = Record.of(task, other, MeasureResult(costs=(1e-3,)), Target.host())
    with RecordWriter(records) as writer:  # resumes from a record xtc's recipes outgrew
        writer.write([replace(stale, config=task.default())])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "xtc.tools.cli",
            "tune",
            str(model),
            "-o",
            str(records),
            "--trials",
            "6",
            "--batch-size",
            "3",
            "--tuner",
            "ga",
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "model (kernels, estimated)" in result.stdout
    assert "--tuning-records" in result.stderr
    assert f"1 stale record(s) in {records}" in result.stderr
    compiled = subprocess.run(
        [
            sys.executable,
            "-m",
            "xtc.tools.cli",
            "compile",
            str(model),
            "--tuning-records",
            str(records),
            "-o",
            str(tmp_path / "mlp.tar"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "xtc.tools.cli", "tune", str(model), "--time-budget", "soon"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "expected a duration like 90s, 30m or 1.5h" in bad.stderr


def test_tuning_on_a_local_ray_instance(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the ray runner needs `pip install 'xtc[distributed]'`")
    from xtc.tune.ray_runner import RayRunner

    records = tmp_path / "records.jsonl"
    with RayRunner(FAST, num_cpus=2) as runner:
        summary = tune_model(two_layer_model(), records, trials=6, batch_size=3, runner=runner)
    assert summary.trials == 6
    assert all(r.ok for r in load_records(records))
