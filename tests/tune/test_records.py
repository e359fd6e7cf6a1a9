"""Tuning records (tune/records.py) and compiling with them: JSON lines that
round-trip, a config's time as the median of its records, the best valid
record applied per workload (the steps it measured, where today's recipe of
its config differs), and every record that cannot apply refused
with one message (another CPU, another model, a config the kernel's space
no longer has, an unreadable file)."""

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
from xtc import remarks
from xtc.driver.compiler import CompileError, compile_model
from xtc.driver.records import (
    Record,
    RecordsError,
    RecordWriter,
    Target,
    TuningRecords,
    best_records,
    load_records,
)
from xtc.tune.measure import ErrorKind, MeasureResult
from xtc.tune.task import Task, extract_tasks


def matmul_model(m: int = 24, k: int = 32, n: int = 64) -> onnx.ModelProto:
    weights = np.random.default_rng(0).standard_normal((k, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(weights, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def task() -> Task:
    tasks = [t for t in extract_tasks(matmul_model()) if len(t.space()) > 1]
    assert len(tasks) == 1
    return tasks[0]


def other_config(task: Task) -> dict[str, int | str]:
    """A point of the task's space that is not the default."""
    space = task.space()
    default = task.default()
    return next(c for c in space if c != default and c.get("0.rows") != default.get("0.rows"))


def record(task: Task, config: dict[str, int | str], cost: float, target: Target) -> Record:
    return Record.of(task, config, MeasureResult(costs=(cost, cost)), target)


def test_records_round_trip_through_json_lines(tmp_path: Path, task: Task) -> None:
    path = tmp_path / "records.jsonl"
    target = Target.host()
    written = [
        record(task, task.default(), 2e-5, target),
        Record.of(
            task, other_config(task), MeasureResult(error=ErrorKind.CRASH, message="boom"), target
        ),
    ]
    with RecordWriter(path) as writer:
        writer.write(written[:1])
    with RecordWriter(path) as writer:  # appends
        writer.write(written[1:])
    read = load_records(path)
    assert [r.to_json() for r in read] == [r.to_json() for r in written]
    assert read[1].error == "crash" and not read[1].ok and read[1].cost == float("inf")
    first = json.loads(path.read_text().splitlines()[0])
    assert first["steps"].startswith("tir-") and "func=kernel" in first["steps"]
    assert first["target"]["cpu"] == target.cpu


def test_a_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"key": "x"}\n')
    with pytest.raises(RecordsError, match=r"records.jsonl, line 1: not an xtc tuning record"):
        load_records(path)


def test_a_config_costs_its_fastest_measurement(task: Task) -> None:
    """A measurement taken while the machine was busy is only ever slower."""
    target = Target.host()
    default, other = task.default(), other_config(task)
    records = [
        record(task, default, 9e-3, target),  # measured while something else ran
        record(task, other, 6e-6, target),
        record(task, other, 8e-6, target),
        record(task, default, 5e-6, target),
        Record.of(task, other, MeasureResult(costs=(2e-6, 7e-6)), target),
    ]
    assert records[-1].cost == 2e-6
    best = best_records(records)[task.key]
    assert best.config == other and best.cost == 2e-6


def write(path: Path, records: list[Record]) -> Path:
    with RecordWriter(path) as writer:
        writer.write(records)
    return path


def test_compile_applies_the_best_record(tmp_path: Path, task: Task) -> None:
    target = Target.host()
    config = other_config(task)
    path = write(
        tmp_path / "r.jsonl",
        [record(task, task.default(), 3e-5, target), record(task, config, 1e-5, target)],
    )
    model = matmul_model()
    compiled = xtc.compile(model, tuning_records=path)
    tuning = compiled.manifest["tuning"]
    assert tuning["records"] == str(path)
    (tuned,) = tuning["tuned_kernels"]
    assert tuned["key"] == task.key and tuned["config"] == config
    function = tuned["function"]
    steps = [s.replace("func=kernel", f"func={function}") for s in task.steps(config)]
    assert ",".join(steps) in compiled.manifest["pipeline"]
    x = np.random.default_rng(1).standard_normal((24, 32)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(compiled.run([x])[0], session.run(None, {"x": x})[0], rtol=1e-4)


def test_a_stale_record_replays_the_steps_it_measured(tmp_path: Path, task: Task) -> None:
    """A record whose steps today's recipe of its config no longer makes
    (the template changed since it was measured) applies what was
    measured, as Ansor's records do, and a remark says so."""
    config = other_config(task)
    measured = task.steps(task.default())
    assert measured != task.steps(config)
    stale = replace(record(task, config, 1e-5, Target.host()), steps=",".join(measured))
    model = assert_replayed(tmp_path, stale, measured)
    fresh = write(tmp_path / "f.jsonl", [record(task, config, 1e-5, Target.host())])
    assert remarks.STALE_RECORD not in xtc.compile(model, tuning_records=fresh).manifest["remarks"]


def assert_replayed(tmp_path: Path, stale: Record, measured: Sequence[str]) -> onnx.ModelProto:
    """Compiling the matmul model with `stale` alone replays `measured`,
    with one stale-record remark, and computes what onnxruntime does."""
    path = write(tmp_path / "r.jsonl", [stale])
    model = matmul_model()
    compiled = xtc.compile(model, tuning_records=path)
    (tuned,) = compiled.manifest["tuning"]["tuned_kernels"]
    replayed = [s.replace("func=kernel", f"func={tuned['function']}") for s in measured]
    assert ",".join(replayed) in compiled.manifest["pipeline"]
    assert compiled.manifest["remarks"].get(remarks.STALE_RECORD) == 1
    x = np.random.default_rng(1).standard_normal((24, 32)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(compiled.run([x])[0], session.run(None, {"x": x})[0], rtol=1e-4)
    return model


def test_a_record_of_a_config_outside_todays_space_replays_its_steps(
    tmp_path: Path, task: Task
) -> None:
    """A record made before a knob was added (its config lacks the knob)
    still applies the steps it measured, with a remark; tuning records
    outlive template changes."""
    default = task.default()
    knob = sorted(default)[-1]
    older = {k: v for k, v in default.items() if k != knob}
    measured = task.steps(default)
    stale = replace(record(task, default, 1e-5, Target.host()), config=older)
    assert_replayed(tmp_path, stale, measured)


def test_records_of_another_cpu_are_refused(tmp_path: Path, task: Task) -> None:
    elsewhere = Target("sapphirerapids", "+avx512fp16")
    path = write(tmp_path / "r.jsonl", [record(task, task.default(), 1e-5, elsewhere)])
    with pytest.raises(CompileError, match=r"was tuned on another CPU \(sapphirerapids\)"):
        xtc.compile(matmul_model(), tuning_records=path)
    host = Target.host()
    same_name = Target(host.cpu, host.features + ",+madeup")
    path = write(tmp_path / "s.jsonl", [record(task, task.default(), 1e-5, same_name)])
    with pytest.raises(CompileError, match="with other CPU features"):
        xtc.compile(matmul_model(), tuning_records=path)


def test_records_of_another_model_are_refused(tmp_path: Path, task: Task) -> None:
    (other,) = [t for t in extract_tasks(matmul_model(8, 16, 32)) if len(t.space()) > 1]
    path = write(tmp_path / "r.jsonl", [record(other, other.default(), 1e-5, Target.host())])
    with pytest.raises(CompileError, match="no kernel of this model has a record"):
        xtc.compile(matmul_model(), tuning_records=path)


def test_a_record_that_no_longer_fits_is_refused(tmp_path: Path, task: Task) -> None:
    stale = Record(task.key, {"0.rows": 99}, "", Target.host(), costs=(1e-5,))
    path = write(tmp_path / "r.jsonl", [stale])
    with pytest.raises(CompileError, match=r"no longer applies .*tune the model again"):
        xtc.compile(matmul_model(), tuning_records=path)


def test_missing_and_empty_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="no such file"):
        xtc.compile(matmul_model(), tuning_records=tmp_path / "none.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(CompileError, match="holds no record"):
        xtc.compile(matmul_model(), tuning_records=tmp_path / "empty.jsonl")
    with pytest.raises(CompileError, match="start at -O2"):
        xtc.compile(matmul_model(), tuning_records=tmp_path / "empty.jsonl", opt_level=1)


def test_the_cli_reports_one_line(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    onnx.save(matmul_model(), model)
    (tmp_path / "bad.jsonl").write_text("not json\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "xtc.tools.cli",
            "compile",
            str(model),
            "--tuning-records",
            str(tmp_path / "bad.jsonl"),
            "-o",
            str(tmp_path / "m.tar"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert result.stderr.startswith("xtc: error: tuning records") and "line 1" in result.stderr


def test_tuning_records_pick_this_cpu(task: Task) -> None:
    host = Target.host()
    records = TuningRecords(
        [
            record(task, task.default(), 1e-5, host),
            record(task, other_config(task), 1e-7, Target("x", "")),
        ],
        host,
    )
    best = records.best(task.key)
    assert best is not None and best.config == task.default()


def concat_relu_model() -> onnx.ModelProto:
    """A kernel that tir-partition rewrites (one nest per concat input)
    before it is scheduled, where its workload key is taken."""
    graph = helper.make_graph(
        [
            helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
            helper.make_node("Relu", ["c"], ["z"]),
        ],
        "concat",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 16, 8, 8]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 32, 8, 8]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 48, 8, 8])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("cache", [False, True])
def test_a_record_applies_to_a_kernel_that_passes_change_before_its_schedule(
    tmp_path: Path, jobs: int, cache: bool
) -> None:
    """Kernels split off into units (worker processes, the compile cache)
    right after convert-te-to-tir are matched with records as they will be
    when scheduled: their keys were once taken before tir-partition, and a
    compile with workers or a cache found no record."""
    model = concat_relu_model()
    (task,) = extract_tasks(model)
    path = write(tmp_path / "r.jsonl", [record(task, task.default(), 1e-5, Target.host())])
    compiled = compile_model(model, tuning_records=path, jobs=jobs, cache=cache)
    (tuned,) = compiled.manifest["tuning"]["tuned_kernels"]
    assert tuned["key"] == task.key
    a, b = (np.random.default_rng(s).standard_normal(shape).astype(np.float32)
            for s, shape in ((1, (1, 16, 8, 8)), (2, (1, 32, 8, 8))))  # fmt: skip
    expected = np.maximum(np.concatenate([a, b], axis=1), 0)
    np.testing.assert_array_equal(compiled.run([a, b])[0], expected)
