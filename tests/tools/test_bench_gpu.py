"""bench/gpu.py, the GPU benchmark, without a GPU: a compiled job checked
against onnxruntime (on the interpreter device), the ResNet-50 table with
an uncompiled batch, and its command line."""

from pathlib import Path
from types import ModuleType
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper

from xtc.runtime import artifact
from xtc.testing.scripts import load_script

BENCH_PATH = Path(__file__).resolve().parents[2] / "bench" / "gpu.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """bench/gpu.py imported by path (bench/ is a folder of scripts)."""
    return load_script(BENCH_PATH, "bench_gpu")


def relu_sigmoid() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 50])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 50])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(nodes, "rs", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_job_is_checked_against_onnxruntime(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    import xtc

    monkeypatch.setattr(bench, "build", lambda job: relu_sigmoid())
    monkeypatch.setattr(xtc, "load", lambda path: artifact.load_artifact(path, device="interp"))
    path, seconds = bench.compile_job("rs/small", "sm_80", str(tmp_path))
    rows: list[dict[str, Any]] = []
    model = bench.check_job("rs/small", path, seconds, rows)
    assert rows[0]["match"] == "ok" and rows[0]["launches"] == 1
    assert "rs/small" in capsys.readouterr().out
    monkeypatch.setattr(bench, "torch_latencies", lambda batch, repeat: (2.0, 1.0))
    table = bench.resnet50_table({"resnet50/b1": model}, 2)
    assert table[0]["torch_graph_ms"] == 1.0 and table[0]["xtc_ms"] > 0
    assert table[1]["xtc_error"].startswith("not compiled")
    out = capsys.readouterr().out
    assert "xtc/graph" in out and "not compiled" in out


def test_the_command_line_defaults(bench: ModuleType) -> None:
    args = bench.parse_args([])
    assert set(args.models.split(",")) == set(bench.MODEL_NAMES)
    assert set(args.full.split(",")) <= set(bench.MODEL_NAMES)
    assert args.repeat >= 20
    assert args.outputs_per_thread == 1  # register tiling off unless asked for
    assert bench.parse_args(["--outputs-per-thread", "4"]).outputs_per_thread == 4
    assert not args.no_cross_thread  # a warp per output where few outputs have long reductions
    assert bench.parse_args(["--no-cross-thread"]).no_cross_thread


def test_without_a_gpu_it_says_so_in_one_line(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from xtc.runtime.cuda_driver import CudaError

    def no_driver() -> tuple[str, str]:
        raise CudaError("no CUDA driver found (libcuda.so.1)")

    monkeypatch.setattr(bench, "device_arch", no_driver)
    assert bench.main(["--models", "", "--full", "", "--no-resnet50"]) == 1
    assert capsys.readouterr().err == (
        "bench/gpu.py: error: no CUDA driver found (libcuda.so.1): this benchmark needs an "
        "NVIDIA GPU\n"
    )
