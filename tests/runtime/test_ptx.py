"""PTX for the GPU: kernels scheduled with tir-bind compute what the
unscheduled ones do (the interpreter runs bound loops serially), and, once
through convert-tir-to-gpu and llvmlite's NVPTX back end, CUDA's ptxas
accepts their PTX for sm_90 (tests that need ptxas skip where it is not
installed). No GPU is needed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from xtc import interp
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.lowering import convert_gpu_to_nvvm
from xtc.lowering.convert_gpu_to_nvvm import NVVMLoweringError, gpu_kernels
from xtc.lowering.libdevice import find_libdevice
from xtc.runtime.ptx import PTXError, nvvm_ir, ptx
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import lower, matmul

PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="CUDA's ptxas is not on PATH")
needs_libdevice = pytest.mark.skipif(
    find_libdevice() is None, reason="CUDA's libdevice is not installed"
)

ELEMENTWISE = """
func.func @main(%x: tensor<5x64xf32>, %y: tensor<5x64xf32>) -> tensor<5x64xf32> {
  %s = graph.add %x, %y : (tensor<5x64xf32>, tensor<5x64xf32>) -> tensor<5x64xf32>
  %r = graph.relu %s : (tensor<5x64xf32>) -> tensor<5x64xf32>
  func.return %r : tensor<5x64xf32>
}"""
REDUCTION = """
func.func @main(%x: tensor<8x16x4xf32>) -> tensor<8x4xf32> {
  %y = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false}
    : (tensor<8x16x4xf32>) -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}"""
BLOCKS_THREADS = 'tir-bind{loop=i0 axis="blockIdx.x"},tir-bind{loop=i1 axis="threadIdx.x"}'
KERNELS = {
    # add and relu: two kernels, rows on blocks, columns on threads
    "elementwise": (ELEMENTWISE, BLOCKS_THREADS, 2),
    # each thread sums its 16 elements
    "reduction": (REDUCTION, BLOCKS_THREADS, 1),
    # rows split by 4 on blockIdx.x, the 4 rows of a block on threadIdx.y,
    # the columns on threadIdx.x
    "matmul": (
        matmul(16, 8, 24),
        'tir-split{loop=i0 factor=4},tir-bind{loop=i0_o axis="blockIdx.x"},'
        'tir-bind{loop=i0_i axis="threadIdx.y"},tir-bind{loop=i1 axis="threadIdx.x"}',
        1,
    ),
}


def bound_gpu_module(graph: str, schedule: str) -> ModuleOp:
    """The graph lowered to tir, scheduled, checked to compute the same
    numbers as unscheduled (bit for bit), then at the gpu level."""
    kernel = lower(graph)
    scheduled = apply_pipeline(kernel.tir.clone(), schedule)
    inputs = random_inputs(kernel.graph, seed=3)
    expected = interp.run(kernel.tir, inputs)
    for e, g in zip(expected, interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    return apply_pipeline(scheduled, "convert-tir-to-gpu")


def assemble(text: str, arch: str, folder: Path) -> subprocess.CompletedProcess[str]:
    assert PTXAS is not None
    source = folder / "kernels.ptx"
    source.write_text(text)
    command = [PTXAS, f"-arch={arch}", str(source), "-o", str(folder / "kernels.cubin")]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@needs_ptxas
@pytest.mark.parametrize("name", list(KERNELS))
def test_ptxas_accepts_the_kernels_for_sm_90(name: str, tmp_path: Path) -> None:
    graph, schedule, count = KERNELS[name]
    module = bound_gpu_module(graph, schedule)
    assert len(gpu_kernels(module)) == count
    text = ptx(module, "sm_90")
    assert ".target sm_90" in text
    assert text.count(".visible .entry ") == count
    result = assemble(text, "sm_90", tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "kernels.cubin").stat().st_size > 0


def test_the_ids_come_from_the_special_registers() -> None:
    graph, schedule, _ = KERNELS["matmul"]
    text = ptx(bound_gpu_module(graph, schedule))
    assert ".target sm_80" in text
    for register in ("%ctaid.x", "%tid.x", "%tid.y"):
        assert f", {register};" in text


BARRIER = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "m"}> ({
    "gpu.func"() <{function_type = (memref<32xf32>) -> (), kernel}> ({
    ^bb0(%x: memref<32xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %x[%t] : memref<32xf32>
      "gpu.barrier"() : () -> ()
      %w = MATH %v : f32
      memref.store %w, %x[%t] : memref<32xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}"""


@needs_ptxas
def test_a_barrier_is_bar_sync(tmp_path: Path) -> None:
    text = ptx(parse_module(BARRIER.replace("MATH", "math.sqrt")), "sm_90")
    assert "bar.sync \t0;" in text
    assert "sqrt.rn.f32" in text
    assert assemble(text, "sm_90", tmp_path).returncode == 0


@needs_ptxas
def test_powf_is_exp2_of_a_logarithm_with_no_libdevice(tmp_path: Path) -> None:
    text = ptx(parse_module(BARRIER.replace("%w = MATH %v", "%w = math.powf %v, %v")), "sm_90")
    assert "lg2.approx" in text and "ex2.approx" in text
    assert "powf" not in text
    assert assemble(text, "sm_90", tmp_path).returncode == 0


@needs_ptxas
@needs_libdevice
@pytest.mark.parametrize("element", ["f16", "f32", "f64"])
def test_math_without_an_nvptx_instruction_is_libdevice_inlined(
    element: str, tmp_path: Path
) -> None:
    kernel = BARRIER.replace("MATH", "math.tanh").replace("f32", element)
    module = parse_module(kernel)
    assert "__nv_tanh" in nvvm_ir(module)
    text = ptx(module, "sm_90")
    assert "__nv_" not in text and "call" not in text
    assert assemble(text, "sm_90", tmp_path).returncode == 0


def test_libdevice_math_without_libdevice_is_refused_with_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(convert_gpu_to_nvvm, "find_libdevice", lambda: None)
    module = parse_module(BARRIER.replace("MATH", "math.erf"))
    with pytest.raises(
        NVVMLoweringError,
        match="@__nv_erff, which needs CUDA's libdevice: .*pip install nvidia-cuda-nvcc-cu12.*"
        "XTC_LIBDEVICE",
    ):
        ptx(module)


def test_xtc_libdevice_naming_no_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XTC_LIBDEVICE", str(tmp_path / "missing.bc"))
    module = parse_module(BARRIER.replace("MATH", "math.log"))
    with pytest.raises(NVVMLoweringError, match="XTC_LIBDEVICE=.*missing.bc is not a file"):
        ptx(module)


def test_an_allocation_inside_a_kernel_is_refused() -> None:
    scratch = "%s = memref.alloc() : memref<4xf32>\n      %w = arith.addf %v, %v"
    module = parse_module(BARRIER.replace("%w = MATH %v", scratch))
    with pytest.raises(NVVMLoweringError, match="aligned_alloc.*memref.alloc inside a kernel"):
        ptx(module)


def test_a_module_without_kernels_and_a_bad_arch_are_refused() -> None:
    kernel = lower(matmul(2, 2, 2))
    with pytest.raises(NVVMLoweringError, match="no gpu.func kernel in the module"):
        ptx(kernel.tir)
    graph, schedule, _ = KERNELS["reduction"]
    with pytest.raises(PTXError, match="arch 'sm_9' is not a CUDA architecture"):
        ptx(bound_gpu_module(graph, schedule), "sm_9")
