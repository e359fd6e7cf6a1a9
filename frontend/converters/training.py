"""The optimizer ops of ai.onnx.preview.training: Adagrad, Adam, Momentum.

Each updates one or more tensors from their gradients with a scalar
learning rate R and step count T; the update formulas are those of the
operator specification (onnx/defs/training/defs.cc) as onnx.reference
computes them, built from element-wise graph ops. The update is computed
in each tensor's element type, T converted to it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import elem
from xtc.frontend.converters import Node, converts
from xtc.frontend.converters.nn import add, cast, div, dtype_of, mul, scalar, shape, sub, where

TRAINING_DOMAIN = "ai.onnx.preview.training"

Outputs = Sequence[SSAValue | None]


def updated_groups(node: Node, per_tensor: int) -> list[list[SSAValue]]:
    """The inputs after R and T, grouped per optimized tensor: for n tensors
    the node takes n X's, then n G's, and so on (`per_tensor` lists)."""
    count = node.num_inputs - 2
    if count <= 0 or count % per_tensor:
        node.fail(
            f"takes R, T and {per_tensor} inputs per optimized tensor, not {node.num_inputs} inputs"
        )
    n = count // per_tensor
    groups: list[list[SSAValue]] = []
    for t in range(n):
        group = [node.input(2 + k * n + t) for k in range(per_tensor)]
        x = group[0]
        if dtype_of(x).kind != "f":
            node.fail(f"input {2 + t} {node.type_str(2 + t)} must be a float tensor")
        for k, value in enumerate(group[1:], start=1):
            if value.type != x.type:
                node.fail(
                    f"input {2 + k * n + t} {node.type_str(2 + k * n + t)} must have the type "
                    f"of input {2 + t} {node.type_str(2 + t)}"
                )
        groups.append(group)
    return groups


def rate_and_step(node: Node, like: SSAValue) -> tuple[SSAValue, SSAValue]:
    """R and T as scalars of `like`'s element type."""
    if shape(node.input(0)) not in ((), (1,)) or dtype_of(node.input(0)).kind != "f":
        node.fail(f"R {node.type_str(0)} must be a float scalar")
    if shape(node.input(1)) not in ((), (1,)) or dtype_of(node.input(1)) != "int64":
        node.fail(f"T {node.type_str(1)} must be an int64 scalar")
    element = elem(like.type)
    return cast(node, node.input(0), element), cast(node, node.input(1), element)


def regularized(node: Node, x: SSAValue, g: SSAValue) -> SSAValue:
    """norm_coefficient * X + G: the gradient with the L2 term's."""
    return add(node, mul(node, scalar(node, node.attr("norm_coefficient", 0.0), x), x), g)


def after_first_step(node: Node, t: SSAValue) -> SSAValue:
    """Whether T > 0 (a bool scalar)."""
    return node.emit1(ew.GreaterOp, [t, scalar(node, 0, t)])


@converts("Adagrad", domain=TRAINING_DOMAIN)
def convert_adagrad(node: Node) -> Outputs:
    groups = updated_groups(node, 3)
    new_x: list[SSAValue] = []
    new_h: list[SSAValue] = []
    for x, g, h in groups:
        r, t = rate_and_step(node, x)
        decay = mul(node, t, scalar(node, node.attr("decay_factor", 0.0), x))
        rate = div(node, r, add(node, scalar(node, 1.0, x), decay))
        gradient = regularized(node, x, g)
        h_new = add(node, h, mul(node, gradient, gradient))
        root = add(
            node, node.emit1(ew.SqrtOp, [h_new]), scalar(node, node.attr("epsilon", 1e-6), x)
        )
        new_x.append(sub(node, x, div(node, mul(node, rate, gradient), root)))
        new_h.append(h_new)
    return [*new_x, *new_h]


@converts("Adam", domain=TRAINING_DOMAIN)
def convert_adam(node: Node) -> Outputs:
    groups = updated_groups(node, 4)
    alpha = float(node.attr("alpha", 0.9))
    beta = float(node.attr("beta", 0.999))
    post = float(node.attr("norm_coefficient_post", 0.0))
    new_x: list[SSAValue] = []
    new_v: list[SSAValue] = []
    new_h: list[SSAValue] = []
    for x, g, v, h in groups:
        r, t = rate_and_step(node, x)
        one = scalar(node, 1.0, x)
        gradient = regularized(node, x, g)
        v_new = add(
            node,
            mul(node, scalar(node, alpha, x), v),
            mul(node, scalar(node, 1 - alpha, x), gradient),
        )
        h_new = add(
            node,
            mul(node, scalar(node, beta, x), h),
            mul(node, scalar(node, 1 - beta, x), mul(node, gradient, gradient)),
        )
        root = add(
            node, node.emit1(ew.SqrtOp, [h_new]), scalar(node, node.attr("epsilon", 1e-6), x)
        )
        # Bias correction, from the second step on: R * sqrt(1 - beta^T) / (1 - alpha^T).
        beta_t = node.emit1(ew.PowOp, [scalar(node, beta, x), t])
        alpha_t = node.emit1(ew.PowOp, [scalar(node, alpha, x), t])
        corrected = div(
            node,
            mul(node, r, node.emit1(ew.SqrtOp, [sub(node, one, beta_t)])),
            sub(node, one, alpha_t),
        )
        rate = where(node, after_first_step(node, t), corrected, r)
        x_new = sub(node, x, mul(node, rate, div(node, v_new, root)))
        new_x.append(mul(node, scalar(node, 1 - post, x), x_new) if post else x_new)
        new_v.append(v_new)
        new_h.append(h_new)
    return [*new_x, *new_v, *new_h]


MOMENTUM_MODES = ("standard", "nesterov")


@converts("Momentum", domain=TRAINING_DOMAIN)
def convert_momentum(node: Node) -> Outputs:
    for name in ("alpha", "beta", "mode", "norm_coefficient"):
        if not node.has_attr(name):
            node.fail(f"attribute '{name}' is required")
    mode = node.attr("mode")
    if mode not in MOMENTUM_MODES:
        node.fail(f"mode '{mode}' is not one of {', '.join(MOMENTUM_MODES)}")
    groups = updated_groups(node, 3)
    new_x: list[SSAValue] = []
    new_v: list[SSAValue] = []
    for x, g, v in groups:
        r, t = rate_and_step(node, x)
        alpha = scalar(node, node.attr("alpha"), x)
        # The gradient's coefficient is 1 at the first step.
        beta = where(
            node,
            after_first_step(node, t),
            scalar(node, node.attr("beta"), x),
            scalar(node, 1.0, x),
        )
        gradient = regularized(node, x, g)
        v_new = add(node, mul(node, alpha, v), mul(node, beta, gradient))
        step = v_new if mode == "standard" else add(node, gradient, mul(node, alpha, v_new))
        new_x.append(sub(node, x, mul(node, r, step)))
        new_v.append(v_new)
    return [*new_x, *new_v]
