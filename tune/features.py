"""Features of a task's configs for the cost model, computed without
building anything: from the knob values and the loop nests the task's
templates describe (extents, arguments), with the config's schedule steps
replayed on a table of loop names and extents (no IR is touched).

    features = TaskFeatures(task)
    features.names                     # one name per column
    features.of(config)                # a float vector, len(features.names) long
    features.of_indices([0, 7, 12])    # rows for points of task.space()
    features.of_record(record)         # a measured record's vector, from its own steps

Each nest gives the same columns for every task whose nest has the same
template kind, so a task's vector has a fixed length per task kind
(`Task.kind`, e.g. "loops+micro_kernel"): data from one task of a kind
trains a model that ranks another task of that kind (transfer).

The columns of a nest are
- *knob* columns: the template's knob values, a string knob split into its
  numbers ("32:16:2" -> split 32, lanes 16, vectors 2), a knob the nest lacks
  0 beside a flag saying whether it has it;
- *derived* columns: what the knobs mean for the nest (the register tile's
  rows x vectors, accumulators and spilled registers, a tile's arithmetic
  intensity, the outer loops' extents, whether packing or prefetching
  really happens);
- *loop* columns (AutoTVM's itervar features in small): from the steps
  replayed on the loop table, the parallel loop's extent, the forks outside
  it and the work inside it, vector lanes, unrolled iterations, the cache
  tile, packed operands and the prefetch distance.

A few task columns (FLOPs, operand bytes, their ratio) come first.

A record's vector must describe what was measured: where its recorded steps
differ from today's recipe of its config (the template changed since), the
loop columns of each nest whose steps differ are replayed from the recorded
steps instead (`of_record`). The steps are shared out among the nests by the
loops they name (`nest_of_step`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from xtc.analysis.types import ElementSizeError, element_bytes
from xtc.dialects.tir import ForOp
from xtc.driver.records import Record
from xtc.ops.schedules import (
    ElementwiseTemplate,
    MicroKernelTemplate,
    NestTemplate,
    VectorBlocksTemplate,
)
from xtc.ops.space import Config, KnobValue
from xtc.tune.task import Task

VECTOR_REGISTERS = 32
"""Vector registers of the target (AVX-512): a tile that needs more spills."""
THREAD_COUNTS = (2, 8)
"""Thread counts whose load imbalance on the parallel loop is a column."""

Row = dict[str, float]


def _log2(value: float) -> float:
    """log2(1 + value): extents and bytes span orders of magnitude."""
    return math.log2(1.0 + max(0.0, value))


def _imbalance(extent: int, threads: int) -> float:
    """Idle share of `threads` sharing `extent` iterations (0: even)."""
    if extent <= 0:
        return 0.0
    rounds = -(-extent // threads)
    return 1.0 - extent / (rounds * threads)


def _nest_loops(op: Operation) -> list[ForOp]:
    return [inner for inner in op.walk() if isinstance(inner, ForOp) and inner is not op]


def _inner_trips(innermost: ForOp) -> int:
    """Iterations of the loops inside the innermost spatial loop: for each
    loop with no loop inside, the product of the extents around it (1 when
    there is no inner loop)."""
    total = 0
    for loop in _nest_loops(innermost):
        if _nest_loops(loop):
            continue
        trips, parent = 1, loop
        while isinstance(parent, ForOp) and parent is not innermost:
            trips *= parent.extent
            parent = parent.parent_op()
        total += trips
    return max(total, 1)


def _argument_bytes(func: FuncOp) -> list[int]:
    """Bytes of each kernel argument (0 for a non-buffer, or a buffer whose
    element type has no byte size)."""
    sizes: list[int] = []
    for arg in func.body.block.args:
        kind = arg.type
        each = 0
        if isinstance(kind, MemRefType):
            try:
                each = element_bytes(kind.get_element_type()) * math.prod(kind.get_shape())
            except ElementSizeError:
                each = 0
        sizes.append(each)
    return sizes


_STEP = re.compile(r"^(?P<name>[\w-]+)\{(?P<options>.*)\}$")


def parse_step(step: str) -> tuple[str, dict[str, str]]:
    """`tir-split{func=kernel loop=i1 factor=16}` -> ("tir-split", {...})."""
    match = _STEP.match(step.strip())
    if match is None:
        return step.strip(), {}
    options = dict(part.split("=", 1) for part in match["options"].split() if "=" in part)
    return match["name"], options


def step_loops(step: str) -> list[str]:
    """The loops a step names: its `loop`, then its `order`'s, then `at`."""
    _, options = parse_step(step)
    names = [options["loop"]] if "loop" in options else []
    names += options["order"].split(",") if "order" in options else []
    return names + ([options["at"]] if "at" in options else [])


def nest_of_step(step: str, nests: Sequence[frozenset[str]]) -> int | None:
    """The nest (by position) whose loops the step's first named loop is or
    was made from: the nest with the longest loop name that it equals or
    starts with before an underscore (`i1_1_i_o` is nest 1's `i1_1`, not
    nest 0's `i1`: primitives add letters, `_o` `_i` `_init` `_wb` `_at`,
    and a kernel numbers its later nests' loops `_1`, `_2`). None for a
    step that names no loop of any nest."""
    for name in step_loops(step):
        best: tuple[int, int] | None = None
        for i, names in enumerate(nests):
            for loop in names:
                if (name == loop or name.startswith(f"{loop}_")) and (
                    best is None or len(loop) > best[1]
                ):
                    best = (i, len(loop))
        if best is not None:
            return best[0]
    return None


class LoopTable:
    """The loops of one nest as a schedule's steps leave them: the spatial
    loops in nesting order, every loop's extent by name, and what the steps
    annotate (parallel, vectorized, unrolled, cached, packed, prefetched).
    Only names and extents are followed; nothing is checked (the steps were
    made by the template for this nest)."""

    SUFFIXES = ("_init", "_wb")
    """Copies of a tile loop that tir-cache-write makes (same extent)."""

    def __init__(self, spatial: Sequence[tuple[str, int]], inner: Mapping[str, int]) -> None:
        self.order = [name for name, _ in spatial]
        self.extents = {**inner, **dict(spatial)}
        self.parallel: str | None = None
        self.lanes = 1
        self.unrolled = 1
        self.unroll_steps = 0
        self.tile = 0
        self.packed: list[tuple[str, int]] = []
        self.prefetch = 0

    def extent(self, name: str) -> int:
        for suffix in self.SUFFIXES:
            if name not in self.extents and name.endswith(suffix):
                name = name[: -len(suffix)]
        return self.extents.get(name, 1)

    def apply(self, step: str) -> None:
        kind, options = parse_step(step)
        loop = options.get("loop", "")
        if kind == "tir-split":
            factor = int(options["factor"])
            extent = self.extent(loop)
            self.extents[f"{loop}_o"] = -(-extent // factor)
            self.extents[f"{loop}_i"] = factor
            if loop in self.order:
                at = self.order.index(loop)
                self.order[at : at + 1] = [f"{loop}_o", f"{loop}_i"]
        elif kind == "tir-reorder":
            named = options["order"].split(",")
            slots = [i for i, name in enumerate(self.order) if name in named]
            for slot, name in zip(slots, [n for n in named if n in self.order], strict=True):
                self.order[slot] = name
        elif kind == "tir-parallel":
            self.parallel = loop
        elif kind == "tir-vectorize":
            self.lanes = max(self.lanes, self.extent(loop))
        elif kind == "tir-unroll":
            self.unrolled *= self.extent(loop)
            self.unroll_steps += 1
        elif kind == "tir-cache-write" and loop in self.order:
            self.tile = math.prod(self.extent(n) for n in self.order[self.order.index(loop) + 1 :])
        elif kind == "tir-cache-read":
            self.packed.append((loop, int(options.get("buffer", -1))))
        elif kind == "tir-prefetch":
            self.prefetch = int(options.get("distance", 0))

    def outside(self, name: str) -> int:
        """Iterations of the spatial loops around `name`."""
        if name not in self.order:
            return 1
        return math.prod(self.extent(n) for n in self.order[: self.order.index(name)])

    def inside(self, name: str) -> int:
        """Iterations of the spatial loops inside `name`."""
        if name not in self.order:
            return 1
        return math.prod(self.extent(n) for n in self.order[self.order.index(name) + 1 :])


class NestFeatures:
    """The columns of one nest of a `NestTemplate` (the parallel grain and
    the loop columns); subclasses add their template's columns."""

    def __init__(self, template: NestTemplate, arguments: Sequence[int]) -> None:
        self.template = template
        self.arguments = arguments
        nest = template.nest
        self.spatial = [(loop.loop_name.data, loop.extent) for loop in nest.spatial]
        innermost = nest.spatial[-1]
        self.inner = {loop.loop_name.data: loop.extent for loop in _nest_loops(innermost)}
        self.inner_trips = _inner_trips(innermost)
        self.iterations = math.prod(extent for _, extent in self.spatial)

    @property
    def loop_names(self) -> frozenset[str]:
        """The names of the nest's loops before any step."""
        return frozenset([name for name, _ in self.spatial] + list(self.inner))

    def row(self, config: Mapping[str, KnobValue], steps: Sequence[str] | None = None) -> Row:
        """The nest's columns for `config`, its loop columns from `steps`
        (the nest's template's recipe of `config` when None)."""
        table = LoopTable(self.spatial, self.inner)
        steps = self.template.recipe(config) if steps is None else steps
        for step in steps:
            table.apply(step)
        return {**self.knob_row(config), **self.loop_row(table, len(steps))}

    def knob_row(self, config: Mapping[str, KnobValue]) -> Row:
        return {"parallel_grain": float(config["parallel_grain"])}

    def loop_row(self, table: LoopTable, steps: int) -> Row:
        parallel = table.parallel
        extent = table.extent(parallel) if parallel is not None else 0
        forks = table.outside(parallel) if parallel is not None else 0
        work = (table.inside(parallel) if parallel is not None else self.iterations) * (
            self.inner_trips
        )
        packed_bytes = sum(
            self.arguments[b] for _, b in table.packed if 0 <= b < len(self.arguments)
        )
        packs = sum(table.outside(loop) * table.extent(loop) for loop, _ in table.packed)
        row = {
            "iterations": _log2(self.iterations),
            "inner_trips": _log2(self.inner_trips),
            "spatial_loops": float(len(self.spatial)),
            "innermost": float(table.extent(table.order[-1])) if table.order else 0.0,
            "parallel_extent": float(extent),
            "parallel_forks": _log2(forks),
            "parallel_work": _log2(work),
            **{f"imbalance_{t}": _imbalance(extent, t) for t in THREAD_COUNTS},
            "lanes": float(table.lanes),
            "unrolled": float(table.unrolled),
            "unroll_steps": float(table.unroll_steps),
            "cache_tile": float(table.tile),
            "packed_operands": float(len(table.packed)),
            "packed_bytes": _log2(packed_bytes),
            "packs": _log2(packs),
            "prefetch_distance": float(table.prefetch),
            "steps": float(steps),
        }
        return row


class ElementwiseFeatures(NestFeatures):
    """An elementwise nest: the vector width and what it leaves."""

    template: ElementwiseTemplate

    def knob_row(self, config: Mapping[str, KnobValue]) -> Row:
        width = int(config["vector_width"])
        extent = self.spatial[-1][1]
        return {
            "vector_width": float(width),
            "scalar": float(width == 0),
            "row_extent": float(extent),
            "vectors_per_row": float(extent // width) if width else 0.0,
            "widths": float(len(self.template.widths)),
            **super().knob_row(config),
        }


class PrefetchingFeatures(NestFeatures):
    """A reduction nest that may prefetch an activation."""

    def prefetch_row(self, config: Mapping[str, KnobValue]) -> Row:
        target = getattr(self.template, "prefetch_target", None)
        if target is None:
            return {"has_prefetch": 0.0, "prefetch": 0.0, "prefetch_reduction": 0.0}
        distance = int(config["prefetch"])
        reduction = target[1].extent
        return {
            "has_prefetch": 1.0,
            "prefetch": float(distance),
            "prefetch_reduction": float(reduction),
        }


class MicroKernelFeatures(PrefetchingFeatures):
    """A register-blocked micro-kernel: the columns' split, the tile, the
    packing and unrolling choices and what they mean for the nest."""

    template: MicroKernelTemplate

    def __init__(self, template: MicroKernelTemplate, arguments: Sequence[int]) -> None:
        super().__init__(template, arguments)
        self.vector_extent = template.vector.extent
        self.block_extent = template.block.extent
        rows_argument = template.rows_argument
        self.rows_bytes = rows_argument[1] if rows_argument is not None else 0
        self.unrollable = template.unrollable.extent if template.unrollable is not None else 0

    def knob_row(self, config: Mapping[str, KnobValue]) -> Row:
        template = self.template
        split, lanes, vectors = (int(part) for part in str(config["columns"]).split(":"))
        rows = int(config["rows"])
        accumulators = rows * vectors
        # Per reduction step: one broadcast per row, one load per vector.
        loads = rows + vectors * lanes
        outer, position = template.outer_loops(split, lanes, vectors)
        has_rows = template.rows_argument is not None
        return {
            "split": float(split),
            "lanes_knob": float(lanes),
            "vectors": float(vectors),
            "rows": float(rows),
            "accumulators": float(accumulators),
            "spilled": float(max(0, accumulators + vectors + 1 - VECTOR_REGISTERS)),
            "tile_intensity": 2.0 * accumulators * lanes / loads,
            "block_extent": float(self.block_extent),
            "vector_extent": float(self.vector_extent),
            "column_blocks": float(self.vector_extent // split),
            "row_blocks": float(-(-self.block_extent // rows)),
            "row_tail": float(self.block_extent % rows),
            "outer_loops": float(len(outer)),
            "outer_iterations": _log2(math.prod(extent for _, extent in outer)),
            "has_pack_rows": float(has_rows),
            "pack_rows": float(int(config.get("pack_rows", 0))),
            "rows_pay": float(has_rows and template.rows_pay(outer, position)),
            "rows_bytes": _log2(self.rows_bytes),
            "has_pack_panel": float(template.panel_exists),
            "pack_panel": float(int(config.get("pack_panel", 0))),
            "panel_bytes": _log2(4 * split * self.inner_trips),
            "has_unroll": float(self.unrollable > 0),
            "unroll_reduction": float(int(config.get("unroll_reduction", 0))),
            "unrollable": float(self.unrollable),
            "reduction_block": float(int(config.get("reduction_block", 0))),
            **self.prefetch_row(config),
            **super().knob_row(config),
        }


class VectorBlocksFeatures(PrefetchingFeatures):
    """A matrix-vector micro-kernel: vectors of the one vector loop."""

    template: VectorBlocksTemplate

    def knob_row(self, config: Mapping[str, KnobValue]) -> Row:
        template = self.template
        vectors = int(config["vectors"])
        columns = template.vector.extent // template.width
        return {
            "width": float(template.width),
            "vectors": float(vectors),
            "vector_extent": float(template.vector.extent),
            "blocks": float(columns // vectors),
            "tail": float(columns % vectors),
            **self.prefetch_row(config),
            **super().knob_row(config),
        }


def nest_features(template: NestTemplate, arguments: Sequence[int]) -> NestFeatures:
    """The featurizer of a template (by its class, most specific first)."""
    if isinstance(template, MicroKernelTemplate):
        return MicroKernelFeatures(template, arguments)
    if isinstance(template, VectorBlocksTemplate):
        return VectorBlocksFeatures(template, arguments)
    if isinstance(template, ElementwiseTemplate):
        return ElementwiseFeatures(template, arguments)
    return NestFeatures(template, arguments)


def _nest_config(config: Mapping[str, KnobValue], nest: int) -> Config:
    prefix = f"{nest}."
    return {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}


class TaskFeatures:
    """The feature vectors of one task's configs (see the module doc),
    cached by point index."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.space = task.space()
        schedule = task.schedule()
        self.kind = schedule.kind
        self._nests: list[NestFeatures] = []
        arguments: list[int] = []
        if schedule.templates:
            func = schedule.templates[0].nest.spatial[0].parent_op()
            assert isinstance(func, FuncOp), func
            arguments = _argument_bytes(func)
            self._nests = [nest_features(t, arguments) for t in schedule.templates]
        total = sum(arguments)
        self._task_row: Row = {
            "task.flops": _log2(task.flops),
            "task.bytes": _log2(total),
            "task.intensity": task.flops / total if total else 0.0,
            "task.nests": float(len(self._nests)),
        }
        self.names: tuple[str, ...] = tuple(self._row(self.space.point(0)))
        self._cache: dict[int, np.ndarray] = {}

    @property
    def width(self) -> int:
        return len(self.names)

    def _row(
        self, config: Mapping[str, KnobValue], steps: Mapping[int, Sequence[str]] | None = None
    ) -> Row:
        """The row of `config`; a nest in `steps` takes its loop columns from
        those steps instead of its recipe."""
        steps = steps or {}
        row = dict(self._task_row)
        for i, nest in enumerate(self._nests):
            for name, value in nest.row(_nest_config(config, i), steps.get(i)).items():
                row[f"{i}.{nest.template.kind}.{name}"] = value
        return row

    def steps_by_nest(self, steps: Sequence[str]) -> list[list[str]]:
        """A kernel's steps shared out among its nests (`nest_of_step`); a
        step naming no nest's loop is left out."""
        names = [nest.loop_names for nest in self._nests]
        found: list[list[str]] = [[] for _ in self._nests]
        for step in steps:
            nest = nest_of_step(step, names)
            if nest is not None:
                found[nest].append(step)
        return found

    def stale_nests(self, record: Record) -> dict[int, list[str]]:
        """The nests whose steps in `record` differ from today's recipe of
        its config, each with its recorded steps (none for a record that
        kept no steps, or whose steps are today's)."""
        today = self.task.steps(record.config)
        if not record.is_stale(today):
            return {}
        recorded = record.measured_steps()
        pairs = zip(self.steps_by_nest(recorded), self.steps_by_nest(today), strict=True)
        return {i: mine for i, (mine, now) in enumerate(pairs) if mine != now}

    def of_record(self, record: Record) -> np.ndarray:
        """The vector of what `record` measured: its config's (`of`), but
        the loop columns of a nest whose recorded steps differ from today's
        recipe replayed from the recorded steps."""
        stale = self.stale_nests(record)
        if not stale:
            return self.of(record.config)
        self.space.check(record.config)
        row = self._row(record.config, stale)
        return np.fromiter(row.values(), dtype=np.float32, count=self.width)

    def of(self, config: Mapping[str, KnobValue]) -> np.ndarray:
        """The vector of `config` (a point of the task's space)."""
        return self.of_indices([self.space.index(config)])[0]

    def of_indices(self, indices: Sequence[int]) -> np.ndarray:
        """The vectors of the points `indices` of the space, one row each."""
        rows = np.empty((len(indices), self.width), dtype=np.float32)
        for r, index in enumerate(indices):
            vector = self._cache.get(index)
            if vector is None:
                row = self._row(self.space.point(index))
                vector = np.fromiter(row.values(), dtype=np.float32, count=self.width)
                self._cache[index] = vector
            rows[r] = vector
        return rows
