"""The tir schedule primitives (tir-split, tir-reorder, tir-fuse, tir-unroll,
tir-vectorize, tir-cache-write): kernels lowered from graph ops compute the
same numbers before and after a schedule, in the tir interpreter and as
native code, over random shapes and factors; the register-tile composition
of a matmul; refusals are ScheduleErrors, never other exceptions."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.testing.graph_op import random_inputs
from xtc.passes.tir_loops import ScheduleError, loops_by_name
from xtc.passes.tir_reorder import TirReorder
from xtc.passes.tir_split import TirSplit
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline, parse_pipeline
from xtc.driver.textual_ir import parse_module

TO_TIR = "convert-graph-to-te,convert-te-to-tir"
SCHEDULE_SETTINGS = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# ---------------------------------------------------------------------------
# Kernels: one graph op lowered to a tir kernel called from @main.


def _function(
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
    return _function([(m, k), (k, n)], (m, n), "graph.matmul")


def dense(n: int, k: int, m: int) -> str:
    return _function([(n, k), (m, k)], (n, m), "graph.dense")


def conv2d(c: int, size: int, o: int, kernel: int, stride: int, pad: int) -> str:
    out = (size + 2 * pad - kernel) // stride + 1
    props = (
        f"{{strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
    )
    return _function(
        [(1, c, size, size), (o, c, kernel, kernel)],
        (1, o, out, out),
        "graph.conv2d",
        props,
    )


def conv2d_blocked(c: int, size: int, blocks: int, block: int, kernel: int) -> str:
    """conv2d with its weight in blocks of `block` output channels (OIHW<block>o)."""
    out = size - kernel + 1
    return _function(
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
    return _function([(1, c, size, size)], (1, c, out, out), f"graph.{kind}", props)


def add(rows: int, cols: int, depth: int) -> str:
    shape = (rows, cols, depth)
    return _function([shape, shape], shape, "graph.add")


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


@SCHEDULE_SETTINGS
@given(kernels(), st.data())
def test_split_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    loop = data.draw(st.sampled_from(kernel.spatial + kernel.reduction))
    extent = kernel.extent(loop)
    factor = data.draw(st.integers(1, extent))
    scheduled = check_schedule(
        kernel, f"tir-split{{func={kernel.name} loop={loop} factor={factor}}}"
    )
    loops = loops_by_name(kernel_function(scheduled, kernel.name))
    assert loop not in loops
    assert loops[f"{loop}_o"][0].extent == extent // factor
    assert loops[f"{loop}_i"][0].extent == factor
    tails = loops.get(f"{loop}_tail", [])
    assert [t.extent for t in tails] == ([extent % factor] if extent % factor else [])
    assert all(len(same) == 1 for same in loops.values())


@pytest.mark.parametrize(("factor", "folded"), [(4, True), (2, False)])
def test_split_by_the_block_reads_blocked_weights_from_the_loop_variables(
    factor: int, folded: bool
) -> None:
    """Splitting the output channels of a conv2d with OIHW4o weights by 4
    turns `oc floordiv 4` and `oc rem 4` into the outer and inner loop
    variables; by 2 it keeps them."""
    kernel = lower(conv2d_blocked(2, 4, 2, 4, 2))
    channels = kernel.spatial[1]
    scheduled = check_schedule(
        kernel, f"tir-split{{func={kernel.name} loop={channels} factor={factor}}}"
    )
    ops = list(kernel_function(scheduled, kernel.name).walk())
    division = any(isinstance(op, arith.FloorDivSIOp | arith.RemSIOp) for op in ops)
    assert division != folded
    weight = next(op for op in ops if isinstance(op, memref.LoadOp) and len(op.indices) == 5)
    loops = loops_by_name(kernel_function(scheduled, kernel.name))
    if folded:
        assert weight.indices[0] is loops[f"{channels}_o"][0].induction_variable
        assert weight.indices[4] is loops[f"{channels}_i"][0].induction_variable


def test_split_peels_and_renames_the_tail_copy() -> None:
    kernel = lower(matmul(5, 3, 7))
    scheduled = check_schedule(kernel, "tir-split{func=matmul_0 loop=i1 factor=3}")
    loops = loops_by_name(kernel_function(scheduled, "matmul_0"))
    tail = loops["i1_tail"][0]
    assert tail.extent == 1
    assert [op.loop_name.data for op in tail.walk() if isinstance(op, ForOp)] == [
        "i1_tail",
        "r0_i1_tail",
    ]


# ---------------------------------------------------------------------------
# Reorder.


@SCHEDULE_SETTINGS
@given(kernels(), st.data())
def test_reorder_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    nests = [n for n in (kernel.spatial, kernel.reduction) if len(n) > 1]
    nest = data.draw(st.sampled_from(nests))
    order = data.draw(st.permutations(nest))
    scheduled = check_schedule(
        kernel,
        f"tir-reorder{{func={kernel.name} order={','.join(order)}}}",
        exact=nest is kernel.spatial,
    )
    func = kernel_function(scheduled, kernel.name)
    outermost = loops_by_name(func)[order[0]][0]
    inside = [op.loop_name.data for op in outermost.walk() if isinstance(op, ForOp)]
    assert inside[: len(order)] == list(order)


def test_reorder_refuses_a_split_after_a_peeled_split() -> None:
    kernel = lower(matmul(6, 2, 5))
    schedule = (
        "tir-split{func=matmul_0 loop=i1 factor=2},tir-split{func=matmul_0 loop=i0 factor=4},"
        "tir-reorder{func=matmul_0 order=i0_o,i1_o,i0_i,i1_i}"
    )
    with pytest.raises(ScheduleError, match=r"loop 'i0_i' in @matmul_0 is not perfectly nested"):
        apply_pipeline(kernel.tir.clone(), schedule)


def test_reorder_refuses_moving_a_reduction_past_its_accumulator() -> None:
    kernel = lower(matmul(2, 3, 4))
    with pytest.raises(ScheduleError, match=r"holds the accumulator of reduction loop 'r0'"):
        apply_pipeline(kernel.tir.clone(), "tir-reorder{func=matmul_0 order=r0,i1}")


# ---------------------------------------------------------------------------
# Fuse.


@SCHEDULE_SETTINGS
@given(kernels(), st.data())
def test_fuse_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    pairs = [p for n in (kernel.spatial, kernel.reduction) for p in itertools.pairwise(n)]
    outer, inner = data.draw(st.sampled_from(pairs))
    scheduled = check_schedule(
        kernel, f"tir-fuse{{func={kernel.name} outer={outer} inner={inner}}}"
    )
    loops = loops_by_name(kernel_function(scheduled, kernel.name))
    assert outer not in loops and inner not in loops
    assert loops[f"{outer}_{inner}"][0].extent == kernel.extent(outer) * kernel.extent(inner)


# ---------------------------------------------------------------------------
# Cache-write, and the register tile it is for.


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


@SCHEDULE_SETTINGS
@given(reduction_kernels(), st.data())
def test_cache_write_of_a_register_tile_keeps_the_numbers(
    kernel: Kernel, data: st.DataObject
) -> None:
    rows, cols = kernel.spatial[-2:]
    rows_factor = data.draw(st.integers(1, kernel.extent(rows)))
    cols_factor = data.draw(st.integers(1, kernel.extent(cols)))
    scheduled = check_schedule(
        kernel, register_tile(kernel.name, rows, cols, rows_factor, cols_factor)
    )
    assert (rows_factor, cols_factor) in accumulators(scheduled, kernel.name)


@SCHEDULE_SETTINGS
@given(reduction_kernels(), st.data())
def test_cache_write_of_inner_loops_keeps_the_numbers(kernel: Kernel, data: st.DataObject) -> None:
    """Caching at any spatial loop but the innermost: the loops inside it
    are the tile (k >= 1)."""
    position = data.draw(st.integers(0, len(kernel.spatial) - 2))
    loop = kernel.spatial[position]
    scheduled = check_schedule(kernel, f"tir-cache-write{{func={kernel.name} loop={loop}}}")
    tile = tuple(kernel.extent(t) for t in kernel.spatial[position + 1 :])
    assert tile in accumulators(scheduled, kernel.name)


def test_cache_write_refuses_a_loop_holding_the_accumulator() -> None:
    kernel = lower(matmul(2, 3, 4))
    with pytest.raises(ScheduleError, match=r"loop 'i1' in @matmul_0 holds its accumulator"):
        apply_pipeline(kernel.tir.clone(), "tir-cache-write{func=matmul_0 loop=i1}")


BRIEF_SCHEDULE = (
    "tir-split{func=matmul_0 loop=i1 factor=16},tir-split{func=matmul_0 loop=i0 factor=4},"
    "tir-reorder{func=matmul_0 order=i0_o,i1_o,i0_i,i1_i},tir-cache-write{func=matmul_0 loop=i1_o},"
    "tir-unroll{func=matmul_0 loop=i0_i},tir-vectorize{func=matmul_0 loop=i1_i}"
)
PEELING_SCHEDULE = (
    register_tile("matmul_0", "i0", "i1", 4, 16)
    + ",tir-unroll{func=matmul_0 loop=i0_i},tir-vectorize{func=matmul_0 loop=i1_i}"
)


def check_micro_kernel(scheduled: ModuleOp) -> None:
    """A 4x16 accumulator; the reduction loop around i0_i (unrolled) around
    i1_i (vectorized), which holds no loop."""
    assert (4, 16) in accumulators(scheduled, "matmul_0")
    loops = {n: ls[0] for n, ls in loops_by_name(kernel_function(scheduled, "matmul_0")).items()}
    assert loops["i0_i"].kind.data == "unrolled" and loops["i1_i"].kind.data == "vectorized"
    assert loops["i0_i"].parent_op() is loops["r0"]
    assert loops["i1_i"].parent_op() is loops["i0_i"]


def test_register_tile_of_a_dividing_matmul() -> None:
    """64x32x48, natively only (the interpreter takes seconds on it), both
    orders of splitting; and against numpy."""
    kernel = lower(matmul(64, 32, 48))
    a, b = random_inputs(kernel.graph, seed=1)
    for schedule in (BRIEF_SCHEDULE, PEELING_SCHEDULE):
        scheduled = check_schedule(kernel, schedule, interpret=False)
        check_micro_kernel(scheduled)
        np.testing.assert_allclose(run_native(scheduled, [a, b])[0], a @ b, rtol=1e-4, atol=1e-4)


def test_register_tile_of_a_matmul_with_remainders() -> None:
    """33x17x29: the brief's order (split i1, then i0) leaves i0_i holding
    i1_o and i1_tail, which reorder refuses; splitting i0 and moving i0_i
    in before splitting i1 tiles it, the tails outside the tile."""
    kernel = lower(matmul(33, 17, 29))
    with pytest.raises(ScheduleError, match=r"its body holds 2 loops \('i1_o', 'i1_tail'\)"):
        apply_pipeline(kernel.tir.clone(), BRIEF_SCHEDULE)
    check_micro_kernel(check_schedule(kernel, PEELING_SCHEDULE))


# ---------------------------------------------------------------------------
# Unroll and vectorize change no number.


def test_unroll_and_vectorize_keep_the_numbers() -> None:
    kernel = lower(conv2d(2, 6, 3, 3, 2, 1))
    schedule = (
        "tir-unroll{func=conv2d_0 loop=r1},tir-vectorize{func=conv2d_0 loop=r2},"
        "tir-unroll{func=conv2d_0 loop=i3}"
    )
    scheduled = check_schedule(kernel, schedule)
    loops = loops_by_name(kernel_function(scheduled, "conv2d_0"))
    assert [loops[n][0].kind.data for n in ("r1", "r2", "i3")] == [
        "unrolled",
        "vectorized",
        "unrolled",
    ]


# ---------------------------------------------------------------------------
# Any options: a schedule either computes the same numbers or is refused
# with a ScheduleError naming the pass.

LOOP_NAMES = ["i0", "i1", "i2", "i3", "i1_1", "i2_1", "i3_1", "r0", "r1", "r2", "i9", "i1_o"]


def random_pass(data: st.DataObject, func: str) -> str:
    name = st.sampled_from(LOOP_NAMES)
    builders: dict[str, Callable[[], str]] = {
        "tir-split": lambda: f"loop={data.draw(name)} factor={data.draw(st.integers(0, 9))}",
        "tir-reorder": lambda: (
            "order=" + ",".join(data.draw(st.lists(name, min_size=1, max_size=4)))
        ),
        "tir-fuse": lambda: f"outer={data.draw(name)} inner={data.draw(name)}",
        "tir-unroll": lambda: f"loop={data.draw(name)}",
        "tir-vectorize": lambda: f"loop={data.draw(name)}",
        "tir-cache-write": lambda: f"loop={data.draw(name)}",
    }
    pass_name = data.draw(st.sampled_from(sorted(builders)))
    target = data.draw(st.sampled_from([func, "", "nowhere"]))
    options = builders[pass_name]()
    return f"{pass_name}{{func={target} {options}}}" if target else f"{pass_name}{{{options}}}"


CONV = lower(conv2d(2, 5, 2, 3, 2, 1))
CONV_INPUTS = random_inputs(CONV.graph, seed=2)
CONV_OUTPUTS = interp.run(CONV.tir, CONV_INPUTS)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_any_schedule_computes_the_same_or_is_refused(data: st.DataObject) -> None:
    module = CONV.tir.clone()
    for _ in range(data.draw(st.integers(1, 3))):
        spec = random_pass(data, CONV.name)
        try:
            apply_pipeline(module, spec)
        except ScheduleError as e:
            assert str(e).startswith(spec.split("{")[0] + ": "), str(e)
            return
        for e, g in zip(CONV_OUTPUTS, interp.run(module, CONV_INPUTS), strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Option spelling.


def test_options_read_bare_or_quoted_and_print_back() -> None:
    bare = parse_pipeline("tir-reorder{func=matmul_0 order=i0_o,i1_o,i0_i}").passes[0]
    quoted = parse_pipeline('tir-reorder{func="matmul_0" order="i0_o","i1_o","i0_i"}').passes[0]
    assert bare == quoted == TirReorder(func="matmul_0", order=("i0_o", "i1_o", "i0_i"))
    single = parse_pipeline("tir-reorder{order=i0}").passes[0]
    assert single == TirReorder(order=("i0",))
    split = TirSplit(func="matmul_0", loop="i.0", factor=4)
    assert parse_pipeline(str(split)).passes[0] == split
    with pytest.raises(ValueError, match="requires argument"):
        parse_pipeline("tir-split{loop=i0}")
