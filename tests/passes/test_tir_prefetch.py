"""tir-prefetch: each iteration prefetches exactly the cache lines the
iteration `distance` steps later reads (recorded in the interpreter over
random sizes, windows and distances); values are unchanged, in the
interpreter and natively (also prefetching far past the buffer's end),
also under a parallel loop; the lowering emits `llvm.prefetch`; the
refusals; the default schedule prefetches a 1x1 conv's input and the
compiled model still matches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

import xtc
from xtc import interp
from xtc.dialects.tir import PrefetchOp
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.interp import make_interpreter
from xtc.passes.tir_loops import ScheduleError
from xtc.runtime.llvm_ir import llvm_ir
from xtc.runtime.llvm_jit import aligned_copy, aligned_empty, compile_module

LINE = 16
"""f32 elements per 64-byte cache line."""


def window(channels: int, rows: int, width: int, k: int) -> str:
    """y[i, j] = sum over r0, a, b of x[r0, i + a, j + b] (a, b < k): the
    iteration r0 of the reduction reads k rows of width + k - 1 floats of
    channel plane r0."""
    h, w = rows + k - 1, width + k - 1
    x, y = f"{channels}x{h}x{w}xf32", f"{rows}x{width}xf32"
    return f"""
func.func @window(%x: memref<{x}>, %y: memref<{y}> {{graph.output = 0 : i64}}) {{
  tir.for %i = 0 to {rows} step 1 {{name = "i", kind = "serial"}} {{
    tir.for %j0 = 0 to {width} step 1 {{name = "j0", kind = "serial"}} {{
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %y[%i, %j0] : memref<{y}>
    }}
    tir.for %r0 = 0 to {channels} step 1 {{name = "r0", kind = "serial"}} {{
      tir.for %a = 0 to {k} step 1 {{name = "a", kind = "serial"}} {{
        tir.for %b = 0 to {k} step 1 {{name = "b", kind = "serial"}} {{
          tir.for %j = 0 to {width} step 1 {{name = "j", kind = "serial"}} {{
            %row = arith.addi %i, %a : index
            %col = arith.addi %j, %b : index
            %v = memref.load %x[%r0, %row, %col] : memref<{x}>
            %o = memref.load %y[%i, %j] : memref<{y}>
            %t = arith.addf %o, %v : f32
            memref.store %t, %y[%i, %j] : memref<{y}>
          }}
        }}
      }}
    }}
  }}
  func.return
}}
"""


def reference(x: np.ndarray, rows: int, width: int, k: int) -> np.ndarray:
    y = np.zeros((rows, width), np.float64)
    for a in range(k):
        for b in range(k):
            y += x[:, a : a + rows, b : b + width].sum(axis=0)
    return y


def prefetched(text: str, loop: str = "r0", distance: int = 1) -> ModuleOp:
    return apply_pipeline(
        parse_module(text), f"tir-prefetch{{loop={loop} buffer=x distance={distance}}}"
    )


def recorded_offsets(module: ModuleOp, arrays: list[np.ndarray]) -> list[int]:
    """The offsets prefetched, in order, while `module` runs on `arrays`."""
    offsets: list[int] = []

    @register_impls
    class Recording(InterpreterFunctions):
        @impl(PrefetchOp)
        def run_prefetch(self, interpreter: Interpreter, op: PrefetchOp, args: tuple[int, ...]):  # noqa: ANN202
            offsets.append(int(args[1]))
            return ()

    interpreter = make_interpreter(module)
    interpreter.register_implementations(Recording(), override=True)
    interpreter.call_op(module.body.block.ops.first, tuple(arrays))  # type: ignore[arg-type]
    return offsets


@settings(max_examples=15, deadline=None)
@given(
    channels=st.integers(1, 6),
    rows=st.integers(1, 3),
    width=st.integers(1, 40),
    k=st.sampled_from([1, 3]),
    distance=st.integers(1, 4),
)
def test_each_iteration_prefetches_the_lines_read_distance_iterations_later(
    channels: int, rows: int, width: int, k: int, distance: int
) -> None:
    module = prefetched(window(channels, rows, width, k), distance=distance)
    h, w = rows + k - 1, width + k - 1
    x = np.random.default_rng(0).random((channels, h, w), dtype=np.float32)
    y = np.zeros((rows, width), np.float32)
    offsets = iter(recorded_offsets(module, [x, y]))
    for i in range(rows):
        for r0 in range(channels):
            later = r0 + distance
            read = {
                (later * h + i + a) * w + b + j
                for a in range(k)
                for b in range(k)
                for j in range(width)
            }
            points = list(range(0, w, LINE)) + ([w - 1] if (w - 1) % LINE else [])
            issued = [next(offsets) for _ in range(k * len(points))]
            # Every element read lies on a line some prefetch falls on, no
            # prefetch is outside the rows read, and each row's first and
            # last elements are prefetched.
            row_starts = {(later * h + i + a) * w for a in range(k)}
            assert all(any(abs(e - p) < LINE for p in issued) for e in read)
            assert all(min(abs(p - s) for s in row_starts) < w for p in issued)
            assert row_starts <= set(issued)
    assert next(offsets, None) is None
    np.testing.assert_allclose(y, reference(x, rows, width, k), rtol=1e-5)


def run_native(module: ModuleOp, x: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    jit = compile_module(apply_pipeline(module.clone(), "convert-tir-to-llvm"))
    out = aligned_empty(shape, np.dtype(np.float32))
    jit.call("window", [aligned_copy(x), out])
    return out


@pytest.mark.parametrize("distance", [2, 100_000])
def test_values_are_unchanged_in_the_interpreter_and_natively(distance: int) -> None:
    """Also when the last iterations prefetch far past the buffer (100,000
    channel planes ahead: 46 MB past its end): the lowering does not clamp
    the address, and a prefetch never faults."""
    text = window(5, 3, 21, 3)
    before, after = parse_module(text), prefetched(text, distance=distance)
    x = np.random.default_rng(1).random((5, 5, 23), dtype=np.float32)
    expected = interp.run(before, [x])[0]
    assert np.array_equal(interp.run(after, [x])[0], expected)
    native = [run_native(module, x, (3, 21)) for module in (before, after)]
    np.testing.assert_allclose(native[0], expected, rtol=1e-5)
    assert np.array_equal(native[0], native[1])


def test_a_loop_holding_prefetches_can_still_run_in_parallel() -> None:
    module = apply_pipeline(prefetched(window(4, 6, 17, 3), distance=3), "tir-parallel{loop=i}")
    x = np.random.default_rng(2).random((4, 8, 19), dtype=np.float32)
    np.testing.assert_allclose(run_native(module, x, (6, 17)), reference(x, 6, 17, 3), rtol=1e-5)


def test_the_lowering_calls_llvm_prefetch() -> None:
    lowered = apply_pipeline(prefetched(window(2, 2, 3, 1)), "convert-tir-to-llvm")
    text = llvm_ir(lowered)
    assert 'call void @"llvm.prefetch.p0"(ptr' in text
    assert "i32 0, i32 3, i32 1)" in text


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "loop=r0 buffer=y",
            "cannot prefetch %y (argument 1) in loop 'r0' of @window: the loop body writes it",
        ),
        (
            "loop=i buffer=x",
            "takes 288 prefetches (one per row and cache line; at most 64)",
        ),
        ("loop=r0 buffer=7", "buffer=7: @window has 2 arguments"),
        ("loop=r0 buffer=x distance=0", "distance=0 must be at least 1"),
        ("loop=r0 buffer=x locality=5", "locality=5 is not one of 0, 1, 2, 3"),
        ("loop=r9 buffer=x", "no function has a loop named 'r9'"),
    ],
)
def test_refusals_name_the_pass_and_the_problem(options: str, message: str) -> None:
    with pytest.raises(ScheduleError, match="tir-prefetch") as error:
        apply_pipeline(parse_module(window(32, 2, 20, 3)), f"tir-prefetch{{{options}}}")
    assert message in str(error.value)


def test_the_default_schedule_prefetches_a_1x1_convs_input_and_matches_onnxruntime() -> None:
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(3)
    weight = numpy_helper.from_array(rng.random((64, 96, 1, 1), dtype=np.float32) - 0.5, "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"])
    graph = helper.make_graph(
        [node],
        "conv1x1",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 96, 14, 14])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 14, 14])],
        [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = xtc.compile(model)
    assert "tir-prefetch{" in compiled.manifest["pipeline"]
    x = rng.random((1, 96, 14, 14), dtype=np.float32)
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled.run({"x": x})[0], expected, rtol=1e-4, atol=1e-4)
