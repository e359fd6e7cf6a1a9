"""Tuning tasks: the distinct kernels of a model, each known by its workload
key, a structural hash of the kernel before scheduling.

    tasks = extract_tasks(model)          # one per distinct kernel, by weight
    task.space(), task.default()          # its template's knobs
    task.steps(config)                    # the schedule, as xtc-opt -p steps

Two kernels share a key when they print the same once their function name
and SSA value names are set aside: same shapes, dtypes, loop structure
(loop names included: the steps name them) and computation. Identical
kernels of one model, or of two models, are tuned once and share records.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from xtc.analysis.loops import trips_around
from xtc.driver.workload import KERNEL_NAME, kernel_module_text, workload_key
from xtc.ops.schedules import KernelSchedule, kernel_schedule
from xtc.ops.space import Config, KnobValue, Space

if TYPE_CHECKING:
    import onnx

_FLOAT_OPS: dict[type[Operation], int] = {
    arith.AddfOp: 1,
    arith.SubfOp: 1,
    arith.MulfOp: 1,
    arith.DivfOp: 1,
    arith.MaximumfOp: 1,
    arith.MinimumfOp: 1,
    arith.MaxnumfOp: 1,
    arith.MinnumfOp: 1,
    math.FmaOp: 2,
}


def kernel_flops(kernel: FuncOp) -> int:
    """Floating-point operations one call performs: each float add, sub,
    mul, div, min or max counts 1 (fma 2) times the trip counts of the
    loops around it."""
    total = 0
    for op in kernel.walk():
        weight = _FLOAT_OPS.get(type(op))
        if weight is not None:
            total += weight * trips_around(op, kernel)
    return total


@dataclass(frozen=True)
class Task:
    """One distinct kernel to tune: its key, its text (a module holding the
    kernel, named KERNEL_NAME, before scheduling), its template kind, the
    floating-point work of one call, and how many kernels of the model
    share it (`occurrences`) under which names (`functions`)."""

    key: str
    kernel_text: str
    kind: str
    flops: int
    occurrences: int = 1
    functions: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """A readable name: the first kernel's function name, and the key."""
        first = self.functions[0] if self.functions else KERNEL_NAME
        return f"{first} ({self.key[:8]})"

    def schedule(self) -> KernelSchedule:
        return _schedule_of(self.kernel_text)

    def space(self) -> Space:
        return self.schedule().space()

    def default(self) -> Config:
        return self.schedule().default()

    def steps(self, config: Mapping[str, KnobValue]) -> list[str]:
        """The schedule steps of `config` for the kernel in `kernel_text`."""
        return self.schedule().steps(config)

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "kind": self.kind,
            "flops": self.flops,
            "occurrences": self.occurrences,
            "functions": list(self.functions),
        }


@functools.lru_cache(maxsize=64)
def _schedule_of(kernel_text: str) -> KernelSchedule:
    return kernel_schedule(parse_kernel(kernel_text))


def parse_kernel(kernel_text: str) -> FuncOp:
    """The kernel function of a task's module text."""
    from xtc.driver.textual_ir import parse_module

    module = parse_module(kernel_text)
    kernel = module.body.block.first_op
    assert isinstance(kernel, FuncOp), kernel
    return kernel


def kernel_tasks(module: ModuleOp, entry: str) -> list[Task]:
    """The tasks of a tir-level model module (after convert-te-to-tir): one
    per distinct kernel, most total work first; a kernel occurs once per
    call in the model function."""
    calls: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            callee = op.callee.root_reference.data
            calls[callee] = calls.get(callee, 0) + 1
    found: dict[str, Task] = {}
    for kernel in module.ops:
        if not isinstance(kernel, FuncOp) or kernel.sym_name.data == entry:
            continue
        if not kernel.body.blocks:
            continue
        key = workload_key(kernel)
        name = kernel.sym_name.data
        count = calls.get(name, 1)
        if key in found:
            task = found[key]
            found[key] = Task(
                key,
                task.kernel_text,
                task.kind,
                task.flops,
                task.occurrences + count,
                (*task.functions, name),
            )
            continue
        schedule = kernel_schedule(kernel)
        found[key] = Task(
            key, kernel_module_text(kernel), schedule.kind, kernel_flops(kernel), count, (name,)
        )
    return sorted(found.values(), key=lambda t: -t.flops * t.occurrences)


def tir_model(
    model: onnx.ModelProto | str | os.PathLike[str],
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> tuple[ModuleOp, str]:
    """A model at the tir level, before scheduling (the compile's passes up
    to SCHEDULED_AFTER at -O3), and its entry function's name."""
    from xtc import interp
    from xtc.driver.compiler import SCHEDULED_AFTER, pipeline
    from xtc.driver.pipelines import apply_pipeline
    from xtc.frontend.onnx import import_model

    module = import_model(model, input_shapes)
    entry = interp.entry_function(module).sym_name.data
    for name in pipeline(3).split(","):
        apply_pipeline(module, name)
        if name == SCHEDULED_AFTER:
            break
    return module, entry


def extract_tasks(
    model: onnx.ModelProto | str | os.PathLike[str],
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> list[Task]:
    """The tuning tasks of an ONNX model (see `kernel_tasks`)."""
    module, entry = tir_model(model, input_shapes)
    return kernel_tasks(module, entry)
