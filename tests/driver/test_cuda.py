"""`xtc compile --target cuda`, first slice: an ONNX model (Add, Relu,
Sigmoid) becomes the PTX of its kernels, which ptxas accepts for sm_90
(skipped without ptxas); the CPU-only options and a bad arch are refused
in one line (tests/driver/test_compiler.py: `xtc.compile(...,
target="cuda")` too)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from xtc.driver.compiler import CompileError
from xtc.driver.cuda import compile_cuda, compile_cuda_model, cuda_pipeline
from xtc.tools.cli import main


def add_relu_sigmoid() -> onnx.ModelProto:
    def tensor(name: str) -> onnx.ValueInfoProto:
        return onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, [4, 3, 50])

    nodes = [
        onnx.helper.make_node("Add", ["x", "y"], ["s"], name="add"),
        onnx.helper.make_node("Relu", ["s"], ["r"], name="relu"),
        onnx.helper.make_node("Sigmoid", ["s"], ["g"], name="sigmoid"),
    ]
    graph = onnx.helper.make_graph(
        nodes, "ars", [tensor("x"), tensor("y")], [tensor("r"), tensor("g")]
    )
    return onnx.helper.make_model(graph)


def xtc_cli(*argv: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return int(stop.value.code or 0), out, err


@pytest.mark.parametrize("opt_level", [0, 3])
def test_the_model_becomes_ptx(opt_level: int) -> None:
    text = compile_cuda(add_relu_sigmoid(), opt_level=opt_level)
    assert ".target sm_80" in text
    assert text.count(".visible .entry ") >= 2  # fused at -O3, one per node at -O0
    assert "%tid.x" in text and "%ctaid.x" in text
    assert cuda_pipeline(opt_level).endswith("cuda-default-schedule,convert-tir-to-gpu")


def test_register_tiling_is_an_option_of_the_cuda_schedule() -> None:
    tiled = cuda_pipeline(3, outputs_per_thread=4)
    assert tiled.endswith("cuda-default-schedule{outputs_per_thread=4},convert-tir-to-gpu")
    assert cuda_pipeline(3, outputs_per_thread=1) == cuda_pipeline(3)
    with pytest.raises(CompileError, match=r"outputs_per_thread must be an integer in \[1, 16\]"):
        cuda_pipeline(3, outputs_per_thread=0)


def test_cross_thread_reductions_can_be_turned_off() -> None:
    assert "cross_thread" not in cuda_pipeline(3)  # on by default
    off = cuda_pipeline(3, cross_thread=False)
    assert off.endswith("cuda-default-schedule{cross_thread=false},convert-tir-to-gpu")
    both = cuda_pipeline(3, outputs_per_thread=4, cross_thread=False)
    assert "cuda-default-schedule{outputs_per_thread=4 cross_thread=false}" in both


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="CUDA's ptxas is not on PATH")
def test_the_command_line_writes_ptx_that_ptxas_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx.save(add_relu_sigmoid(), tmp_path / "ars.onnx")
    output = tmp_path / "ars.ptx"
    status, out, err = xtc_cli(
        "compile", tmp_path / "ars.onnx", "--target", "cuda", "--arch", "sm_90",
        "--print-pipeline", "-o", output, capsys=capsys,
    )  # fmt: skip
    assert status == 0, err
    assert out.strip() == cuda_pipeline(3)
    assert "PTX for sm_90" in err
    ptxas = shutil.which("ptxas")
    assert ptxas is not None
    result = subprocess.run(
        [ptxas, "-arch=sm_90", str(output), "-o", str(tmp_path / "ars.cubin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_cpu_only_options_and_bad_arch_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx.save(add_relu_sigmoid(), tmp_path / "ars.onnx")
    model = tmp_path / "ars.onnx"
    status, _, err = xtc_cli(
        "compile", model, "--target", "cuda", "--dump-ir", "tir", capsys=capsys
    )
    assert (status, err) == (1, "xtc: error: --dump-ir is not supported with --target cuda yet\n")
    status, _, err = xtc_cli(
        "compile", model, "--target", "cuda", "--arch", "sm80", "-o", tmp_path / "m.ptx",
        capsys=capsys,
    )  # fmt: skip
    assert status == 1
    assert err == (
        "xtc: error: arch 'sm80' is not a CUDA architecture like sm_80 or sm_90 (sm_50 up)\n"
    )
    assert not (tmp_path / "m.ptx").exists()


def test_an_empty_tensor_needs_no_kernel() -> None:
    """Relu of a 0x4 tensor next to one of a 3x4 tensor: one kernel, one
    launch; alone, no kernel at all (a PTX of no entries) and the run
    returns the empty array."""
    import numpy as np
    from onnx import TensorProto, helper

    def model(*shapes: list[int]) -> onnx.ModelProto:
        names = [f"x{k}" for k in range(len(shapes))]
        pairs = list(zip(names, shapes, strict=True))
        graph = helper.make_graph(
            [helper.make_node("Relu", [n], [f"y{n}"]) for n in names],
            "g",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in pairs],
            [helper.make_tensor_value_info(f"y{n}", TensorProto.FLOAT, s) for n, s in pairs],
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    both = compile_cuda_model(model([0, 4], [3, 4]), device="interp")
    assert (both.manifest["kernels"], both.manifest["launches"]) == (1, 1)
    empty, rows = both.run([np.zeros((0, 4), np.float32), -np.ones((3, 4), np.float32)])
    assert empty.shape == (0, 4)
    np.testing.assert_array_equal(rows, np.zeros((3, 4), np.float32))
    alone = compile_cuda_model(model([0, 4]), device="interp")
    assert (alone.manifest["kernels"], alone.manifest["launches"]) == (0, 0)
    assert [y.shape for y in alone.run([np.zeros((0, 4), np.float32)])] == [(0, 4)]
    text = compile_cuda(model([0, 4]))
    assert ".target sm_80" in text and ".entry" not in text


def test_a_model_with_shape_inputs_compiles_one_cuda_model_per_value() -> None:
    from onnx import TensorProto, helper

    from xtc.runtime.cuda_model import CudaModel
    from xtc.runtime.specialized_model import SpecializedModel

    graph = helper.make_graph(
        [
            helper.make_node("Reshape", ["data", "shape"], ["r"]),
            helper.make_node("Relu", ["r"], ["out"]),
        ],
        "reshape_relu",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = compile_cuda_model(model, device="interp")
    assert isinstance(compiled, SpecializedModel) and compiled.specialized_inputs == ["shape"]
    data = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)
    for shape in ([3, 4], [6, 2], [3, 4]):
        (out,) = compiled.run({"data": data, "shape": np.array(shape, np.int64)})
        np.testing.assert_array_equal(out, np.maximum(data.reshape(shape), 0))
    assert len(compiled.specializations) == 2
    assert all(isinstance(s.model, CudaModel) for s in compiled.specializations)


def test_a_copy_in_host_code_becomes_a_kernel() -> None:
    """Identity's output is a memref.copy of its input in @main: a kernel
    @copy_0 copies it (the host contract has no copy), for any rank."""
    import numpy as np
    from onnx import TensorProto, helper

    for shape in ([3, 4], []):
        graph = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        compiled = compile_cuda_model(model, device="interp")
        assert [launch.kernel for launch in compiled.plan.launches] == ["copy_0"]
        x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(compiled.run([x])[0], x)
