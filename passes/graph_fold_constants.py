"""graph-fold-constants: evaluate graph ops whose operands are all constants."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xtc.dialects.graph.base import GraphOp, name_stem
from xtc.dialects.graph.constant import ConstantOp, numpy_dtype
from xtc.dialects.graph.control import IfOp, LoopOp, YieldOp
from xtc.interp import RunTimeFault


class FoldOpWithConstantOperands(RewritePattern):
    """op(constant, ..., constant) -> constant, computed by the interpreter."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
            return
        producers = [operand.owner for operand in op.operands]
        if not producers or not all(isinstance(p, ConstantOp) for p in producers):
            return
        arrays = [cast(ConstantOp, p).to_array() for p in producers]
        try:
            results = self.interpreter.run_op(op, tuple(arrays))
        except RunTimeFault:
            return  # the op faults on these constants: left to fail at run time
        name = name_stem(op) + "_folded"
        constants = [
            ConstantOp.from_array(np.asarray(value, dtype=_dtype(result_type)), name)
            for value, result_type in zip(results, op.result_types, strict=True)
        ]
        rewriter.replace(op, constants, [c.output for c in constants])


def _constant_value(value: SSAValue) -> np.ndarray | None:
    """The value of a graph.constant's result, else None."""
    owner = value.owner
    return owner.to_array() if isinstance(owner, ConstantOp) else None


class FoldIfWithConstantCondition(RewritePattern):
    """graph.if on a constant -> the ops of the branch it takes, in its place."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IfOp, rewriter: PatternRewriter) -> None:
        condition = _constant_value(op.condition)
        if condition is None:
            return
        taken = op.then_region if bool(condition.reshape(-1)[0]) else op.else_region
        block = taken.block
        yielded = cast(YieldOp, block.last_op)
        values = list(yielded.values)
        rewriter.erase(yielded)
        rewriter.inline_block(block, InsertPoint.before(op))
        rewriter.replace(op, [], values)


class FoldLoopThatNeverRuns(RewritePattern):
    """graph.loop with a constant false condition or a constant trip count
    of 0 or less, and no scan results -> its carried operands."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoopOp, rewriter: PatternRewriter) -> None:
        trip_count = _constant_value(op.max_trip_count)
        condition = _constant_value(op.condition)
        never = (trip_count is not None and int(trip_count.reshape(-1)[0]) <= 0) or (
            condition is not None and not bool(condition.reshape(-1)[0])
        )
        if never and not op.scan_results:
            rewriter.replace(op, [], list(op.carried))


def _dtype(t: Attribute) -> np.dtype[np.generic]:
    return numpy_dtype(cast(TensorType[Attribute], t).get_element_type())


@dataclass(frozen=True)
class GraphFoldConstants(ModulePass):
    """Replaces every graph op whose operands are all `graph.constant` by the
    constant it computes (numpy interpreter semantics), repeatedly, so whole
    constant subgraphs (weight transforms, shape computations) fold. A
    graph.if on a constant condition becomes the ops of the branch it takes;
    a graph.loop that a constant condition or trip count keeps from running
    becomes its carried operands.

    Expects: a module of graph ops. Produces: the same graph where no graph op
    other than `graph.constant` has only constant operands, except ops that
    fault on their constants (an index out of range, an integer division by
    zero), kept to fail at run time as they would without the pass. Constants left
    without uses stay; run `dce` after it to drop them.
    """

    name = "graph-fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xtc.interp import make_op_interpreter

        patterns = [
            FoldOpWithConstantOperands(make_op_interpreter(op)),
            FoldIfWithConstantCondition(),
            FoldLoopThatNeverRuns(),
        ]
        applier = GreedyRewritePatternApplier(list[RewritePattern](patterns))
        PatternRewriteWalker(applier, apply_recursively=True).rewrite_module(op)
