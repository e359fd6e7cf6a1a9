"""tir-profile-calls: the model function times each kernel call it makes, and
itself, into a table the library exports (`xtc compile --profile`, read by
`xtc run --profile` and `CompiledModel.profile`).

The function `func` (the model function, `@main`) gets a public,
zero-filled global

    memref.global @xtc_profile : memref<(K+1)x2xi64>

whose row 0 holds the cycles of its runs and how many runs there were, and
row k+1 the cycles spent in the calls of its k-th callee (in the order of
their first call) and how many calls. Each `func.call` is bracketed by two
`tir.cycle_counter` reads (x86's rdtsc: a counter of constant rate, not
the core's clock), their difference added to its callee's row; the
function's first op and each `func.return` bracket the run. The callees'
names, in row order, are the function's `tir.profile` attribute. The
cycles are turned into time by whoever reads the table: CompiledModel
times the runs it makes and spreads their time over row 0's cycles.

A run adds to the table: runs of the model from several threads at once mix
their counts (the reader zeroes the table before it times its own runs).

Expects: a tir-level module with a function `func` (with a body) and no
@xtc_profile yet. Produces: the same calls, each bracketed, and the global.
Command line: `tir-profile-calls` or `tir-profile-calls{func=model}`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from xtc.dialects.tir import CycleCounterOp

PASS_NAME = "tir-profile-calls"
PROFILE_GLOBAL = "xtc_profile"
"""The table's symbol, in the module and in the library."""
PROFILE_ATTR = "tir.profile"
"""The profiled function's callees, in the table's row order (row k+1)."""


def profiled_callees(func: FuncOp) -> list[str] | None:
    """The callees of a function tir-profile-calls instrumented, in the
    table's row order; None for a function it did not."""
    names = func.attributes.get(PROFILE_ATTR)
    if not isinstance(names, ArrayAttr):
        return None
    return [name.data for name in names.data if isinstance(name, StringAttr)]


@dataclass(frozen=True)
class TirProfileCalls(ModulePass):
    """Each call of the model function `func` timed into @xtc_profile (see
    the module docstring). Refuses a module without `func`, and one that
    has an @xtc_profile already (profiled once)."""

    name = PASS_NAME

    func: str = "main"
    """The function whose calls are timed: the model function."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = _function(op, self.func)
        calls = [c for c in target.walk() if isinstance(c, CallOp)]
        callees = list(dict.fromkeys(c.callee.root_reference.data for c in calls))
        table_type = MemRefType(i64, [len(callees) + 1, 2])
        table = memref.GlobalOp.get(
            StringAttr(PROFILE_GLOBAL), table_type, UnitAttr(), StringAttr("public")
        )
        Rewriter.insert_op(table, InsertPoint.at_start(op.body.block))
        target.attributes[PROFILE_ATTR] = ArrayAttr([StringAttr(n) for n in callees])
        entry = target.body.blocks[0]
        first = entry.first_op
        assert first is not None  # a function with a body ends with its return
        get_table = memref.GetGlobalOp(PROFILE_GLOBAL, table_type)
        started = CycleCounterOp()
        Rewriter.insert_op([get_table, started], InsertPoint.before(first))
        rows = {name: row for row, name in enumerate(callees, start=1)}
        for call in calls:
            before = CycleCounterOp()
            Rewriter.insert_op(before, InsertPoint.before(call))
            row = rows[call.callee.root_reference.data]
            elapsed = _add_elapsed(before.result, get_table.memref, row)
            Rewriter.insert_op(elapsed, InsertPoint.after(call))
        for ret in [r for r in target.walk() if isinstance(r, ReturnOp)]:
            elapsed = _add_elapsed(started.result, get_table.memref, 0)
            Rewriter.insert_op(elapsed, InsertPoint.before(ret))


def _function(module: ModuleOp, name: str) -> FuncOp:
    """The module's function `name` with a body, not profiled yet."""
    for op in module.ops:
        if isinstance(op, memref.GlobalOp) and op.sym_name.data == PROFILE_GLOBAL:
            raise PassFailedException(
                f"{PASS_NAME}: the module has a @{PROFILE_GLOBAL} already (profiled once)"
            )
    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == name and op.body.blocks:
            return op
    raise PassFailedException(f"{PASS_NAME}: no function @{name} with a body in the module")


def _add_elapsed(since: SSAValue, table: SSAValue, row: int) -> list[Operation]:
    """The ops that add the cycles from `since` to `table[row, 0]`, and one
    to `table[row, 1]`."""
    now = CycleCounterOp()
    elapsed = arith.SubiOp(now.result, since)
    index = IndexType()
    at_row = arith.ConstantOp(IntegerAttr(row, index))
    cycles_at = arith.ConstantOp(IntegerAttr(0, index))
    count_at = arith.ConstantOp(IntegerAttr(1, index))
    one = arith.ConstantOp(IntegerAttr(1, i64))
    cycles = memref.LoadOp.get(table, [at_row.result, cycles_at.result])
    new_cycles = arith.AddiOp(cycles.res, elapsed.result)
    store_cycles = memref.StoreOp.get(new_cycles.result, table, [at_row.result, cycles_at.result])
    count = memref.LoadOp.get(table, [at_row.result, count_at.result])
    new_count = arith.AddiOp(count.res, one.result)
    store_count = memref.StoreOp.get(new_count.result, table, [at_row.result, count_at.result])
    return [
        now,
        elapsed,
        at_row,
        cycles_at,
        count_at,
        one,
        cycles,
        new_cycles,
        store_cycles,
        count,
        new_count,
        store_count,
    ]
