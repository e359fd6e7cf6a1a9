"""Kernels' schedules: each kernel's default schedule (ops/schedules.py),
or the best record of its workload, applied step by step on a module of
its own; a step a primitive refuses is a remark, never an error. A model
too small for threads (`runs_serial`) is scheduled without its
`tir-parallel` steps. Used by the compile (driver/compiler.py) and by its
kernel units (driver/kernel_units.py), in worker processes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from xtc.dialects.tir import ForOp
from xtc.driver.compile_settings import SERIAL_CALL_ITERATIONS, serial_model_iterations
from xtc.driver.errors import CompileError
from xtc.runtime.timing import NO_TIMER, Timer

if TYPE_CHECKING:
    from xdsl.utils.exceptions import DiagnosticException

    from xtc.driver.records import Record, TuningRecords
    from xtc.ops.schedules import KernelSchedule


def loop_iterations(loop: ForOp) -> int:
    """How many times the innermost bodies under `loop` run: its extent
    times those of the loops in its body, added up (1 for a body with no
    loop)."""
    inner = [op for op in loop.body.block.ops if isinstance(op, ForOp)]
    return loop.extent * max(1, sum(loop_iterations(op) for op in inner))


def model_iterations(module: ModuleOp, entry: str) -> int:
    """The innermost iterations of one run of the model: each kernel's
    top-level loops once per call of it from the `entry` function."""
    return sum(kernel_call_iterations(module, entry))


def kernel_call_iterations(module: ModuleOp, entry: str) -> list[int]:
    """The innermost iterations of each kernel call of one run of the
    model, in the `entry` function's order."""
    from xdsl.dialects.func import CallOp

    kernels = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
    counts: list[int] = []
    for call in kernels[entry].walk():
        if not isinstance(call, CallOp):
            continue
        kernel = kernels.get(call.callee.root_reference.data)
        if kernel is None or not kernel.body.blocks:
            continue
        counts.append(sum(loop_iterations(op) for op in kernel.body.ops if isinstance(op, ForOp)))
    return counts


def runs_serial(module: ModuleOp, entry: str) -> bool:
    """Whether the model is too small for threads (serial_model_iterations);
    when it is, a remark says so."""
    from xtc import remarks

    bound = serial_model_iterations()
    calls = kernel_call_iterations(module, entry)
    iterations = sum(calls)
    if iterations >= bound or iterations >= SERIAL_CALL_ITERATIONS * len(calls):
        return False
    remarks.report(
        remarks.Remark(
            "analysis",
            remarks.SERIAL_MODEL,
            "schedule-kernels",
            f"every loop left serial: the model runs {iterations} innermost iterations, "
            f"under {bound}, in {len(calls)} kernel calls of fewer than "
            f"{SERIAL_CALL_ITERATIONS} on average (threads would cost more than they save)",
            entry,
        )
    )
    return True


def _kept(steps: Sequence[str], serial: bool) -> list[str]:
    """`steps` without the tir-parallel ones when the model runs `serial`."""
    return [step for step in steps if not (serial and _pass_name(step) == "tir-parallel")]


def schedule_kernels(
    module: ModuleOp,
    entry: str,
    records: TuningRecords | None = None,
    tuned: list[dict[str, Any]] | None = None,
    *,
    verify_each: bool = True,
    timer: Timer = NO_TIMER,
    serial: bool = False,
    verify: bool = True,
) -> list[str]:
    """schedule_kernels_by_function's steps in one list, in order: the
    schedule part of the pipeline."""
    applied = schedule_kernels_by_function(
        module,
        entry,
        records,
        tuned,
        verify_each=verify_each,
        timer=timer,
        serial=serial,
        verify=verify,
    )
    return [step for steps in applied.values() for step in steps]


def schedule_kernels_by_function(
    module: ModuleOp,
    entry: str,
    records: TuningRecords | None = None,
    tuned: list[dict[str, Any]] | None = None,
    *,
    verify_each: bool = True,
    timer: Timer = NO_TIMER,
    serial: bool = False,
    verify: bool = True,
) -> dict[str, list[str]]:
    """Schedules each kernel on a module of its own (small to verify): the
    best record of its workload when `records` has one (each tuned kernel
    noted in `tuned`), else its default schedule (ops/schedules.py), where
    a step a primitive refuses ends that nest's recipe and leaves the
    kernel as the steps before left it. Returns the steps applied to each
    kernel, by name, in the module's order. Each kernel is verified after
    each step (`verify_each`) or once, scheduled (not at all with `verify`
    false: a compile unit verifies its kernel once, at the end of its tir
    passes); `timer` gets each kind of step's time. With `serial` (see
    runs_serial), no step makes a loop parallel. A record that does not fit
    its kernel any more is a CompileError, never dropped."""
    from xdsl.utils.exceptions import DiagnosticException

    from xtc.driver.pipelines import apply_pipeline
    from xtc.ops.schedules import kernel_schedule

    applied: dict[str, list[str]] = {}
    for kernel in list(module.ops):
        if not isinstance(kernel, FuncOp) or kernel.sym_name.data == entry:
            continue
        if not kernel.body.blocks:  # a declaration (a kernel compiled apart)
            continue
        schedule = kernel_schedule(kernel)
        steps = applied.setdefault(kernel.sym_name.data, [])
        record = record_for(kernel, records)
        if record is not None:
            tuned_steps = _kept(_record_steps(kernel, schedule, record, records), serial)
            scratch = _tuned_kernel(kernel, tuned_steps, record, records, verify_each, timer)
            steps += tuned_steps
            if tuned is not None:
                tuned.append(
                    {
                        "function": kernel.sym_name.data,
                        "key": record.key,
                        "config": record.config,
                        "cost_ms": round(record.cost * 1000, 6),
                    }
                )
        else:
            recipes = [_kept(r, serial) for r in schedule.recipes(schedule.default())]
            recipes = [r for r in recipes if r]
            if not recipes:
                continue
            scratch = ModuleOp([kernel.clone()])
            for recipe in recipes:
                for step in recipe:
                    try:
                        with timer.scope(_pass_name(step)):
                            apply_pipeline(scratch, step, verify=verify_each)
                    except DiagnosticException as e:
                        _report_refused_step(kernel.sym_name.data, step, e)
                        # the refused step may have left it half done: the
                        # steps taken, again (refusals are rare; a copy per
                        # step, to fall back on, cost half of the scheduling)
                        scratch = _replayed(kernel, steps)
                        break
                    steps.append(step)
        if verify and not verify_each:
            with timer.scope("verify"):
                scratch.verify()
        scheduled = scratch.body.block.first_op
        assert isinstance(scheduled, FuncOp)
        scheduled.detach()
        module.body.block.insert_op_before(scheduled, kernel)
        module.body.block.erase_op(kernel)
    if records is not None and tuned is not None and not tuned:
        raise CompileError(
            f"tuning records {records.source}: no kernel of this model has a record "
            "(records of another model?)"
        )
    return applied


def _replayed(kernel: FuncOp, steps: Sequence[str]) -> ModuleOp:
    """The kernel alone in a module with `steps` (each taken before) applied."""
    from xtc.driver.pipelines import apply_pipeline

    scratch = ModuleOp([kernel.clone()])
    for step in steps:
        apply_pipeline(scratch, step, verify=False)
    return scratch


def _report_refused_step(function: str, step: str, error: DiagnosticException) -> None:
    from xtc import remarks

    reason = " ".join(str(error).split("\n", 1)[0].split())
    remarks.report(
        remarks.Remark(
            "missed",
            remarks.SCHEDULE_REFUSED,
            _pass_name(step),
            f"step {step} refused: {reason}",
            function,
        )
    )


def record_for(kernel: FuncOp, records: TuningRecords | None) -> Record | None:
    from xtc.driver.records import RecordsError
    from xtc.driver.workload import workload_key

    if records is None or not kernel.body.blocks:
        return None
    try:
        return records.best(workload_key(kernel), kernel.sym_name.data)
    except RecordsError as e:
        raise CompileError(str(e)) from None


def record_when_scheduled(
    kernel: FuncOp, records: TuningRecords | None, passes: Sequence[str]
) -> Record | None:
    """record_for `kernel` as it will be when it is scheduled: after
    `passes` (those that run between the split into kernel units and the
    schedule, as tir-partition), applied to a copy. Workload keys are taken
    there (tune/task.py), and those passes may change a kernel's text."""
    from xtc.driver.pipelines import apply_pipeline

    if records is None or not kernel.body.blocks:
        return None
    if not passes:
        return record_for(kernel, records)
    scratch = ModuleOp([kernel.clone()])
    apply_pipeline(scratch, ",".join(passes), verify=False)
    later = scratch.body.block.first_op
    assert isinstance(later, FuncOp)
    return record_for(later, records)


def _pass_name(step: str) -> str:
    """`tir-split{func=f loop=i factor=4}` -> `tir-split`."""
    return step.split("{", 1)[0]


def _record_steps(
    kernel: FuncOp, schedule: KernelSchedule, record: Record, records: TuningRecords | None
) -> list[str]:
    """The steps the record's schedule takes on `kernel`: today's recipe of
    its config, or, where the record measured other steps (the template
    changed since: a stale record), the steps it measured, renamed for the
    kernel, with a remark (records apply what was measured, as Ansor's do).
    A config outside today's space (a knob added or dropped since) replays
    its measured steps too; CompileError when it kept none."""
    from xtc.driver.workload import KERNEL_NAME

    name = kernel.sym_name.data
    measured = [_renamed(step, KERNEL_NAME, name) for step in record.measured_steps()]
    problem = schedule.space().problem(record.config)
    if problem is not None:
        if not record.steps:
            raise _stale_error(kernel, record, records, problem)
        _report_stale(record, name, f"a config today's space no longer has ({problem})", measured)
        return measured
    today = schedule.steps(record.config)
    if not record.steps or measured == today:
        return today
    _report_stale(
        record,
        name,
        f"steps that today's recipe of its config ({len(today)} steps) no longer makes",
        measured,
    )
    return measured


def _report_stale(record: Record, kernel: str, why: str, measured: Sequence[str]) -> None:
    from xtc import remarks

    remarks.report(
        remarks.Remark(
            "analysis",
            remarks.STALE_RECORD,
            "schedule-kernels",
            f"the tuning record of {record.key} measured {len(measured)} steps, with {why}: "
            "its own steps replayed (tune again to measure today's)",
            kernel,
        )
    )


def _renamed(step: str, old: str, new: str) -> str:
    """`step` acting on function `new` where it named `old`."""
    return re.sub(rf"(?<=[{{ ])func={re.escape(old)}(?=[ }}])", f"func={new}", step)


def _stale_error(
    kernel: FuncOp, record: Record, records: TuningRecords | None, error: Exception | str
) -> CompileError:
    source = records.source if records is not None else "tuning records"
    return CompileError(
        f"tuning records {source}: the record of kernel {kernel.sym_name.data} ({record.key}) "
        f"no longer applies ({' '.join(str(error).split())[:300]}): tune the model again"
    )


def _tuned_kernel(
    kernel: FuncOp,
    steps: Sequence[str],
    record: Record,
    records: TuningRecords | None,
    verify_each: bool,
    timer: Timer,
) -> ModuleOp:
    """The kernel alone in a module with the record's `steps` applied."""
    from xdsl.utils.exceptions import DiagnosticException

    from xtc.driver.pipelines import apply_pipeline

    try:
        scratch = ModuleOp([kernel.clone()])
        for step in steps:
            with timer.scope(_pass_name(step)):
                apply_pipeline(scratch, step, verify=verify_each)
    except DiagnosticException as e:
        raise _stale_error(kernel, record, records, e) from None
    return scratch
