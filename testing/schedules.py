"""Kernels for tests of the tir schedule primitives, shipped for plugin
authors' tests too: one graph op (matmul, dense, conv2d, pooling, add)
lowered to a tir kernel called from `@main`, hypothesis strategies over
their shapes, and `check_schedule`, which applies a schedule and compares
the numbers before and after, on the interpreter and natively. Needs
hypothesis (a test dependency)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_loops import loops_by_name
from xtc.testing.graph_op import random_inputs

TO_TIR = "convert-graph-to-te,convert-te-to-tir"
SCHEDULE_SETTINGS = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# ---------------------------------------------------------------------------
# Kernels: one graph op lowered to a tir kernel called from @main.


def one_op_function(
    inputs: Sequence[tuple[int, ...]], output: tuple[int, ...], op: str, props: str = ""
) -> str:
    """`@main` applying graph op `op` (with properties `props`) to f32 inputs."""

    def t(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    args = ", ".join(f"%x{i}: {t(s)}" for i, s in enumerate(inputs))
    operands = ", ".join(f"%x{i}" for i in range(len(inputs)))
    types = ", ".join(t(s) for s in inputs)
    return (
        f"func.func @main({args}) -> {t(output)} {{\n"
        f"  %y = {op} {operands} {props} : ({types}) -> {t(output)}\n"
        f"  func.return %y : {t(output)}\n}}\n"
    )


def matmul(m: int, k: int, n: int) -> str:
    return one_op_function([(m, k), (k, n)], (m, n), "graph.matmul")


def dense(n: int, k: int, m: int) -> str:
    return one_op_function([(n, k), (m, k)], (n, m), "graph.dense")


def conv2d(c: int, size: int, o: int, kernel: int, stride: int, pad: int) -> str:
    out = (size + 2 * pad - kernel) // stride + 1
    props = (
        f"{{strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
    )
    return one_op_function(
        [(1, c, size, size), (o, c, kernel, kernel)],
        (1, o, out, out),
        "graph.conv2d",
        props,
    )


def conv2d_blocked(c: int, size: int, blocks: int, block: int, kernel: int) -> str:
    """conv2d with its weight in blocks of `block` output channels (OIHW<block>o)."""
    out = size - kernel + 1
    return one_op_function(
        [(1, c, size, size), (blocks, c, kernel, kernel, block)],
        (1, blocks * block, out, out),
        "graph.conv2d",
        f'{{kernel_layout = "OIHW{block}o"}}',
    )


def pool(kind: str, c: int, size: int, kernel: int, stride: int, pad: int) -> str:
    out = (size + 2 * pad - kernel) // stride + 1
    props = (
        f"{{kernel = array<i64: {kernel}, {kernel}>, strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
    )
    return one_op_function([(1, c, size, size)], (1, c, out, out), f"graph.{kind}", props)


def add(rows: int, cols: int, depth: int) -> str:
    shape = (rows, cols, depth)
    return one_op_function([shape, shape], shape, "graph.add")


@dataclass
class Kernel:
    """A graph module, its tir lowering and the kernel function's name, the
    spatial and reduction loops of its last nest (a conv's padding nest
    comes first)."""

    graph: ModuleOp
    tir: ModuleOp
    name: str
    spatial: list[str]
    reduction: list[str]

    def __repr__(self) -> str:
        return f"Kernel({self.name}, spatial={self.spatial}, reduction={self.reduction})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """What hypothesis prints for a failing example: not the IR."""
        printer.text(repr(self))

    def extent(self, loop: str) -> int:
        return loops_by_name(kernel_function(self.tir, self.name))[loop][0].extent


def kernel_function(module: ModuleOp, name: str) -> FuncOp:
    return next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == name)


def nest_loops(func: FuncOp) -> tuple[list[str], list[str]]:
    """The spatial loops of the function's last loop nest (down to its
    accumulator, if any) and its reduction loops (below the accumulator)."""
    last = [op for op in func.body.block.ops if isinstance(op, ForOp)][-1]
    spatial, reduction = [last], []
    while True:
        body = list(spatial[-1].body.block.ops)
        inner = [op for op in body if isinstance(op, ForOp)]
        if any(isinstance(op, memref.AllocaOp) for op in body):
            reduction = inner
            break
        if len(inner) != 1:
            break
        spatial.append(inner[0])
    while reduction:
        inner = [op for op in reduction[-1].body.block.ops if isinstance(op, ForOp)]
        if len(inner) != 1:
            break
        reduction.append(inner[0])
    return [loop.loop_name.data for loop in spatial], [loop.loop_name.data for loop in reduction]


def lower(text: str) -> Kernel:
    graph = parse_module(text)
    tir = apply_pipeline(graph.clone(), TO_TIR)
    kernel = next(f for f in tir.ops if isinstance(f, FuncOp) and f.sym_name.data != "main")
    spatial, reduction = nest_loops(kernel)
    return Kernel(graph, tir, kernel.sym_name.data, spatial, reduction)


def check_schedule(
    kernel: Kernel, schedule: str, exact: bool = True, interpret: bool = True
) -> ModuleOp:
    """Applies the schedule; the scheduled kernel computes what the
    unscheduled one does, in the interpreter (bit for bit when `exact`: the
    schedule keeps each reduction's order) and natively. Without
    `interpret` (kernels too big for the interpreter) the unscheduled
    kernel's native outputs are the reference. Returns it."""
    scheduled = apply_pipeline(kernel.tir.clone(), schedule)
    inputs = random_inputs(kernel.graph, seed=1)
    if interpret:
        expected = interp.run(kernel.tir, inputs)
        for e, g in zip(expected, interp.run(scheduled, inputs), strict=True):
            if exact:
                np.testing.assert_array_equal(g, e)
            else:
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    else:
        expected = run_native(kernel.tir, inputs)
    for e, n in zip(expected, run_native(scheduled, inputs), strict=True):
        np.testing.assert_allclose(n, e, rtol=1e-5, atol=1e-5)
    return scheduled


# ---------------------------------------------------------------------------
# Random kernels.

dims = st.integers(1, 7)


@st.composite
def reduction_kernel_texts(draw: st.DrawFn) -> str:
    """matmul, dense, conv2d (stride, padding; or a blocked weight), max and
    avg pooling, as graph text (what hypothesis prints for a failing example)."""
    which = draw(
        st.sampled_from(["matmul", "dense", "conv2d", "conv2d_blocked", "max_pool2d", "avg_pool2d"])
    )
    if which == "matmul":
        return matmul(draw(dims), draw(dims), draw(dims))
    if which == "dense":
        return dense(draw(dims), draw(dims), draw(dims))
    kernel = draw(st.integers(1, 3))
    stride = draw(st.integers(1, 2))
    size = draw(st.integers(kernel, 7))
    if which == "conv2d_blocked":
        blocks, block = draw(st.integers(1, 2)), draw(st.sampled_from([2, 4]))
        return conv2d_blocked(draw(st.integers(1, 3)), size, blocks, block, kernel)
    if which == "conv2d":
        pad = draw(st.integers(0, 1))
        return conv2d(draw(st.integers(1, 3)), size, draw(st.integers(1, 4)), kernel, stride, pad)
    pad = draw(st.integers(0, kernel - 1))
    return pool(which, draw(st.integers(1, 3)), size, kernel, stride, pad)


def reduction_kernels() -> st.SearchStrategy[Kernel]:
    return reduction_kernel_texts().map(lower)


def kernels() -> st.SearchStrategy[Kernel]:
    """The reduction kernels and an elementwise add."""
    elementwise = st.builds(add, dims, dims, dims)
    return st.one_of(reduction_kernel_texts(), elementwise).map(lower)


# ---------------------------------------------------------------------------
# Split.


def register_tile(func: str, rows: str, cols: str, rows_factor: int, cols_factor: int) -> str:
    """Tiles loops `rows` (outer) and `cols` (inner, directly in `rows`) by
    the factors and caches the tile's accumulators. The outer loop is split
    and moved in first, so the peeled tails never sit inside the tile."""
    return ",".join(
        [
            f"tir-split{{func={func} loop={rows} factor={rows_factor}}}",
            f"tir-reorder{{func={func} order={cols},{rows}_i}}",
            f"tir-split{{func={func} loop={cols} factor={cols_factor}}}",
            f"tir-reorder{{func={func} order={cols}_o,{rows}_i,{cols}_i}}",
            f"tir-cache-write{{func={func} loop={cols}_o}}",
        ]
    )


def accumulators(module: ModuleOp, func: str) -> list[tuple[int, ...]]:
    return [
        tuple(cast(MemRefType[Attribute], op.memref.type).get_shape())
        for op in kernel_function(module, func).walk()
        if isinstance(op, memref.AllocaOp)
    ]
