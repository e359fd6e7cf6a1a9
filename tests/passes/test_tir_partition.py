"""tir-partition: a Concat's select chain becomes one nest per input, each
reading only its own input, and the numbers stay the same (interpreter, bit
for bit, and native)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import arith, memref
from xdsl.dialects.func import FuncOp

from xtc.dialects.tir import ForOp
from xtc.driver.pipelines import apply_pipeline
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


def loaded(nest: ForOp) -> set[str]:
    return {
        str(op.memref.name_hint) for op in nest.walk() if isinstance(op, memref.LoadOp)
    }


@SCHEDULE_SETTINGS
@given(
    st.lists(st.integers(1, 5), min_size=2, max_size=5),
    st.integers(0, 2),
    st.tuples(st.integers(1, 4), st.integers(1, 6)),
)
def test_concat_becomes_one_nest_per_input(
    sizes: list[int], axis: int, other: tuple[int, int]
) -> None:
    kernel = lower(concat_text(sizes, axis, other))
    partitioned = check_schedule(kernel, "tir-partition")
    nests = top_nests(kernel_function(partitioned, kernel.name))
    assert len(nests) == len(sizes)
    for number, nest in enumerate(nests):
        assert loaded(nest) == {f"in{number}"}
        ops = list(nest.walk())
        assert not any(isinstance(op, arith.SelectOp | arith.CmpiOp) for op in ops)
        loops = [loop for loop in ops if isinstance(loop, ForOp)]
        assert loops[axis].extent == sizes[number]


def test_a_nest_without_a_select_chain_is_left_alone() -> None:
    kernel = lower(concat_text([3], 1, (2, 4)))
    before = top_nests(kernel_function(kernel.tir, kernel.name))
    after = top_nests(
        kernel_function(apply_pipeline(kernel.tir.clone(), "tir-partition"), kernel.name)
    )
    assert [loop.loop_name.data for loop in after] == [loop.loop_name.data for loop in before]
