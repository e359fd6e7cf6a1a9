"""ONNX converters: recurrent ops (RNN, GRU, LSTM).

Shapes are static, so each op is unrolled over its sequence into basic graph
ops: the input projection X·Wᵀ (+ biases) of every step is one `graph.dense`,
then each step is a `graph.dense` of the hidden state by R, gate slices and
activations. The interpreter, the native and the CUDA paths all run the
result with no lowering of their own.

Every attribute of the spec is honoured: direction forward, reverse or
bidirectional; activations with their alpha and beta (consumed, as in
onnxruntime, only by the activations that take them); clip; input_forget;
linear_before_reset; layout 0 and 1; the optional inputs B, sequence_lens,
initial_h, initial_c and P; outputs Y, Y_h and Y_c, any of them omitted.
A `sequence_lens` that is not a constant of full lengths masks each step with
`graph.where`: past a batch entry's length its state is held and its Y is 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import nn
from xtc.dialects.graph import tensor as tn
from xtc.dialects.graph.base import elem, float_attr, int_attr, ints_attr, is_float
from xtc.frontend.converters import Node, converts
from xtc.frontend.converters.nn import (
    add,
    cast,
    concat,
    dtype_of,
    mul,
    requested,
    reshape,
    scalar,
    shape,
    slice_axis,
    sub,
    transpose,
    unary,
    where,
)

Outputs = Sequence[SSAValue | None]

DEFAULT_ACTIVATIONS = {
    "RNN": ("Tanh",),
    "GRU": ("Sigmoid", "Tanh"),
    "LSTM": ("Sigmoid", "Tanh", "Tanh"),
}
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}

PARAMETERS: dict[str, tuple[float | None, float | None]] = {
    "relu": (None, None),
    "tanh": (None, None),
    "sigmoid": (None, None),
    "softsign": (None, None),
    "softplus": (None, None),
    "affine": (1.0, 0.0),
    "leakyrelu": (0.01, None),
    "thresholdedrelu": (1.0, None),
    "scaledtanh": (1.0, 1.0),
    "hardsigmoid": (0.2, 0.5),
    "elu": (1.0, None),
}
"""Each activation by lower-case name, with the defaults of the alpha and
beta it takes (None: it takes none): those of the ONNX op of that name, as
the spec says (onnxruntime takes 0 for Affine, ScaledTanh and
ThresholdedRelu)."""


@dataclass(frozen=True)
class Activation:
    name: str
    alpha: float
    beta: float


@dataclass(frozen=True)
class Cell:
    """One direction's weights and settings, as graph values: `w` G·H×I,
    `r` G·H×H, `bias_w` and `bias_r` G·H (or None), `peephole` 3·H (or
    None), the initial states B×H."""

    w: SSAValue
    r: SSAValue
    bias_w: SSAValue | None
    bias_r: SSAValue | None
    peephole: SSAValue | None
    h0: SSAValue
    c0: SSAValue | None
    activations: tuple[Activation, ...]
    reverse: bool


def activation_list(node: Node, directions: int) -> list[tuple[Activation, ...]]:
    """The activations of each direction, alphas and betas attached."""
    count = len(DEFAULT_ACTIVATIONS[node.op_type])
    names = [str(n) for n in node.attr("activations", [])] or list(
        DEFAULT_ACTIVATIONS[node.op_type] * directions
    )
    if len(names) == count and directions == 2:
        names = names * 2
    if len(names) != count * directions:
        node.fail(
            f"activations {names} must name {count * directions} functions ({count} per direction)"
        )
    alphas = [float(a) for a in node.attr("activation_alpha", [])]
    betas = [float(b) for b in node.attr("activation_beta", [])]
    result: list[Activation] = []
    for name in names:
        key = name.lower()
        if key not in PARAMETERS:
            node.fail(f"activation '{name}' is not one of {', '.join(sorted(PARAMETERS))}")
        default_alpha, default_beta = PARAMETERS[key]
        alpha = alphas.pop(0) if default_alpha is not None and alphas else default_alpha
        beta = betas.pop(0) if default_beta is not None and betas else default_beta
        result.append(Activation(key, alpha or 0.0, beta or 0.0))
    return [tuple(result[d * count : (d + 1) * count]) for d in range(directions)]


def apply(node: Node, f: Activation, x: SSAValue) -> SSAValue:
    """f(x) with the basic graph ops."""
    name, alpha, beta = f.name, f.alpha, f.beta
    if name in UNARY_ACTIVATIONS:
        return unary(node, UNARY_ACTIVATIONS[name], x)
    if name == "affine":
        return add(node, mul(node, x, scalar(node, alpha, x)), scalar(node, beta, x))
    if name == "leakyrelu":
        return node.emit1(ew.LeakyReluOp, [x], {"alpha": float_attr(alpha)})
    if name == "hardsigmoid":
        props = {"alpha": float_attr(alpha), "beta": float_attr(beta)}
        return node.emit1(ew.HardSigmoidOp, [x], props)
    if name == "thresholdedrelu":
        above = node.emit1(ew.GreaterOp, [x, scalar(node, alpha, x)])
        return where(node, above, x, scalar(node, 0, x))
    if name == "scaledtanh":
        inner = unary(node, ew.TanhOp, mul(node, x, scalar(node, beta, x)))
        return mul(node, inner, scalar(node, alpha, x))
    if name == "elu":
        expm1 = sub(node, unary(node, ew.ExpOp, x), scalar(node, 1, x))
        negative = node.emit1(ew.LessOp, [x, scalar(node, 0, x)])
        return where(node, negative, mul(node, expm1, scalar(node, alpha, x)), x)
    assert name == "softsign", name
    denominator = add(node, unary(node, ew.AbsOp, x), scalar(node, 1, x))
    return node.emit1(ew.DivOp, [x, denominator])


UNARY_ACTIVATIONS = {
    "relu": ew.ReluOp,
    "tanh": ew.TanhOp,
    "sigmoid": ew.SigmoidOp,
    "softplus": ew.SoftplusOp,
}


class Recurrence:
    """The shared frame of the three ops: inputs checked and brought to
    layout 0, one cell per direction, the step masks, and the outputs."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.gates = GATES[node.op_type]
        x = node.input(0)
        if not is_float(elem(x.type)):
            node.fail(f"X {node.type_str(0)} must have a float element type")
        self.layout = int(node.attr("layout", 0))
        if self.layout not in (0, 1):
            node.fail(f"layout {self.layout} is not 0 or 1")
        if len(shape(x)) != 3:
            node.fail(f"X {node.type_str(0)} must be 3-D")
        self.x = transpose(node, x, (1, 0, 2)) if self.layout else x
        self.steps, self.batch, self.input_size = shape(self.x)
        direction = node.attr("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            node.fail(f"direction '{direction}' is not forward, reverse or bidirectional")
        self.directions = 2 if direction == "bidirectional" else 1
        self.hidden = self.check_weights()
        clip = node.attr("clip")
        self.clip = None if clip is None else float(clip)
        self.masks = self.step_masks()
        activations = activation_list(node, self.directions)
        self.cells = [
            self.cell(d, activations[d], direction == "reverse" or d == 1)
            for d in range(self.directions)
        ]

    def check_weights(self) -> int:
        node, g, d = self.node, self.gates, self.directions
        r_shape = node.shape(2)
        if len(r_shape) != 3 or r_shape[1] % g or r_shape[0] != d:
            node.fail(f"R {node.type_str(2)} must be {d}×{g}·H×H")
        hidden = r_shape[2]
        declared = node.attr("hidden_size")
        if declared is not None and int(declared) != hidden:
            node.fail(f"hidden_size {declared} does not match R {node.type_str(2)}")
        expected = {
            1: ((d, g * hidden, self.input_size), "W"),
            2: ((d, g * hidden, hidden), "R"),
            3: ((d, 2 * g * hidden), "B"),
            7: ((d, 3 * hidden), "P"),
        }
        for i, (want, what) in expected.items():
            if node.has_input(i) and node.shape(i) != want:
                node.fail(f"{what} {node.type_str(i)} must be {'×'.join(map(str, want))}")
        for i, what in ((5, "initial_h"), (6, "initial_c")):
            want = (self.batch, d, hidden) if self.layout else (d, self.batch, hidden)
            if node.has_input(i) and node.shape(i) != want:
                node.fail(f"{what} {node.type_str(i)} must be {'×'.join(map(str, want))}")
        return hidden

    def cell(self, d: int, activations: tuple[Activation, ...], reverse: bool) -> Cell:
        node, g, h = self.node, self.gates, self.hidden

        def direction_of(i: int) -> SSAValue | None:
            value = node.optional_input(i)
            if value is None:
                return None
            if i in (5, 6) and self.layout:
                value = transpose(node, value, (1, 0, 2))
            one = slice_axis(node, value, 0, d, d + 1)
            return reshape(node, one, shape(one)[1:])

        bias = direction_of(3)
        bias_w = None if bias is None else slice_axis(node, bias, 0, 0, g * h)
        bias_r = None if bias is None else slice_axis(node, bias, 0, g * h, 2 * g * h)
        zeros = np.zeros((self.batch, h), dtype_of(self.x))
        h0 = direction_of(5)
        h0 = node.constant(zeros) if h0 is None else h0
        c0 = direction_of(6) if node.op_type == "LSTM" else None
        if node.op_type == "LSTM" and c0 is None:
            c0 = node.constant(zeros)
        w, r = direction_of(1), direction_of(2)
        assert w is not None and r is not None
        peephole = direction_of(7) if node.op_type == "LSTM" else None
        return Cell(w, r, bias_w, bias_r, peephole, h0, c0, activations, reverse)

    def step_masks(self) -> list[SSAValue] | None:
        """Per step, B×1 true where the step lies within the batch entry's
        length; None when every entry runs the whole sequence."""
        node = self.node
        if not node.has_input(4):
            return None
        if node.shape(4) != (self.batch,):
            node.fail(f"sequence_lens {node.type_str(4)} must have {self.batch} values")
        known = node.const(4)
        if known is not None:
            if ((known < 1) | (known > self.steps)).any():
                node.fail(f"sequence_lens {known.tolist()} must lie in 1..{self.steps}")
            if (known == self.steps).all():
                return None
        lengths = reshape(node, cast(node, node.input(4), i32), (self.batch, 1))
        return [
            node.emit1(ew.LessOp, [node.constant(np.array(t, np.int32)), lengths])
            for t in range(self.steps)
        ]

    def projection(self, cell: Cell, bias: SSAValue | None) -> list[SSAValue]:
        """X·Wᵀ + bias of every step, B×G·H each, in time order."""
        node = self.node
        flat = reshape(node, self.x, (self.steps * self.batch, self.input_size))
        projected = node.emit1(nn.DenseOp, [flat, cell.w])
        if bias is not None:
            projected = add(node, projected, bias)
        return split_rows(node, projected, self.steps)

    def gate(self, value: SSAValue, k: int, count: int = 1) -> SSAValue:
        """Gates k..k+count-1 of a …×G·H value."""
        axis = len(shape(value)) - 1
        return slice_axis(self.node, value, axis, k * self.hidden, (k + count) * self.hidden)

    def gate_rows(self, weights: SSAValue, k: int, count: int = 1) -> SSAValue:
        """Rows of gates k..k+count-1 of a G·H×H weight."""
        return slice_axis(self.node, weights, 0, k * self.hidden, (k + count) * self.hidden)

    def activate(self, f: Activation, x: SSAValue) -> SSAValue:
        if self.clip is not None:
            props = {"min": float_attr(-self.clip), "max": float_attr(self.clip)}
            x = self.node.emit1(ew.ClipOp, [x], props)
        return apply(self.node, f, x)

    def hold(self, t: int, new: SSAValue, old: SSAValue) -> SSAValue:
        """The new state where step t is within the entry's length, else the old."""
        return new if self.masks is None else where(self.node, self.masks[t], new, old)

    def emitted(self, t: int, new: SSAValue) -> SSAValue:
        """Step t's Y: the new state, 0 past the entry's length."""
        if self.masks is None:
            return new
        return where(self.node, self.masks[t], new, scalar(self.node, 0, new))

    def run(self, step: StepFunction) -> Outputs:
        """Runs `step` over the sequence in each direction and assembles
        Y, Y_h and Y_c as the node asks for them."""
        node = self.node
        ys: list[SSAValue] = []
        last_h: list[SSAValue] = []
        last_c: list[SSAValue] = []
        for cell in self.cells:
            order = range(self.steps - 1, -1, -1) if cell.reverse else range(self.steps)
            inputs = step.prepare(self, cell)
            h, c = cell.h0, cell.c0
            outputs: dict[int, SSAValue] = {}
            for t in order:
                new_h, new_c = step(self, cell, inputs[t], h, c)
                outputs[t] = self.emitted(t, new_h)
                h = self.hold(t, new_h, h)
                c = None if new_c is None or c is None else self.hold(t, new_c, c)
            if requested(node, 0):
                steps = concat(node, [outputs[t] for t in range(self.steps)], 0)
                ys.append(reshape(node, steps, (self.steps, 1, self.batch, self.hidden)))
            last_h.append(reshape(node, h, (1, self.batch, self.hidden)))
            if c is not None:
                last_c.append(reshape(node, c, (1, self.batch, self.hidden)))
        y = concat(node, ys, 1) if ys else None
        y_h = concat(node, last_h, 0) if requested(node, 1) else None
        y_c = concat(node, last_c, 0) if requested(node, 2) and last_c else None
        if self.layout:
            y = None if y is None else transpose(node, y, (2, 0, 1, 3))
            y_h = None if y_h is None else transpose(node, y_h, (1, 0, 2))
            y_c = None if y_c is None else transpose(node, y_c, (1, 0, 2))
        return [y, y_h, y_c][: len(node.proto.output)]


SPLIT_FANOUT = 8


def split_rows(node: Node, value: SSAValue, parts: int) -> list[SSAValue]:
    """`value` cut along axis 0 into `parts` equal pieces, by a tree of
    splits of at most SPLIT_FANOUT pieces each. Splits, not a slice per
    step: the steps' kernels then read whole buffers and are one workload,
    compiled once; a tree, because scheduling one split of many pieces
    grows with the square of their number."""
    if parts == 1:
        return [value]
    rows = shape(value)[0] // parts
    groups = min(parts, SPLIT_FANOUT)
    counts = [parts // groups + (1 if g < parts % groups else 0) for g in range(groups)]
    props = {"axis": int_attr(0), "sizes": ints_attr([rows * c for c in counts])}
    pieces = node.emit(tn.SplitOp, [value], props)
    return [
        row for piece, c in zip(pieces, counts, strict=True) for row in split_rows(node, piece, c)
    ]


class StepFunction:
    """One op's cell: `prepare` computes the per-step input projections,
    `__call__` one step from (h, c) to the new (h, c). Each step adds the
    projection after the recurrent product (dense(h, R) + x): the fused
    kernel then reads x in the epilogue, where the matrix-vector schedule
    can keep its accumulators in registers."""

    def prepare(self, frame: Recurrence, cell: Cell) -> list[SSAValue]:
        both = (
            None
            if cell.bias_w is None or cell.bias_r is None
            else add(frame.node, cell.bias_w, cell.bias_r)
        )
        return frame.projection(cell, both)

    def __call__(
        self,
        frame: Recurrence,
        cell: Cell,
        x: SSAValue,
        h: SSAValue,
        c: SSAValue | None,
    ) -> tuple[SSAValue, SSAValue | None]:
        raise NotImplementedError


class RnnStep(StepFunction):
    """Ht = f(Xt·Wᵀ + Ht-1·Rᵀ + Wb + Rb)."""

    def __call__(
        self, frame: Recurrence, cell: Cell, x: SSAValue, h: SSAValue, c: SSAValue | None
    ) -> tuple[SSAValue, SSAValue | None]:
        node = frame.node
        recurrent = node.emit1(nn.DenseOp, [h, cell.r])
        return frame.activate(cell.activations[0], add(node, recurrent, x)), None


class GruStep(StepFunction):
    """Gates z, r, h; the h gate's recurrent bias stays apart when
    linear_before_reset applies r after R."""

    def __init__(self, linear_before_reset: bool) -> None:
        self.linear_before_reset = linear_before_reset

    def prepare(self, frame: Recurrence, cell: Cell) -> list[SSAValue]:
        node = frame.node
        if cell.bias_w is None or cell.bias_r is None:
            return frame.projection(cell, None)
        if not self.linear_before_reset:
            return super().prepare(frame, cell)
        zr = add(node, frame.gate(cell.bias_w, 0, 2), frame.gate(cell.bias_r, 0, 2))
        return frame.projection(cell, concat(node, [zr, frame.gate(cell.bias_w, 2)], 0))

    def __call__(
        self, frame: Recurrence, cell: Cell, x: SSAValue, h: SSAValue, c: SSAValue | None
    ) -> tuple[SSAValue, SSAValue | None]:
        node = frame.node
        f, g = cell.activations
        r_weights = cell.r
        if self.linear_before_reset:
            recurrent = node.emit1(nn.DenseOp, [h, r_weights])
            zr = add(node, frame.gate(x, 0, 2), frame.gate(recurrent, 0, 2))
        else:
            zr_weights = frame.gate_rows(r_weights, 0, 2)
            recurrent = node.emit1(nn.DenseOp, [h, zr_weights])
            zr = add(node, recurrent, frame.gate(x, 0, 2))
        z = frame.activate(f, frame.gate(zr, 0))
        reset = frame.activate(f, frame.gate(zr, 1))
        if self.linear_before_reset:
            hidden = frame.gate(recurrent, 2)
            if cell.bias_r is not None:
                hidden = add(node, hidden, frame.gate(cell.bias_r, 2))
            candidate = add(node, frame.gate(x, 2), mul(node, reset, hidden))
        else:
            h_weights = frame.gate_rows(r_weights, 2)
            reset_h = node.emit1(nn.DenseOp, [mul(node, reset, h), h_weights])
            candidate = add(node, reset_h, frame.gate(x, 2))
        candidate = frame.activate(g, candidate)
        # (1 - z) h~ + z H = h~ + z (H - h~)
        return add(node, candidate, mul(node, z, sub(node, h, candidate))), None


class LstmStep(StepFunction):
    """Gates i, o, f, c; peepholes P (i, o, f) on the cell state;
    input_forget couples f = 1 - i; clip bounds the gates' inputs."""

    def __init__(self, input_forget: bool) -> None:
        self.input_forget = input_forget

    def __call__(
        self, frame: Recurrence, cell: Cell, x: SSAValue, h: SSAValue, c: SSAValue | None
    ) -> tuple[SSAValue, SSAValue | None]:
        node = frame.node
        assert c is not None
        f, g, h_act = cell.activations
        gates = add(node, node.emit1(nn.DenseOp, [h, cell.r]), x)
        p = cell.peephole

        def peeped(k: int, state: SSAValue, pk: int) -> SSAValue:
            value = frame.gate(gates, k)
            if p is None:
                return value
            return add(node, value, mul(node, frame.gate(p, pk), state))

        i = frame.activate(f, peeped(0, c, 0))
        if self.input_forget:
            forget = sub(node, scalar(node, 1, i), i)
        else:
            forget = frame.activate(f, peeped(2, c, 2))
        candidate = frame.activate(g, frame.gate(gates, 3))
        new_c = add(node, mul(node, forget, c), mul(node, i, candidate))
        o = frame.activate(f, peeped(1, new_c, 1))
        # onnxruntime clips the gates' inputs, not the cell state h reads.
        return mul(node, o, apply(node, h_act, new_c)), new_c


STEPS: dict[str, Callable[[Node], StepFunction]] = {
    "RNN": lambda node: RnnStep(),
    "GRU": lambda node: GruStep(bool(node.attr("linear_before_reset", 0))),
    "LSTM": lambda node: LstmStep(bool(node.attr("input_forget", 0))),
}


@converts("RNN", "GRU", "LSTM")
def convert_recurrent(node: Node) -> Outputs:
    return Recurrence(node).run(STEPS[node.op_type](node))
