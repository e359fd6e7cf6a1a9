"""Remarks: what a pass did not do, and why (clang's `-Rpass-missed`).

A pass or lowering that takes a fallback (a loop left scalar, a schedule step
refused) calls `report(Remark(...))` instead of dropping the reason. Nothing
is kept unless a caller listens: `with collect_remarks() as remarks:` gathers
the remarks of everything run inside it into its own list, and the previous
collector (or none) is back when the block ends, so one compile's remarks
never leak into the next. `xtc-opt --remarks` and `xtc compile --remarks`
print them; the compiled model's manifest counts them by category.

This module imports nothing of xtc, so that every room can report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from xdsl.ir import Operation

RemarkKind = Literal["missed", "applied", "analysis"]

VECTORIZE_MISSED = "vectorize-missed"
"""A loop marked vectorized that the lowering left scalar."""
DOT_PRODUCT_WIDENED = "dot-product-widened"
"""8-bit dot products widened to i32 where the CPU has no VNNI."""
SCHEDULE_REFUSED = "schedule-refused"
"""A step of a kernel's default schedule that its primitive refused."""
SERIAL_MODEL = "serial-model"
"""A model too small for threads: every kernel's loops left serial."""
STALE_RECORD = "stale-record"
"""A tuning record whose config today's recipe schedules otherwise: the
steps it measured replayed."""


@dataclass(frozen=True)
class Remark:
    """One remark: `message` says what happened to `loop` of `function`, in
    `pass_name`; `op` is the operation it is about (xtc-opt prints its place
    in the source), `category` the key the manifest counts it under."""

    kind: RemarkKind
    category: str
    pass_name: str
    message: str
    function: str = ""
    loop: str = ""
    op: Operation | None = None

    def text(self) -> str:
        """The message with the pass that gives it, as clang tags a remark."""
        return f"{self.message} [{self.pass_name}]"


_collector: ContextVar[list[Remark] | None] = ContextVar("xtc_remarks", default=None)


def report(remark: Remark) -> None:
    """Hands `remark` to the innermost `collect_remarks` block, if any."""
    remarks = _collector.get()
    if remarks is not None:
        remarks.append(remark)


@contextmanager
def collect_remarks() -> Iterator[list[Remark]]:
    """A fresh list that gets every remark reported inside the block."""
    remarks: list[Remark] = []
    token = _collector.set(remarks)
    try:
        yield remarks
    finally:
        _collector.reset(token)


def count_by_category(remarks: list[Remark]) -> dict[str, int]:
    """{category: how many}, categories in alphabetical order."""
    counts = Counter(remark.category for remark in remarks)
    return dict(sorted(counts.items()))
