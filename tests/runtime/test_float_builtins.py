"""The f16 conversion helpers every module carries (runtime/float_builtins.py):
bit-exact against numpy on every f16, millions of f32 and the f64 halfway
cases, compiled for a CPU without F16C (where LLVM calls them for every
conversion) and for this CPU; and the JIT refuses code that calls a symbol
nothing defines, instead of binding it to address 0."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import llvmlite.binding as llvm_binding
import numpy as np
import pytest

from xtc.runtime.float_builtins import FLOAT_BUILTINS, link_float_builtins
from xtc.runtime.llvm_jit import (
    CpuTarget,
    UnresolvedSymbolError,
    aligned_copy,
    aligned_empty,
    compile_module,
    new_target_machine,
)
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module

RNG = np.random.default_rng(11)


def _conversion_loop(name: str, source: str, target: str) -> str:
    """`void name(source* in, target* out, i64 n)`: out[i] = convert(in[i])."""
    cast = "fpext" if source == "half" else "fptrunc"
    return f"""
define void @{name}(ptr %in, ptr %out, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %p = getelementptr {source}, ptr %in, i64 %i
  %x = load {source}, ptr %p
  %y = {cast} {source} %x to {target}
  %q = getelementptr {target}, ptr %out, i64 %i
  store {target} %y, ptr %q
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}"""


CONVERSIONS = {
    "extend_half": ("half", "float", np.float32),
    "truncate_float": ("float", "half", np.float16),
    "truncate_double": ("double", "half", np.float16),
}

TARGETS = {
    "x86-64 (no F16C)": CpuTarget("x86-64"),
    "host": None,
}


class Converters:
    """The conversion loops compiled for one target (keeping the code alive)."""

    def __init__(self, target: CpuTarget) -> None:
        machine = new_target_machine(target)
        ref = llvm_binding.parse_assembly(
            "".join(_conversion_loop(n, s, t) for n, (s, t, _) in CONVERSIONS.items())
        )
        ref.triple, ref.data_layout = machine.triple, str(machine.target_data)
        link_float_builtins(ref)
        self.engine = llvm_binding.create_mcjit_compiler(ref, new_target_machine(target))
        self.engine.finalize_object()

    def __call__(self, name: str, x: np.ndarray) -> np.ndarray:
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
        function = prototype(self.engine.get_function_address(name))
        x = np.ascontiguousarray(x)
        out = np.empty(x.size, CONVERSIONS[name][2])
        function(x.ctypes.data, out.ctypes.data, x.size)
        return out


@pytest.fixture(scope="module", params=list(TARGETS), ids=list(TARGETS))
def convert(request: pytest.FixtureRequest) -> Converters:
    return Converters(TARGETS[request.param] or CpuTarget.host())


def _assert_same_bits(actual: np.ndarray, expected: np.ndarray, inputs: np.ndarray) -> None:
    """Equal bit patterns, any NaN matching any NaN."""
    width = {2: np.uint16, 4: np.uint32}[expected.itemsize]
    same = (actual.view(width) == expected.view(width)) | (np.isnan(actual) & np.isnan(expected))
    assert same.all(), (inputs[~same][:5], actual[~same][:5], expected[~same][:5])


def test_every_half_extends_exactly(convert: Converters) -> None:
    every_half = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    out = convert("extend_half", every_half)
    _assert_same_bits(out, every_half.astype(np.float32), every_half)


def test_floats_round_to_the_nearest_even_half(convert: Converters) -> None:
    anything = RNG.integers(0, 1 << 32, 1 << 20, dtype=np.uint64)
    near_half_range = RNG.integers(0x32000000, 0x48000000, 1 << 20, dtype=np.uint64)
    signs = RNG.integers(0, 2, 1 << 20, dtype=np.uint64) << 31
    floats = np.concatenate([anything, near_half_range | signs]).astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore"):
        expected = floats.astype(np.float16)
    _assert_same_bits(convert("truncate_float", floats), expected, floats)


def test_doubles_round_once_to_the_nearest_even_half(convert: Converters) -> None:
    """Halfway between two halves, and a hair either side of it: rounding
    through f32 to nearest would round twice and get some of these wrong."""
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    finite = np.unique(halves[np.isfinite(halves)].astype(np.float64))
    middles = (finite[:-1] + finite[1:]) / 2
    specials = [np.inf, -np.inf, np.nan, 65520.0, np.nextafter(65520.0, 0), 1e300, -1e-300, -0.0]
    doubles = np.concatenate(
        [
            middles,
            np.nextafter(middles, np.inf),
            np.nextafter(middles, -np.inf),
            RNG.normal(0, 1000, 1 << 18),
            RNG.normal(0, 1e-5, 1 << 16),
            specials,
        ]
    )
    with np.errstate(over="ignore"):
        expected = doubles.astype(np.float16)
    _assert_same_bits(convert("truncate_double", doubles), expected, doubles)


def test_modules_that_use_no_half_keep_the_builtins_to_themselves() -> None:
    """Hidden: a library exporting them would interpose on other code's."""
    ref = llvm_binding.parse_assembly("define i32 @f() {\n  ret i32 0\n}")
    link_float_builtins(ref)
    for name in FLOAT_BUILTINS:
        assert ref.get_function(name).visibility == llvm_binding.Visibility.hidden


CALLS_NOTHING_DEFINES = """
builtin.module {
  llvm.func @xtc_test_no_such_function(f64) -> f64
  llvm.func @calls(%p: !llvm.ptr) {
    %x = llvm.load %p : !llvm.ptr -> f64
    %y = llvm.call @xtc_test_no_such_function(%x) : (f64) -> f64
    llvm.store %y, %p : f64, !llvm.ptr
    llvm.return
  }
}
"""


def test_a_call_nothing_defines_is_refused_by_name() -> None:
    with pytest.raises(UnresolvedSymbolError, match="xtc_test_no_such_function"):
        compile_module(parse_module(CALLS_NOTHING_DEFINES))


def test_f16_kernels_run_on_a_cpu_without_f16c() -> None:
    """Every f16 conversion of a lowered kernel goes through the builtins."""
    module = parse_module(
        """
builtin.module {
  func.func @scale(%x: memref<64xf16>, %y: memref<64xf16>) {
    tir.for %i = 0 to 64 step 1 {name = "i0", kind = "serial"} {
      %a = memref.load %x[%i] : memref<64xf16>
      %d = arith.extf %a : f16 to f64
      %t = arith.mulf %d, %d : f64
      %h = arith.truncf %t : f64 to f16
      %s = arith.addf %h, %a : f16
      memref.store %s, %y[%i] : memref<64xf16>
    }
    func.return
  }
}
"""
    )
    apply_pipeline(module, "convert-tir-to-llvm")
    baseline = CpuTarget("x86-64")
    jit = compile_module(module, baseline)
    code = new_target_machine(baseline).emit_assembly(llvm_binding.parse_assembly(jit.optimized_ir))
    assert re.search(r"\$__(extendhfsf2|truncsfhf2)\b", code), code
    x = aligned_copy(RNG.uniform(-200, 200, 64).astype(np.float16))
    y = aligned_empty(64, np.float16)
    compile_module(module, baseline).call("scale", [x, y])
    squared = (x.astype(np.float64) ** 2).astype(np.float16)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, (squared.astype(np.float32) + x).astype(np.float16))


HALF_KERNEL = """
builtin.module {
  func.func @halve(%x: memref<64xf16>, %y: memref<64xf16>) {
    tir.for %i = 0 to 64 step 1 {name = "i0", kind = "serial"} {
      %a = memref.load %x[%i] : memref<64xf16>
      %f = arith.extf %a : f16 to f32
      %h = arith.constant 0.5 : f32
      %m = arith.mulf %f, %h : f32
      %t = arith.truncf %m : f32 to f16
      memref.store %t, %y[%i] : memref<64xf16>
    }
    func.return
  }
}
"""
FLOAT_KERNEL = """
builtin.module {
  func.func @halve(%x: memref<64xf32>, %y: memref<64xf32>) {
    tir.for %i = 0 to 64 step 1 {name = "i0", kind = "serial"} {
      %a = memref.load %x[%i] : memref<64xf32>
      %h = arith.constant 0.5 : f32
      %m = arith.mulf %a, %h : f32
      memref.store %m, %y[%i] : memref<64xf32>
    }
    func.return
  }
}
"""
CALLS_HALVE = """
builtin.module {
  func.func private @halve(memref<64xf16>, memref<64xf16>)
  func.func @main(%x: memref<64xf16>, %y: memref<64xf16> {graph.output = 0 : i64}) {
    func.call @halve(%x, %y) : (memref<64xf16>, memref<64xf16>) -> ()
    func.return
  }
}
"""


def _builtins_named(object_file: bytes) -> tuple[set[str], set[str]]:
    """The FLOAT_BUILTINS an ELF object defines, and those it calls undefined."""
    from xtc.runtime.elf_symbols import undefined_symbols

    named = {name for name in FLOAT_BUILTINS if name.encode() in object_file}
    undefined = named & set(undefined_symbols(object_file))
    return named - undefined, undefined


def _linkers() -> list[object]:
    from xtc.runtime import toolchain

    found: list[object] = ["default"]
    if toolchain._zig_binary() is not None:
        found.append(toolchain.Linker("zig cc", (str(toolchain._zig_binary()), "cc"), "pip"))
    return found


@pytest.mark.parametrize("linker", _linkers(), ids=lambda linker: getattr(linker, "name", linker))
def test_kernel_objects_call_the_model_objects_builtins(
    linker: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel object built apart for a CPU without F16C calls the f16
    helpers without defining them (each library compiles them once, in the
    model's object); the library links and converts exactly."""
    from xtc.runtime import library
    from xtc.runtime.library import build_kernel_object, build_library

    if linker != "default":
        monkeypatch.setattr(library, "find_linker", lambda: linker)
    kernel = apply_pipeline(parse_module(HALF_KERNEL), "convert-tir-to-llvm")
    built = build_kernel_object(kernel, target=CpuTarget("x86-64"))
    assert _builtins_named(built.data) == (set(), {"__extendhfsf2", "__truncsfhf2"})
    model = apply_pipeline(parse_module(CALLS_HALVE), "convert-tir-to-llvm")
    build_library(model, tmp_path, kernels=lambda: [built])
    native = ctypes.CDLL(str(tmp_path / "model.so"))
    for name in FLOAT_BUILTINS:  # hidden: the library does not export them
        assert not hasattr(native, name)
    every_half = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    for start in range(0, every_half.size, 64):
        x = aligned_copy(every_half[start : start + 64])
        y = aligned_empty(64, np.float16)
        buffers = (ctypes.c_void_p * 1)(x.ctypes.data), (ctypes.c_void_p * 1)(y.ctypes.data)
        assert native.xtc_run(*buffers) == 0
        with np.errstate(invalid="ignore"):  # NaN halves
            expected = (x.astype(np.float32) * np.float32(0.5)).astype(np.float16)
        _assert_same_bits(y, expected, x)


def test_kernel_objects_without_half_conversions_name_no_builtins() -> None:
    from xtc.runtime.library import build_kernel_object

    kernel = apply_pipeline(parse_module(FLOAT_KERNEL), "convert-tir-to-llvm")
    built = build_kernel_object(kernel, target=CpuTarget("x86-64"))
    assert _builtins_named(built.data) == (set(), set())
