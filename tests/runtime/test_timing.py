"""The compile timer: nested scopes add up by name under their parent, and
the report prints them as a tree with counts and shares (mlir-opt's
--mlir-timing layout)."""

from __future__ import annotations

import re
import time

import pytest

from xtc.runtime.timing import NO_TIMER, Timer

ROW = re.compile(r"  +\d+\.\d{4} \( *\d+\.\d%\)  (.*)")


def names(report: str) -> list[str]:
    """The name column of the report's rows, indented as printed."""
    return [m.group(1) for line in report.splitlines() if (m := ROW.fullmatch(line))]


def test_scopes_nest_and_add_up_by_name() -> None:
    timer = Timer()
    with timer.scope("schedule"):
        for _ in range(3):
            with timer.scope("tir-split"):
                time.sleep(0.002)
    with timer.scope("llvm"), timer.scope("link"):
        time.sleep(0.004)
    assert timer.seconds("schedule", "tir-split") >= 0.006
    assert timer.seconds("schedule") >= timer.seconds("schedule", "tir-split")
    assert timer.seconds("llvm", "link") >= 0.004
    assert timer.seconds("nowhere") == 0.0 and timer.seconds("llvm", "nowhere") == 0.0
    report = timer.report()
    lines = report.splitlines()
    assert "Execution time report" in report
    assert re.fullmatch(r"  Total Execution Time: \d+\.\d{4} seconds", lines[3])
    assert names(report) == ["schedule", "  tir-split (x3)", "llvm", "  link", "Total"]
    assert lines[-1].endswith("(100.0%)  Total")


def test_a_scope_that_raises_is_still_timed_and_closed() -> None:
    timer = Timer()
    with pytest.raises(ValueError), timer.scope("failing"):
        raise ValueError("no")
    with timer.scope("next"):
        pass
    assert names(timer.report()) == ["failing", "next", "Total"]


def test_no_timer_keeps_nothing() -> None:
    with NO_TIMER.scope("anything"), NO_TIMER.scope("inner"):
        pass
    assert NO_TIMER.seconds("anything") == 0.0
    assert "anything" not in NO_TIMER.report()
