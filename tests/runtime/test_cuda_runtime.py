"""The CUDA runtime without a GPU: the launch plan of the host code (buffers,
ordered launches, temporaries reused, foreign host ops refused), CUDA
models run on the interpreter device against the CPU path, the artifact
round trip, and the one-line errors without a CUDA driver or device."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.driver.cuda import compile_cuda_model
from xtc.driver.textual_ir import parse_module
from xtc.runtime import cuda_driver
from xtc.runtime.artifact import load_artifact
from xtc.runtime.cuda_driver import CudaDriver, CudaError
from xtc.runtime.cuda_model import CudaModel, _runs_on
from xtc.runtime.cuda_plan import Plan, PlanError, build_plan
from xtc.runtime.errors import InputError
from xtc.tools.cli import main


def tensor(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def matmul_relu_sigmoid() -> onnx.ModelProto:
    weight = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
        helper.make_node("Relu", ["m"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "mrs", [tensor("x", [4, 16])], [tensor("y", [4, 8])],
        [numpy_helper.from_array(weight, "w")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def relu_add_chain() -> onnx.ModelProto:
    """relu(x) + x -> relu -> sigmoid, and relu(x) as a second output."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu1"),
        helper.make_node("Add", ["a", "x"], ["b"], name="add"),
        helper.make_node("Relu", ["b"], ["c"], name="relu2"),
        helper.make_node("Sigmoid", ["c"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "chain", [tensor("x", [3, 40])], [tensor("y", [3, 40]), tensor("a", [3, 40])]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def random_input(shape: tuple[int, ...], seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("build", [matmul_relu_sigmoid, relu_add_chain])
def test_the_interpreter_device_computes_what_the_cpu_does(build: Any, opt_level: int) -> None:
    model = compile_cuda_model(build(), opt_level=opt_level, device="interp")
    x = random_input(model.input_specs[0].shape)
    expected = xtc.compile(build(), opt_level=opt_level).run([x])
    got = model.run({"x": x})
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert model.run([2 * x])[0].tolist() != got[0].tolist()  # a second run sees new inputs


def test_the_plan_lists_buffers_and_launches_in_order() -> None:
    model = compile_cuda_model(relu_add_chain(), opt_level=0, device="interp")
    plan = model.plan
    kinds = [b.kind for b in plan.buffers]
    assert kinds.count("input") == 1 and kinds.count("output") == 2
    assert [launch.kernel for launch in plan.launches] == ["relu_0", "add_0", "relu_0", "sigmoid_0"]
    relu1, add, relu2, sigmoid = plan.launches
    (x,) = plan.buffers_of("input")
    y, a = plan.buffers_of("output")
    assert relu1.args == ((x, 0), (a, 0))
    assert add.args[0] == (a, 0) and add.args[1] == (x, 0)
    b = add.args[2][0]
    assert plan.buffers[b].kind == "temporary" and plan.buffers[b].nbytes == 3 * 40 * 4
    assert relu2.args[0] == (b, 0) and sigmoid.args[1] == (y, 0)
    assert relu1.block[0] * relu1.grid[0] >= 3 * 40


def test_a_freed_temporary_is_reused() -> None:
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"r{i}") for i in range(4)]
    graph = helper.make_graph(nodes, "relus", [tensor("t0", [8])], [tensor("t4", [8])])
    model = compile_cuda_model(helper.make_model(graph), opt_level=0, device="interp")
    temporaries = [i for i, b in enumerate(model.plan.buffers) if b.kind == "temporary"]
    assert len(model.plan.launches) == 4
    assert len(temporaries) == 2  # t1, t2; t3 takes t1's bytes back
    x = random_input((8,))
    np.testing.assert_array_equal(model.run([x])[0], np.maximum(x, 0))


def test_the_plan_round_trips_through_json() -> None:
    model = compile_cuda_model(matmul_relu_sigmoid(), device="interp")
    plan = model.plan
    again = Plan.from_json(json.loads(json.dumps(plan.to_json())), bytes(plan.weights))
    assert again == plan
    weight = next(b for b in plan.buffers if b.kind == "weight")
    assert weight.nbytes == 16 * 8 * 4 and len(plan.weights) >= weight.nbytes
    with pytest.raises(PlanError, match="the weights hold 3 bytes"):
        Plan.from_json(plan.to_json(), b"abc")


HOST_WITH_A_COPY = """
builtin.module attributes {gpu.container_module} {
  func.func @main(%x: memref<4xf32> {graph.name = "x"},
                  %y: memref<4xf32> {graph.name = "y", graph.output = 0 : i64}) {
    "memref.copy"(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
    func.return
  }
}"""


def test_host_code_outside_the_contract_is_refused() -> None:
    with pytest.raises(PlanError, match="cannot hold memref.copy: not a launch, call"):
        build_plan(parse_module(HOST_WITH_A_COPY))


def test_the_artifact_round_trips(tmp_path: Path) -> None:
    model = compile_cuda_model(matmul_relu_sigmoid(), device="interp")
    path = model.export(tmp_path / "model.tar")
    loaded = load_artifact(path, device="interp")
    assert isinstance(loaded, CudaModel)
    assert loaded.manifest["target"] == {"name": "cuda", "arch": "sm_80"}
    assert (loaded.directory / "kernels.ptx").read_text().count(".entry ") == 1
    x = random_input((4, 16))
    np.testing.assert_array_equal(loaded.run([x])[0], model.run([x])[0])
    result = loaded.benchmark([x], repeat=2, number=1, warmup=0)
    assert len(result.runs_ms) == 2 and result.median_ms > 0


def test_inputs_are_checked_before_running() -> None:
    model = compile_cuda_model(matmul_relu_sigmoid(), device="interp")
    with pytest.raises(InputError, match=r"input 'x' has shape \[4, 15\]"):
        model.run([np.zeros((4, 15), np.float32)])

    class DeviceArray:
        __cuda_array_interface__ = {  # noqa: RUF012 - a stand-in for a CuPy array
            "shape": (4, 16), "typestr": "<f4", "data": (1 << 20, False), "version": 3,
        }  # fmt: skip

    with pytest.raises(InputError, match="device arrays .* need the cuda device"):
        model.run([DeviceArray()])


def test_without_a_driver_compiling_works_and_running_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cuda_driver, "DRIVER_LIBRARY", str(tmp_path / "libcuda.so.1"))
    model = xtc.compile(matmul_relu_sigmoid(), target="cuda")
    with pytest.raises(CudaError, match=r"^no CUDA driver found \(.*libcuda.so.1\)$"):
        model.run([random_input((4, 16))])
    onnx.save(matmul_relu_sigmoid(), tmp_path / "mrs.onnx")
    artifact = tmp_path / "mrs.tar"
    with pytest.raises(SystemExit) as stop:
        main(["compile", str(tmp_path / "mrs.onnx"), "--target", "cuda", "-o", str(artifact)])
    assert stop.value.code == 0 and artifact.is_file()
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["run", str(artifact)])
    _, err = capsys.readouterr()
    assert stop.value.code == 1
    assert err == f"xtc: error: no CUDA driver found ({tmp_path / 'libcuda.so.1'})\n"


class NoDeviceDriver:
    """A driver whose cuInit says there is no device (CUDA_ERROR_NO_DEVICE)."""

    def cuInit(self, flags: int) -> int:  # noqa: N802 - the driver's name
        return cuda_driver.CUDA_ERROR_NO_DEVICE


def test_a_driver_without_a_device_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_driver, "open_driver", lambda library=None: NoDeviceDriver())
    with pytest.raises(CudaError, match="^no CUDA device$"):
        CudaDriver()


def test_a_cubin_is_loaded_only_on_its_architecture() -> None:
    assert _runs_on("sm_80", 8, 0) and _runs_on("sm_80", 8, 6)
    assert not _runs_on("sm_80", 9, 0) and not _runs_on("sm_86", 8, 0)
    assert _runs_on("sm_90a", 9, 0)
