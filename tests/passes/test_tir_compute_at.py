"""tir-compute-at: a padded conv's padding computed inside a loop of the
conv, and an elementwise producer computed inside a matmul's loops, give
the same numbers in the tir interpreter (bit for bit) and natively, over
random shapes, strides, pads, loops and both storage modes; the padding
computed at the row loop of the default conv schedule; the option spelling
and the refusals (ScheduleErrors naming pass, loops and function)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from xtc import interp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline, parse_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.ops.schedules import default_schedule
from xtc.passes.tir_compute_at import TirComputeAt
from xtc.passes.tir_loops import ScheduleError, loops_by_name, loops_in
from xtc.testing.graph_op import random_inputs

TO_TIR = "convert-graph-to-te,convert-te-to-tir"
PADDING_NEST = "i0"
"""The root loop of a lowered conv's padding nest (the conv nest is i0_1..)."""


# ---------------------------------------------------------------------------
# Kernels.


def padded_conv(c: int, size: int, o: int, kernel: int, stride: int, pad: int) -> str:
    """`@main` with one NCHW conv2d of a 1 x c x size x size input."""
    out = (size + 2 * pad - kernel) // stride + 1
    x, w, y = (
        f"tensor<{'x'.join(map(str, s))}xf32>"
        for s in ((1, c, size, size), (o, c, kernel, kernel), (1, o, out, out))
    )
    props = (
        f"{{strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
    )
    return (
        f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
        f"  %y = graph.conv2d %x, %w {props} : ({x}, {w}) -> {y}\n"
        f"  func.return %y : {y}\n}}\n"
    )


def relu_matmul(m: int, k: int, n: int) -> str:
    """A tir `@main`: t = max(a, 0) * 2 into a local buffer, then c = t @ b."""
    return f"""
func.func @main(%a: memref<{m}x{k}xf32>, %b: memref<{k}x{n}xf32>,
                %c: memref<{m}x{n}xf32> {{graph.output = 0 : i64}}) {{
  %t = memref.alloc() {{alignment = 64 : i64}} : memref<{m}x{k}xf32>
  tir.for %p = 0 to {m} step 1 {{name = "p", kind = "serial"}} {{
    tir.for %q = 0 to {k} step 1 {{name = "q", kind = "serial"}} {{
      %v = memref.load %a[%p, %q] : memref<{m}x{k}xf32>
      %zero = arith.constant 0.000000e+00 : f32
      %two = arith.constant 2.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      %s = arith.mulf %r, %two : f32
      memref.store %s, %t[%p, %q] : memref<{m}x{k}xf32>
    }}
  }}
  tir.for %i = 0 to {m} step 1 {{name = "i", kind = "serial"}} {{
    tir.for %j = 0 to {n} step 1 {{name = "j", kind = "serial"}} {{
      %acc = memref.alloca() : memref<f32>
      %init = arith.constant 0.000000e+00 : f32
      memref.store %init, %acc[] : memref<f32>
      tir.for %r = 0 to {k} step 1 {{name = "r", kind = "serial"}} {{
        %x = memref.load %t[%i, %r] : memref<{m}x{k}xf32>
        %y = memref.load %b[%r, %j] : memref<{k}x{n}xf32>
        %xy = arith.mulf %x, %y : f32
        %old = memref.load %acc[] : memref<f32>
        %new = arith.addf %old, %xy : f32
        memref.store %new, %acc[] : memref<f32>
      }}
      %sum = memref.load %acc[] : memref<f32>
      memref.store %sum, %c[%i, %j] : memref<{m}x{n}xf32>
    }}
  }}
  memref.dealloc %t : memref<{m}x{k}xf32>
  func.return
}}
"""


def kernel_of(module: ModuleOp) -> FuncOp:
    """The function holding the loops: the one that is not @main when
    there are several."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp) and op.body.blocks]
    return next((f for f in funcs if f.sym_name.data != "main"), funcs[0])


def buffer_of(func: FuncOp) -> SSAValue:
    """The function-level buffer (the first memref.alloc of its body)."""
    return next(op for op in func.body.block.ops if isinstance(op, memref.AllocOp)).memref


def loads_of(root: Operation, buffer: SSAValue) -> list[memref.LoadOp]:
    return [op for op in root.walk() if isinstance(op, memref.LoadOp) and op.memref is buffer]


def check_same_numbers(before: ModuleOp, after: ModuleOp, inputs: Sequence[np.ndarray]) -> None:
    """Bit for bit in the interpreter (the pass keeps every computation),
    close natively."""
    expected = interp.run(before, inputs)
    for e, g in zip(expected, interp.run(after, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    for e, g in zip(expected, run_native(after, inputs), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def compute_at(func: str, loop: str, at: str, local: bool) -> str:
    return f"tir-compute-at{{func={func} loop={loop} at={at} local={str(local).lower()}}}"


# ---------------------------------------------------------------------------
# Padded convs of random shapes, at every loop of the conv.


@st.composite
def padded_convs(draw: st.DrawFn) -> tuple[str, int]:
    """(graph text, split factor of the output column loop i3_1, 0 for none)."""
    kernel = draw(st.integers(1, 3))
    pad = draw(st.integers(1, 2))
    stride = draw(st.integers(1, 2))
    size = draw(st.integers(max(1, kernel - 2 * pad), 6))
    c, o = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    out = (size + 2 * pad - kernel) // stride + 1
    factor = draw(st.sampled_from([0, *range(1, out + 1)]))
    return padded_conv(c, size, o, kernel, stride, pad), factor


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(padded_convs(), st.booleans(), st.data())
def test_padding_computed_at_a_conv_loop_keeps_the_numbers(
    case: tuple[str, int], local: bool, data: st.DataObject
) -> None:
    """At a loop holding every read of the padded buffer the pass applies
    and keeps the numbers; at a loop holding only some (the column split's
    tail peels a second reader) it refuses."""
    text, factor = case
    graph = parse_module(text)
    tir = apply_pipeline(graph.clone(), TO_TIR)
    name = kernel_of(tir).sym_name.data
    if factor:
        tir = apply_pipeline(tir, f"tir-split{{func={name} loop=i3_1 factor={factor}}}")
    func = kernel_of(tir)
    padded = buffer_of(func)
    reads = loads_of(func, padded)
    conv_loops = [loop for loop in loops_in(func) if loads_of(loop, padded)]
    at = data.draw(st.sampled_from(conv_loops))
    at_name = at.loop_name.data
    step = compute_at(name, PADDING_NEST, at_name, local)
    if len(loads_of(at, padded)) < len(reads):
        event("refused: a second reader outside the loop")
        with pytest.raises(ScheduleError, match=r"is also read in loop .*, outside loop"):
            apply_pipeline(tir.clone(), step)
        return
    event(f"applied at {at_name}")
    scheduled = apply_pipeline(tir.clone(), step)
    new_func = kernel_of(scheduled)
    moved = loops_by_name(new_func)[f"{PADDING_NEST}_at"][0]
    assert moved.parent_op() is loops_by_name(new_func)[at_name][0]
    assert PADDING_NEST not in loops_by_name(new_func)
    allocs = [op for op in new_func.body.block.ops if isinstance(op, memref.AllocOp)]
    assert len(allocs) == (0 if local else 1)
    check_same_numbers(tir, scheduled, random_inputs(graph, seed=2))


def test_row_loop_computes_three_rows() -> None:
    """A 3x3 conv at its output row: the padding nest's row loop runs 3
    times from the row, the others over the whole padded buffer."""
    tir = apply_pipeline(parse_module(padded_conv(2, 5, 3, 3, 1, 1)), TO_TIR)
    name = kernel_of(tir).sym_name.data
    scheduled = apply_pipeline(tir, compute_at(name, "i0", "i2_1", local=False))
    loops = loops_by_name(kernel_of(scheduled))
    extents = {n: loops[f"{n}_at"][0].extent for n in ("i0", "i1", "i2", "i3")}
    assert extents == {"i0": 1, "i1": 2, "i2": 3, "i3": 7}


def test_local_region_at_the_column_loop() -> None:
    """With local=true at a stride-2 conv's column loop: a 1 x c x 3 x 3
    window, the conv reading it at [0, r0, r1, r2]."""
    graph = parse_module(padded_conv(2, 6, 2, 3, 2, 1))
    tir = apply_pipeline(graph.clone(), TO_TIR)
    name = kernel_of(tir).sym_name.data
    scheduled = apply_pipeline(tir.clone(), compute_at(name, "i0", "i3_1", local=True))
    func = kernel_of(scheduled)
    column = loops_by_name(func)["i3_1"][0]
    window = next(op for op in column.body.block.ops if isinstance(op, memref.AllocaOp))
    assert window.memref.type.get_shape() == (1, 2, 3, 3)
    loops = loops_by_name(func)
    (read,) = loads_of(func, window.memref)
    assert list(read.indices)[1:] == [loops[r][0].induction_variable for r in ("r0", "r1", "r2")]
    check_same_numbers(tir, scheduled, random_inputs(graph, seed=6))


# ---------------------------------------------------------------------------
# A matmul with an elementwise producer.


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from(["i", "j", "r"]),
    st.booleans(),
)
def test_elementwise_producer_in_a_matmul(m: int, k: int, n: int, at: str, local: bool) -> None:
    """t = relu(a) * 2 computed per row i (a 1 x k row), per output j or
    per step r of the reduction (one element): same numbers as before and
    as numpy."""
    module = parse_module(relu_matmul(m, k, n))
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    scheduled = apply_pipeline(module.clone(), compute_at("main", "p", at, local))
    loops = loops_by_name(kernel_of(scheduled))
    assert loops["p_at"][0].extent == 1
    assert loops["q_at"][0].extent == (1 if at == "r" else k)
    check_same_numbers(module, scheduled, [a, b])
    got = run_native(scheduled, [a, b])[0]
    np.testing.assert_allclose(got, (np.maximum(a, 0) * 2) @ b, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# A real kernel under the default schedule.


def blocked_padded_conv(c: int, size: int, blocks: int) -> str:
    """`@main` with a 3x3 pad-1 conv2d whose weight is OIHW16o (the layout
    alter-layout gives, for which the default schedule is the register
    micro-kernel)."""
    x = f"tensor<1x{c}x{size}x{size}xf32>"
    w = f"tensor<{blocks}x{c}x3x3x16xf32>"
    y = f"tensor<1x{blocks * 16}x{size}x{size}xf32>"
    props = '{kernel_layout = "OIHW16o", padding = array<i64: 1, 1, 1, 1>}'
    return (
        f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
        f"  %y = graph.conv2d %x, %w {props} : ({x}, {w}) -> {y}\n"
        f"  func.return %y : {y}\n}}\n"
    )


def test_padding_at_the_row_loop_of_the_default_schedule() -> None:
    """The default conv micro-kernel recipe with the padding nest computed
    (local) at the conv's output row i2_1 before that row loop becomes
    parallel, its column loop then vectorized: natively the same numbers."""
    graph = parse_module(blocked_padded_conv(16, 10, 2))
    tir = apply_pipeline(graph.clone(), TO_TIR)
    func = kernel_of(tir)
    name = func.sym_name.data
    conv_steps = default_schedule(func)[-1]
    assert conv_steps[-1] == f"tir-parallel{{func={name} loop=i2_1}}"
    steps = [
        *conv_steps[:-1],
        compute_at(name, "i0", "i2_1", local=True),
        f"tir-vectorize{{func={name} loop=i3_at}}",
        conv_steps[-1],
    ]
    scheduled = apply_pipeline(tir.clone(), ",".join(steps))
    rows = loops_by_name(kernel_of(scheduled))["i2_1"][0]
    region = next(op for op in rows.body.block.ops if isinstance(op, memref.AllocaOp))
    assert region.memref.type.get_shape() == (1, 16, 3, 12)
    inputs = random_inputs(graph, seed=7)
    expected = run_native(tir, inputs)[0]
    np.testing.assert_allclose(run_native(scheduled, inputs)[0], expected, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# Options and refusals.


def test_options_read_and_print_back() -> None:
    spelled = parse_pipeline("tir-compute-at{func=conv_0 loop=i0 at=i2_1 local=true}").passes[0]
    assert spelled == TirComputeAt(func="conv_0", loop="i0", at="i2_1", local=True)
    assert parse_pipeline(str(spelled)).passes[0] == spelled
    default = parse_pipeline("tir-compute-at{loop=i0 at=i2_1}").passes[0]
    assert default == TirComputeAt(loop="i0", at="i2_1")


SELF_READING = """
func.func @main(%x: memref<8xf32>, %y: memref<8xf32> {graph.output = 0 : i64}) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %x[%i] : memref<8xf32>
    %o = memref.load %t[%i] : memref<8xf32>
    %s = arith.addf %v, %o : f32
    memref.store %s, %t[%i] : memref<8xf32>
  }
  tir.for %k = 0 to 8 step 1 {name = "k", kind = "serial"} {
    %v = memref.load %t[%k] : memref<8xf32>
    memref.store %v, %y[%k] : memref<8xf32>
  }
  memref.dealloc %t : memref<8xf32>
  func.return
}
"""


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        (relu_matmul(2, 3, 4), "loop=p at=z", r"no loop named 'z' in @main"),
        (relu_matmul(2, 3, 4), "loop=i at=p", r"loop 'p' comes before the producer"),
        (relu_matmul(2, 3, 4), "loop=p at=q", r"loop 'q' is inside the producer"),
        (SELF_READING, "loop=i at=k", r"the producer reads the buffer it writes"),
    ],
)
def test_refusals_name_the_loops(text: str, options: str, message: str) -> None:
    module = parse_module(text)
    with pytest.raises(ScheduleError, match=r"^tir-compute-at: .*" + message):
        apply_pipeline(module, f"tir-compute-at{{func=main {options}}}")


def test_a_shared_buffer_under_a_parallel_loop_is_refused() -> None:
    """Without local, iterations of a parallel i would race on %t; with
    local each has its own row."""
    module = apply_pipeline(parse_module(relu_matmul(4, 3, 5)), "tir-parallel{func=main loop=i}")
    with pytest.raises(
        ScheduleError,
        match=r"^tir-compute-at: cannot compute loop 'p' at loop 'j' of @main: loop 'i' is "
        "parallel",
    ):
        apply_pipeline(module.clone(), compute_at("main", "p", "j", local=False))
    scheduled = apply_pipeline(module.clone(), compute_at("main", "p", "j", local=True))
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3, 5))]
    check_same_numbers(module, scheduled, inputs)


def test_a_taken_name_is_refused() -> None:
    """Computing the same producer twice is impossible (it moved), but a
    loop already named `p_at` blocks the renaming."""
    text = relu_matmul(2, 3, 4).replace('name = "j"', 'name = "p_at"')
    with pytest.raises(ScheduleError, match=r"the new loop name 'p_at' is already used"):
        apply_pipeline(parse_module(text), compute_at("main", "p", "i", local=False))


def test_moved_loops_are_serial() -> None:
    """A parallel producer loop becomes serial inside `at`."""
    module = apply_pipeline(parse_module(relu_matmul(4, 3, 5)), "tir-parallel{func=main loop=p}")
    scheduled = apply_pipeline(module, compute_at("main", "p", "i", local=False))
    loops = loops_by_name(kernel_of(scheduled))
    assert all(loops[n][0].kind.data == "serial" for n in ("p_at", "q_at"))
