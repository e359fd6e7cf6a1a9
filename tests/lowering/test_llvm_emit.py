"""The lowering's op builders that skip IRDL's argument matching build the
op its IRDL constructor builds: same operands, result types, properties
(in the same order) and attributes."""

from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import DenseArrayBase, VectorType, f32, i1, i32
from xdsl.ir import Block, Operation, Region

from xtc.lowering.llvm_emit import (
    i32_array,
    insert_element_op,
    shuffle_vector_op,
    undef_op,
)


def _same(built: Operation, reference: Operation) -> None:
    assert type(built) is type(reference)
    assert list(built.operands) == list(reference.operands)
    assert [r.type for r in built.results] == [r.type for r in reference.results]
    assert list(built.properties.items()) == list(reference.properties.items())
    assert built.attributes == reference.attributes
    assert list(built.successors) == list(reference.successors)


@given(st.sampled_from([4, 8, 16]), st.lists(st.integers(0, 31), min_size=1, max_size=16))
def test_vector_builders_build_the_irdl_ops(lanes: int, mask: list[int]) -> None:
    vector_type = VectorType(f32, [lanes])
    scalars = Block(arg_types=[f32, i32]).args
    undefined = undef_op(vector_type)
    _same(undefined, llvm.UndefOp(vector_type))
    inserted = insert_element_op(undefined.res, scalars[0], scalars[1])
    _same(inserted, llvm.InsertElementOp(undefined.res, scalars[0], scalars[1]))
    shuffled = shuffle_vector_op(inserted.res, undefined.res, tuple(mask), vector_type)
    reference = llvm.ShuffleVectorOp(
        inserted.res, undefined.res, DenseArrayBase.from_list(i32, mask), vector_type
    )
    _same(shuffled, reference)
    assert i32_array(tuple(mask)) is i32_array(tuple(mask))


def test_intrinsic_calls_and_branches_build_the_irdl_ops() -> None:
    from xdsl.pattern_rewriter import PatternRewriter

    from xtc.lowering.convert_to_llvm import LowerBranch
    from xtc.lowering.llvm_emit import Emitter, Externals

    entry, then, other = Block(arg_types=[i1, f32, f32]), Block(arg_types=[f32]), Block()
    region = Region([entry, then, other])
    condition, x, y = entry.args
    anchor = cf.ConditionalBranchOp(condition, then, [x], other, [])
    entry.add_op(anchor)
    emit = Emitter(PatternRewriter(anchor), Externals())
    for fastmath in (None, llvm.FastMathAttr("fast")):
        call = emit.value_intrinsic("llvm.fma.f32", [x, y, x], f32, fastmath).owner
        assert isinstance(call, Operation)
        reference = llvm.CallIntrinsicOp("llvm.fma.f32", [x, y, x], [f32])
        if fastmath is not None:
            reference.fastmathFlags = fastmath
        _same(call, reference)
    LowerBranch(Externals()).match_and_rewrite(anchor, PatternRewriter(anchor))
    lowered = entry.last_op
    assert isinstance(lowered, llvm.CondBrOp)
    _same(lowered, llvm.CondBrOp(condition, then, [x], other, []))
    assert list(lowered.then_arguments) == [x] and not lowered.else_arguments
    then.add_op(cf.BranchOp(other))
    branch = then.last_op
    assert branch is not None
    LowerBranch(Externals()).match_and_rewrite(branch, PatternRewriter(branch))
    _same(then.last_op, llvm.BrOp(other))
    assert region.blocks.first is entry
