"""Neural-network graph ops, NCHW layout as in ONNX and Relay: convolution,
dense and matrix products, normalisation, pooling, softmax, pad, resize and
grid sampling.

Spatial properties are `array<i64>`: `strides` and `dilation` as [h, w],
`padding` as [top, left, bottom, right] (ONNX `pads` order for 2-D). Every
inconsistency between operand shapes and properties is a `ShapeError` naming
the op and the shapes involved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    AnyTensorTypeConstr,
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    f64,
    i32,
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
    Shape,
    ShapeError,
    as_tensor,
    bool_attr,
    elem,
    float_attr,
    get_bool,
    get_int,
    get_ints,
    get_str,
    int_attr,
    ints_attr,
    is_float,
    normalize_axis,
    same_element_type,
    shape_of,
    str_attr,
    tensor,
    type_str,
    with_defaults,
)

_I64_ARRAY = DenseArrayBase.constr(i64)
_F64_ARRAY = DenseArrayBase.constr(f64)
_TWO_OPERANDS = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

PAD_MODES = ("constant", "reflect", "edge")
RESIZE_MODES = ("nearest", "linear", "cubic")
ANTIALIAS_MODES = ("linear", "cubic")
"""The Resize modes whose filter widens when downsampling (antialias)."""
COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "asymmetric",
    "align_corners",
    "pytorch_half_pixel",
    "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
GRID_SAMPLE_MODES = ("linear", "nearest", "cubic")
GRID_PADDING_MODES = ("zeros", "border", "reflection")


# ---------------------------------------------------------------------------
# Checks shared by the ops of this module.


def _dims(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape)


def _ranked(op_name: str, t: Attribute, what: str) -> Shape:
    return tuple(as_tensor(op_name, t, what).get_shape())


def _of_rank(op_name: str, t: Attribute, what: str, rank: int, layout: str) -> Shape:
    shape = _ranked(op_name, t, what)
    if len(shape) != rank:
        raise ShapeError(f"{op_name}: {what} must be {rank}-D ({layout}), got {type_str(t)}")
    return shape


def _ints_prop(
    op_name: str,
    props: Props,
    prop: str,
    count: int,
    minimum: int | None = None,
) -> Shape:
    """Property `prop` as `count` ints, each at least `minimum` when given."""
    values = get_ints(props, prop)
    if len(values) != count:
        raise ShapeError(f"{op_name}: {prop} must have {count} values, got {len(values)}")
    if minimum is not None and any(v < minimum for v in values):
        kind = "positive" if minimum == 1 else "non-negative"
        raise ShapeError(f"{op_name}: {prop} must be {kind}, got [{', '.join(map(str, values))}]")
    return values


def _positive_int_prop(op_name: str, props: Props, prop: str) -> int:
    value = get_int(props, prop)
    if value < 1:
        raise ShapeError(f"{op_name}: {prop} must be positive, got {value}")
    return value


def _mode_prop(op_name: str, props: Props, prop: str, choices: Sequence[str]) -> str:
    try:
        return get_str(props, prop, choices=choices)
    except ShapeError as e:
        raise ShapeError(f"{op_name}: {e}") from e


def _broadcast_batch(a: Shape, b: Shape) -> Shape | None:
    """numpy broadcast of two batch shapes, None when incompatible."""
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
        return None
    return tuple(max(x, y) if 1 not in (x, y) else x * y for x, y in zip(a, b, strict=True))


def _float_input(op_name: str, t: Attribute) -> None:
    if not is_float(elem(t)):
        raise ShapeError(f"{op_name}: input {type_str(t)} must have a float element type")


def _check_positive_result(op_name: str, shape: Sequence[int], operands: str) -> None:
    if any(d < 1 for d in shape):
        raise ShapeError(
            f"{op_name}: output shape {_dims(shape)} is not positive (operands: {operands})"
        )


def resize_scales(props: Props, shape: Sequence[int], size: Sequence[int]) -> tuple[float, ...]:
    """graph.resize's scales: the property, else output size / input size."""
    attr = props.get("scales")
    if attr is None:
        return tuple(o / i if i else 1.0 for o, i in zip(size, shape, strict=True))
    return _f64_values(attr, "scales")


def resize_roi(props: Props, rank: int) -> tuple[float, ...]:
    """graph.resize's roi: the property, else the whole input."""
    attr = props.get("roi")
    if attr is None:
        return (0.0,) * rank + (1.0,) * rank
    return _f64_values(attr, "roi")


def _f64_values(attr: Attribute, name: str) -> tuple[float, ...]:
    if not isinstance(attr, DenseArrayBase):
        raise ShapeError(f"property '{name}' must be array<f64: ...>, got {attr}")
    array = cast(DenseArrayBase[AnyFloat], attr)
    if array.elt_type != f64:
        raise ShapeError(f"property '{name}' must be array<f64: ...>, got {attr}")
    return tuple(float(v) for v in array.get_values())


@dataclass(frozen=True)
class Window2d:
    """A 2-D sliding window: kernel, strides, dilation, padding [t, l, b, r]."""

    kernel: Shape
    strides: Shape
    dilation: Shape
    padding: Shape

    def extent(self, axis: int) -> int:
        return (self.kernel[axis] - 1) * self.dilation[axis] + 1

    def output_size(self, axis: int, size: int, ceil_mode: bool = False) -> int:
        """ONNX output size; in ceil mode a last window starting in the end
        padding is dropped."""
        padded = size + self.padding[axis] + self.padding[axis + 2]
        span = padded - self.extent(axis)
        stride = self.strides[axis]
        if not ceil_mode:
            return span // stride + 1
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + self.padding[axis]:
            out -= 1
        return out

    def first_window_outside(self, axis: int, size: int, out: int) -> int | None:
        """The first output index whose window reads only padding, if any."""
        for o in range(out):
            start = o * self.strides[axis] - self.padding[axis]
            taps = range(start, start + self.extent(axis), self.dilation[axis])
            if not any(0 <= tap < size for tap in taps):
                return o
        return None

    def output_hw(
        self, op_name: str, input_type: Attribute, ceil_mode: bool = False
    ) -> tuple[int, int]:
        _, _, h, w = shape_of(input_type)
        padded = (
            h + self.padding[0] + self.padding[2],
            w + self.padding[1] + self.padding[3],
        )
        extent = (self.extent(0), self.extent(1))
        if extent[0] > padded[0] or extent[1] > padded[1]:
            raise ShapeError(
                f"{op_name}: kernel {_dims(self.kernel)} with dilation "
                f"{_dims(self.dilation)} spans {_dims(extent)}, larger than the "
                f"padded input {_dims(padded)} of {type_str(input_type)}"
            )
        return self.output_size(0, h, ceil_mode), self.output_size(1, w, ceil_mode)


def _window_props(op_name: str, props: Props, kernel: Shape) -> Window2d:
    if min(kernel) < 1:
        raise ShapeError(f"{op_name}: kernel {_dims(kernel)} is empty")
    return Window2d(
        kernel=kernel,
        strides=_ints_prop(op_name, props, "strides", 2, minimum=1),
        dilation=_ints_prop(op_name, props, "dilation", 2, minimum=1),
        padding=_ints_prop(op_name, props, "padding", 4, minimum=0),
    )


def _check_channel_vector(
    op_name: str, what: str, t: Attribute, size: int, x: Attribute, axis: int
) -> None:
    shape = _ranked(op_name, t, what)
    if shape != (size,):
        raise ShapeError(
            f"{op_name}: {what} {type_str(t)} must be 1-D of size {size}, the axis "
            f"{axis} of input {type_str(x)}"
        )


# ---------------------------------------------------------------------------
# Convolutions.


KERNEL_LAYOUTS = ("OIHW", "IHWO", "OIHW<b>o")
"""graph.conv2d's weight layouts: ONNX's; output channels innermost; and
output channels in blocks of b, each block innermost (O/b×C/groups×KH×KW×b,
TVM's `OIHW16o`), so that the weights of one block of output channels are
one contiguous run."""

_BLOCKED = re.compile(r"OIHW([1-9][0-9]*)o")


def kernel_layout(props: Props) -> str:
    """graph.conv2d's `kernel_layout` (its declared default when absent), checked."""
    layout = get_str(with_defaults(Conv2dOp, props), "kernel_layout")
    if layout not in ("OIHW", "IHWO") and _BLOCKED.fullmatch(layout) is None:
        raise ShapeError(
            f'property \'kernel_layout\' is "{layout}", expected "OIHW", "IHWO" '
            'or "OIHW<b>o" (b a positive integer, as in "OIHW16o")'
        )
    return layout


def output_block(layout: str) -> int | None:
    """b of a blocked layout "OIHW<b>o", None for the others."""
    match = _BLOCKED.fullmatch(layout)
    return int(match.group(1)) if match else None


def conv2d_weight_oihw(weight_shape: Sequence[int], layout: str) -> tuple[int, int, int, int]:
    """(O, C/groups, KH, KW) of a conv2d weight of `layout`."""
    if layout == "IHWO":
        cg, kh, kw, o = weight_shape
        return o, cg, kh, kw
    if output_block(layout) is not None:
        blocks, cg, kh, kw, block = weight_shape
        return blocks * block, cg, kh, kw
    o, cg, kh, kw = weight_shape
    return o, cg, kh, kw


DATA_LAYOUTS = ("NCHW", "NCHW<b>c")
"""graph.conv2d's activation layouts (input and output alike): ONNX's; and
channels in blocks of b, each block innermost (N×C/b×H×W×b, TVM's
`NCHW16c`), so that a pixel's b channels are one contiguous vector."""

_BLOCKED_DATA = re.compile(r"NCHW([1-9][0-9]*)c")


def data_layout(
    props: Props, op_class: type[GraphOp] | None = None, prop: str = "data_layout"
) -> str:
    """The `data_layout` (or `prop`: a conv's `out_layout`) of graph.conv2d
    or a pool, its declared default when absent, checked."""
    op_class = op_class or Conv2dOp
    layout = get_str(with_defaults(op_class, props), prop)
    if layout != "NCHW" and _BLOCKED_DATA.fullmatch(layout) is None:
        raise ShapeError(
            f'{op_class.name}: property \'{prop}\' is "{layout}", expected "NCHW" or '
            '"NCHW<b>c" (b a positive integer, as in "NCHW16c")'
        )
    return layout


def out_layout(props: Props) -> str:
    """graph.conv2d's `out_layout`, checked."""
    return data_layout(props, Conv2dOp, "out_layout")


def channel_block(layout: str) -> int | None:
    """b of a blocked activation layout "NCHW<b>c", None for "NCHW"."""
    match = _BLOCKED_DATA.fullmatch(layout)
    return int(match.group(1)) if match else None


def blocked_shape(shape: Sequence[int], block: int) -> tuple[int, ...]:
    """An N×C×H×W shape in layout NCHW<block>c: N×C/block×H×W×block."""
    n, c, h, w = shape
    return (n, c // block, h, w, block)


def unblocked_shape(shape: Sequence[int]) -> tuple[int, int, int, int]:
    """An N×C/b×H×W×b shape (layout NCHW<b>c) as N×C×H×W."""
    n, blocks, h, w, block = shape
    return (n, blocks * block, h, w)


def blocked_array(array: np.ndarray, layout: str) -> np.ndarray:
    """An N×C×H×W array in activation `layout` (a view for "NCHW")."""
    block = channel_block(layout)
    if block is None:
        return array
    n, c, h, w = array.shape
    return array.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2)


def nchw_array(array: np.ndarray, layout: str) -> np.ndarray:
    """An array in activation `layout` as N×C×H×W (a view for "NCHW")."""
    if channel_block(layout) is None:
        return array
    n, blocks, h, w, block = array.shape
    return array.transpose(0, 1, 4, 2, 3).reshape(n, blocks * block, h, w)


def nchw_shape(t: Attribute, layout: str) -> tuple[int, ...]:
    """The N×C×H×W shape of an activation type `t` in `layout`."""
    shape = shape_of(t)
    return shape if channel_block(layout) is None else unblocked_shape(shape)


def _activation(op_name: str, x: Attribute, layout: str) -> Attribute:
    """Input type `x` of a conv or pool in `layout`, as the N×C×H×W type it
    stands for (its rank and block checked)."""
    block = channel_block(layout)
    if block is None:
        _of_rank(op_name, x, "input", 4, "N×C×H×W")
        return x
    shape = _of_rank(op_name, x, "input", 5, f"N×C/{block}×H×W×{block}")
    if shape[4] != block:
        raise ShapeError(
            f"{op_name}: input {type_str(x)} in layout {layout} must have {block} "
            "as its last dimension"
        )
    return tensor(unblocked_shape(shape), elem(x))


def _in_layout(shape: Sequence[int], element_type: Attribute, layout: str) -> Attribute:
    """An N×C×H×W result in `layout` (C a multiple of its block, checked by the caller)."""
    block = channel_block(layout)
    return tensor(shape if block is None else blocked_shape(shape, block), element_type)


def _conv2d_weight(op_name: str, w: Attribute, layout: str) -> tuple[int, int, int, int]:
    """(O, C/groups, KH, KW) of weight type `w` in `layout`, its rank (and
    block) checked."""
    block = output_block(layout)
    if layout == "IHWO":
        shape = _of_rank(op_name, w, "weight", 4, "C/groups×KH×KW×O")
    elif block is not None:
        shape = _of_rank(op_name, w, "weight", 5, f"O/{block}×C/groups×KH×KW×{block}")
        if shape[4] != block:
            raise ShapeError(
                f"{op_name}: weight {type_str(w)} in layout {layout} must have "
                f"{block} as its last dimension"
            )
    else:
        shape = _of_rank(op_name, w, "weight", 4, "O×C/groups×KH×KW")
    return conv2d_weight_oihw(shape, layout)


@irdl_op_definition
class Conv2dOp(GraphOp):
    """2-D convolution (cross-correlation) as ONNX Conv without bias:
    input N×C×H×W, weight O×(C/groups)×KH×KW -> N×O×OH×OW. With
    `kernel_layout = "IHWO"` the weight is (C/groups)×KH×KW×O instead, and
    with `kernel_layout = "OIHW<b>o"` (O/b)×(C/groups)×KH×KW×b, output
    channel o at [o / b, ..., o mod b] (what graph-alter-layout makes, so
    that output channels are contiguous). `data_layout` is the input's
    layout, `out_layout` the output's: both "NCHW" (the default), both
    "NCHW<b>c" (N×C/b×H×W×b -> N×O/b×OH×OW×b), an NCHW input and an
    NCHW<b>c output (a stem conv whose C is not a multiple of b), or an
    NCHW<b>c input and an NCHW output with groups = 1 (a conv whose O is
    no multiple of b, reading blocked activations); a blocked output needs
    groups = 1, or a depthwise conv (groups = C = O) on a blocked input,
    and a weight in "OIHW<b>o" (what graph-block-activations makes)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    name = "graph.conv2d"

    input = operand_def(AnyTensorTypeConstr)
    weight = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    strides = opt_prop_def(_I64_ARRAY)
    padding = opt_prop_def(_I64_ARRAY)
    dilation = opt_prop_def(_I64_ARRAY)
    groups = opt_prop_def(IntegerAttr[I64])
    kernel_layout = opt_prop_def(StringAttr)
    data_layout = opt_prop_def(StringAttr)
    out_layout = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {
        "strides": ints_attr((1, 1)),
        "padding": ints_attr((0, 0, 0, 0)),
        "dilation": ints_attr((1, 1)),
        "groups": int_attr(1),
        "kernel_layout": str_attr("OIHW"),
        "data_layout": str_attr("NCHW"),
        "out_layout": str_attr("NCHW"),
    }

    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        blocked_input, w = operand_types
        layout = data_layout(props)
        x = _activation(cls.name, blocked_input, layout)
        n, c, _, _ = shape_of(x)
        o, cg, kh, kw = _conv2d_weight(cls.name, w, kernel_layout(props))
        element_type = same_element_type(cls.name, x, w)
        groups = _positive_int_prop(cls.name, props, "groups")
        window = _window_props(cls.name, props, (kh, kw))
        if cg * groups != c:
            raise ShapeError(
                f"{cls.name}: input {type_str(x)} has {c} channels but weight "
                f"{type_str(w)} expects {cg * groups} (groups={groups})"
            )
        if o % groups:
            raise ShapeError(
                f"{cls.name}: weight {type_str(w)} has {o} output channels, not a "
                f"multiple of groups={groups}"
            )
        result = out_layout(props)
        block = channel_block(result)
        if layout not in ("NCHW", result) and (result != "NCHW" or groups != 1):
            raise ShapeError(
                f"{cls.name}: data_layout {layout} with out_layout {result}: a blocked "
                "input needs an output blocked alike, or an NCHW output with groups=1"
            )
        depthwise = groups == c == o and layout == result
        if block is not None and (
            (groups != 1 and not depthwise) or output_block(kernel_layout(props)) != block
        ):
            raise ShapeError(
                f"{cls.name}: out_layout {result} needs groups=1 (or a depthwise conv on "
                f"an input in {result}) and a weight in layout OIHW{block}o, got "
                f"groups={groups} and weight {type_str(w)} in layout {kernel_layout(props)}"
            )
        oh, ow = window.output_hw(cls.name, x)
        return [_in_layout((n, o, oh, ow), element_type, result)]


DOT_DEPTH = 4
"""Reduction values a 32-bit lane of conv2d_u8s8's weight holds (one VNNI
`vpdpbusd` step: four u8 x i8 products summed into an i32)."""
DOT_LANES = 16
"""Output channels of one block of conv2d_u8s8's weight (one 512-bit vector
of i32 accumulators)."""


def _is_int8(t: Attribute, signed: bool) -> bool:
    e = elem(t)
    return (
        isinstance(e, IntegerType)
        and e.width.data == 8
        and (e.signedness.data == Signedness.UNSIGNED) != signed
    )


@irdl_op_definition
class Conv2dU8S8Op(GraphOp):
    """Integer 2-D convolution of u8 data by i8 weights, summed in i32, in
    the packed layouts of a VNNI micro-kernel (what graph-qdq-to-integer
    makes of a quantized Conv): input N×H×W×C u8, NHWC and already padded,
    C a multiple of 4; weight (O/16)×(C/4)×KH×KW×16×4 i8, output channel o
    and input channel c at [o / 16, c / 4, i, j, o mod 16, c mod 4], so that
    one 32-bit lane holds four consecutive input channels of one output
    channel -> N×OH×OW×O i32 (NHWC, so that a vector of 16 output channels
    stores whole and the next conv reads it without a transpose):
    out[n, y, x, o] = Σ_{c, i, j} in[n, y·sh + i·dh, x·sw + j·dw, c] · w[o, c, i, j]."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    name = "graph.conv2d_u8s8"

    input = operand_def(AnyTensorTypeConstr)
    weight = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    strides = opt_prop_def(_I64_ARRAY)
    dilation = opt_prop_def(_I64_ARRAY)
    DEFAULTS: ClassVar[Props] = {
        "strides": ints_attr((1, 1)),
        "dilation": ints_attr((1, 1)),
    }

    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, w = operand_types
        n, h, wd, c = _of_rank(cls.name, x, "input", 4, "N×H×W×C")
        blocks, c4, kh, kw, lanes, depth = _of_rank(
            cls.name, w, "weight", 6, f"O/{DOT_LANES}×C/{DOT_DEPTH}×KH×KW×{DOT_LANES}×{DOT_DEPTH}"
        )
        if not _is_int8(x, signed=False) or not _is_int8(w, signed=True):
            raise ShapeError(
                f"{cls.name}: input {type_str(x)} must be ui8 and weight {type_str(w)} i8"
            )
        if (lanes, depth) != (DOT_LANES, DOT_DEPTH) or c != c4 * DOT_DEPTH:
            raise ShapeError(
                f"{cls.name}: weight {type_str(w)} must end in {DOT_LANES}×{DOT_DEPTH} and "
                f"hold the {c} channels of input {type_str(x)} in blocks of {DOT_DEPTH}"
            )
        window = _window_props(cls.name, {**props, "padding": ints_attr((0, 0, 0, 0))}, (kh, kw))
        oh, ow = window.output_hw(cls.name, tensor((n, c, h, wd), elem(x)))
        return [tensor((n, oh, ow, blocks * DOT_LANES), i32)]


def conv2d_u8s8_weight_oihw(weight: Sequence[int]) -> tuple[int, int, int, int]:
    """(O, C, KH, KW) of a conv2d_u8s8 weight shape."""
    blocks, c4, kh, kw, lanes, depth = weight
    return blocks * lanes, c4 * depth, kh, kw


@irdl_op_definition
class Conv2dTransposeOp(GraphOp):
    """2-D transposed convolution as ONNX ConvTranspose without bias: input
    N×C×H×W, weight C×(O/groups)×KH×KW -> N×O×OH×OW with
    OH = strides·(H-1) + output_padding + dilation·(KH-1) + 1 - top - bottom."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    name = "graph.conv2d_transpose"

    input = operand_def(AnyTensorTypeConstr)
    weight = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    strides = opt_prop_def(_I64_ARRAY)
    padding = opt_prop_def(_I64_ARRAY)
    output_padding = opt_prop_def(_I64_ARRAY)
    dilation = opt_prop_def(_I64_ARRAY)
    groups = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {
        "strides": ints_attr((1, 1)),
        "padding": ints_attr((0, 0, 0, 0)),
        "output_padding": ints_attr((0, 0)),
        "dilation": ints_attr((1, 1)),
        "groups": int_attr(1),
    }

    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, w = operand_types
        n, c, h, wd = _of_rank(cls.name, x, "input", 4, "N×C×H×W")
        wc, og, kh, kw = _of_rank(cls.name, w, "weight", 4, "C×O/groups×KH×KW")
        element_type = same_element_type(cls.name, x, w)
        groups = _positive_int_prop(cls.name, props, "groups")
        window = _window_props(cls.name, props, (kh, kw))
        output_padding = _ints_prop(cls.name, props, "output_padding", 2, minimum=0)
        if wc != c:
            raise ShapeError(
                f"{cls.name}: input {type_str(x)} has {c} channels but weight "
                f"{type_str(w)} expects {wc}"
            )
        if c % groups:
            raise ShapeError(
                f"{cls.name}: input {type_str(x)} has {c} channels, not a multiple "
                f"of groups={groups}"
            )
        out = tuple(
            window.strides[i] * (size - 1)
            + output_padding[i]
            + window.extent(i)
            - window.padding[i]
            - window.padding[i + 2]
            for i, size in enumerate((h, wd))
        )
        shape = (n, og * groups, *out)
        _check_positive_result(cls.name, shape, f"{type_str(x)}, {type_str(w)}")
        return [tensor(shape, element_type)]


@irdl_op_definition
class WinogradConv2dOp(GraphOp):
    """A stride-1 r×r convolution by Winograd's minimal filtering F(m×m, r×r)
    (Lavin and Gray, 2016), its weight already transformed (what
    graph-winograd makes of a blocked 3×3 conv): input N×C/b×H×W×b in
    `data_layout` "NCHW<b>c", weight U α×α×K/b×C×b (U[a, β, k / b, c, k mod
    b] = (G g_kc Gᵀ)[a, β]), `input_transform` Bᵀ α×α and
    `output_transform` Aᵀ m×α, α = m + r - 1 -> N×K/b×OH×OW×b, OH = H + top
    + bottom - r + 1. Each m×m output tile (ty, tx) is Aᵀ [Σ_c U_kc ⊙ (Bᵀ
    d_c B)] A, d_c the α×α input tile at rows ty·m - top.., columns tx·m -
    left.. (zero outside the input); the tiles past OH and OW are cut off."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    name = "graph.winograd_conv2d"

    input = operand_def(AnyTensorTypeConstr)
    weight = operand_def(AnyTensorTypeConstr)
    input_transform = operand_def(AnyTensorTypeConstr)
    output_transform = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    padding = opt_prop_def(_I64_ARRAY)
    data_layout = prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {"padding": ints_attr((0, 0, 0, 0))}

    assembly_format = (
        "$input `,` $weight `,` $input_transform `,` $output_transform attr-dict `:` "
        "functional-type(operands, results)"
    )

    @classmethod
    def tile(cls, operand_types: Sequence[Attribute]) -> tuple[int, int, int]:
        """(m, α, r) of the transforms' types, checked."""
        _, _, bt, at = operand_types
        alpha, alpha2 = _of_rank(cls.name, bt, "input_transform", 2, "α×α")
        m, alpha3 = _of_rank(cls.name, at, "output_transform", 2, "m×α")
        if alpha2 != alpha or alpha3 != alpha or not 0 < m <= alpha:
            raise ShapeError(
                f"{cls.name}: input_transform {type_str(bt)} must be α×α and "
                f"output_transform {type_str(at)} m×α, 0 < m <= α"
            )
        return m, alpha, alpha - m + 1

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, w, bt, at = operand_types
        layout = get_str(props, "data_layout")
        block = channel_block(layout)
        if block is None:
            raise ShapeError(
                f'{cls.name}: data_layout must be "NCHW<b>c" (b a positive integer), '
                f'got "{layout}"'
            )
        n, c, h, wd = shape_of(_activation(cls.name, x, layout))
        _, alpha, r = cls.tile(operand_types)
        a1, a2, kb, wc, lanes = _of_rank(cls.name, w, "weight", 5, f"α×α×K/{block}×C×{block}")
        element_type = same_element_type(cls.name, x, w)
        for what, t in (("input_transform", bt), ("output_transform", at)):
            if elem(t) != element_type:
                raise ShapeError(
                    f"{cls.name}: {what} {type_str(t)} must have the element type of "
                    f"input {type_str(x)}"
                )
        if (a1, a2, wc, lanes) != (alpha, alpha, c, block):
            raise ShapeError(
                f"{cls.name}: weight {type_str(w)} must be {alpha}×{alpha}×K/{block}×{c}×"
                f"{block} for input {type_str(x)} and input_transform {type_str(bt)}"
            )
        top, left, bottom, right = _ints_prop(cls.name, props, "padding", 4, minimum=0)
        shape = (n, kb * block, h + top + bottom - r + 1, wd + left + right - r + 1)
        _check_positive_result(cls.name, shape, f"{type_str(x)}, {type_str(w)}")
        return [_in_layout(shape, element_type, layout)]


# ---------------------------------------------------------------------------
# Matrix products.


@irdl_op_definition
class DenseOp(GraphOp):
    """Relay dense: x …×K, weight N×K -> …×N, y = x·weightᵀ."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    name = "graph.dense"

    input = operand_def(AnyTensorTypeConstr)
    weight = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, w = operand_types
        xs = _ranked(cls.name, x, "input")
        n, k = _of_rank(cls.name, w, "weight", 2, "N×K")
        element_type = same_element_type(cls.name, x, w)
        if not xs or xs[-1] != k:
            raise ShapeError(
                f"{cls.name}: input {type_str(x)} must end in K={k} to match weight {type_str(w)}"
            )
        return [tensor((*xs[:-1], n), element_type)]


@irdl_op_definition
class MatmulOp(GraphOp):
    """numpy/ONNX MatMul: 1-D operands are promoted then squeezed, batch
    dimensions broadcast."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    name = "graph.matmul"

    lhs = operand_def(AnyTensorTypeConstr)
    rhs = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    assembly_format = _TWO_OPERANDS

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        a, b = operand_types
        sa, sb = _ranked(cls.name, a, "lhs"), _ranked(cls.name, b, "rhs")
        element_type = same_element_type(cls.name, a, b)
        if not sa or not sb:
            raise ShapeError(
                f"{cls.name}: operands must have rank >= 1, got {type_str(a)} and {type_str(b)}"
            )
        ma = (1, *sa) if len(sa) == 1 else sa
        mb = (*sb, 1) if len(sb) == 1 else sb
        if ma[-1] != mb[-2]:
            raise ShapeError(
                f"{cls.name}: contraction sizes differ: {type_str(a)} has K={ma[-1]}, "
                f"{type_str(b)} has K={mb[-2]}"
            )
        batch = _broadcast_batch(ma[:-2], mb[:-2])
        if batch is None:
            raise ShapeError(
                f"{cls.name}: batch dimensions of {type_str(a)} and {type_str(b)} "
                "are not broadcast-compatible"
            )
        rows = (ma[-2],) if len(sa) > 1 else ()
        cols = (mb[-1],) if len(sb) > 1 else ()
        return [tensor((*batch, *rows, *cols), element_type)]


@irdl_op_definition
class BatchMatmulOp(GraphOp):
    """Batched product a B×M×K, b B×K×N -> B×M×N (operands transposed first
    when transpose_a / transpose_b); a batch of 1 broadcasts."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    name = "graph.batch_matmul"

    lhs = operand_def(AnyTensorTypeConstr)
    rhs = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    transpose_a = opt_prop_def(BoolAttr)
    transpose_b = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {"transpose_a": bool_attr(False), "transpose_b": bool_attr(False)}

    assembly_format = _TWO_OPERANDS

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        a, b = operand_types
        ba, a1, a2 = _of_rank(cls.name, a, "lhs", 3, "B×M×K")
        bb, b1, b2 = _of_rank(cls.name, b, "rhs", 3, "B×K×N")
        element_type = same_element_type(cls.name, a, b)
        m, ka = (a2, a1) if get_bool(props, "transpose_a") else (a1, a2)
        kb, n = (b2, b1) if get_bool(props, "transpose_b") else (b1, b2)
        if ka != kb:
            raise ShapeError(
                f"{cls.name}: contraction sizes differ: {type_str(a)} has K={ka}, "
                f"{type_str(b)} has K={kb}"
            )
        if ba != bb and 1 not in (ba, bb):
            raise ShapeError(
                f"{cls.name}: batch sizes {ba} of {type_str(a)} and {bb} of "
                f"{type_str(b)} differ and neither is 1"
            )
        return [tensor((max(ba, bb), m, n), element_type)]


# ---------------------------------------------------------------------------
# Bias and normalisation.


@irdl_op_definition
class BiasAddOp(GraphOp):
    """x + bias, the 1-D bias laid along `axis` (Relay bias_add)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    name = "graph.bias_add"

    input = operand_def(AnyTensorTypeConstr)
    bias = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    axis = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(1)}

    assembly_format = "$input `,` $bias attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, bias = operand_types
        shape = _ranked(cls.name, x, "input")
        same_element_type(cls.name, x, bias)
        axis = normalize_axis(cls.name, get_int(props, "axis"), len(shape))
        _check_channel_vector(cls.name, "bias", bias, shape[axis], x, axis)
        return [x]


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch normalisation as ONNX BatchNormalization:
    (x - mean) / sqrt(variance + epsilon) · gamma + beta along `axis`."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    name = "graph.batch_norm"

    input = operand_def(AnyTensorTypeConstr)
    gamma = operand_def(AnyTensorTypeConstr)
    beta = operand_def(AnyTensorTypeConstr)
    mean = operand_def(AnyTensorTypeConstr)
    variance = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    epsilon = opt_prop_def(FloatAttr[Float32Type])
    axis = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"epsilon": float_attr(1e-5), "axis": int_attr(1)}

    assembly_format = (
        "$input `,` $gamma `,` $beta `,` $mean `,` $variance attr-dict `:` "
        "functional-type(operands, results)"
    )

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, *params = operand_types
        shape = _ranked(cls.name, x, "input")
        same_element_type(cls.name, *operand_types)
        _float_input(cls.name, x)
        axis = normalize_axis(cls.name, get_int(props, "axis"), len(shape))
        for what, t in zip(("gamma", "beta", "mean", "variance"), params, strict=True):
            _check_channel_vector(cls.name, what, t, shape[axis], x, axis)
        return [x]


@irdl_op_definition
class LayerNormOp(GraphOp):
    """ONNX LayerNormalization: normalises over the dims from `axis` on, then
    · gamma + beta (both broadcast to those dims)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.REDUCTION

    name = "graph.layer_norm"

    input = operand_def(AnyTensorTypeConstr)
    gamma = operand_def(AnyTensorTypeConstr)
    beta = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    axis = opt_prop_def(IntegerAttr[I64])
    epsilon = opt_prop_def(FloatAttr[Float32Type])
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(-1), "epsilon": float_attr(1e-5)}

    assembly_format = "$input `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, gamma, beta = operand_types
        shape = _ranked(cls.name, x, "input")
        same_element_type(cls.name, *operand_types)
        _float_input(cls.name, x)
        axis = normalize_axis(cls.name, get_int(props, "axis"), len(shape))
        normalised = shape[axis:]
        for what, t in (("gamma", gamma), ("beta", beta)):
            ps = _ranked(cls.name, t, what)
            tail = normalised[len(normalised) - len(ps) :] if ps else ()
            if len(ps) > len(normalised) or any(
                p not in (1, d) for p, d in zip(ps, tail, strict=True)
            ):
                raise ShapeError(
                    f"{cls.name}: {what} {type_str(t)} does not broadcast to the "
                    f"normalised dims {_dims(normalised)} of input {type_str(x)} "
                    f"(axis={axis})"
                )
        return [x]


@irdl_op_definition
class LayoutTransformOp(GraphOp):
    """The same N×C×H×W tensor in another activation layout: "NCHW" to
    "NCHW<b>c" (N×C/b×H×W×b, C a multiple of b) or back (what
    graph-block-activations puts around the convs it blocks; TVM's
    layout_transform)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.layout_transform"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    src_layout = prop_def(StringAttr)
    dst_layout = prop_def(StringAttr)

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def layouts(cls, props: Props) -> tuple[str, str]:
        """(src_layout, dst_layout), checked: one of them "NCHW", the other blocked."""
        src, dst = get_str(props, "src_layout"), get_str(props, "dst_layout")
        blocks = [channel_block(layout) for layout in (src, dst)]
        valid = all(layout == "NCHW" or b is not None for layout, b in zip((src, dst), blocks))
        if not valid or (blocks[0] is None) == (blocks[1] is None):
            raise ShapeError(
                f'{cls.name}: cannot transform "{src}" to "{dst}": one layout must be '
                '"NCHW" and the other "NCHW<b>c" (b a positive integer)'
            )
        return src, dst

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        (x,) = operand_types
        src, dst = cls.layouts(props)
        nchw = _activation(cls.name, x, src)
        block = channel_block(dst)
        if block is not None and shape_of(nchw)[1] % block:
            raise ShapeError(
                f"{cls.name}: input {type_str(x)} has {shape_of(nchw)[1]} channels, not a "
                f"multiple of the block of {dst}"
            )
        return [_in_layout(shape_of(nchw), elem(x), dst)]


# ---------------------------------------------------------------------------
# Pooling.


class Pool2dOp(GraphOp):
    """Shared definition of max_pool2d and avg_pool2d (ONNX MaxPool and
    AveragePool output shapes, ceil_mode included); with `data_layout =
    "NCHW<b>c"`, over N×C/b×H×W×b."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    FLOAT_ONLY: ClassVar[bool] = False

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    kernel = prop_def(_I64_ARRAY)
    strides = opt_prop_def(_I64_ARRAY)
    padding = opt_prop_def(_I64_ARRAY)
    dilation = opt_prop_def(_I64_ARRAY)
    ceil_mode = opt_prop_def(BoolAttr)
    data_layout = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {
        "strides": ints_attr((1, 1)),
        "padding": ints_attr((0, 0, 0, 0)),
        "dilation": ints_attr((1, 1)),
        "ceil_mode": bool_attr(False),
        "data_layout": str_attr("NCHW"),
    }

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        layout = data_layout(props, cls)
        x = _activation(cls.name, operand_types[0], layout)
        n, c, _, _ = shape_of(x)
        if cls.FLOAT_ONLY:
            _float_input(cls.name, x)
        kernel = _ints_prop(cls.name, props, "kernel", 2, minimum=1)
        window = _window_props(cls.name, props, kernel)
        for i, pad in enumerate(window.padding):
            if pad >= kernel[i % 2]:
                raise ShapeError(
                    f"{cls.name}: padding [{', '.join(map(str, window.padding))}] "
                    f"must be smaller than kernel {_dims(kernel)}"
                )
        out = window.output_hw(cls.name, x, get_bool(props, "ceil_mode"))
        for axis, (what, size) in enumerate(zip(("row", "column"), shape_of(x)[2:], strict=True)):
            empty = window.first_window_outside(axis, size, out[axis])
            if empty is not None:
                raise ShapeError(
                    f"{cls.name}: the window of output {what} {empty} covers only "
                    f"padding (kernel {_dims(kernel)}, dilation "
                    f"{_dims(window.dilation)}, padding "
                    f"[{', '.join(map(str, window.padding))}], input {type_str(x)})"
                )
        return [_in_layout((n, c, *out), elem(x), layout)]


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """ONNX MaxPool over N×C×H×W; padding never wins the max."""

    name = "graph.max_pool2d"


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """ONNX AveragePool over N×C×H×W; the divisor counts the explicit padding
    when count_include_pad, never the extra ceil_mode region."""

    name = "graph.avg_pool2d"

    FLOAT_ONLY: ClassVar[bool] = True

    count_include_pad = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {"count_include_pad": bool_attr(False)}


class GlobalPool2dOp(GraphOp):
    """Pooling over the whole H×W: N×C×H×W -> N×C×1×1 (with `data_layout =
    "NCHW<b>c"`, N×C/b×H×W×b -> N×C/b×1×1×b)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ANCHOR

    FLOAT_ONLY: ClassVar[bool] = False

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    data_layout = opt_prop_def(StringAttr)
    DEFAULTS: ClassVar[Props] = {"data_layout": str_attr("NCHW")}

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        layout = data_layout(props, cls)
        x = _activation(cls.name, operand_types[0], layout)
        n, c, _, _ = shape_of(x)
        if cls.FLOAT_ONLY:
            _float_input(cls.name, x)
        return [_in_layout((n, c, 1, 1), elem(x), layout)]


@irdl_op_definition
class GlobalAvgPool2dOp(GlobalPool2dOp):
    """ONNX GlobalAveragePool: mean over H×W."""

    name = "graph.global_avg_pool2d"

    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class GlobalMaxPool2dOp(GlobalPool2dOp):
    """ONNX GlobalMaxPool: max over H×W."""

    name = "graph.global_max_pool2d"


# ---------------------------------------------------------------------------
# Softmax.


class AxisSoftmaxOp(GraphOp):
    """Softmax-like over one axis (ONNX opset 13)."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.REDUCTION

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    axis = opt_prop_def(IntegerAttr[I64])
    DEFAULTS: ClassVar[Props] = {"axis": int_attr(-1)}

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        (x,) = operand_types
        shape = _ranked(cls.name, x, "input")
        _float_input(cls.name, x)
        normalize_axis(cls.name, get_int(props, "axis"), len(shape))
        return [x]


@irdl_op_definition
class SoftmaxOp(AxisSoftmaxOp):
    """exp(x) / sum(exp(x)) over `axis` (ONNX Softmax-13)."""

    name = "graph.softmax"


@irdl_op_definition
class LogSoftmaxOp(AxisSoftmaxOp):
    """x - log(sum(exp(x))) over `axis` (ONNX LogSoftmax-13)."""

    name = "graph.log_softmax"


# ---------------------------------------------------------------------------
# Pad and resize.


@irdl_op_definition
class PadOp(GraphOp):
    """ONNX Pad: `pads` are all begins then all ends (negative ones crop,
    before padding); mode constant (with `value`), reflect or edge."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.pad"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    pads = prop_def(_I64_ARRAY)
    mode = opt_prop_def(StringAttr)
    value = opt_prop_def(FloatAttr[Float32Type])
    DEFAULTS: ClassVar[Props] = {"mode": str_attr("constant"), "value": float_attr(0.0)}

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        (x,) = operand_types
        shape = _ranked(cls.name, x, "input")
        rank = len(shape)
        pads = _ints_prop(cls.name, props, "pads", 2 * rank)
        mode = _mode_prop(cls.name, props, "mode", PAD_MODES)
        out = tuple(d + pads[i] + pads[i + rank] for i, d in enumerate(shape))
        _check_positive_result(cls.name, out, type_str(x))
        for i, d in enumerate(shape):
            kept = d - max(-pads[i], 0) - max(-pads[i + rank], 0)
            if kept < 0 or (kept == 0 and mode == "edge" and out[i] > 0):
                raise ShapeError(
                    f"{cls.name}: pads {pads[i]}, {pads[i + rank]} on axis {i} crop more than "
                    f"its size {d} in {type_str(x)}"
                    + (" (edge mode needs an element to repeat)" if kept == 0 else "")
                )
        if mode == "reflect":
            for i, d in enumerate(shape):
                kept = d - max(-pads[i], 0) - max(-pads[i + rank], 0)
                if max(pads[i], pads[i + rank]) >= kept:
                    raise ShapeError(
                        f"{cls.name}: reflect pads {pads[i]}, {pads[i + rank]} on axis "
                        f"{i} must be smaller than its size {kept} in {type_str(x)}"
                    )
        return [tensor(out, elem(x))]


@irdl_op_definition
class ResizeOp(GraphOp):
    """ONNX Resize to the full output shape `size`: nearest, n-linear or
    n-cubic over every resized axis, with ONNX coordinate transformation and
    nearest rounding modes. `scales` (one per axis, default size / input
    size) are the factors the coordinate transformation divides by; `roi`
    (all starts then all ends, default 0 and 1) and `extrapolation_value`
    serve tf_crop_and_resize. Cubic uses Keys' kernel with `cubic_coeff_a`;
    `antialias` (linear and cubic) widens the filter by 1 / scale when
    downsampling and normalizes its taps; `exclude_outside` (cubic and
    antialias, ignored otherwise) drops the taps outside the input and
    renormalizes the rest."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.resize"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    size = prop_def(_I64_ARRAY)
    mode = opt_prop_def(StringAttr)
    coordinate_transformation_mode = opt_prop_def(StringAttr)
    nearest_mode = opt_prop_def(StringAttr)
    scales = opt_prop_def(_F64_ARRAY)
    roi = opt_prop_def(_F64_ARRAY)
    extrapolation_value = opt_prop_def(FloatAttr[Float32Type])
    cubic_coeff_a = opt_prop_def(FloatAttr[Float32Type])
    exclude_outside = opt_prop_def(BoolAttr)
    antialias = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {
        "mode": str_attr("nearest"),
        "coordinate_transformation_mode": str_attr("half_pixel"),
        "nearest_mode": str_attr("round_prefer_floor"),
        "extrapolation_value": float_attr(0.0),
        "cubic_coeff_a": float_attr(-0.75),
        "exclude_outside": bool_attr(False),
        "antialias": bool_attr(False),
    }

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        (x,) = operand_types
        shape = _ranked(cls.name, x, "input")
        size = _ints_prop(cls.name, props, "size", len(shape))
        mode = _mode_prop(cls.name, props, "mode", RESIZE_MODES)
        if get_bool(props, "antialias") and mode not in ANTIALIAS_MODES:
            raise ShapeError(f"{cls.name}: antialias applies to linear and cubic, not {mode}")
        _mode_prop(cls.name, props, "coordinate_transformation_mode", COORDINATE_MODES)
        _mode_prop(cls.name, props, "nearest_mode", NEAREST_MODES)
        _check_positive_result(cls.name, size, type_str(x))
        if any(d < 1 for d in shape):
            raise ShapeError(f"{cls.name}: input {type_str(x)} has an empty dimension")
        scales = resize_scales(props, shape, size)
        if len(scales) != len(shape) or any(not v > 0 for v in scales):
            raise ShapeError(
                f"{cls.name}: scales must be {len(shape)} positive values, got "
                f"[{', '.join(map(str, scales))}]"
            )
        roi = resize_roi(props, len(shape))
        if len(roi) != 2 * len(shape):
            raise ShapeError(f"{cls.name}: roi must have {2 * len(shape)} values, got {len(roi)}")
        return [tensor(size, elem(x))]


@irdl_op_definition
class GridSampleOp(GraphOp):
    """ONNX GridSample (opsets 16 to 22): samples `input` (N×C×D1×…×Dr) at
    the points of `grid` (N×O1×…×Or×r, normalized to [-1, 1], the last
    component naming the first spatial axis: x, y, z). `mode` nearest
    (rounding half to even), linear or cubic (Keys, a = -0.75);
    `padding_mode` zeros, border or reflection for points and taps outside
    the input; `align_corners` maps -1 and 1 to the centres of the corner
    elements rather than to their outer edges. The output is N×C×O1×…×Or."""

    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    name = "graph.grid_sample"

    input = operand_def(AnyTensorTypeConstr)
    grid = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    mode = opt_prop_def(StringAttr)
    padding_mode = opt_prop_def(StringAttr)
    align_corners = opt_prop_def(BoolAttr)
    DEFAULTS: ClassVar[Props] = {
        "mode": str_attr("linear"),
        "padding_mode": str_attr("zeros"),
        "align_corners": bool_attr(False),
    }

    assembly_format = "$input `,` $grid attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        x, grid = operand_types
        shape = _ranked(cls.name, x, "input")
        grid_shape = _ranked(cls.name, grid, "grid")
        _mode_prop(cls.name, props, "mode", GRID_SAMPLE_MODES)
        _mode_prop(cls.name, props, "padding_mode", GRID_PADDING_MODES)
        get_bool(props, "align_corners")
        _float_input(cls.name, x)
        if not is_float(elem(grid)):
            raise ShapeError(f"{cls.name}: grid {type_str(grid)} must have a float element type")
        spatial = len(shape) - 2
        if spatial < 1:
            raise ShapeError(f"{cls.name}: input {type_str(x)} must be N×C×D1×… (rank 3 or more)")
        if len(grid_shape) != spatial + 2 or grid_shape[-1] != spatial:
            raise ShapeError(
                f"{cls.name}: grid {type_str(grid)} must be N×O1×…×O{spatial}×{spatial} "
                f"for input {type_str(x)}"
            )
        if grid_shape[0] != shape[0]:
            raise ShapeError(
                f"{cls.name}: grid {type_str(grid)} and input {type_str(x)} differ in batch size"
            )
        if any(d < 1 for d in shape[2:]):
            raise ShapeError(f"{cls.name}: input {type_str(x)} has an empty spatial dimension")
        return [tensor((*shape[:2], *grid_shape[1:-1]), elem(x))]
