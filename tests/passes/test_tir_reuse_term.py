"""tir-reuse-term: a softmax of random shape and axis, its exp stored by the
sum nest and read back by the output nest, gives the same numbers in the
tir interpreter (bit for bit) and natively under the whole default
schedule, which asks for it where the sum is a row reduction or scalar
(not through a register tile), without refusing any other step; the
kernel then computes one exp per element. A log-softmax's schedule does
not ask (nothing to reuse)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from xtc import interp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.ops.schedules import default_schedule
from xtc.passes.tir_loops import ScheduleError

TO_TIR = "convert-graph-to-te,convert-te-to-tir"


def softmax_module(shape: tuple[int, ...], axis: int, op: str = "softmax") -> ModuleOp:
    """`@main` with one graph.softmax (or log_softmax) over `axis`, lowered to tir."""
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    text = (
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f"  %y = graph.{op} %x {{axis = {axis} : i64}} : ({t}) -> {t}\n"
        f"  func.return %y : {t}\n}}\n"
    )
    return apply_pipeline(parse_module(text), TO_TIR)


def kernel_of(module: ModuleOp) -> FuncOp:
    return next(
        op
        for op in module.ops
        if isinstance(op, FuncOp) and op.body.blocks and op.sym_name.data != "main"
    )


def reuse_steps(module: ModuleOp) -> list[str]:
    steps = [step for recipe in default_schedule(kernel_of(module)) for step in recipe]
    return [step for step in steps if step.startswith("tir-reuse-term")]


def exp_count(module: ModuleOp) -> int:
    return sum(1 for op in kernel_of(module).walk() if op.name == "math.exp")


def numpy_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@st.composite
def softmaxes(draw: st.DrawFn) -> tuple[tuple[int, ...], int]:
    shape = tuple(draw(st.lists(st.integers(1, 20), min_size=1, max_size=3)))
    return shape, draw(st.integers(0, len(shape) - 1))


def scheduled(module: ModuleOp, recipes: list[list[str]]) -> tuple[ModuleOp, list[str]]:
    """`module` under `recipes` as a compile applies them (a refused step
    ends its recipe), and the steps taken."""
    result, taken = module.clone(), []
    for recipe in recipes:
        for step in recipe:
            try:
                apply_pipeline(result, step)
            except ScheduleError:
                break
            taken.append(step)
    return result, taken


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(softmaxes())
def test_softmax_reuses_its_exp(case: tuple[tuple[int, ...], int]) -> None:
    """Where the schedule stores the exp (a row reduction, or a nest left
    scalar), the kernel computes one exp per element and the same numbers
    as before, and the nests take every step they took without it."""
    shape, axis = case
    before = softmax_module(shape, axis)
    rng = np.random.default_rng(sum(shape) + axis)
    inputs = [rng.uniform(-8, 8, shape).astype(np.float32)]  # exps over several orders
    recipes = default_schedule(kernel_of(before))
    steps = reuse_steps(before)
    event(f"reuse steps: {len(steps)}")
    if steps:
        (step,) = steps
        after = apply_pipeline(before.clone(), step)
        assert (exp_count(before), exp_count(after)) == (2, 1)
        (expected,) = interp.run(before, inputs)
        (got,) = interp.run(after, inputs)
        np.testing.assert_array_equal(got, expected)
    without = [recipe for recipe in recipes if recipe[0] not in steps]
    module, taken = scheduled(before, recipes)
    assert taken == steps + scheduled(before, without)[1]
    (native,) = run_native(module, inputs)
    np.testing.assert_allclose(native, numpy_softmax(inputs[0], axis), rtol=1e-5, atol=1e-6)


def test_row_softmax_schedule_stores_the_exp() -> None:
    """BERT's attention softmax (rows along the last axis, a row reduction):
    the sum stores the exp, the output nest only scales."""
    module = softmax_module((2, 4, 64), 2)
    assert reuse_steps(module) == ["tir-reuse-term{func=softmax_0 loop=r0_1 consumer=i0_2}"]
    module, _ = scheduled(module, default_schedule(kernel_of(module)))
    assert exp_count(module) == 1


def test_micro_kernel_reduction_keeps_its_tile() -> None:
    """A softmax down a middle axis sums through a register tile, which
    holds no other store: no step."""
    assert reuse_steps(softmax_module((16, 3, 5), 1)) == []


def test_log_softmax_computes_no_exp_again() -> None:
    """Its output nest subtracts the log of the sum: no step, no change."""
    module = softmax_module((4, 16), 1, "log_softmax")
    assert reuse_steps(module) == []
    assert exp_count(module) == 1
