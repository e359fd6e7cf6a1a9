"""convert-te-to-tir: te kernels and models built with the te builder run
the same in the te interpreter before and the tir interpreter after, and both
match numpy; the output keeps to the contract (buffers, output arguments,
globals) and reads back from its text."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i1,
    i32,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from xtc import interp
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.tir import ForOp
from xtc.ops.te_builder import KernelBuilder, exp, maximum, select
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module

ui8 = IntegerType(8, Signedness.UNSIGNED)
RNG = np.random.default_rng(0)
side = st.integers(1, 4)


def tensor(shape: Sequence[int], element: Attribute = f32) -> TensorType[Attribute]:
    return TensorType(element, list(shape))


# Kernels, as compute rules write them.


def elementwise(shape: Sequence[int]) -> FuncOp:
    """exp(x) * 0.5 - x"""
    k = KernelBuilder("elementwise_0", [tensor(shape)])
    (x,) = k.inputs
    y = k.compute(shape, f32, lambda *i: exp(x[i]) * 0.5 - x[i])
    return k.finish([y])


def broadcast_add(rows: int, cols: int) -> FuncOp:
    """a (rows, cols) + b (cols,)"""
    k = KernelBuilder("add_0", [tensor((rows, cols)), tensor((cols,))])
    a, b = k.inputs
    return k.finish([k.compute((rows, cols), f32, lambda i, j: a[i, j] + b[j])])


def matmul(m: int, n: int, p: int, name: str = "matmul_0") -> FuncOp:
    k = KernelBuilder(name, [tensor((m, n)), tensor((n, p))])
    a, b = k.inputs
    c = k.compute((m, p), f32, lambda i, j: k.reduce("sum", (n,), lambda r: a[i, r] * b[r, j]))
    return k.finish([c])


def row_max(rows: int, cols: int) -> FuncOp:
    k = KernelBuilder("reduce_max_0", [tensor((rows, cols))])
    (x,) = k.inputs
    return k.finish(
        [k.compute((rows,), f32, lambda i: k.reduce("max", (cols,), lambda r: x[i, r]))]
    )


def unsigned_kernel(n: int) -> FuncOp:
    """(a + b) wrapping in ui8, and max(a, b) compared as unsigned."""
    k = KernelBuilder("unsigned_0", [tensor((n,), ui8), tensor((n,), ui8)])
    a, b = k.inputs
    total = k.compute((n,), ui8, lambda i: a[i] + b[i])
    larger = k.compute((n,), ui8, lambda i: select(a[i] > b[i], a[i], b[i]))
    return k.finish([total, larger])


def softmax(rows: int, cols: int) -> FuncOp:
    """Four computes, each reading the ones before (intermediate buffers)."""
    k = KernelBuilder("softmax_0", [tensor((rows, cols))])
    (x,) = k.inputs
    top = k.compute((rows,), f32, lambda i: k.reduce("max", (cols,), lambda r: x[i, r]))
    e = k.compute((rows, cols), f32, lambda i, j: exp(x[i, j] - top[i]))
    total = k.compute((rows,), f32, lambda i: k.reduce("sum", (cols,), lambda r: e[i, r]))
    return k.finish([k.compute((rows, cols), f32, lambda i, j: e[i, j] / total[i])])


def integer_stats(rows: int, cols: int) -> FuncOp:
    """i32 row sums and minima, and a bool tensor (x > 0)."""
    k = KernelBuilder("stats_0", [tensor((rows, cols), i32)])
    (x,) = k.inputs
    sums = k.compute((rows,), i32, lambda i: k.reduce("sum", (cols,), lambda r: x[i, r]))
    mins = k.compute((rows,), i32, lambda i: k.reduce("min", (cols,), lambda r: x[i, r]))
    positive = k.compute((rows, cols), i1, lambda i, j: x[i, j] > 0)
    return k.finish([sums, mins, positive])


def kernel_module(kernel: FuncOp) -> ModuleOp:
    module = ModuleOp([kernel])
    module.verify()
    return module


def lower(module: ModuleOp) -> ModuleOp:
    """The module after the pass, printed and read back (so the text holds it)."""
    lowered = apply_pipeline(module.clone(), "convert-te-to-tir")
    reparsed = parse_module(module_to_text(lowered))
    reparsed.verify()
    return reparsed


def run_both(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> list[np.ndarray]:
    """Runs te before and tir after; they agree exactly (same scalar semantics,
    same order of accumulation). Returns the results."""
    before = interp.run(module, list(inputs), function)
    after = interp.run(lower(module), list(inputs), function)
    assert len(before) == len(after)
    for b, a in zip(before, after, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    return after


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@settings(max_examples=6, deadline=None)
@given(st.lists(side, min_size=0, max_size=3))
def test_elementwise(shape: list[int]) -> None:
    x = normal(*shape)
    (y,) = run_both(kernel_module(elementwise(shape)), [x])
    np.testing.assert_allclose(y, np.exp(x) * np.float32(0.5) - x, rtol=1e-6, atol=1e-6)


@settings(max_examples=6, deadline=None)
@given(side, side)
def test_broadcast_add(rows: int, cols: int) -> None:
    a, b = normal(rows, cols), normal(cols)
    (y,) = run_both(kernel_module(broadcast_add(rows, cols)), [a, b])
    np.testing.assert_array_equal(y, a + b)


@settings(max_examples=6, deadline=None)
@given(side, side, side)
def test_matmul(m: int, n: int, p: int) -> None:
    a, b = normal(m, n), normal(n, p)
    (c,) = run_both(kernel_module(matmul(m, n, p)), [a, b])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_max_reduction_propagates_nan_and_starts_at_minus_inf() -> None:
    x = np.array([[-np.inf, -np.inf, -np.inf], [1.0, np.nan, 3.0]], np.float32)
    (y,) = run_both(kernel_module(row_max(2, 3)), [x])
    np.testing.assert_array_equal(y, np.max(x, axis=1))


@settings(max_examples=6, deadline=None)
@given(side, side)
def test_max_reduction(rows: int, cols: int) -> None:
    x = normal(rows, cols)
    (y,) = run_both(kernel_module(row_max(rows, cols)), [x])
    np.testing.assert_array_equal(y, x.max(axis=1))


def test_unsigned_kernel_wraps_and_compares_unsigned() -> None:
    a = np.array([0, 1, 200, 255, 128, 7], np.uint8)
    b = np.array([0, 255, 100, 255, 127, 9], np.uint8)
    total, larger = run_both(kernel_module(unsigned_kernel(6)), [a, b])
    np.testing.assert_array_equal(total, a + b)
    np.testing.assert_array_equal(larger, np.maximum(a, b))


@settings(max_examples=5, deadline=None)
@given(side, side)
def test_softmax_intermediates(rows: int, cols: int) -> None:
    x = normal(rows, cols)
    (y,) = run_both(kernel_module(softmax(rows, cols)), [x])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_integer_reductions_and_bool_result() -> None:
    x = RNG.integers(-(2**31), 2**31 - 1, (3, 4)).astype(np.int32)
    sums, mins, positive = run_both(kernel_module(integer_stats(3, 4)), [x])
    np.testing.assert_array_equal(sums, x.sum(axis=1, dtype=np.int32))
    np.testing.assert_array_equal(mins, x.min(axis=1))
    np.testing.assert_array_equal(positive, x > 0)


def test_empty_reduction_gives_the_identity() -> None:
    (c,) = run_both(kernel_module(matmul(2, 0, 3)), [normal(2, 0), normal(0, 3)])
    np.testing.assert_array_equal(c, np.zeros((2, 3), np.float32))


# Models: @main calling kernels, with constants.


def model(
    kernels: Sequence[FuncOp],
    inputs: Sequence[tuple[str, TensorType[Attribute]]],
    body: Callable[[Block], list[tuple[str, SSAValue]]],
) -> ModuleOp:
    """@main(inputs) whose ops `body` adds to its block; `body` returns the
    (name, value) results."""
    block = Block(arg_types=[t for _, t in inputs])
    named_results = body(block)
    results = [v for _, v in named_results]
    block.add_op(ReturnOp(*results))
    main = FuncOp(
        "main",
        ([t for _, t in inputs], [v.type for v in results]),
        Region(block),
        arg_attrs=ArrayAttr([DictionaryAttr({"graph.name": StringAttr(n)}) for n, _ in inputs]),
        res_attrs=ArrayAttr(
            [DictionaryAttr({"graph.name": StringAttr(n)}) for n, _ in named_results]
        ),
    )
    module = ModuleOp([*kernels, main])
    module.verify()
    return module


def call(block: Block, kernel: FuncOp, *args: SSAValue) -> list[SSAValue]:
    op = CallOp(kernel.sym_name.data, list(args), list(kernel.function_type.outputs.data))
    block.add_op(op)
    return list(op.res)


def mlp_model(weight: np.ndarray, bias: np.ndarray) -> ModuleOp:
    """y = relu(x @ w1 + b) @ w2 + b (w1, w2: blob constants; b: inline), the
    add kernel called twice; the outputs are y, x itself and b itself."""
    n, hidden = weight.shape
    mm1, mm2 = matmul(2, n, hidden), matmul(2, hidden, hidden, "matmul_1")
    add = broadcast_add(2, hidden)
    k = KernelBuilder("relu_0", [tensor((2, hidden))])
    (h,) = k.inputs
    relu = k.finish([k.compute((2, hidden), f32, lambda i, j: maximum(h[i, j], 0.0))])
    weight2 = np.eye(hidden, dtype=np.float32) * 2 + 0.125

    def body(block: Block) -> list[tuple[str, SSAValue]]:
        w1 = ConstantOp.from_array(weight, "w1")
        w2 = ConstantOp.from_array(weight2, "w2")
        b = ConstantOp.from_array(bias, "b1")
        block.add_ops([w1, w2, b])
        (t,) = call(block, mm1, block.args[0], w1.output)
        (t,) = call(block, add, t, b.output)
        (t,) = call(block, relu, t)
        (t,) = call(block, mm2, t, w2.output)
        (y,) = call(block, add, t, b.output)
        return [("y", y), ("x", block.args[0]), ("bias", b.output)]

    return model([mm1, mm2, add, relu], [("x", tensor((2, n)))], body)


def test_model_with_constants_before_and_after() -> None:
    weight, bias = normal(3, 6), normal(6)
    module = mlp_model(weight, bias)
    x = normal(2, 3)
    y, x_out, bias_out = run_both(module, [x])
    hidden = np.maximum(x @ weight + bias, 0)
    expected = hidden @ (np.eye(6, dtype=np.float32) * 2 + 0.125) + bias
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(x_out, x)
    np.testing.assert_array_equal(bias_out, bias)
    # Inputs by name, as at the graph level.
    (named, *_) = interp.run(lower(module), {"x": x})
    np.testing.assert_array_equal(named, y)


def test_model_keeps_the_contract() -> None:
    lowered = lower(mlp_model(normal(3, 6), normal(6)))
    funcs = {f.sym_name.data: f for f in lowered.body.block.ops if isinstance(f, FuncOp)}
    for func in funcs.values():
        assert not func.function_type.outputs.data
        assert all(isinstance(t, MemRefType) for t in func.function_type.inputs.data)
    main = funcs["main"]
    assert main.arg_attrs is not None
    attrs = [dict(a.data) for a in main.arg_attrs.data]
    assert [str(a["graph.name"]) for a in attrs] == ['"x"', '"y"', '"x"', '"bias"']
    assert "graph.output" not in attrs[0]
    assert [a["graph.output"].value.data for a in attrs[1:]] == [0, 1, 2]  # type: ignore[attr-defined]
    globals_ = [g for g in lowered.body.block.ops if isinstance(g, memref.GlobalOp)]
    assert len(globals_) == 3 and all(g.constant is not None for g in globals_)
    # Blob constants give their globals their resource names (w1, w1_0, ...).
    assert sorted(g.sym_name.data.split("_")[0] for g in globals_) == ["cst", "w1", "w2"]
    body = list(main.body.block.ops)
    allocs = [op for op in body if isinstance(op, memref.AllocOp)]
    deallocs = [op for op in body if isinstance(op, memref.DeallocOp)]
    assert len(allocs) == len(deallocs) == 4
    assert all(op.alignment is not None and op.alignment.value.data == 64 for op in allocs)
    # The last call writes straight into y; x and the bias are copied out.
    calls = [op for op in body if isinstance(op, CallOp)]
    assert calls[-1].arguments[-1] is main.body.block.args[1]
    assert len([op for op in body if isinstance(op, memref.CopyOp)]) == 2
    loop_names = {
        op.loop_name.data for f in funcs.values() for op in f.walk() if isinstance(op, ForOp)
    }
    assert loop_names == {"i0", "i1", "r0"}


def test_twice_returned_result_is_copied_to_the_second_output() -> None:
    kernel = elementwise((3,))

    def body(block: Block) -> list[tuple[str, SSAValue]]:
        (y,) = call(block, kernel, block.args[0])
        return [("a", y), ("b", y)]

    module = model([kernel], [("x", tensor((3,)))], body)
    a, b = run_both(module, [normal(3)])
    np.testing.assert_array_equal(a, b)


def test_graph_ops_are_refused_with_a_message() -> None:
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }"""
    with pytest.raises(DiagnosticException, match="'graph.relu' in @main .* convert-graph-to-te"):
        apply_pipeline(parse_module(text), "convert-te-to-tir")


def test_tir_run_checks_its_inputs() -> None:
    lowered = lower(kernel_module(broadcast_add(2, 3)))
    with pytest.raises(interp.InterpreterError, match="takes 2 inputs, got 3"):
        interp.run(lowered, [normal(2, 3), normal(3), normal(2, 3)])
    with pytest.raises(interp.InterpreterError, match=r"shape \[3\], expected memref<2x3xf32>"):
        interp.run(lowered, [normal(3), normal(3)])


def test_kernel_returning_its_input_copies_it() -> None:
    k = KernelBuilder("identity_0", [tensor((2, 3))])
    module = kernel_module(k.finish([k.inputs[0]]))
    x = normal(2, 3)
    (y,) = run_both(module, [x])
    np.testing.assert_array_equal(y, x)
    copies = [op for op in lower(module).walk() if isinstance(op, memref.CopyOp)]
    assert len(copies) == 1


CLAMPED_SHIFT = """
func.func @shift_0(%x: tensor<5xf32>) -> tensor<5xf32> {
  %y = te.compute : tensor<5xf32> {
  ^bb0(%i: index):
    %one = arith.constant 1 : index
    %zero = arith.constant 0 : index
    %first = arith.cmpi eq, %i, %zero : index
    %v = scf.if %first -> (f32) {
      %f = arith.constant -1.0 : f32
      scf.yield %f : f32
    } else {
      %j = arith.subi %i, %one : index
      %r = tensor.extract %x[%j] : tensor<5xf32>
      scf.yield %r : f32
    }
    te.yield %v : f32
  }
  func.return %y : tensor<5xf32>
}
"""


def test_regions_inside_a_compute_body_are_lowered_too() -> None:
    """An scf.if guarding a read: its regions are copied with their reads lowered."""
    x = normal(5)
    (y,) = run_both(parse_module(CLAMPED_SHIFT), [x])
    np.testing.assert_array_equal(y, np.concatenate([[-1.0], x[:-1]]).astype(np.float32))
