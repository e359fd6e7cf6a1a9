"""tir-split: one loop becomes an outer and an inner loop, the remainder of
a non-dividing factor peeled into a tail loop."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import (
    ScheduleError,
    check_fresh_names,
    check_unit_stride,
    constant_int,
    find_loop,
    function_name,
    index_constant,
    loop_name,
    loops_in,
    new_loop,
    rename_loops_inside,
    select_functions,
)

PASS = "tir-split"


def _check_split(func: FuncOp, loop: ForOp, factor: int, pass_name: str = PASS) -> None:
    """Refuses a loop that is not serial from 0 step 1, or a factor outside
    [1, extent], in a diagnostic of pass `pass_name`."""
    check_unit_stride(pass_name, func, loop)
    where = f"loop '{loop_name(loop)}' in @{function_name(func)}"
    if loop.kind.data != "serial":
        raise ScheduleError(
            pass_name, f"{where} is {loop.kind.data}; split a loop before setting its kind", loop
        )
    if not 1 <= factor <= loop.extent:
        raise ScheduleError(
            pass_name, f"factor {factor} is not in [1, {loop.extent}], the extent of {where}", loop
        )


def _tail_names(loop: ForOp) -> tuple[str, list[str]]:
    """The tail loop's name and the names the loops of its copy of the body
    get: each loop's name with `_<tail loop name>` appended."""
    tail = f"{loop_name(loop)}_tail"
    inner = [loop_name(i) for i in loops_in(loop) if i is not loop]
    return tail, [f"{name}_{tail}" for name in inner]


def _main_nest(loop: ForOp, factor: int) -> tuple[ForOp, ForOp, SSAValue]:
    """`L_o` (extent // factor) around `L_i` (factor), the inner body
    starting with `L = L_o * factor + L_i`; the two loops and that value."""
    name = loop_name(loop)
    outer = new_loop(f"{name}_o", loop.extent // factor)
    inner = new_loop(f"{name}_i", factor)
    outer.body.block.add_op(inner)
    scale = index_constant(factor)
    start = arith.MuliOp(outer.induction_variable, scale.result)
    index = arith.AddiOp(start.result, inner.induction_variable)
    index.result.name_hint = name
    inner.body.block.add_ops([scale, start, index])
    return outer, inner, index.result


def _tail_loop(loop: ForOp, factor: int) -> ForOp:
    """`L_tail` over the last extent % factor iterations with a copy of the
    body, its inner loops renamed `<name>_L_tail`."""
    tail_name, _ = _tail_names(loop)
    done = loop.extent // factor * factor
    tail = new_loop(tail_name, loop.extent - done)
    base = index_constant(done)
    index = arith.AddiOp(base.result, tail.induction_variable)
    index.result.name_hint = loop_name(loop)
    tail.body.block.add_ops([base, index])
    mapping: dict[SSAValue, SSAValue] = {loop.induction_variable: index.result}
    for op in loop.body.block.ops:
        tail.body.block.add_op(op.clone(mapping))
    rename_loops_inside(tail, f"_{tail_name}")
    return tail


_QUOTIENTS = (arith.FloorDivSIOp, arith.DivSIOp, arith.DivUIOp)
_REMAINDERS = (arith.RemSIOp, arith.RemUIOp)


def _fold_quotient_and_remainder(
    index: SSAValue, factor: int, outer: ForOp, inner: ForOp, rewriter: PatternRewriter
) -> None:
    """`L // factor` -> `L_o` and `L % factor` -> `L_i` where L = L_o ·
    factor + L_i (0 <= L_i < factor, L_o >= 0): the blocked index of an
    operand laid out in blocks of `factor` (a conv2d weight in OIHW16o)
    becomes the loop variables themselves."""
    for use in list(index.uses):
        user = use.operation
        if isinstance(user, _QUOTIENTS):
            replacement = outer.induction_variable
        elif isinstance(user, _REMAINDERS):
            replacement = inner.induction_variable
        else:
            continue  # an index_cast or a multiply has no divisor to compare
        if use.index == 0 and constant_int(user.operands[1]) == factor:
            rewriter.replace(user, [], [replacement])


@dataclass(frozen=True)
class SplitLoop(RewritePattern):
    """`for L` -> `for L_o { for L_i { L = L_o * factor + L_i; body } }`,
    then `for L_tail { L = (E // factor) * factor + L_tail; body }` when
    factor does not divide E, in the chosen functions. Refusals name
    `pass_name` (a pass built on this one, such as tir-tile, passes its own)."""

    functions: frozenset[str]
    loop: str
    factor: int
    pass_name: str = PASS

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FuncOp, rewriter: PatternRewriter) -> None:
        if function_name(op) not in self.functions:
            return
        loop = find_loop(self.pass_name, op, self.loop)
        _check_split(op, loop, self.factor, self.pass_name)
        name = loop_name(loop)
        new_names = [f"{name}_o", f"{name}_i"]
        peeled = loop.extent % self.factor != 0
        if peeled:
            tail_name, copies = _tail_names(loop)
            new_names += [tail_name, *copies]
        check_fresh_names(self.pass_name, op, new_names, loop)
        replacement: list[Operation] = []
        tail = _tail_loop(loop, self.factor) if peeled else None
        outer, inner, index = _main_nest(loop, self.factor)
        rewriter.inline_block(loop.body.block, InsertPoint.at_end(inner.body.block), [index])
        _fold_quotient_and_remainder(index, self.factor, outer, inner, rewriter)
        replacement.append(outer)
        if tail is not None:
            replacement.append(tail)
        rewriter.replace(loop, replacement, [])


@dataclass(frozen=True, kw_only=True)
class TirSplit(ModulePass):
    """Splits loop `loop` by `factor` (TVM's split).

    Expects: tir-level functions; in `func` (or, when `func` is empty, in
    every function that has one) a loop named `loop`, serial, from 0 with
    step 1, extent E, and 1 <= factor <= E; loop names unique in the
    function.

    Produces: the loop replaced by `L_o` (extent E // factor, serial)
    holding `L_i` (extent factor, serial), whose body starts with
    `%L = arith.addi (arith.muli %L_o, factor), %L_i` (index) and then
    holds the original body using `%L`, except that `%L floordiv factor`
    (or divsi, divui) becomes `%L_o` and `%L rem factor` (remsi, remui)
    becomes `%L_i`, so an index into blocks of `factor` (a conv2d weight in
    OIHW16o) reads straight from the loop variables. When factor does not divide E the
    remainder is peeled: after `L_o` comes `L_tail` (extent E % factor)
    running a copy of the body with `%L = (E // factor) * factor + %L_tail`;
    every loop inside that copy has `_L_tail` appended to its name (`r0`
    in the tail of `i1` becomes `r0_i1_tail`), so names stay unique however
    splits are composed.

    Interactions: splitting a loop that holds a peeled split leaves two
    loops in the new inner loop (`tir-split i1` then `tir-split i0` with
    remainders: `i0_i` holds `i1_o` and `i1_tail`), which tir-reorder then
    refuses to reorder; split the outer loop and reorder first, or use
    factors that divide. Refuses (naming pass, function and loop): a missing
    function or loop, a loop name used twice in the function, a loop not
    from 0 step 1 or not serial, a factor outside [1, E], a new name already
    taken.

    Command line: `tir-split{func=matmul_0 loop=i1 factor=16}`; a name
    other than letters, digits, `_` and `-`, or one that reads as a number
    or a boolean, is quoted: `loop="i.0"` (see xtc.passes.tir_loops).
    """

    name = "tir-split"

    func: str = ""
    """The function to schedule; empty: every function that has the loop."""
    loop: str
    """The loop to split."""
    factor: int
    """The inner loop's extent, in [1, the loop's extent]."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = select_functions(op, self.name, self.func, [self.loop])
        pattern = SplitLoop(functions, self.loop, self.factor)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
