"""tir-prefetch: at the start of each iteration of a loop, prefetch the part
of a buffer that the iteration `distance` steps later will read (Halide's
`prefetch(buffer, loop, distance)`), so that its cache misses overlap this
iteration's work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from xtc.analysis.loops import Dimension, region_of
from xtc.analysis.types import ElementSizeError, element_bytes
from xtc.dialects.tir import PREFETCH_LOCALITIES, ForOp, PrefetchOp
from xtc.passes.schedule_pass import SchedulePass
from xtc.passes.tir_loops import (
    emit_sum,
    find_buffer,
    index_constant,
)

CACHE_LINE_BYTES = 64
MAX_PREFETCHES = 64
"""The most prefetches one iteration may issue: more would cost more than
the misses they hide."""


def line_points(dimension: Dimension, line: int) -> list[int]:
    """Offsets from `dimension.low` that touch every cache line of its
    range along a contiguous dimension: one per `line` elements, and the
    last element."""
    points = list(range(0, dimension.span, line))
    if dimension.span - 1 not in points:
        points.append(dimension.span - 1)
    return points


def prefetch_points(dimensions: Sequence[Dimension], line: int) -> list[tuple[int, ...]]:
    """The element offsets (from each dimension's `low`) to prefetch: every
    index of the outer dimensions, the line points of the innermost."""
    ranges = [range(d.span) for d in dimensions[:-1]]
    return [
        (*outer, last) for outer in product(*ranges) for last in line_points(dimensions[-1], line)
    ]


@dataclass(frozen=True, kw_only=True)
class TirPrefetch(SchedulePass):
    """Prefetches, at the start of each iteration of a loop, what the
    iteration `distance` steps ahead will read of a buffer (Halide's
    prefetch): a software prefetch for accesses no hardware prefetcher
    follows, such as an NCHW input read one channel plane after another.

    Expects: tir-level functions; in `func` (or every function with such a
    loop, when `func` is empty) a loop `loop` whose body reads the argument
    `buffer` (its position or SSA name) without writing it, every index a
    sum of constant multiples of loop variables and values fixed during an
    iteration (the form tir-cache-read packs), under tir.for loops only.

    Produces: at the start of `loop`'s body, `tir.prefetch`es (locality
    `locality`, 3 by default: into L1) of the box of elements the loads of
    one iteration read, with `loop`'s variable advanced by `distance`
    steps: every row of the box, and along its last dimension one element
    per 64-byte line and the last one. An offset past the buffer's end (the
    last iterations) is prefetched as it is: a prefetch never faults. Values
    are unchanged: a prefetch is a hint (the interpreter skips it).

    Refuses (naming pass, buffer, loop and function): a missing function,
    loop or buffer, a body that writes the buffer or passes it to an op
    other than a load, indices outside that form, a box needing more than
    64 prefetches, a distance below 1 and a locality other than 0 to 3.

    Command line: `tir-prefetch{func=conv_0 loop=r0 buffer=in0 distance=8}`.
    """

    name = "tir-prefetch"

    loop: str
    """The loop at the start of whose body the prefetches go."""
    buffer: int | str
    """The argument to prefetch: its position (0 is the first) or its SSA name."""
    distance: int = 1
    """How many iterations of `loop` ahead to prefetch; at least 1."""
    locality: int = 3
    """Cache level hint, 0 (no temporal locality) to 3 (keep in L1)."""

    def check_options(self) -> None:
        if self.locality not in PREFETCH_LOCALITIES:
            raise self.bad_option(
                f"locality={self.locality} is not one of 0, 1, 2, 3 (LLVM's prefetch)"
            )
        if self.distance < 1:
            raise self.bad_option(f"distance={self.distance} must be at least 1")

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """`for L { body reading buffer }` -> `for L { prefetch(the region
        iteration L + distance reads); body }`."""
        loop = self.find_loop(func, self.loop)
        buffer = find_buffer(self.name, func, self.buffer)
        refuse = self.buffer_refuser(func, loop, buffer, "prefetch")
        dimensions = region_of(loop, buffer, refuse).dimensions
        buffer_type = cast(MemRefType[Attribute], buffer.type)
        strides = buffer_type.get_strides()
        if not dimensions or strides is None or None in strides:
            raise refuse("it has no static strides")
        static_strides = cast(Sequence[int], strides)
        try:
            line = max(1, CACHE_LINE_BYTES // element_bytes(buffer_type.get_element_type()))
        except ElementSizeError as e:
            raise refuse(str(e)) from None
        points = prefetch_points(dimensions, line)
        if len(points) > MAX_PREFETCHES:
            raise refuse(
                f"what one iteration reads takes {len(points)} prefetches (one per row "
                f"and cache line; at most {MAX_PREFETCHES}); prefetch in an inner loop"
            )
        terms, first = self.linear_form(loop, dimensions, static_strides)
        ops, base = emit_sum(terms, 0)
        for point in points:
            shift = index_constant(
                first + sum(s * p for s, p in zip(static_strides, point, strict=True))
            )
            offset = arith.AddiOp(base, shift.result)
            ops += [shift, offset, PrefetchOp(buffer, offset.result, self.locality)]
        rewriter.insert(ops, InsertPoint.at_start(loop.body.block))

    def linear_form(
        self, loop: ForOp, dimensions: Sequence[Dimension], strides: Sequence[int]
    ) -> tuple[dict[SSAValue, int], int]:
        """The region's first element, `distance` iterations of `loop`
        ahead, as a linear offset: (coefficient per value, constant)."""
        terms: dict[SSAValue, int] = {}
        constant = 0
        variable = loop.induction_variable
        shift = self.distance * loop.step.value.data
        for dimension, stride in zip(dimensions, strides, strict=True):
            constant += stride * dimension.low
            for value, coefficient in dimension.outside.items():
                terms[value] = terms.get(value, 0) + stride * coefficient
                if value is variable:
                    constant += stride * coefficient * shift
        return {v: c for v, c in terms.items() if c}, constant
