"""te-inline: a te.compute read only by the other te.computes of its kernel
is computed where it is read (TVM's compute_inline), so a fused group becomes
as few loop nests as possible."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import IndexType, ModuleOp, UnrealizedConversionCastOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xtc.analysis.loops import constant_int
from xtc.dialects.te import ComputeOp, ReduceOp, YieldOp
from xtc.dialects.tir import AssertOp

MAX_DUPLICATED_OPS = 32
"""A compute without a reduction read at several places is inlined at each
only while its body has at most this many ops (inlining a chain of such
computes multiplies their sizes)."""


def top_level_op(op: Operation, func: Operation) -> Operation | None:
    """The ancestor of `op` that sits directly in `func`'s body."""
    current: Operation | None = op
    while current is not None and current.parent_op() is not func:
        current = current.parent_op()
    return current


def reads_by_computes(producer: ComputeOp) -> list[tensor.ExtractOp] | None:
    """The `tensor.extract`s of the producer's result, when every use is one
    inside another te.compute of the same function; None otherwise (the
    result is returned, passed to a call, ...)."""
    func = producer.parent_op()
    reads: list[tensor.ExtractOp] = []
    for use in producer.result.uses:
        user = use.operation
        if not isinstance(user, tensor.ExtractOp) or use.index != 0:
            return None
        consumer = top_level_op(user, func) if func is not None else None
        if not isinstance(consumer, ComputeOp) or consumer is producer:
            return None
        reads.append(user)
    return reads


def has_reduce(compute: ComputeOp) -> bool:
    """Whether the compute's body holds a te.reduce."""
    return any(isinstance(op, ReduceOp) for op in compute.body.walk())


def inside_reduce(read: Operation) -> bool:
    """Whether the read sits in a te.reduce body (an inner reduction loop)."""
    parent = read.parent_op()
    while parent is not None and not isinstance(parent, ComputeOp):
        if isinstance(parent, ReduceOp):
            return True
        parent = parent.parent_op()
    return False


def is_reindexing(compute: ComputeOp) -> bool:
    """A copy: the body computes indices and yields one element it reads
    (transpose, reshape, broadcast, slice), no arithmetic on elements."""
    block = compute.body.block
    yielded = block.last_op
    if not isinstance(yielded, YieldOp):
        return False
    read = yielded.value.owner
    while isinstance(read, UnrealizedConversionCastOp):
        # An unsigned element goes through its signless twin and back.
        read = read.inputs[0].owner
    if not isinstance(read, tensor.ExtractOp):
        return False
    for op in block.ops:
        if op is read or op is yielded or isinstance(op, UnrealizedConversionCastOp):
            continue
        if op.regions or not all(isinstance(r.type, IndexType) for r in op.results):
            return False
    return True


def body_size(compute: ComputeOp) -> int:
    """The number of ops in the compute's body, its te.yield left out."""
    return sum(1 for _ in compute.body.walk()) - 1


def is_zero(value: SSAValue) -> bool:
    """Whether the value is the integer or index constant 0."""
    return constant_int(value) == 0


def is_epilogue_read(producer: ComputeOp, reads: list[tensor.ExtractOp]) -> bool:
    """One read, directly in the body of a consumer of the same shape, at
    exactly the consumer's own index (index 0 counts as the own index on an
    axis of size 1), or of the shape permuted, at the own indices permuted
    alike (a u8 conv's NHWC output stored NCHW): the consumer is the
    producer's epilogue."""
    if len(reads) != 1:
        return False
    (read,) = reads
    consumer = read.parent_op()
    if not isinstance(consumer, ComputeOp):
        return False
    shape = consumer.result.type.get_shape()
    own = consumer.body.block.args
    read_shape = producer.result.type.get_shape()
    if shape == read_shape and all(
        index is arg or (extent == 1 and is_zero(index))
        for index, arg, extent in zip(read.indices, own, shape, strict=True)
    ):
        return True
    return is_permuted_read(read, own, shape, read_shape)


def is_permuted_read(
    read: tensor.ExtractOp,
    own: Sequence[SSAValue],
    shape: Sequence[int],
    read_shape: Sequence[int],
) -> bool:
    """Whether `read` takes each of the consumer's own indices of an
    extent above 1 once, in some order, along an axis of the same extent,
    and 0 along the axes of extent 1 (a transpose)."""
    indices = [index for index in read.indices if not is_zero(index)]
    if len(read.indices) != len(own) or len(set(indices)) != len(indices):
        return False
    extents = dict(zip(own, shape, strict=True))
    if any(extent > 1 and arg not in indices for arg, extent in extents.items()):
        return False
    return all(
        (index in extents and extents[index] == extent) or (extent == 1 and is_zero(index))
        for index, extent in zip(read.indices, read_shape, strict=True)
    )


def has_check(compute: ComputeOp) -> bool:
    """Whether the compute's body holds a run-time check (`tir.assert`)."""
    return any(isinstance(op, AssertOp) for op in compute.body.walk())


def may_inline(producer: ComputeOp, reads: list[tensor.ExtractOp]) -> bool:
    """The rules of TeInline."""
    if producer.materialize is not None:
        return False
    if has_reduce(producer) or has_check(producer):
        return is_epilogue_read(producer, reads)
    if any(inside_reduce(r) for r in reads) and not is_reindexing(producer):
        return False
    return len(reads) == 1 or body_size(producer) <= MAX_DUPLICATED_OPS


def inline_at(producer: ComputeOp, read: tensor.ExtractOp, rewriter: PatternRewriter) -> None:
    """Replaces `read` by a copy of the producer's body with its indices
    bound to the read's indices."""
    block = producer.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, read.indices, strict=True))
    value: SSAValue | None = None
    for op in block.ops:
        if isinstance(op, YieldOp):
            value = mapping.get(op.value, op.value)
            break
        rewriter.insert(op.clone(value_mapper=mapping), InsertPoint.before(read))
    assert value is not None, "te.compute verifies that its body ends with te.yield"
    rewriter.replace(read, [], [value])


class InlineCompute(RewritePattern):
    """%p = te.compute {body(i)} ... tensor.extract %p[j] -> body(j), %p erased."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ComputeOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), FuncOp):
            return
        reads = reads_by_computes(op)
        if not reads or not may_inline(op, reads):
            return
        for read in reads:
            inline_at(op, read, rewriter)
        rewriter.erase(op)


@dataclass(frozen=True)
class TeInline(ModulePass):
    """Inlines the te.computes of each kernel into the te.computes that read them.

    Expects: te kernels, as convert-graph-to-te builds them (functions whose
    body is te.computes and a func.return). Produces: the same kernels where
    a te.compute whose result is read only by other te.computes of its
    kernel (with `tensor.extract`; not returned, not passed to a call) is
    gone, each read replaced by a copy of its body with its index arguments
    bound to the read's indices, when
      (a) it has no te.reduce and no check (injective): always, except
          that a read inside a te.reduce of its consumer takes only a pure
          copy or reindexing (a padding stage stays its own compute, so the
          reduction's inner loop stays free of the bounds test); a compute
          read at several places is copied to each only while its body has
          at most MAX_DUPLICATED_OPS ops;
      (b) it has a te.reduce: only when it is read once, directly in the body
          of a consumer of the same shape, at exactly the consumer's own
          index (an out-elementwise epilogue: conv2d, bias add and relu
          become one te.compute whose body is the te.reduce followed by the
          epilogue's scalar ops);
      (c) it has a run-time check (`tir.assert`, an index read from a
          tensor): as (b), so that every element is still computed, and
          checked, exactly once (a consumer reading some elements, or some
          several times, would skip or repeat checks).
    A compute marked `materialize` (its compute rule made it a stage of its
    own: a separable resize's first axis) is never inlined. Other functions
    (the model's, of calls and constants) are left as they are.
    """

    name = "te-inline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Consumers first: an epilogue chain folds into its last compute.
        PatternRewriteWalker(
            InlineCompute(), apply_recursively=True, walk_reverse=True
        ).rewrite_module(op)
