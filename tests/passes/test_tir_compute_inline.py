"""tir-compute-inline: a conv's padding nest, and the elementwise nests of a
fused conv epilogue, inlined into their readers compute the same numbers,
in the tir interpreter (bit for bit) and natively, over random shapes,
strides and pads; the default schedule still applies to the conv nest
after the padding is inlined; the option spelling and the refusals
(ScheduleErrors naming pass, loop and function)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline, parse_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.ops.schedules import default_schedule
from xtc.passes.tir_compute_inline import TirComputeInline
from xtc.passes.tir_loops import ScheduleError, loop_name, loops_by_name
from xtc.testing.graph_op import random_inputs

TO_TIR = "convert-graph-to-te,convert-te-to-tir"
FUSED_TO_TIR = "graph-fuse-ops,convert-graph-to-te,convert-te-to-tir"
"""Fused groups lowered without te-inline: a padding nest, the conv nest
and one nest per epilogue op, each through a local buffer."""
COMPILED_TO_TIR = "graph-fuse-ops,convert-graph-to-te,te-inline,convert-te-to-tir"
"""As xtc.compile lowers: the epilogue inlined by te-inline, the padding
nest left."""


def tensor(shape: Sequence[int]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def conv2d(c: int, size: int, o: int, kernel: int, stride: int, pad: int, epilogue: bool) -> str:
    """`@main` applying a padded conv2d to an input and a weight, then (with
    `epilogue`) adding a third input and a relu."""
    out = (size + 2 * pad - kernel) // stride + 1
    x, w, y = tensor((1, c, size, size)), tensor((o, c, kernel, kernel)), tensor((1, o, out, out))
    props = (
        f"{{strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
    )
    conv = f"  %y = graph.conv2d %x, %w {props} : ({x}, {w}) -> {y}\n"
    if not epilogue:
        return f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n{conv}  func.return %y : {y}\n}}\n"
    return (
        f"func.func @main(%x: {x}, %w: {w}, %a: {y}) -> {y} {{\n{conv}"
        f"  %z = graph.add %y, %a : ({y}, {y}) -> {y}\n"
        f"  %r = graph.relu %z : ({y}) -> {y}\n"
        f"  func.return %r : {y}\n}}\n"
    )


def kernel_of(module: ModuleOp) -> FuncOp:
    return next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data != "main")


def top_loops(func: FuncOp) -> list[ForOp]:
    return [op for op in func.body.block.ops if isinstance(op, ForOp)]


def allocs(func: FuncOp) -> list[memref.AllocOp]:
    return [op for op in func.body.block.ops if isinstance(op, memref.AllocOp)]


def check_same_numbers(graph: ModuleOp, before: ModuleOp, after: ModuleOp) -> None:
    """The interpreter gives the same bits before and after (inlining runs
    the same ops on the same values); native code after agrees."""
    inputs = random_inputs(graph, seed=7)
    expected = interp.run(before, inputs)
    for e, g in zip(expected, interp.run(after, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    for e, g in zip(expected, run_native(after, inputs), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


@st.composite
def padded_convs(draw: st.DrawFn) -> str:
    kernel = draw(st.integers(1, 3))
    pad = draw(st.integers(1, 2))
    size = draw(st.integers(1, 6))
    if size + 2 * pad < kernel:
        size = kernel
    return conv2d(
        draw(st.integers(1, 3)),
        size,
        draw(st.integers(1, 4)),
        kernel,
        draw(st.integers(1, 3)),
        pad,
        draw(st.booleans()),
    )


FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------
# The numbers.


@FAST
@given(padded_convs())
def test_inlined_padding_keeps_the_numbers(text: str) -> None:
    graph = parse_module(text)
    tir = apply_pipeline(graph.clone(), TO_TIR)
    func = kernel_of(tir)
    padding, conv = top_loops(func)
    spelled = f"tir-compute-inline{{func={func.sym_name.data} loop={loop_name(padding)}}}"
    inlined = apply_pipeline(tir.clone(), spelled)
    after = kernel_of(inlined)
    assert [loop_name(loop) for loop in top_loops(after)] == [loop_name(conv)]
    assert not allocs(after)
    assert not any(isinstance(op, memref.DeallocOp) for op in after.walk())
    check_same_numbers(graph, tir, inlined)


@FAST
@given(padded_convs().filter(lambda text: "graph.relu" in text))
def test_inlining_a_fused_epilogue_keeps_the_numbers(text: str) -> None:
    """Without te-inline a fused conv + add + relu is four nests: padding,
    conv, add and relu. The padding inlines into the conv, the add into the
    relu (whose read of the conv's buffer keeps it alive: its dealloc
    moves); the conv itself is a reduction and is refused."""
    graph = parse_module(text)
    tir = apply_pipeline(graph.clone(), FUSED_TO_TIR)
    func = kernel_of(tir)
    padding, conv, add, relu = (loop_name(loop) for loop in top_loops(func))
    name = func.sym_name.data
    with pytest.raises(ScheduleError, match="a reduction or a value carried across iterations"):
        apply_pipeline(tir.clone(), f"tir-compute-inline{{func={name} loop={conv}}}")
    inlined = apply_pipeline(
        tir.clone(),
        f"tir-compute-inline{{func={name} loop={padding}}},"
        f"tir-compute-inline{{func={name} loop={add}}}",
    )
    after = kernel_of(inlined)
    assert [loop_name(loop) for loop in top_loops(after)] == [conv, relu]
    assert len(allocs(after)) == 1
    ops = list(after.body.block.ops)
    dealloc = next(op for op in ops if isinstance(op, memref.DeallocOp))
    assert ops.index(dealloc) > ops.index(top_loops(after)[-1])
    check_same_numbers(graph, tir, inlined)


@pytest.mark.parametrize("shape", [(8, 16, 6, 3, 1, 1), (3, 16, 9, 3, 2, 1), (16, 32, 7, 5, 1, 2)])
def test_default_schedule_applies_after_inlining(shape: tuple[int, ...]) -> None:
    """The conv nest's recipe names only conv loops: after inlining the
    padding it applies unchanged, and is what default_schedule gives the
    inlined kernel. Natively against the unscheduled kernel."""
    c, o, size, kernel, stride, pad = shape
    graph = parse_module(conv2d(c, size, o, kernel, stride, pad, epilogue=True))
    tir = apply_pipeline(graph.clone(), COMPILED_TO_TIR)
    func = kernel_of(tir)
    name = func.sym_name.data
    recipes = default_schedule(func)
    assert len(top_loops(func)) == len(recipes) == 2
    padding = loop_name(top_loops(func)[0])
    inline = f"tir-compute-inline{{func={name} loop={padding}}}"
    inlined = apply_pipeline(tir.clone(), inline)
    conv_recipe = [step for recipe in recipes[1:] for step in recipe]
    assert [step for recipe in default_schedule(kernel_of(inlined)) for step in recipe] == (
        conv_recipe
    )
    scheduled = apply_pipeline(inlined, ",".join(conv_recipe))
    inputs = random_inputs(graph, seed=11)
    expected = run_native(tir, inputs)
    for e, g in zip(expected, run_native(scheduled, inputs), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# Options and refusals.


def test_options_read_and_print_back() -> None:
    spelled = parse_pipeline("tir-compute-inline{func=conv2d_0 loop=i0}").passes[0]
    assert spelled == TirComputeInline(func="conv2d_0", loop="i0")
    assert parse_pipeline(str(spelled)).passes[0] == spelled
    assert parse_pipeline("tir-compute-inline{loop=i0}").passes[0] == TirComputeInline(loop="i0")


@pytest.mark.parametrize(
    ("loop", "message"),
    [
        ("i9", r"no loop named 'i9' in @conv2d_0"),
        (
            "i1",
            r"cannot inline loop 'i1' of @conv2d_0: it is not a top-level loop of the function",
        ),
        (
            "i0_1",
            r"cannot inline loop 'i0_1' of @conv2d_0: loop 'i3_1' holds a local buffer beside "
            "loop 'r0': a reduction",
        ),
    ],
)
def test_refusals_name_the_loop_and_the_function(loop: str, message: str) -> None:
    tir = apply_pipeline(parse_module(conv2d(2, 4, 3, 3, 1, 1, epilogue=False)), TO_TIR)
    before = str(tir)
    with pytest.raises(ScheduleError, match=r"^tir-compute-inline: " + message):
        apply_pipeline(tir, f"tir-compute-inline{{func=conv2d_0 loop={loop}}}")
    assert str(tir) == before


def test_a_nest_writing_the_output_is_refused() -> None:
    """The relu of a fused epilogue stores into the kernel's output."""
    tir = apply_pipeline(parse_module(conv2d(2, 4, 3, 3, 1, 1, epilogue=True)), FUSED_TO_TIR)
    func = kernel_of(tir)
    relu = loop_name(top_loops(func)[-1])
    stores_into_output = r"it stores into %out0 \(argument \d+\), an output of the function"
    with pytest.raises(ScheduleError, match=stores_into_output):
        apply_pipeline(tir, f"tir-compute-inline{{loop={relu}}}")


def test_an_unknown_function_is_refused() -> None:
    tir = apply_pipeline(parse_module(conv2d(2, 4, 3, 3, 1, 1, epilogue=False)), TO_TIR)
    with pytest.raises(ScheduleError, match=r"^tir-compute-inline: no function @nowhere"):
        apply_pipeline(tir, "tir-compute-inline{func=nowhere loop=i0}")
    assert loops_by_name(kernel_of(tir))["i0"]
