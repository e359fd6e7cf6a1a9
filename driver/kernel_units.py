"""Kernels compiled apart: in worker processes, and found again in the
compile cache.

    units = split_kernel_units(module, "main")   # at tir, after tir-concat-in-place
    plan = UnitPlan(tir_passes, schedule=True, verify_each=False)
    with kernel_workers(jobs) as workers:
        pending = start_units(units, opt_level, plan, workers, cache)
        ... lower and build the model's own object meanwhile ...
        objects = pending.objects(timer, remarks)  # KernelObjects, in order

A model at tir is its model function (calls, weights, the arena) and its
kernels, each a function of buffers. `split_kernel_units` takes out every
kernel that names no other symbol (no weight, no call), leaving a
declaration in its place: each becomes a compile unit, a module of its own
(as text, which is what crosses to a worker) that is scheduled (its default
schedule, ops/schedules.py), taken through the tir passes of the compile
(tir-expand-math, tir-plan-memory), lowered to LLVM and compiled to an
object separately (runtime/library.py's build_kernel_object), then linked
with the model's object into one library. The schedule steps each unit
applied come back with its object, for the manifest's pipeline.

A unit's object is cached (runtime/compile_cache.py, kind "kernels") under
its text (the kernel before scheduling: its computation and shapes), the
plan, the opt level, the target (triple, CPU, features) and xtc's version
and sources (which fix the default schedule); with the object, the steps
and the remarks its compile gave, so a hit reports them as a compile would.
Units missing from the cache are compiled by `jobs` worker processes
(forked by a fresh fork server: libgomp does not survive a fork), or in
this process when `jobs` is 1.
"""

from __future__ import annotations

import json
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.dialects.func import FuncOp

from xtc import __version__
from xtc.runtime.timing import Timer

if TYPE_CHECKING:
    from xtc.remarks import Remark
    from xtc.runtime.compile_cache import CompileCache
    from xtc.runtime.library import KernelObject

KERNELS = "kernels"
"""The compile cache's kind of kernel objects."""
LOWERING = "convert-tir-to-llvm"


@dataclass(frozen=True)
class KernelUnit:
    """One kernel alone in a module, as IR text (tir, scheduled)."""

    function: str
    text: str


def split_kernel_units(
    module: ModuleOp, entry: str, keep: Callable[[FuncOp], bool] = lambda kernel: False
) -> Iterator[KernelUnit]:
    """Takes every self-contained kernel out of `module` (see the module
    doc), but those `keep` keeps, leaving its declaration (with the
    kernel's attributes, for passes that read a callee's); the units, in
    the module's order, each as soon as it is out (start_units hands it to
    a worker while the next is printed)."""
    from xtc.driver.textual_ir import module_to_text

    for kernel in list(module.ops):
        if not _self_contained(kernel, entry) or keep(kernel):
            continue
        assert isinstance(kernel, FuncOp)
        name = kernel.sym_name.data
        kind = kernel.function_type
        declaration = FuncOp.external(name, list(kind.inputs.data), list(kind.outputs.data))
        declaration.attributes.update(kernel.attributes)  # what the callers' passes read
        module.body.block.insert_op_before(declaration, kernel)
        module.body.block.detach_op(kernel)
        kernel.sym_visibility = None  # defined in one object, called from another
        yield KernelUnit(name, module_to_text(ModuleOp([kernel])))


def _self_contained(op: Any, entry: str) -> bool:
    """A kernel (a function with a body, not the model's) naming no symbol."""
    if not isinstance(op, FuncOp) or op.sym_name.data == entry or not op.body.blocks:
        return False
    for inner in op.walk():
        if inner is op:
            continue
        values = [*inner.properties.values(), *inner.attributes.values()]
        if any(isinstance(v, SymbolRefAttr) for v in values):
            return False
    return True


@dataclass(frozen=True)
class UnitPlan:
    """What is done to each unit before its lowering: the compile's passes
    from the split to the schedules (`before_schedule`: tir-partition), the
    default schedule (`schedule`, from -O2 on), then the compile's
    `tir_passes` in order; `verify_each` verifies after every step, else
    the unit is verified once, at the end of the tir stage (its LLVM IR is
    checked by LLVM's verifier); `serial`: the model is too small for
    threads (driver/scheduling.py, runs_serial), no loop is made parallel."""

    tir_passes: tuple[str, ...] = ()
    schedule: bool = False
    verify_each: bool = False
    before_schedule: tuple[str, ...] = ()
    serial: bool = False


@dataclass
class UnitResult:
    """What compiling one unit gives: its object, the schedule steps it
    applied, its remarks (as `_remark_json` writes them) and the seconds of
    each step."""

    object_data: bytes
    parallel: bool
    remarks: list[dict[str, str]]
    steps: list[str] = field(default_factory=lambda: [])
    seconds: dict[str, float] = field(default_factory=lambda: {})


def compile_unit(text: str, opt_level: int, plan: UnitPlan) -> UnitResult:
    """Schedules a unit's text, lowers it to LLVM and compiles it to an
    object (in a worker process, or in this one), as `plan` says."""
    from xtc.driver.garbage_collection import collection_paused
    from xtc.driver.scheduling import schedule_kernels
    from xtc.driver.pipelines import apply_pipeline
    from xtc.driver.textual_ir import parse_module
    from xtc.remarks import collect_remarks
    from xtc.runtime.library import build_kernel_object

    timer = Timer()
    steps: list[str] = []
    with collection_paused():
        with timer.scope("parse"):
            module = parse_module(text)
        with collect_remarks() as remarks:
            for name in plan.before_schedule:
                with timer.scope(name):
                    apply_pipeline(module, name, verify=plan.verify_each)
            if plan.schedule:
                with timer.scope("schedule-kernels"):
                    # verified with the tir passes' result, once, below
                    steps = schedule_kernels(
                        module, "", verify_each=plan.verify_each, serial=plan.serial, verify=False
                    )
            for name in plan.tir_passes:
                with timer.scope(name):
                    apply_pipeline(module, name, verify=plan.verify_each)
            if not plan.verify_each:
                with timer.scope("verify tir"):
                    module.verify()
            with timer.scope(LOWERING):
                apply_pipeline(module, LOWERING, verify=plan.verify_each)
        with timer.scope("llvm"):
            built = build_kernel_object(module, opt_level, timer)
    seconds = {name: timer.seconds(name) for name in timer.names()}
    return UnitResult(
        built.data, built.parallel, [_remark_json(r) for r in remarks], steps, seconds
    )


def _remark_json(remark: Remark) -> dict[str, str]:
    return {
        "kind": remark.kind,
        "category": remark.category,
        "pass_name": remark.pass_name,
        "message": remark.message,
        "function": remark.function,
        "loop": remark.loop,
    }


_WARM_UP_UNIT = """builtin.module {
  func.func @warm_up(%in0: memref<4xf32>, %out0: memref<4xf32>) {
    func.return
  }
}
"""


def _warm_up() -> None:
    """A worker's first task, started with it: a unit of nothing compiled,
    so that what every unit needs (the dialects, the lowering, LLVM) is
    loaded while the parent still imports and schedules the model."""
    compile_unit(_WARM_UP_UNIT, 0, UnitPlan())


WORKER_MODULES = (
    "xtc.driver.kernel_units",
    "xtc.driver.scheduling",
    "xtc.ops.schedules",
    "xtc.lowering.convert_tir_to_llvm",
    "xtc.runtime.library",
)
"""What a worker imports before its first unit: imported once, by the fork
server that starts the workers."""


@contextmanager
def kernel_workers(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """`jobs` worker processes, starting (None when `jobs` is 1): the
    caller goes on at once, the workers are started by a thread.

    Workers are forked by multiprocessing's fork server, a process started
    fresh (it never loads libgomp, which does not survive a fork) that
    imports WORKER_MODULES once: each worker starts with them loaded, where
    a spawned one would import them again (about 0.6 s of CPU each). The
    server lives as long as this process, so a second compile starts its
    workers at once. Starting a worker waits for the server's imports
    (about 0.8 s on a fresh server), which the thread does, so that the
    caller imports and lowers the model meanwhile; its first `submit`
    waits for them only if it comes sooner."""
    import multiprocessing
    import threading

    if jobs <= 1:
        yield None
        return
    # A worker re-runs the caller's main script unless __main__ names none;
    # workers need nothing from it, and a script without a __main__ guard
    # would compile the model again in each: they see a bare __main__.
    caller_main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(WORKER_MODULES))
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    starter = threading.Thread(target=_start_workers, args=(pool, jobs), name="xtc-workers")
    starter.start()
    try:
        yield pool
    finally:
        starter.join()
        pool.shutdown(wait=True, cancel_futures=True)
        sys.modules["__main__"] = caller_main


def _start_workers(pool: ProcessPoolExecutor, jobs: int) -> None:
    """Starts the pool's `jobs` workers, each warming up (the pool starts
    a worker per submit until it has `jobs`). A failure is left for the
    units' own submits to raise."""
    try:
        for _ in range(jobs):
            pool.submit(_warm_up)
    except Exception:  # noqa: BLE001 - start_units' submit meets it again and raises it
        pass


@dataclass
class PendingUnits:
    """The units of a model on their way to objects: hits, futures of
    workers, or units left to compile here."""

    units: Sequence[KernelUnit]
    opt_level: int
    plan: UnitPlan
    cache: CompileCache | None
    keys: list[str]
    results: list[UnitResult | Future[UnitResult] | None]
    hits: int

    def objects(
        self, timer: Timer, remarks: list[Remark], steps: dict[str, list[str]]
    ) -> list[KernelObject]:
        """The objects, in the units' order, once all are built (misses
        stored in the cache); their remarks appended to `remarks`, their
        schedule steps in `steps` by function; `timer` gets the summed
        seconds of the workers' steps."""
        from xtc.runtime.library import KernelObject

        objects: list[KernelObject] = []
        summed: dict[str, float] = {}
        for unit, key, pending in zip(self.units, self.keys, self.results, strict=True):
            result = self._result(unit, pending)
            if not isinstance(pending, UnitResult) and self.cache is not None:
                self.cache.put(KERNELS, key, _entry_payload(result))
            for name, seconds in result.seconds.items():
                summed[name] = summed.get(name, 0.0) + seconds
            remarks += [_remark(r) for r in result.remarks]
            steps[unit.function] = list(result.steps)
            objects.append(KernelObject(result.object_data, result.parallel))
        for name, seconds in summed.items():
            timer.add(f"{name} (kernels, summed)", seconds, len(self.units) - self.hits)
        return objects

    def _result(
        self, unit: KernelUnit, pending: UnitResult | Future[UnitResult] | None
    ) -> UnitResult:
        if isinstance(pending, UnitResult):
            return pending
        if pending is not None:
            try:
                return pending.result()
            except Exception:  # noqa: BLE001 - compiled again here, where the error is raised as is
                pass
        return compile_unit(unit.text, self.opt_level, self.plan)


def start_units(
    units: Iterable[KernelUnit],
    opt_level: int,
    plan: UnitPlan,
    workers: ProcessPoolExecutor | None,
    cache: CompileCache | None,
) -> PendingUnits:
    """Looks each unit up in `cache` and hands the misses to `workers`,
    each as `units` gives it (split_kernel_units: the workers start on the
    first while the others are split)."""
    taken: list[KernelUnit] = []
    keys: list[str] = []
    results: list[UnitResult | Future[UnitResult] | None] = []
    hits = 0
    for unit in units:
        taken.append(unit)
        key = unit_cache_key(unit, opt_level, plan) if cache is not None else ""
        keys.append(key)
        found = _cached_result(cache, key) if cache is not None else None
        if found is not None:
            hits += 1
            results.append(found)
        elif workers is not None:
            results.append(workers.submit(compile_unit, unit.text, opt_level, plan))
        else:
            results.append(None)
    return PendingUnits(taken, opt_level, plan, cache, keys, results, hits)


def unit_cache_key(unit: KernelUnit, opt_level: int, plan: UnitPlan) -> str:
    """The unit's text (computation, shapes, name), its plan, the opt level,
    this CPU, xtc's version and sources (the default schedules among
    them)."""
    import llvmlite.binding as llvm_binding

    from xtc.runtime.compile_cache import xtc_source_digest
    from xtc.runtime.llvm_jit import host_cpu, host_features

    return json.dumps(
        {
            "unit": unit.text,
            "plan": [
                list(plan.before_schedule),
                plan.schedule,
                list(plan.tir_passes),
                plan.serial,
            ],
            "opt_level": opt_level,
            "target": [llvm_binding.get_process_triple(), host_cpu(), host_features()],
            "xtc": __version__,
            "sources": xtc_source_digest(),
        },
        sort_keys=True,
    )


def _entry_payload(result: UnitResult) -> bytes:
    """A cache entry: a JSON line (libgomp or not, remarks), then the object."""
    head = json.dumps(
        {"parallel": result.parallel, "remarks": result.remarks, "steps": result.steps}
    )
    return head.encode() + b"\n" + result.object_data


def _cached_result(cache: CompileCache, key: str) -> UnitResult | None:
    payload = cache.get(KERNELS, key)
    if payload is None:
        return None
    end = payload.find(b"\n")
    try:
        head = json.loads(payload[:end])
        return UnitResult(
            payload[end + 1 :],
            bool(head["parallel"]),
            list(head["remarks"]),
            [str(step) for step in head["steps"]],
        )
    except (ValueError, KeyError, TypeError):
        return None


def _remark(entry: dict[str, str]) -> Remark:
    from xtc.remarks import Remark

    return Remark(
        entry["kind"],  # type: ignore[arg-type]
        entry["category"],
        entry["pass_name"],
        entry["message"],
        entry["function"],
        entry["loop"],
    )
