"""The llvmlite JIT: aligned arrays, argument checks before native code
runs, libm calls resolving in process, vectorization for the host at xtc's
-O3 (LLVM's O2 on a CPU), the `llvm-ir` target of xtc-opt."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path

import llvmlite.binding as llvm_binding
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xtc.runtime.llvm_ir import LLVMIRError, llvm_ir
from xtc.runtime.llvm_jit import (
    ALIGNMENT,
    aligned_copy,
    aligned_empty,
    CPU_LLVM_LEVEL,
    compile_module,
    host_target_machine,
    is_aligned,
    optimize_at,
    optimized_llvm_ir,
)
from xtc.runtime.ptx import nvptx_target_machine
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module

XTC_OPT = str(Path(sys.executable).parent / "xtc-opt")

AXPY = """
builtin.module {
  func.func @axpy(%x: memref<1024xf32>, %y: memref<1024xf32>,
                  %out: memref<1024xf32> {graph.output = 0 : i64}) {
    tir.for %i = 0 to 1024 step 1 {name = "i0", kind = "serial"} {
      %a = arith.constant 2.500000e+00 : f32
      %u = memref.load %x[%i] : memref<1024xf32>
      %v = memref.load %y[%i] : memref<1024xf32>
      %m = arith.mulf %a, %u : f32
      %s = arith.addf %m, %v : f32
      memref.store %s, %out[%i] : memref<1024xf32>
    }
    func.return
  }
}
"""

LIBM = """
builtin.module {
  func.func @libm(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf64>) {
    tir.for %i = 0 to 8 step 1 {name = "i0", kind = "serial"} {
      %u = memref.load %x[%i] : memref<8xf32>
      %e = math.erf %u : f32
      %t = math.tanh %e : f32
      memref.store %t, %y[%i] : memref<8xf32>
      %w = arith.extf %u : f32 to f64
      %c = math.cbrt %w : f64
      %l = math.log1p %c : f64
      memref.store %l, %z[%i] : memref<8xf64>
    }
    func.return
  }
}
"""


def lowered(text: str):  # noqa: ANN201 - an xDSL ModuleOp
    module = parse_module(text)
    apply_pipeline(module, "convert-tir-to-llvm")
    return module


@pytest.fixture(scope="module")
def axpy():  # noqa: ANN201 - a JitModule
    return compile_module(lowered(AXPY))


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=0, max_size=3),
    st.sampled_from([np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_]),
)
def test_aligned_arrays(shape: list[int], dtype: type) -> None:
    empty = aligned_empty(shape, dtype)
    assert empty.shape == tuple(shape) and empty.dtype == np.dtype(dtype)
    assert is_aligned(empty) and (empty.size == 0 or empty.ctypes.data % ALIGNMENT == 0)
    source = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)
    copy = aligned_copy(source[..., ::-1] if shape else source)
    assert is_aligned(copy) and copy.flags.c_contiguous
    np.testing.assert_array_equal(copy, source[..., ::-1] if shape else source)


def test_call_runs_native_code(axpy) -> None:  # noqa: ANN001
    x = aligned_copy(np.linspace(0, 1, 1024, dtype=np.float32))
    y = aligned_copy(np.ones(1024, np.float32))
    out = aligned_empty(1024, np.float32)
    axpy.call("axpy", [x, y, out])
    np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)


def test_a_caller_holds_its_arrays(axpy) -> None:  # noqa: ANN001
    """A timing loop's caller keeps the buffers it writes alive: with only
    their addresses, a caller outliving its arrays wrote into freed memory
    (heap corruption in scripts that rebound their buffers)."""
    x = aligned_copy(np.linspace(0, 1, 1024, dtype=np.float32))
    y = aligned_copy(np.ones(1024, np.float32))
    out = aligned_empty(1024, np.float32)
    expected = 2.5 * x + y
    alive = weakref.ref(out)
    run = axpy.caller("axpy", [x, y, out])
    del x, y, out
    gc.collect()
    assert alive() is not None
    run()
    np.testing.assert_allclose(run.arrays[2], expected, rtol=1e-6)
    del run
    gc.collect()
    assert alive() is None


def _read_only(n: int) -> np.ndarray:
    array = aligned_empty(n, np.float32)
    array.flags.writeable = False
    return array


def _misaligned(n: int) -> np.ndarray:
    raw = aligned_empty(n * 4 + 4, np.uint8)
    return raw[4:].view(np.float32)


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        (lambda: [aligned_empty(1024, np.float32)] * 2, "takes 3 buffers, got 2"),
        (
            lambda: [
                _misaligned(1024),
                aligned_empty(1024, np.float32),
                aligned_empty(1024, np.float32),
            ],
            "argument 0: the array must be C-contiguous and 64-byte aligned",
        ),
        (
            lambda: [aligned_empty(2048, np.float32)[::2]] + [aligned_empty(1024, np.float32)] * 2,
            "argument 0: the array must be C-contiguous",
        ),
        (
            lambda: [aligned_empty(n, np.float32) for n in (1024, 1000, 1024)],
            "argument 1: the array holds 4000 bytes, the function uses 4096",
        ),
        (lambda: [[1.0] * 1024] * 3, "argument 0: expected a numpy array"),
        (
            lambda: [aligned_empty(1024, np.float32) for _ in range(2)] + [_read_only(1024)],
            "argument 2: the output array is read-only",
        ),
    ],
)
def test_wrong_arguments_are_refused_before_native_code(axpy, arrays, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=message):
        axpy.call("axpy", arrays())


def test_unknown_function_is_refused(axpy) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match="no exported function @nope taking buffers"):
        axpy.call("nope", [])


def test_libm_functions_resolve_in_process() -> None:
    host_target_machine()
    for symbol in ("erff", "tanhf", "cbrt", "log1p", "aligned_alloc", "free"):
        assert llvm_binding.address_of_symbol(symbol), symbol
    compiled = compile_module(lowered(LIBM))
    x = aligned_copy(np.linspace(-2, 2, 8, dtype=np.float32))
    y, z = aligned_empty(8, np.float32), aligned_empty(8, np.float64)
    compiled.call("libm", [x, y, z])
    erf = np.array([np.float32(np.vectorize(__import__("math").erf)(v)) for v in x])
    np.testing.assert_allclose(y, np.tanh(erf), rtol=1e-6)
    with np.errstate(invalid="ignore"):
        expected = np.log1p(np.cbrt(x.astype(np.float64)))
    np.testing.assert_allclose(z, expected, rtol=1e-13)


def test_engines_outlive_each_other() -> None:
    """Each engine owns its target machine: dropping one leaves the others
    (and later compilations) working."""
    first = compile_module(lowered(AXPY))
    second = compile_module(lowered(AXPY))
    del first
    gc.collect()
    third = compile_module(lowered(AXPY))
    x, y = aligned_copy(np.ones(1024, np.float32)), aligned_copy(np.ones(1024, np.float32))
    for compiled in (second, third):
        out = aligned_empty(1024, np.float32)
        compiled.call("axpy", [x, y, out])
        assert (out == 3.5).all()


def test_o3_vectorizes_for_the_host() -> None:
    text = optimized_llvm_ir(lowered(AXPY))
    assert host_target_machine().triple in text
    assert "fmul <" in text and "x float>" in text, "the loop should be vectorized"


def test_xtc_o3_is_llvm_o2_on_a_cpu_and_o3_on_nvptx(monkeypatch: pytest.MonkeyPatch) -> None:
    levels: list[int] = []
    make_options = llvm_binding.create_pipeline_tuning_options

    def spy(speed_level: int) -> object:
        levels.append(speed_level)
        return make_options(speed_level=speed_level)

    monkeypatch.setattr(llvm_binding, "create_pipeline_tuning_options", spy)
    cpu, nvptx = host_target_machine(), nvptx_target_machine()
    for machine, opt_level in ((cpu, 3), (cpu, 2), (cpu, 1), (nvptx, 3)):
        optimize_at(llvm_binding.parse_assembly(""), opt_level, machine)
    assert CPU_LLVM_LEVEL == 2
    assert levels == [2, 2, 1, 3]


def test_llvm_ir_text_before_optimization() -> None:
    text = llvm_ir(lowered(AXPY))
    assert 'define void @"axpy"(ptr dereferenceable(4096)' in text
    assert "fmul float" in text and "phi" in text


WITH_DATA = """
builtin.module {
  "memref.global"() <{sym_name = "table", type = memref<4xf32>, sym_visibility = "private",
    initial_value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>, constant}> : () -> ()
  "memref.global"() <{sym_name = "scratch", type = memref<2xi64>, sym_visibility = "private",
    initial_value = unit}> : () -> ()
  func.func @look(%out: memref<4xf32> {graph.output = 0 : i64}) {
    %t = memref.get_global @table : memref<4xf32>
    tir.for %i = 0 to 4 step 1 {name = "i0", kind = "serial"} {
      %v = memref.load %t[%i] : memref<4xf32>
      memref.store %v, %out[%i] : memref<4xf32>
    }
    func.return
  }
}
"""


def test_translation_puts_the_data_in_as_bytes_and_leaves_the_module_as_it_was() -> None:
    module = lowered(WITH_DATA)
    before = module_to_text(module)
    text = llvm_ir(module)
    assert module_to_text(module) == before
    # 1.0 to 4.0 as little-endian f32 bytes; the uninitialized global zero-filled.
    assert '[16 x i8] c"\\00\\00\\80?\\00\\00\\00@\\00\\00@@\\00\\00\\80@"' in text
    assert '@"scratch" = internal global [16 x i8] c"' + "\\00" * 16 + '"' in text
    out = aligned_empty(4, np.float32)
    compile_module(module).call("look", [out])
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0, 4.0])


def test_llvm_ir_refuses_a_module_not_at_the_llvm_level() -> None:
    with pytest.raises(LLVMIRError, match="'func.func' is not an llvm op"):
        llvm_ir(parse_module(AXPY))


def test_xtc_opt_llvm_ir_target(tmp_path: Path) -> None:
    source = tmp_path / "axpy.mlir"
    source.write_text(AXPY)
    result = subprocess.run(
        [XTC_OPT, str(source), "-p", "convert-tir-to-llvm", "-t", "llvm-ir{optimize=true}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "define void @axpy" in result.stdout and "<" in result.stdout
    result = subprocess.run(
        [XTC_OPT, str(source), "-t", "llvm-ir"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "error: 'func.func' is not an llvm op: run convert-tir-to-llvm first" in result.stderr
