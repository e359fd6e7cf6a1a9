"""ONNX converters: reduce ops.

ReduceSum/Mean/Max/Min/Prod and ArgMax/ArgMin map to graph ops; ReduceL1,
ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceSumSquare are written with
reduce_sum/reduce_max and elementwise ops. `axes` is an attribute before
opset 13 (ReduceSum) or 18 (the others) and a constant input after; with
`noop_with_empty_axes` and no axes the op is the identity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.ir import Attribute, SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph.base import (
    GraphOp,
    bool_attr,
    elem,
    int_attr,
    ints_attr,
    is_float,
    shape_of,
)
from xtc.dialects.graph.constant import numpy_dtype
from xtc.frontend.converters import Node, converts
from xtc.frontend.converters.tensor import axes_attr_or_input, cast, reshape

Outputs = Sequence[SSAValue | None]

REDUCTIONS: dict[str, type[GraphOp]] = {
    "ReduceSum": rd.ReduceSumOp,
    "ReduceMean": rd.ReduceMeanOp,
    "ReduceMax": rd.ReduceMaxOp,
    "ReduceMin": rd.ReduceMinOp,
    "ReduceProd": rd.ReduceProdOp,
}

AXES_INPUT_SINCE = {"ReduceSum": 13}
"""The opset where `axes` became an input; 18 for the ops not listed."""


def _reduce_props(node: Node) -> Mapping[str, Attribute] | None:
    """The graph op's axes/keepdims, or None when the node is the identity."""
    axes = axes_attr_or_input(node, AXES_INPUT_SINCE.get(node.op_type, 18))
    if not axes and node.attr("noop_with_empty_axes", 0):
        return None
    return {
        "axes": ints_attr(axes or []),
        "keepdims": bool_attr(bool(node.attr("keepdims", 1))),
    }


@converts(*REDUCTIONS)
def convert_reduce(node: Node) -> Outputs:
    props = _reduce_props(node)
    if props is None:
        return [node.input(0)]
    return node.emit(REDUCTIONS[node.op_type], [node.input(0)], props)


def _scalar(node: Node, value: float, like: SSAValue) -> SSAValue:
    return node.constant(np.array(value, numpy_dtype(elem(like.type))))


def _sum(node: Node, x: SSAValue, props: Mapping[str, Attribute]) -> SSAValue:
    return node.emit1(rd.ReduceSumOp, [x], props)


def _log_sum_exp(node: Node, x: SSAValue, props: Mapping[str, Attribute]) -> SSAValue:
    """log(sum(exp(x - m))) + m with m the maximum (m = 0 where it is not
    finite, so that all -inf gives -inf rather than NaN)."""
    kept = {**props, "keepdims": bool_attr(True)}
    m = node.emit1(rd.ReduceMaxOp, [x], kept)
    finite = node.emit1(ew.LessOp, [node.emit1(ew.AbsOp, [m]), _scalar(node, np.inf, m)])
    m = node.emit1(ew.WhereOp, [finite, m, _scalar(node, 0.0, m)])
    shifted = node.emit1(ew.ExpOp, [node.emit1(ew.SubOp, [x, m])])
    total = node.emit1(ew.LogOp, [_sum(node, shifted, kept)])
    result = node.emit1(ew.AddOp, [total, m])
    # The axes were checked by reduce_max above: inferring cannot fail.
    (reduced,) = rd.ReduceSumOp.inferred_types([x.type], props)
    return reshape(node, result, shape_of(reduced))


@converts("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
def convert_composite_reduce(node: Node) -> Outputs:
    props = _reduce_props(node)
    x = node.input(0)
    if props is None:
        return [x]
    dtype = node.dtype(0)
    if node.op_type in ("ReduceL2", "ReduceLogSum", "ReduceLogSumExp") and not is_float(
        elem(x.type)
    ):
        # sqrt, log and exp are float ops: compute in f64, round back.
        x = cast(node, x, np.float64)
    if node.op_type == "ReduceL1":
        result = _sum(node, node.emit1(ew.AbsOp, [x]), props)
    elif node.op_type == "ReduceSumSquare":
        result = _sum(node, node.emit1(ew.MulOp, [x, x]), props)
    elif node.op_type == "ReduceL2":
        result = node.emit1(ew.SqrtOp, [_sum(node, node.emit1(ew.MulOp, [x, x]), props)])
    elif node.op_type == "ReduceLogSum":
        result = node.emit1(ew.LogOp, [_sum(node, x, props)])
    else:
        result = _log_sum_exp(node, x, props)
    return [cast(node, result, dtype)]


@converts("ArgMax", "ArgMin")
def convert_arg_reduce(node: Node) -> Outputs:
    op = rd.ArgMaxOp if node.op_type == "ArgMax" else rd.ArgMinOp
    props = {
        "axis": int_attr(node.attr("axis", 0)),
        "keepdims": bool_attr(bool(node.attr("keepdims", 1))),
        "select_last_index": bool_attr(bool(node.attr("select_last_index", 0))),
    }
    return node.emit(op, [node.input(0)], props)
