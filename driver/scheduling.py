"""Kernels' schedules: each kernel's default schedule (ops/schedules.py),
or the best record of its workload, applied step by step on a module of
its own; a step a primitive refuses is a remark, never an error. Used by
the compile (driver/compiler.py) and by its kernel units
(driver/kernel_units.py), in worker processes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from xtc.driver.errors import CompileError
from xtc.runtime.timing import NO_TIMER, Timer

if TYPE_CHECKING:
    from xdsl.utils.exceptions import DiagnosticException

    from xtc.driver.records import Record, TuningRecords
    from xtc.ops.schedules import KernelSchedule


def schedule_kernels(
    module: ModuleOp,
    entry: str,
    records: TuningRecords | None = None,
    tuned: list[dict[str, Any]] | None = None,
    *,
    verify_each: bool = True,
    timer: Timer = NO_TIMER,
) -> list[str]:
    """schedule_kernels_by_function's steps in one list, in order: the
    schedule part of the pipeline."""
    applied = schedule_kernels_by_function(
        module, entry, records, tuned, verify_each=verify_each, timer=timer
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
) -> dict[str, list[str]]:
    """Schedules each kernel on a module of its own (small to verify): the
    best record of its workload when `records` has one (each tuned kernel
    noted in `tuned`), else its default schedule (ops/schedules.py), where
    a step a primitive refuses ends that nest's recipe and leaves the
    kernel as the steps before left it. Returns the steps applied to each
    kernel, by name, in the module's order. Each kernel is verified after
    each step (`verify_each`) or once, scheduled; `timer` gets each kind of
    step's time. A record that does not fit
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
            scratch = _tuned_kernel(kernel, schedule, record, records, verify_each, timer)
            steps += schedule.steps(record.config)
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
            recipes = [r for r in schedule.recipes(schedule.default()) if r]
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
        if not verify_each:
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


def _tuned_kernel(
    kernel: FuncOp,
    schedule: KernelSchedule,
    record: Record,
    records: TuningRecords | None,
    verify_each: bool,
    timer: Timer,
) -> ModuleOp:
    """The kernel alone in a module with the record's schedule applied."""
    from xdsl.utils.exceptions import DiagnosticException

    from xtc.driver.pipelines import apply_pipeline
    from xtc.ops.space import ConfigError

    source = records.source if records is not None else "tuning records"
    name = kernel.sym_name.data
    try:
        schedule.space().check(record.config)
        scratch = ModuleOp([kernel.clone()])
        for step in schedule.steps(record.config):
            with timer.scope(_pass_name(step)):
                apply_pipeline(scratch, step, verify=verify_each)
    except (ConfigError, DiagnosticException) as e:
        raise CompileError(
            f"tuning records {source}: the record of kernel {name} ({record.key}) no longer "
            f"applies ({' '.join(str(e).split())[:300]}): tune the model again"
        ) from None
    return scratch
