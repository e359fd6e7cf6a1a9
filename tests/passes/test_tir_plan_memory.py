"""tir-plan-memory: the greedy planner never lets buffers live at the same
time share a byte, and the planned models compute the same numbers as the
unplanned ones, in the interpreter and in native code, in a smaller arena."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, i8
from xdsl.utils.exceptions import InterpretationError

from xtc import interp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.frontend.onnx import import_model
from xtc.passes.tir_plan_memory import plan_offsets
from xtc.testing.graph_op import random_inputs
from xtc.tools.model_builders import bert_encoder, resnet_like

TO_TIR = "graph-simplify-inference,graph-fold-constants,dce,convert-graph-to-te,convert-te-to-tir"


def rounded(size: int) -> int:
    return -(-size // 64) * 64


def overlap(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


@st.composite
def buffer_intervals(draw: st.DrawFn) -> list[tuple[int, int, int]]:
    """(start, end, size) triples: lifetimes over 40 positions, sizes from
    zero to a few KiB, odd ones included."""
    intervals: list[tuple[int, int, int]] = []
    for _ in range(draw(st.integers(0, 25))):
        start = draw(st.integers(0, 40))
        end = start + draw(st.integers(0, 12))
        size = draw(st.one_of(st.integers(0, 5000), st.integers(0, 40).map(lambda n: n * 64)))
        intervals.append((start, end, size))
    return intervals


@settings(max_examples=300, deadline=None)
@given(buffer_intervals())
def test_plan_offsets_keeps_live_buffers_apart(intervals: list[tuple[int, int, int]]) -> None:
    offsets, arena = plan_offsets(intervals)
    assert len(offsets) == len(intervals)
    sizes = [rounded(size) for _, _, size in intervals]
    for offset, size in zip(offsets, sizes, strict=True):
        assert offset % 64 == 0 and offset >= 0
        assert offset + size <= arena
    for i, a in enumerate(intervals):
        for j in range(i + 1, len(intervals)):
            if overlap(a, intervals[j]) and sizes[i] and sizes[j]:
                apart = offsets[i] + sizes[i] <= offsets[j] or offsets[j] + sizes[j] <= offsets[i]
                assert apart, (i, j, offsets, sizes)
    positions = {p for start, end, _ in intervals for p in range(start, end + 1)}
    live_peak = max(
        (
            sum(s for (b, e, _), s in zip(intervals, sizes, strict=True) if b <= p <= e)
            for p in positions
        ),
        default=0,
    )
    assert live_peak <= arena <= sum(sizes)


def test_plan_offsets_reuses_bytes_between_lifetimes() -> None:
    # A chain of buffers each freed before the next is allocated: one slot.
    assert plan_offsets([(0, 1, 100), (2, 3, 64), (4, 5, 128)]) == ([0, 0, 0], 128)
    # Biggest first: the 256-byte buffer at 0, the two live beside it above
    # it, and those two share since they are never live together.
    assert plan_offsets([(0, 9, 256), (1, 2, 64), (3, 4, 128)]) == ([0, 256, 256], 384)
    assert plan_offsets([(0, 0, 0), (0, 0, 64)]) == ([0, 0], 64)
    assert plan_offsets([]) == ([], 0)


def test_plan_offsets_refuses_bad_intervals() -> None:
    with pytest.raises(ValueError, match="buffer 1 ends \\(2\\) before it starts \\(3\\)"):
        plan_offsets([(0, 1, 64), (3, 2, 64)])
    with pytest.raises(ValueError, match="buffer 0 has a negative size"):
        plan_offsets([(0, 1, -1)])


@dataclass
class Lowered:
    """A model at the tir level, before and after the plan, with inputs and
    the interpreter's outputs on the unplanned module."""

    tir: ModuleOp
    planned: ModuleOp
    inputs: list[np.ndarray]
    expected: list[np.ndarray]


MODELS = {
    # Small configurations: the interpreter runs every scalar op in Python.
    "resnet_like": lambda: resnet_like(widths=(4, 8), image=8),
    "bert_encoder": lambda: bert_encoder(seq=8, hidden=16, heads=2, ffn=32),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def lowered(request: pytest.FixtureRequest) -> Lowered:
    model = cast(onnx.ModelProto, MODELS[request.param]())
    module = import_model(model)
    inputs = random_inputs(module, seed=3)
    tir = apply_pipeline(module, TO_TIR)
    planned = apply_pipeline(tir.clone(), "tir-plan-memory")
    return Lowered(tir, planned, inputs, interp.run(tir, inputs))


def arena_attributes(module: ModuleOp) -> tuple[int, int]:
    attributes = interp.entry_function(module).attributes
    arena, unplanned = attributes["tir.arena_bytes"], attributes["tir.unplanned_bytes"]
    assert isinstance(arena, IntegerAttr) and isinstance(unplanned, IntegerAttr)
    return cast(int, arena.value.data), cast(int, unplanned.value.data)


def test_planned_model_runs_the_same_in_the_interpreter(lowered: Lowered) -> None:
    main = interp.entry_function(lowered.planned)
    allocs = [op for op in main.body.block.ops if isinstance(op, memref.AllocOp)]
    assert len(allocs) == 1, "every intermediate buffer is in the arena"
    assert any(isinstance(op, memref.ViewOp) for op in main.body.block.ops)
    arena, unplanned = arena_attributes(lowered.planned)
    assert allocs[0].memref.type == MemRefType(i8, [arena])
    assert 0 < arena < unplanned
    got = interp.run(lowered.planned, lowered.inputs)
    for g, e in zip(got, lowered.expected, strict=True):
        np.testing.assert_array_equal(g, e)


def test_a_plan_that_overlaps_live_buffers_gives_other_numbers(lowered: Lowered) -> None:
    """The interpreter's views really share memory: every buffer at offset 0
    clobbers live data, so the check above would catch a wrong plan."""
    clobbered = lowered.planned.clone()
    for op in clobbered.walk():
        if isinstance(op, memref.ViewOp) and isinstance(op.byte_shift.owner, arith.ConstantOp):
            op.byte_shift.owner.value = IntegerAttr(0, IndexType())
    got = interp.run(clobbered, lowered.inputs)
    assert any(not np.array_equal(g, e) for g, e in zip(got, lowered.expected, strict=True))


def test_planned_model_runs_the_same_natively(lowered: Lowered) -> None:
    unplanned = run_native(lowered.tir, lowered.inputs)
    planned = run_native(lowered.planned, lowered.inputs)
    for u, p, e in zip(unplanned, planned, lowered.expected, strict=True):
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(u, e, rtol=1e-4, atol=1e-4 * scale)
        np.testing.assert_allclose(p, e, rtol=1e-4, atol=1e-4 * scale)
        np.testing.assert_allclose(p, u, rtol=1e-6, atol=1e-6 * scale)


VIEW_PAST_THE_END = """
func.func @main(%out0: memref<4xf32> {graph.output = 0 : i64}) {
  %arena = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
  %shift = arith.constant 56 : index
  %v = memref.view %arena[%shift][] : memref<64xi8> to memref<4xf32>
  func.return
}
"""


def test_interpreter_refuses_a_view_past_the_end_of_its_buffer() -> None:
    with pytest.raises(InterpretationError, match=r"bytes \[56, 72\) outside a buffer of 64"):
        interp.run(parse_module(VIEW_PAST_THE_END), [])
