"""bench/models.py, the xtc-against-onnxruntime benchmark: its helpers, its
command line, and a smoke run of its main on tiny models."""

import json
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np
import onnx
import pytest

from xtc.testing.scripts import load_script
from xtc.tools.model_builders import bert_encoder

BENCH_PATH = Path(__file__).resolve().parents[2] / "bench" / "models.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """bench/models.py imported by path (bench/ is a folder of scripts, not a package)."""
    return load_script(BENCH_PATH, "bench_models")


def test_bert_mask_keeps_all_but_the_last_positions(bench: ModuleType) -> None:
    inputs = bench.random_inputs(bert_encoder(seq=128, hidden=32))
    mask = inputs["mask"]
    assert mask.dtype == np.int64 and mask.shape == (1, 128)
    assert mask[0, :112].all() and not mask[0, 112:].any()
    assert inputs["input"].dtype == np.float32 and inputs["input"].shape == (1, 128, 32)
    again = bench.random_inputs(bert_encoder(seq=128, hidden=32))
    np.testing.assert_array_equal(inputs["input"], again["input"])  # fixed seed


def test_compare_outputs_scales_tolerance_by_the_reference(bench: ModuleType) -> None:
    expected = [np.array([100.0, -2.0], np.float32)]
    assert bench.compare_outputs([np.array([100.05, -2.05], np.float32)], expected)[0]
    ok, diff, tolerance = bench.compare_outputs([np.array([100.2, -2.0], np.float32)], expected)
    assert not ok and diff == pytest.approx(0.2, rel=1e-3) and tolerance == pytest.approx(0.1)
    assert not bench.compare_outputs([np.full(2, np.nan, np.float32)], expected)[0]
    assert not bench.compare_outputs([np.zeros(3, np.float32)], expected)[0]


def test_quantization_step_is_the_output_dequantize_scale(bench: ModuleType) -> None:
    assert bench.quantization_step(bench.matmul_model(4)) == 0.0
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
        "dq",
        [onnx.helper.make_tensor_value_info("q", onnx.TensorProto.UINT8, [2])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
        [onnx.numpy_helper.from_array(np.float32(0.25), "s")],
    )
    assert bench.quantization_step(onnx.helper.make_model(graph)) == 0.25
    expected = [np.array([10.0], np.float32)]
    assert bench.compare_outputs([np.array([10.2], np.float32)], expected, step=0.25)[0]
    assert not bench.compare_outputs([np.array([10.3], np.float32)], expected, step=0.25)[0]


def test_matmul_model_and_geometric_mean(bench: ModuleType) -> None:
    model = bench.matmul_model(8)
    assert [n.op_type for n in model.graph.node] == ["MatMul"]
    assert set(bench.random_inputs(model)) == {"a", "b"}
    assert bench.geometric_mean([2.0, 8.0]) == pytest.approx(4.0)


@pytest.mark.parametrize("argv", [["--models", "resnet18,vgg"], ["--repeat", "0"]])
def test_bad_arguments_are_refused_with_a_message(
    bench: ModuleType, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "vgg" in err or "positive integer" in err


def test_smoke_run_on_tiny_models(
    bench: ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XTC_NUM_THREADS", "1")  # main sets it; restored afterwards
    models = ["squeezenet", "bert"]  # a conv net and a transformer: the script, not the builders
    report = tmp_path / "rows.json"
    argv = ["--small", "--models", ",".join(models), "--repeat", "1", "--matmul"]
    status = bench.main([*argv, "--json", str(report)])
    out = capsys.readouterr().out
    assert status == 0, out
    lines = out.splitlines()
    assert lines[1].split() == ["model", "compile_s", "xtc_ms", "ort_ms", "ratio", "match"]
    for name in [*models, "matmul128"]:
        (row,) = [line for line in lines if line.split()[0] == name]
        assert row.split()[5] == "ok", out
    assert any(line.startswith("geomean ratio (xtc/ort): ") for line in lines), out
    rows = json.loads(report.read_text())["rows"]
    assert [r["model"] for r in rows] == [*models, "matmul128"]
    assert all(r["xtc_ms"] > 0 and r["baseline_ms"] > 0 for r in rows)
    assert rows[-1]["baseline"] == "numpy" and rows[-1]["xtc_gflops"] > 0


class WrongAnswers:
    """Stands in for a compiled model whose every answer is far off."""

    def run(self, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        return [np.full((1, 10), 1e6, np.float32)]

    def benchmark(self, inputs: object, repeat: int, number: int, warmup: int) -> object:
        return SimpleNamespace(runs_ms=(1.0,) * repeat)


def test_mismatch_and_failure_rows_fail_the_run(
    bench: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def compile_or_refuse(model: onnx.ModelProto) -> tuple[object, float]:
        if model.graph.name != "squeezenet":
            raise RuntimeError("Conv node 'x' is not supported")
        return WrongAnswers(), 0.5

    monkeypatch.setattr(bench, "compile_timed", compile_or_refuse)
    status = bench.main(["--small", "--models", "squeezenet,resnet18", "--repeat", "1"])
    out = capsys.readouterr().out
    assert status == 1
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert rows["squeezenet"].split()[5] == "MISMATCH"
    assert "ERROR" in rows["resnet18"] and "Conv node 'x' is not supported" in rows["resnet18"]
    assert "geomean ratio (xtc/ort): " in out
    assert "FAILED: squeezenet, resnet18" in out
