"""tir-partition: a Concat's select chain becomes one nest per input, each
reading only its own input, but neighbouring inputs of one shape share a
nest that chooses their buffer (along any axis but the innermost), and the
numbers stay the same (interpreter, bit for bit, and native, scheduled or
not)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import Float32Type
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.scheduling import schedule_kernels
from xtc.driver.textual_ir import parse_module
from xtc.remarks import VECTORIZE_MISSED, collect_remarks
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import (
    SCHEDULE_SETTINGS,
    check_schedule,
    kernel_function,
    lower,
    one_op_function,
)


def concat_text(sizes: list[int], axis: int, other: tuple[int, int]) -> str:
    """@main concatenating rank-3 f32 tensors of `sizes` along `axis` (the
    other two axes `other`)."""

    def shape(size: int) -> tuple[int, ...]:
        dims = list(other)
        dims.insert(axis, size)
        return tuple(dims)

    inputs = [shape(size) for size in sizes]
    return one_op_function(inputs, shape(sum(sizes)), "graph.concat", f"{{axis = {axis} : i64}}")


def top_nests(func: FuncOp) -> list[ForOp]:
    return [op for op in func.body.block.ops if isinstance(op, ForOp)]


def buffers(value: SSAValue) -> set[str]:
    """The arguments a buffer value is, through selects of buffers."""
    if isinstance(select := value.owner, arith.SelectOp):
        return buffers(select.lhs) | buffers(select.rhs)
    return {str(value.name_hint)}


def loaded(nest: ForOp) -> set[str]:
    loads = [op for op in nest.walk() if isinstance(op, memref.LoadOp)]
    return {name for load in loads for name in buffers(load.memref)}


def shared_nests(sizes: list[int], axis: int) -> list[list[int]]:
    """The inputs each nest reads: neighbours of one size together, but
    along the innermost axis (rank 3: axis 2)."""
    groups: list[list[int]] = []
    for number, size in enumerate(sizes):
        if groups and axis != 2 and sizes[groups[-1][0]] == size:
            groups[-1].append(number)
        else:
            groups.append([number])
    return groups


@SCHEDULE_SETTINGS
@given(
    st.lists(st.integers(1, 5), min_size=2, max_size=5),
    st.integers(0, 2),
    st.tuples(st.integers(1, 4), st.integers(1, 6)),
)
def test_concat_becomes_one_nest_per_input_or_run_of_one_shape(
    sizes: list[int], axis: int, other: tuple[int, int]
) -> None:
    kernel = lower(concat_text(sizes, axis, other))
    partitioned = check_schedule(kernel, "tir-partition")
    nests = top_nests(kernel_function(partitioned, kernel.name))
    groups = shared_nests(sizes, axis)
    assert len(nests) == len(groups)
    for group, nest in zip(groups, nests, strict=True):
        assert loaded(nest) == {f"in{number}" for number in group}
        ops = list(nest.walk())
        assert len([op for op in ops if isinstance(op, memref.LoadOp)]) == 1
        selects = [op for op in ops if isinstance(op, arith.SelectOp)]
        assert not any(isinstance(op.result.type, Float32Type) for op in selects)
        assert len(group) > 1 or not selects
        loops = [loop for loop in ops if isinstance(loop, ForOp)]
        assert loops[axis].extent == sum(sizes[number] for number in group)


@SCHEDULE_SETTINGS
@given(st.integers(2, 6), st.integers(1, 4), st.sampled_from([16, 20, 37]))
def test_shared_nest_scheduled_computes_the_concat(inputs: int, channels: int, width: int) -> None:
    """A run of same-shaped inputs along the channels, then the default
    schedule, which still vectorizes the shared nest's innermost loop (the
    buffer chosen is the same across it), natively: the Concat's numbers."""
    kernel = lower(concat_text([5, *[channels] * inputs], 1, (1, width)))
    partitioned = apply_pipeline(kernel.tir.clone(), "tir-partition")
    assert len(top_nests(kernel_function(partitioned, kernel.name))) == 2
    arrays = random_inputs(kernel.graph, seed=2)
    with collect_remarks() as remarks:
        steps = schedule_kernels(partitioned, "main")
        native = run_native(partitioned, arrays)
    assert any(step.startswith(f"tir-vectorize{{func={kernel.name} loop=i2_p1") for step in steps)
    assert not [r for r in remarks if r.category == VECTORIZE_MISSED]
    for expected, got in zip(interp.run(kernel.tir, arrays), native, strict=True):
        np.testing.assert_array_equal(got, expected)


def concat_scale_relu_text(first: int, inputs: int, channels: int, size: int) -> str:
    """DenseNet's kernel, small: relu(concat(x0, x1, ...) * s) along the
    channels, x0 of `first` channels and the others of `channels`."""
    total = first + inputs * channels
    shapes = [(1, first, size, size), *[(1, channels, size, size)] * inputs]

    def t(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    args = ", ".join(f"%x{i}: {t(shape)}" for i, shape in enumerate(shapes))
    operands = ", ".join(f"%x{i}" for i in range(len(shapes)))
    types = ", ".join(t(shape) for shape in shapes)
    y, s = t((1, total, size, size)), t((total, 1, 1))
    return (
        f"func.func @main({args}, %s: {s}) -> {y} {{\n"
        f"  %c = graph.concat {operands} {{axis = 1 : i64}} : ({types}) -> {y}\n"
        f"  %m = graph.mul %c, %s : ({y}, {s}) -> {y}\n"
        f"  %r = graph.relu %m : ({y}) -> {y}\n"
        f"  func.return %r : {y}\n}}\n"
    )


@SCHEDULE_SETTINGS
@given(st.integers(1, 6), st.integers(2, 7), st.integers(1, 3), st.integers(1, 9))
def test_fused_concat_scale_relu_shares_a_nest_and_keeps_its_numbers(
    first: int, inputs: int, channels: int, size: int
) -> None:
    """The fused kernel (Concat, per-channel scale from one buffer, Relu):
    x0 alone unless of the others' shape, the others in one nest, and the
    scheduled kernel computes what the graph does, natively."""
    graph = parse_module(concat_scale_relu_text(first, inputs, channels, size))
    fused = "graph-fuse-ops,convert-graph-to-te,te-inline,convert-te-to-tir"
    tir = apply_pipeline(graph.clone(), fused)
    partitioned = apply_pipeline(tir.clone(), "tir-partition")
    kernel = next(f for f in partitioned.ops if isinstance(f, FuncOp) and f.sym_name.data != "main")
    assert len(top_nests(kernel)) == (1 if first == channels else 2)
    schedule_kernels(partitioned, "main")
    arrays = random_inputs(graph, seed=3)
    native = run_native(partitioned, arrays)
    for expected, got in zip(interp.run(graph, arrays), native, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_a_nest_without_a_select_chain_is_left_alone() -> None:
    kernel = lower(concat_text([3], 1, (2, 4)))
    before = top_nests(kernel_function(kernel.tir, kernel.name))
    after = top_nests(
        kernel_function(apply_pipeline(kernel.tir.clone(), "tir-partition"), kernel.name)
    )
    assert [loop.loop_name.data for loop in after] == [loop.loop_name.data for loop in before]
