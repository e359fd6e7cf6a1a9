"""A ScheduleError raised from Python reads as its one-line message: the IR
xDSL's rewrite walker attaches goes to `e.ir`, not into the traceback."""

from __future__ import annotations

import traceback

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from xtc.passes.tir_loops import ScheduleError
from xtc.passes.tir_split import TirSplit
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module

KERNEL = """\
func.func @relu(%a: memref<6xf32>, %b: memref<6xf32>) {
  tir.for %i = 0 to 6 step 1 {name = "i", kind = "serial"} {
    %x = memref.load %a[%i] : memref<6xf32>
    memref.store %x, %b[%i] : memref<6xf32>
  }
  func.return
}
"""
MESSAGE = "tir-split: factor 0 is not in [1, 6], the extent of loop 'i' in @relu"


def _refused_split() -> tuple[ScheduleError, ModuleOp]:
    module = parse_module(KERNEL)
    with pytest.raises(ScheduleError) as caught:
        TirSplit(loop="i", factor=0).apply(Context(), module)
    return caught.value, module


def test_message_is_one_line_without_the_ir() -> None:
    error, _ = _refused_split()
    assert str(error) == MESSAGE
    assert getattr(error, "__notes__", []) == []
    printed = "".join(traceback.format_exception(error))
    assert MESSAGE in printed
    assert "builtin.module" not in printed and "tir.for" not in printed


def test_the_ir_stays_available_on_the_error() -> None:
    error, module = _refused_split()
    assert error.module is module
    assert error.ir is not None
    assert '"builtin.module"' in error.ir
    assert f"Error while applying pattern: {MESSAGE}" in error.ir


def test_a_pipeline_raises_the_same_short_error() -> None:
    with pytest.raises(ScheduleError) as caught:
        apply_pipeline(parse_module(KERNEL), "tir-split{loop=i factor=9}")
    assert "\n" not in str(caught.value)
    assert caught.value.ir is not None


def test_other_notes_are_kept() -> None:
    error, _ = _refused_split()
    error.add_note("try factor=2")
    assert error.__notes__ == ["try factor=2"]


def test_an_error_raised_outside_a_pattern_has_no_ir() -> None:
    module = parse_module(KERNEL)
    no_loop = "tir-split: no function has a loop named 'q'$"
    with pytest.raises(ScheduleError, match=no_loop) as caught:
        TirSplit(loop="q", factor=2).apply(Context(), module)
    assert caught.value.ir is None and caught.value.module is None
