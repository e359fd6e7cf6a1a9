"""Control flow the importer cannot resolve: `graph.if` on a condition known
only at run time, `graph.loop` whose trip count or condition is a run-time
value. Their regions hold graph ops (then te-level calls once lowered) and
end in `graph.yield`; they may use the values defined above them.

    %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
      ...
      graph.yield %a : tensor<4xf32>
    } else {
      graph.yield %b : tensor<4xf32>
    }

    %x = graph.loop %max, %c, (%x0) : tensor<i64>, tensor<i1>, (tensor<4xf32>)
           -> (tensor<4xf32>) {
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %x: tensor<4xf32>):
      ...
      graph.yield %cond_next, %x_next : tensor<i1>, tensor<4xf32>
    }

A loop runs as ONNX's Loop: `i = 0; while i < max and cond: cond, carried,
slices = body(i, cond, carried); scans[i] = slices; i += 1`; its results
are the last carried values, then the scans (of a static number of rows).
They are not graph ops (`GraphOp`): no compute rule, never fused; the ops
in their regions are.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import cast

from xdsl.dialects.builtin import TensorType, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from xtc.dialects.graph.base import type_str


def is_flag(t: Attribute) -> bool:
    """A one-element tensor of i1: a condition."""
    if not isinstance(t, TensorType):
        return False
    tt = cast(TensorType[Attribute], t)
    return tt.get_element_type() == i1 and prod(tt.get_shape()) == 1


def _is_count(t: Attribute) -> bool:
    """A one-element tensor of i64: a trip count or an iteration number."""
    if not isinstance(t, TensorType):
        return False
    tt = cast(TensorType[Attribute], t)
    return tt.get_element_type() == i64 and prod(tt.get_shape()) == 1


def _types(values: Sequence[SSAValue] | Sequence[Attribute]) -> str:
    types = [v.type if isinstance(v, SSAValue) else v for v in values]
    return "(" + ", ".join(type_str(t) for t in types) + ")"


def _yielded(op: IRDLOperation, block: Block, what: str) -> list[Attribute]:
    """The types `block`'s graph.yield yields (VerifyException without one)."""
    last = block.last_op
    if not isinstance(last, YieldOp):
        raise VerifyException(f"'{op.name}' op {what} must end in graph.yield")
    return [v.type for v in last.values]


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The values a graph.if branch or a graph.loop body gives back."""

    name = "graph.yield"

    values = var_operand_def(TensorType)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IfOp, LoopOp), Pure()))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]) -> None:
        super().__init__(operands=[list(values)])


@irdl_op_definition
class IfOp(IRDLOperation):
    """The then region's values when the condition holds, else the else
    region's; both yield the op's result types."""

    name = "graph.if"

    condition = operand_def(TensorType)
    results_ = var_result_def(TensorType)
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect())
    assembly_format = (
        "$condition `:` type($condition) `->` `(` type($results_) `)` "
        "$then_region `else` $else_region attr-dict"
    )

    def __init__(
        self, condition: SSAValue, result_types: Sequence[Attribute], then: Region, orelse: Region
    ) -> None:
        super().__init__(
            operands=[condition], result_types=[list(result_types)], regions=[then, orelse]
        )

    def verify_(self) -> None:
        if not is_flag(self.condition.type):
            raise VerifyException(
                f"'graph.if' op condition must be a one-element tensor of i1, "
                f"got {type_str(self.condition.type)}"
            )
        expected = list(self.result_types)
        for region, what in ((self.then_region, "then"), (self.else_region, "else")):
            block = region.block
            if block.args:
                raise VerifyException(f"'graph.if' op the {what} region takes no arguments")
            yielded = _yielded(self, block, f"the {what} region")
            if yielded != expected:
                raise VerifyException(
                    f"'graph.if' op the {what} region yields {_types(yielded)}, "
                    f"the op returns {_types(expected)}"
                )


@irdl_op_definition
class LoopOp(IRDLOperation):
    """ONNX's Loop, not unrolled: the body (iteration number, condition,
    carried values) yields the next condition, the next carried values and
    maybe scan slices. The results are the last carried values, then one
    tensor per scan slice stacking the slice of iteration i at row i: its
    row count (a static dimension) is the iterations the loop may run, and
    the rows of iterations that did not run are zeros."""

    name = "graph.loop"

    max_trip_count = operand_def(TensorType)
    condition = operand_def(TensorType)
    carried = var_operand_def(TensorType)
    results_ = var_result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect())
    assembly_format = (
        "$max_trip_count `,` $condition `,` `(` $carried `)` `:` type($max_trip_count) `,` "
        "type($condition) `,` `(` type($carried) `)` `->` `(` type($results_) `)` $body attr-dict"
    )

    def __init__(
        self,
        max_trip_count: SSAValue,
        condition: SSAValue,
        carried: Sequence[SSAValue],
        body: Region,
        scan_types: Sequence[Attribute] = (),
    ) -> None:
        super().__init__(
            operands=[max_trip_count, condition, list(carried)],
            result_types=[[*(v.type for v in carried), *scan_types]],
            regions=[body],
        )

    @property
    def scan_results(self) -> Sequence[SSAValue]:
        """The results stacking the scan slices (after the carried values)."""
        return self.results[len(self.carried) :]

    def verify_(self) -> None:
        if not _is_count(self.max_trip_count.type):
            raise VerifyException(
                "'graph.loop' op max trip count must be a one-element tensor of i64, "
                f"got {type_str(self.max_trip_count.type)}"
            )
        if not is_flag(self.condition.type):
            raise VerifyException(
                "'graph.loop' op condition must be a one-element tensor of i1, "
                f"got {type_str(self.condition.type)}"
            )
        carried = [v.type for v in self.carried]
        results = list(self.result_types)
        if results[: len(carried)] != carried:
            raise VerifyException(
                f"'graph.loop' op returns {_types(results)}, "
                f"its carried values are {_types(carried)}"
            )
        block = self.body.block
        expected_args = [TensorType(i64, []), TensorType(i1, []), *carried]
        if list(block.arg_types) != expected_args:
            raise VerifyException(
                f"'graph.loop' op body takes {_types(list(block.arg_types))}, "
                f"expected {_types(expected_args)} (iteration, condition, carried values)"
            )
        yielded = _yielded(self, block, "the body")
        if not yielded or not is_flag(yielded[0]) or yielded[1 : 1 + len(carried)] != carried:
            raise VerifyException(
                f"'graph.loop' op body yields {_types(yielded)}, expected a condition "
                f"(tensor<i1>) then the carried values {_types(carried)}"
            )
        slices = yielded[1 + len(carried) :]
        stacked = results[len(carried) :]
        rows = {_stacked_rows(t, s) for t, s in zip(stacked, slices, strict=False)}
        if len(slices) != len(stacked) or None in rows or len(rows) > 1:
            raise VerifyException(
                f"'graph.loop' op stacks the scan slices {_types(slices)} as "
                f"{_types(stacked)}: each must be the slice's type with the same number "
                "of rows first"
            )


def _stacked_rows(stacked: Attribute, row: Attribute) -> int | None:
    """The rows of `stacked` when it is `row`'s type with one more leading
    dimension, else None."""
    if not isinstance(stacked, TensorType) or not isinstance(row, TensorType):
        return None
    st, rt = cast(TensorType[Attribute], stacked), cast(TensorType[Attribute], row)
    shape = st.get_shape()
    if not shape or st.get_element_type() != rt.get_element_type():
        return None
    return shape[0] if tuple(shape[1:]) == tuple(rt.get_shape()) else None


CONTROL_OPS = (IfOp, LoopOp, YieldOp)
"""The control-flow ops of the graph dialect (not GraphOps)."""
