"""tir-cache-read: a matmul packs the part of B a loop reads and computes
the same numbers, in the tir interpreter (bit for bit) and natively, over
random shapes (dividing and not), schedules and loops; the full register
micro-kernel with B packed per column panel; the option spelling and the
refusals (ScheduleErrors naming pass, buffer, loop and function)."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue

from xtc import interp
from xtc.dialects.tir import ForOp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline, parse_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.ops.schedules import default_schedule
from xtc.passes.tir_cache_read import TirCacheRead
from xtc.passes.tir_loops import ScheduleError, loops_by_name, loops_in
from xtc.testing.graph_op import matmul_text as matmul
from xtc.testing.graph_op import random_inputs

KERNEL = "matmul_0"


def lower(m: int, k: int, n: int) -> tuple[ModuleOp, ModuleOp]:
    """The graph module and its tir lowering."""
    graph = parse_module(matmul(m, k, n))
    return graph, apply_pipeline(graph.clone(), "convert-graph-to-te,convert-te-to-tir")


def kernel_of(module: ModuleOp) -> FuncOp:
    return next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == KERNEL)


def b_argument(module: ModuleOp) -> SSAValue:
    return kernel_of(module).body.block.args[1]


def loads_of(root: Operation, buffer: SSAValue) -> list[memref.LoadOp]:
    return [op for op in root.walk() if isinstance(op, memref.LoadOp) and op.memref is buffer]


def local_buffers(module: ModuleOp) -> list[tuple[str, tuple[int, ...]]]:
    """(op name, shape) of each local buffer the pass made (named `*_local`)."""
    found: list[tuple[str, tuple[int, ...]]] = []
    for op in kernel_of(module).walk():
        if isinstance(op, memref.AllocaOp | memref.AllocOp):
            if (op.memref.name_hint or "").endswith("_local"):
                shape = cast(MemRefType[Attribute], op.memref.type).get_shape()
                found.append((op.name, tuple(shape)))
    return found


# ---------------------------------------------------------------------------
# Random shapes, schedules and loops.


def tile_schedule(rows: int, cols: int) -> str:
    """The register tile with column panels outermost: i1 split by `cols`,
    i0 by `rows` inside it (both peel tails), the tile's accumulators
    cached."""
    return ",".join(
        [
            f"tir-reorder{{func={KERNEL} order=i1,i0}}",
            f"tir-split{{func={KERNEL} loop=i1 factor={cols}}}",
            f"tir-reorder{{func={KERNEL} order=i1_o,i0,i1_i}}",
            f"tir-split{{func={KERNEL} loop=i0 factor={rows}}}",
            f"tir-cache-write{{func={KERNEL} loop=i0_o}}",
        ]
    )


@st.composite
def scheduled_matmuls(draw: st.DrawFn) -> tuple[str, str]:
    """(graph text, schedule before the cache-read): a plain lowering, a
    split of the columns (a tail when it does not divide) or the register
    tile."""
    m, k, n = (draw(st.integers(1, 9)) for _ in range(3))
    which = draw(st.sampled_from(["none", "split", "tile"]))
    if which == "none":
        return matmul(m, k, n), ""
    if which == "split":
        factor = draw(st.integers(1, n))
        return matmul(m, k, n), f"tir-split{{func={KERNEL} loop=i1 factor={factor}}}"
    rows, cols = draw(st.integers(1, m)), draw(st.integers(1, n))
    return matmul(m, k, n), tile_schedule(rows, cols)


def reads_along_an_inner_loop(loop: ForOp, buffer: SSAValue) -> bool:
    """Whether a load of `buffer` in `loop`'s body sits in a loop inside
    `loop` (every matmul index of B moves with the loops around it): the
    condition for a region of more than one element."""
    for load in loads_of(loop, buffer):
        parent = load.parent_op()
        if isinstance(parent, ForOp) and parent is not loop:
            return True
    return False


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scheduled_matmuls(), st.data())
def test_cache_read_keeps_the_numbers(case: tuple[str, str], data: st.DataObject) -> None:
    text, schedule = case
    graph = parse_module(text)
    tir = apply_pipeline(graph.clone(), "convert-graph-to-te,convert-te-to-tir")
    if schedule:
        tir = apply_pipeline(tir, schedule)
    b = b_argument(tir)
    readers = [loop.loop_name.data for loop in loops_in(kernel_of(tir)) if loads_of(loop, b)]
    name = data.draw(st.sampled_from(readers))
    loop = loops_by_name(kernel_of(tir))[name][0]
    inside, total = len(loads_of(loop, b)), len(loads_of(kernel_of(tir), b))
    buffer = data.draw(st.sampled_from(["1", "in1"]))
    step = f"tir-cache-read{{func={KERNEL} loop={name} buffer={buffer}}}"
    if not reads_along_an_inner_loop(loop, b):
        with pytest.raises(ScheduleError, match="its loads read one element"):
            apply_pipeline(tir.clone(), step)
        return
    scheduled = apply_pipeline(tir.clone(), step)
    func = kernel_of(scheduled)
    new_loop = loops_by_name(func)[name][0]
    # Only the copy nest reads B inside the loop; loads outside are kept.
    assert len(loads_of(new_loop, b_argument(scheduled))) == 1
    assert len(loads_of(func, b_argument(scheduled))) == total - inside + 1
    assert len(local_buffers(scheduled)) == 1
    assert f"{name}_cr0" in loops_by_name(func)
    inputs = random_inputs(graph, seed=3)
    expected = interp.run(tir, inputs)
    for e, g in zip(expected, interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    for e, g in zip(expected, run_native(scheduled, inputs), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_the_column_panel_of_b_is_k_by_16() -> None:
    """Caching B in i1_o of the 8x16 tile: a K x 16 buffer, the kernel
    reading it at [r0, i1_i]."""
    _, tir = lower(16, 5, 32)
    scheduled = apply_pipeline(
        tir, tile_schedule(8, 16) + f",tir-cache-read{{func={KERNEL} loop=i1_o buffer=1}}"
    )
    assert local_buffers(scheduled) == [("memref.alloca", (5, 16))]
    loops = loops_by_name(kernel_of(scheduled))
    reads = [
        op
        for op in loops["i1_i"][0].walk()
        if isinstance(op, memref.LoadOp) and (op.memref.name_hint or "") == "in1_local"
    ]
    assert len(reads) == 1
    assert list(reads[0].indices) == [
        loops["r0"][0].induction_variable,
        loops["i1_i"][0].induction_variable,
    ]


def test_a_panel_over_64_kib_is_on_the_heap() -> None:
    """K = 1025 rows of 16 floats take just over 64 KiB: alloc and dealloc."""
    graph, tir = lower(2, 1025, 16)
    scheduled = apply_pipeline(
        tir.clone(),
        f"tir-split{{func={KERNEL} loop=i1 factor=16}},"
        f"tir-reorder{{func={KERNEL} order=i1_o,i0}},"
        f"tir-cache-read{{func={KERNEL} loop=i1_o buffer=1}}",
    )
    assert local_buffers(scheduled) == [("memref.alloc", (1025, 16))]
    assert any(isinstance(op, memref.DeallocOp) for op in kernel_of(scheduled).walk())
    inputs = random_inputs(graph, seed=4)
    expected = run_native(tir, inputs)
    np.testing.assert_allclose(run_native(scheduled, inputs)[0], expected[0], rtol=1e-5)


# ---------------------------------------------------------------------------
# The micro-kernel.

MICRO_KERNEL = tile_schedule(8, 16) + (
    f",tir-unroll{{func={KERNEL} loop=i0_i}},tir-vectorize{{func={KERNEL} loop=i1_i}}"
    f",tir-cache-read{{func={KERNEL} loop=i1_o buffer=1}}"
)


@pytest.mark.parametrize("shape", [(64, 32, 48), (33, 17, 29)])
def test_micro_kernel_with_b_packed(shape: tuple[int, int, int]) -> None:
    """The 8x16 register tile, unrolled and vectorized, with B's K x 16
    panel packed per i1_o: against the unscheduled kernel natively and
    numpy. 33x17x29 peels tails of both loops: the i0 tail inside i1_o
    reads the panel too, the i1 tail outside reads B."""
    m, k, n = shape
    graph, tir = lower(m, k, n)
    scheduled = apply_pipeline(tir.clone(), MICRO_KERNEL)
    assert local_buffers(scheduled) == [("memref.alloca", (k, 16))]
    a, b = random_inputs(graph, seed=5)
    got = run_native(scheduled, [a, b])[0]
    np.testing.assert_allclose(got, run_native(tir, [a, b])[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
    if n % 16:
        tail = loops_by_name(kernel_of(scheduled))["i1_tail"][0]
        assert loads_of(tail, b_argument(scheduled))


def test_default_schedule_packs_b() -> None:
    """ops/schedules.py's micro-kernel ends with the cache-read of B, where
    its columns are more than one block (96: two of three vectors)."""
    _, tir = lower(64, 32, 96)
    steps = [step for recipe in default_schedule(kernel_of(tir)) for step in recipe]
    assert f"tir-cache-read{{func={KERNEL} loop=i1_o buffer=1}}" in steps


# ---------------------------------------------------------------------------
# Options and refusals.


def test_buffer_reads_as_a_position_or_a_name() -> None:
    by_position = parse_pipeline("tir-cache-read{func=matmul_0 loop=i1_o buffer=1}").passes[0]
    assert by_position == TirCacheRead(func="matmul_0", loop="i1_o", buffer=1)
    by_name = parse_pipeline("tir-cache-read{loop=i1_o buffer=in1}").passes[0]
    assert by_name == TirCacheRead(loop="i1_o", buffer="in1")
    assert parse_pipeline(str(by_name)).passes[0] == by_name


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("loop=i1 buffer=3", r"buffer=3: @matmul_0 has 3 arguments"),
        (
            "loop=i1 buffer=b",
            r"buffer=b: no argument of @matmul_0 named %b \(its arguments: %in0, %in1",
        ),
        ("loop=i9 buffer=1", r"no loop named 'i9' in @matmul_0"),
        (
            "loop=i1 buffer=2",
            r"cannot cache %out0 \(argument 2\) in loop 'i1' of @matmul_0: the loop body writes it",
        ),
        (
            "loop=r0 buffer=0",
            r"cannot cache %in0 \(argument 0\) in loop 'r0' of @matmul_0: "
            "its loads read one element",
        ),
    ],
)
def test_refusals_name_the_buffer_and_the_loop(options: str, message: str) -> None:
    _, tir = lower(3, 4, 5)
    with pytest.raises(ScheduleError, match=r"^tir-cache-read: " + message):
        apply_pipeline(tir, f"tir-cache-read{{func={KERNEL} {options}}}")


def test_a_region_over_16_mib_is_refused() -> None:
    """B of 4096 x 1025 floats read whole inside i0: over 16 MiB."""
    _, tir = lower(1, 4096, 1025)
    with pytest.raises(ScheduleError, match=r"exceeds the 16777216 bytes"):
        apply_pipeline(tir, f"tir-cache-read{{func={KERNEL} loop=i0 buffer=1}}")
