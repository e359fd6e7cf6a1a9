"""Reduce graph ops: sum, mean, max, min and product over a set of axes,
argmax/argmin along one axis (ONNX ReduceSum/.../ArgMax semantics), and the
scan and selection along one axis: cumsum and topk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyTensorTypeConstr,
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from xtc.dialects.graph.base import (
    GraphOp,
    OpPattern,
    Props,
    ShapeError,
    axes_in_range,
    axis_in_range,
    bool_attr,
    elem,
    get_bool,
    get_int,
    get_ints,
    int_attr,
    ints_attr,
    shape_of,
    tensor,
    type_str,
    with_defaults,
)


class ReduceOp(GraphOp):
    """Reduces x over `axes` (empty or absent: every axis; negative axes count
    from the end); `keepdims` (default true) keeps them as size-1 axes."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.REDUCTION

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axes = opt_prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {"axes": ints_attr(()), "keepdims": bool_attr(True)}

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def reduced_axes(cls, x: Attribute, props: Props) -> tuple[int, ...]:
        """The reduced axes of x, non-negative, in the order given."""
        rank = len(shape_of(x))
        axes = axes_in_range(cls.name, get_ints(with_defaults(cls, props), "axes"), rank)
        return axes or tuple(range(rank))

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x = operand_types[0]
        axes = cls.reduced_axes(x, props)
        keepdims = get_bool(props, "keepdims")
        shape = [
            1 if i in axes else d for i, d in enumerate(shape_of(x)) if keepdims or i not in axes
        ]
        return [tensor(shape, elem(x))]


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes` (ONNX ReduceSum); 0 over an empty axis."""

    name = "graph.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Arithmetic mean over `axes` (ONNX ReduceMean); integers round toward
    zero; NaN over an empty axis."""

    name = "graph.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes` (ONNX ReduceMax); -inf (or the type's minimum)
    over an empty axis."""

    name = "graph.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over `axes` (ONNX ReduceMin); +inf (or the type's maximum)
    over an empty axis."""

    name = "graph.reduce_min"


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product over `axes` (ONNX ReduceProd); 1 over an empty axis."""

    name = "graph.reduce_prod"


class ArgReduceOp(GraphOp):
    """The i64 index of the extreme value of x along `axis` (default 0);
    `keepdims` (default true) keeps that axis with size 1; on ties the first
    index, or the last with `select_last_index`."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.REDUCTION

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axis = opt_prop_def(IntegerAttr[I64])
    keepdims = opt_prop_def(BoolAttr)
    select_last_index = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {
        "axis": int_attr(0),
        "keepdims": bool_attr(True),
        "select_last_index": bool_attr(False),
    }

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x = operand_types[0]
        shape = shape_of(x)
        axis = axis_in_range(cls.name, get_int(props, "axis"), len(shape))
        get_bool(props, "select_last_index")
        if shape[axis] == 0:
            raise ShapeError(
                f"{cls.name}: axis {axis} of {type_str(x)} is empty, it has no extreme value"
            )
        keepdims = get_bool(props, "keepdims")
        result = [1 if i == axis else d for i, d in enumerate(shape) if keepdims or i != axis]
        return [tensor(result, i64)]


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """Index of the maximum along `axis` (ONNX ArgMax)."""

    name = "graph.argmax"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """Index of the minimum along `axis` (ONNX ArgMin)."""

    name = "graph.argmin"


# ---------------------------------------------------------------------------
# Scans and selections along one axis.


class CumulativeOp(GraphOp):
    """Running sums or products along `axis`: with `exclusive` each leaves
    out its own element, with `reverse` they run from the end."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.OPAQUE
    VERB: ClassVar[str] = "sum"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    axis = prop_def(IntegerAttr[I64])
    exclusive = opt_prop_def(BoolAttr)
    reverse = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {"exclusive": bool_attr(False), "reverse": bool_attr(False)}

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x = operand_types[0]
        axis_in_range(cls.name, get_int(props, "axis"), len(shape_of(x)))
        get_bool(props, "exclusive")
        get_bool(props, "reverse")
        if elem(x) == i1:
            raise ShapeError(f"{cls.name}: cannot {cls.VERB} the i1 elements of {type_str(x)}")
        return [x]


@irdl_op_definition
class CumSumOp(CumulativeOp):
    """Running sums along `axis` (ONNX CumSum)."""

    name = "graph.cumsum"


@irdl_op_definition
class CumProdOp(CumulativeOp):
    """Running products along `axis` (ONNX CumProd)."""

    name = "graph.cumprod"
    VERB: ClassVar[str] = "multiply"


@irdl_op_definition
class TopKOp(GraphOp):
    """The `k` largest (or, with `largest` false, smallest) elements along
    `axis` (default -1) and their i64 indices (ONNX TopK), in sorted order;
    equal values keep the lower index first."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.OPAQUE

    name = "graph.topk"

    input = operand_def(AnyTensorTypeConstr)
    values = result_def(AnyTensorTypeConstr)
    indices = result_def(AnyTensorTypeConstr)
    k = prop_def(IntegerAttr[I64])
    axis = opt_prop_def(IntegerAttr[I64])
    largest = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(-1), "largest": bool_attr(True)}

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x = operand_types[0]
        shape = list(shape_of(x))
        axis = axis_in_range(cls.name, get_int(props, "axis"), len(shape))
        get_bool(props, "largest")
        k = get_int(props, "k")
        if not 0 <= k <= shape[axis]:
            raise ShapeError(
                f"{cls.name}: k {k} must be in 0..{shape[axis]}, the size of axis "
                f"{axis} of {type_str(x)}"
            )
        shape[axis] = k
        return [tensor(shape, elem(x)), tensor(shape, i64)]
