"""tir-tile: a perfect nest of loops split and reordered into outer loops
around inner loops (tir-split on each, then tir-reorder)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.func import FuncOp
from xdsl.ir import Region
from xdsl.pattern_rewriter import PatternRewriter

from xtc.dialects.tir import ForOp
from xtc.passes.loop_rewrites import reorder_loops, split_loop
from xtc.passes.schedule_pass import Refuser, SchedulePass
from xtc.passes.tir_loops import (
    ScheduleError,
    function_name,
    loop_name,
    perfect_nest,
)


def tiled_order(loops: Sequence[str]) -> tuple[str, ...]:
    """`i, j` -> `i_o, j_o, i_i, j_i`: the names tir-split gives, outer parts
    first."""
    return (*(f"{name}_o" for name in loops), *(f"{name}_i" for name in loops))


def _check_outer_first(
    refuse: Refuser, func: FuncOp, nest: Sequence[ForOp], loops: Sequence[str]
) -> None:
    """Refuses loops named in another order than the nest's, outermost first."""
    found = [loop_name(loop) for loop in nest]
    if found != list(loops):
        given, nested = (", ".join(f"'{name}'" for name in names) for names in (loops, found))
        raise refuse(
            f"loops {given} in @{function_name(func)} are not named outermost first: "
            f"they nest as {nested}"
        )


def _check_inner_factors_divide(
    refuse: Refuser, func: FuncOp, nest: Sequence[ForOp], factors: Sequence[int]
) -> None:
    """Refuses a factor that leaves a remainder on any loop but the outermost:
    tir-split would peel it into a tail loop beside the inner part, which
    then holds two loops and cannot be reordered. Factors outside [1,
    extent] are left for tir-split's own check."""
    for loop, factor in zip(nest[1:], factors[1:], strict=True):
        if 1 <= factor <= loop.extent and loop.extent % factor:
            raise refuse(
                f"factor {factor} does not divide {loop.extent}, the extent of loop "
                f"'{loop_name(loop)}' in @{function_name(func)}; only the outermost "
                "loop's factor may leave a remainder (its tail is peeled around the "
                "whole tile)",
                loop,
            )


def _restore_body(func: FuncOp, saved: Region) -> None:
    """Puts the blocks of `saved` (a clone of the function's body) back in
    place of the function's current ones."""
    for block in list(func.body.blocks):
        func.body.detach_block(block).erase(safe_erase=False)
    for block in list(saved.blocks):
        func.body.add_block(saved.detach_block(block))


@dataclass(frozen=True, kw_only=True)
class TirTile(SchedulePass):
    """Tiles a perfect loop nest (TVM's tile).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has a loop named `loops[0]`) the loops named in
    `loops` (two or more, unique names), each holding the next directly
    (its body holds nothing else but pure scalar ops), outermost first;
    one positive factor per loop, each within its loop's extent, and every
    factor but the first dividing its loop's extent; what tir-split and
    tir-reorder expect of these loops (serial, from 0 with step 1, new
    names free, no vectorized loop).

    Produces: what `tir-split` on each loop, innermost first, then
    `tir-reorder` into `L1_o, L2_o, ..., L1_i, L2_i, ...` produce:
    `loops=i,j factors=8,16` gives `i_o { j_o { i_i { j_i { %i = i_o * 8 +
    i_i; %j = j_o * 16 + j_i; body } } } }` (extents E_i // 8, E_j // 16,
    8, 16). When the first factor does not divide its extent, the tail loop
    `i_tail` follows `i_o`, holding a copy of the nest split by the other
    factors (loops renamed `<name>_i_tail`, as tir-split names them).

    Refuses (naming pass, function and loop): a count of loops other than
    the count of factors or below two, a factor below 1, a missing function
    or loop, a loop name used twice, loops not perfectly nested or not
    named outermost first, a factor outside [1, extent], an inner factor
    that does not divide (tir-split would peel a tail inside the tile), and
    everything tir-split and tir-reorder refuse, in their words under the
    name tir-tile.

    Command line: `tir-tile{func=matmul_0 loops=i0,i1 factors=8,16}`; a
    name other than letters, digits, `_` and `-`, or one that reads as a
    number or a boolean, is quoted: `loops="i.0",i1` (see
    xtc.passes.tir_loops).
    """

    name = "tir-tile"
    LOOP_OPTIONS = ("loops",)

    loops: tuple[str, ...]
    """The loops of a perfect nest to tile, outermost first (two or more)."""
    factors: tuple[int, ...]
    """The tile size of each loop in `loops`; all but the first divide their
    loop's extent."""

    def check_options(self) -> None:
        loops, factors = self.loops, self.factors
        if len(loops) < 2:
            raise self.bad_option(f"tile needs two or more loops, loops names {len(loops)}")
        if len(factors) != len(loops):
            raise self.bad_option(
                f"{len(loops)} loops named but {len(factors)} factors given; "
                "give one factor per loop"
            )
        for name, factor in zip(loops, factors, strict=True):
            if factor < 1:
                raise self.bad_option(
                    f"factor {factor} for loop '{name}' is not a positive integer"
                )

    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """The perfect nest `L1 { L2 { ... } }` -> `L1_o { L2_o { ... L1_i {
        L2_i { ... } } } }`: split_loop on each loop, innermost first, then
        reorder_loops, their refusals naming tir-tile."""
        nest = perfect_nest(self.name, func, self.loops)
        refuse = self.refuser(func, nest[0], head="")
        _check_outer_first(refuse, func, nest, self.loops)
        _check_inner_factors_divide(refuse, func, nest, self.factors)
        # A refusal after the first split leaves the function as it was.
        saved = func.body.clone()
        try:
            # Innermost first, so the outermost loop's tail holds a tiled copy.
            for name, factor in reversed(list(zip(self.loops, self.factors, strict=True))):
                split_loop(self.name, func, name, factor, rewriter)
            reorder_loops(self.name, func, tiled_order(self.loops), rewriter)
        except ScheduleError:
            _restore_body(func, saved)
            raise
