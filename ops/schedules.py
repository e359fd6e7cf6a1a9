"""Default x86 schedules: for each kernel at the tir level, the schedule
primitives (an `xtc-opt -p` pipeline naming the kernel and its loops) that
make it fast without tuning.

    default_schedule(kernel) -> ["tir-split{func=conv2d_3 loop=i1_1 factor=16}", ...]

Every top-level loop nest of the kernel gets one recipe:

- a reduction nest (spatial loops, a scalar accumulator, reduction loops,
  an epilogue and one store: conv2d, matmul, dense, batch_matmul, pooling)
  becomes a register-blocked micro-kernel. The vector loop is the spatial
  loop that is the contiguous (last) index of a weight-like operand (conv2d
  with blocked OIHW32o weights: output channels, through `oc rem 32`;
  matmul: output columns), else of the output (depthwise conv, pooling:
  the output row). Its columns are split in blocks of two 16-lane vectors
  (or one vector of 16, 8 or 4 lanes, whichever divides; a loop that none
  divides is vectors of its largest divisor from 5 to 16 lanes: a 7-wide
  row one vector of 7, a 27-wide pooled row three of 9; so is a loop whose
  largest such divisor holds twice the lanes of the widest width that
  divides: a 28-wide row two vectors of 14, not seven of 4; or any more
  lanes, when a window is read at a stride: a 56-wide row of a stride-2
  max pool four vectors of 14, not seven of 8); the next spatial
  loop (or, where an operand is read along both it and the vector loop,
  the innermost that none is: a Winograd input transform's positions, not
  its tile columns) is register-blocked by up to 12 rows for two vectors, 14 for one
  (the largest dividing count; a 13-wide row gets one vector of 13 rows, the
  block's second vector an outer loop; 8 rows of two vectors when fewer
  than 4 divide, a 111-wide row; the rows no tile height divides peeled
  and tiled on their own). The accumulators become a rows × vectors
  register tile (`tir-cache-write`) with the reduction loops outside it
  (a stride-1 window's kw moved out of the innermost place when the
  broadcasts its unrolled columns share would spill the tile: 11 rows of
  two vectors over a 55-wide row take kh innermost),
  the rows and vectors unrolled, the lanes vectorized; the epilogue runs once per tile,
  its stores along the output row when that is contiguous (NCHW). With one
  output row (a matrix-vector product) the tile is several vectors of the
  columns instead. Operand panels are packed (`tir-cache-read`): matmul's
  B, a column block at a time; an activation read along the blocked row
  (a 1x1 conv's input), a row at a time with the rows looped outside the
  column blocks, when re-reading it per column block would move more bytes
  than re-reading the weights per row; otherwise the reduction prefetches
  that activation 32 steps ahead (`tir-prefetch`), the next channel
  planes being a stride no hardware prefetcher follows. A conv that reads
  its input unpadded at stride 1 along the output row (a 1x1 conv), with a
  reduction of at most 32 steps or weight blocks narrower than 16 lanes,
  gets the tile turned over (`_output_row`): vectors along the output row
  (its largest divisor up to 16 lanes, two where they divide it), rows over
  the output channels of one weight block, the write-back a plain store. A
  conv reading a blocked activation (NCHW32c) in place (a 1x1 conv)
  prefetches its weights a page ahead once they pass 16 KB a column block
  (WEIGHT_PREFETCH_BYTES); past 32 KB, read by several tiles, it sweeps its
  channel blocks 16 KB of weights at a time with every tile
  (`tir-hoist-reduction`, REDUCTION_BLOCK_BYTES), each block read from L1;
  its rows go outside its weight blocks when re-reading the activation per
  weight block would move more bytes than re-reading the weights per row;
- a reduction that reads a row along its innermost reduction loop (softmax's
  maximum and sum, layer norm's mean and variance, global pooling) keeps
  its rows in parallel and splits that loop into partial accumulators
  (`tir-rfactor`: 64 of them, or fewer to keep two iterations, or one
  vector of the row's largest divisor up to 16 lanes), vectorized, then
  combined pairwise in vector steps;
- an elementwise nest stored along its innermost loop has that loop split
  by the widest vector width dividing it and vectorized (with
  tir-expand-math in the pipeline, exp and erf vectorize too); a loop longer
  than 16 that no width divides (the padded copy before a strided depthwise
  conv or pool, 113 or 114 wide) is split by 16 and its tail peeled (one
  vector of its own when it has 5 lanes or more: a 30-wide copy's 14); a
  shorter one that no width divides is one vector of its largest divisor
  from 5 to 16 lanes (a 14-wide row, 14 lanes);
- every nest runs its first loop of more than one iteration in parallel
  (before the prefetch step, which only adds hints).

A primitive that refuses (a shape the recipe did not foresee) only stops
that nest's recipe there: every primitive keeps the numbers, so a partly
scheduled kernel is still right.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import permutations
from math import prod
from typing import cast

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerType, MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from xtc.analysis.loops import constant_int, depends_on
from xtc.analysis.types import ElementSizeError, element_bytes
from xtc.dialects.tir import ForOp
from xtc.ops.space import Config, Knob, KnobValue, Space, prefixed
from xtc.passes.tir_compute_at import SUFFIX as COMPUTE_AT_SUFFIX
from xtc.passes.tir_loops import ScheduleError
from xtc.passes.tir_reuse_term import TirReuseTerm, find_reuse
from xtc.passes.tir_rfactor import halving_stages

VECTOR_WIDTHS = (16, 8, 4)
"""Lanes of f32 tried, widest first (16 = one AVX-512 register)."""
REDUCTION_WIDTHS = (64, 32, 16, 8, 4)
"""Partial accumulators tried for a row reduction, most first: 64 are four
AVX-512 registers, four independent chains (BERT's 12x128x128 softmax:
0.043 ms against 0.049 with 16), the widest that leaves two iterations."""
BLOCK_FACTORS = (14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2)
"""Register-block sizes tried for the blocked loop, largest dividing first
(AVX-512 has 32 vector registers: 14 accumulators leave room for the
weight vector and the broadcasts)."""
MIN_DIVIDING_ROWS = 4
"""The fewest rows dividing the blocked loop a two-vector tile takes; fewer
(SqueezeNet 1.1's 111-wide conv1: 3 rows) and the tile is TAILED_ROWS high,
the remainder rows a tile of their own."""
TAILED_ROWS = 8
"""Rows of a two-vector tile over a loop that no good row count divides
(the 111-wide conv1: 8 rows and a 7-row tail, 0.30 ms against 0.40 with
3 rows; 11 or 12 rows of two vectors measured 2-3x slower there, spilling)."""
MIN_WHOLE_VECTOR = 5
"""The fewest lanes of a vector for a loop no vector width divides
(MobileNet's 7- and 14-wide depthwise rows, one vector of their own length:
3x faster than scalar code; AlexNet's 27-wide pooled rows, three of 9)."""
MAX_ACCUMULATORS = 24
"""Rows × vectors of a register tile: AVX-512's 32 vector registers less
the weight vectors and the broadcasts (14 rows of one vector, 12 of two)."""
PREFETCH_DISTANCE = 32
"""Reduction steps ahead that a conv prefetches its input (measured on
ResNet-50: 16 and 64 gained less than 32)."""
PARALLEL_ITERATIONS = 8
"""Iterations wanted of the parallel loop, to share among the threads."""
MAX_PARALLEL_LAUNCHES = 8
"""The most times a kernel call may start its parallel loop (the product of
the extents outside it). Past this, the fewest outermost loops whose
iterations reach the grain are fused into the parallel loop, started once.
Each start forks and joins the team, about 2.5 us on 2 threads (Xeon): the
Winograd stages' loops over the 36 transform positions and the channel
blocks are short (6 and 2-8), and the first loop of 8 iterations lay inside
12-216 of theirs, 337 starts a call in ResNet-50's 128-channel kernel (in
the model, 2 threads: 1.37 -> 0.55 ms fused; 1 thread unchanged)."""
PLANE_COPY_MIN_BYTES = 1 << 20
"""A padded copy larger than this (Zen 5's L2 per core) is computed per
plane of its reader (`_copy_loop`), in cache when read."""
STRIDED_READ_RATIO = 2
"""A copy holding this many times the elements its reader stores (a
stride-2 depthwise conv: 4x) is computed per plane at any size (MobileNet-v2's
192x28x28 -> 14x14: 0.031 -> 0.021 ms). Not a pool's: its window's maxima
are a few instructions per plane row, and a small strided copy per plane
lost (GoogLeNet's 832x15x15 -> 7x7 max pool 0.0166 -> 0.0194 ms)."""
SMALL_PLANE_ELEMENTS = 100
"""A padded copy whose planes hold at most this many elements (a 7- or
8-wide map padded by 1) is computed per plane of a stride-1 pool reading
it, at any size: GoogLeNet's 832x7x7 3x3 max pool 0.022 -> 0.015 ms on one
thread, 4x4 to 8x8 maps 35-40% faster; a 14-wide map's 16x16 planes lost
4-10%, a 3x3/2 pool's over a 9x9 plane 33%, a 5x5 pool's 11x11 ones 40%."""
TILE_ROWS = (16, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2)
"""Register-tile rows a tuner may try (the defaults come from BLOCK_FACTORS)."""
MAX_UNROLLED_REDUCTION = 8
"""The longest innermost reduction loop a tuner may unroll."""
REDUCTION_BLOCKS = (64, 128, 256, 512)
"""Blocks of the outermost reduction loop (a conv's input channels, a
matmul's K) that a tuner may sweep every tile with (`tir-hoist-reduction`),
those dividing the loop and shorter than it. On Zen 5 (1 MB of L2 a core,
2 threads) none beat the whole loop on ResNet-50's heavy 3x3 convs or on
1024^3, 128x768x3072 and 384x4096x1024 matmuls (1-10% slower, hot and
cold): their operand panels already stay in L2 and the default runs near
the FMA peak; each block reloads and stores the tile's accumulators."""
SHORT_REDUCTION_BLOCKS = (2, 4, 8, 16, 32)
"""Blocks of a short outermost reduction loop (a blocked activation's
channel blocks, 32 channels a step) that a tuner may try too, those whose
weights per column block come to MIN_REDUCTION_BLOCK_BYTES or more."""
WEIGHT_PREFETCH_BYTES = 4 << 10
"""How far ahead a micro-kernel over a blocked activation prefetches its
weights along a channel block (`tir-prefetch` in the channel loop), when a
column block's weights outgrow REDUCTION_BLOCK_BYTES: a page ahead, so
that the stream runs on past the page ends where the hardware prefetcher
stops. ResNet-50's twelve such 1x1 convs inside the model (Xeon, 2
threads, per-call cycle counters, two builds of each alternated, ms per
run): 512->2048 at 7x7 (3 calls) 1.77 -> 1.43, 2048->512 at 7x7 1.18 ->
0.98, the 1024->2048 stride-2 projection 1.14 -> 0.94, 256->1024 at 14x14
(6 calls) 2.59 -> 2.45, 1024->256 at 14x14 (5 calls) 2.27 -> 2.15, none
slower beyond 2%; in a second run their time over the unchanged kernels'
went from 0.854 and 0.839 to 0.812 and 0.813. The 3x3 convs read a padded
copy, not the argument, and are left out: prefetching their weights 4 KB
ahead made layer 4's (7x7) 8% faster but layer 2's and 3's 8-9% slower."""
MIN_REDUCTION_BLOCK_BYTES = 4 << 10
"""The fewest weights per column block of a short reduction block."""
REDUCTION_BLOCK_BYTES = 16 << 10
"""The weights per column block of the reduction blocks a micro-kernel
over a blocked activation sweeps by default, when a column block's whole
weights are more than twice this and several tiles read them: the block
then stays in L1 for all the tiles, each of which would otherwise stream
the column block's weights from L2, or, in a model, from L3. ResNet-50's
eight such convs (1x1, 512 to 2048 input channels: blocks of 4 steps of 32
channels), timed inside the model (Xeon, 2 threads, per-call cycle
counters, two builds of each alternated, ms per run): 1024->256 at 14x14
(5 calls) 3.11 -> 2.67, 512->256 at 28x28 1.22 -> 1.00, 2048->512 at 7x7
(2 calls) 1.43 -> 1.33, 1024->512 at 14x14 1.14 -> 1.02, 512->128 at 28x28
(3 calls) 1.61 -> 1.53, the stride-2 projections 1.10 -> 1.06 and 1.32 ->
1.29, 512->2048 at 7x7 unchanged (2.00 -> 1.99); the whole model 41.0 ->
40.1 ms. Standalone (flushed caches) the gain is within the noise."""


@dataclass(frozen=True)
class Nest:
    """A top-level loop nest: its perfectly nested spatial loops and, for a
    reduction nest, the rank-0 accumulator under the innermost one."""

    spatial: tuple[ForOp, ...]
    accumulator: memref.AllocaOp | None
    store: memref.StoreOp | None


def default_schedule(kernel: FuncOp) -> list[list[str]]:
    """The recipe of each top-level nest of `kernel` (see module doc): its
    templates at their default configs."""
    schedule = kernel_schedule(kernel)
    return [recipe for recipe in schedule.recipes(schedule.default()) if recipe]


def analyse(top: ForOp) -> Nest:
    spatial = [top]
    while True:
        inner = [op for op in spatial[-1].body.block.ops]
        if len(inner) == 1 and isinstance(inner[0], ForOp):
            spatial.append(inner[0])
            continue
        break
    body = list(spatial[-1].body.block.ops)
    accumulator = next(
        (op for op in body if isinstance(op, memref.AllocaOp) and _rank(op.memref.type) == 0),
        None,
    )
    stores = [op for op in body if isinstance(op, memref.StoreOp)]
    store = stores[-1] if stores else None
    return Nest(tuple(spatial), accumulator, store)


# ------------------------------------------------------------- templates


class NestTemplate:
    """A nest's schedule template: the knobs it can turn (`knobs`), the
    choice today's heuristics make (`default`), and the steps of any choice
    (`recipe`, `xtc-opt -p` strings naming the kernel's loops). A choice a
    primitive refuses is an invalid config, never a wrong kernel: every
    primitive keeps the numbers."""

    kind = "loops"

    def __init__(self, func: str, nest: Nest) -> None:
        self.func = func
        self.nest = nest

    def knobs(self) -> tuple[Knob, ...]:
        return (_GRAIN,)

    def default(self) -> Config:
        return {"parallel_grain": PARALLEL_ITERATIONS}

    def recipe(self, config: Mapping[str, KnobValue]) -> list[str]:
        outer = [(_name(loop), loop.extent) for loop in self.nest.spatial]
        return self.parallel(outer, config)

    def parallel(self, outer: list[tuple[str, int]], config: Mapping[str, KnobValue]) -> list[str]:
        """The step that runs one of the `outer` loops in parallel (chosen
        by the config's grain), if any has more than one iteration."""
        grain = int(config["parallel_grain"])
        parallel = _parallel_loop(outer, grain)
        if parallel is None:
            return []
        names = [name for name, _ in outer]
        at = names.index(parallel)
        if prod(extent for _, extent in outer[:at]) <= MAX_PARALLEL_LAUNCHES:
            return [f"tir-parallel{{func={self.func} loop={parallel}}}"]
        # the fewest outermost loops whose iterations reach the grain, fused
        last, iterations = 0, outer[0][1]
        while iterations < grain and last < at:
            last += 1
            iterations *= outer[last][1]
        steps, fused = [], names[last]
        for name in reversed(names[:last]):  # the innermost pair first: each outer loop holds one
            steps.append(f"tir-fuse{{func={self.func} outer={name} inner={fused}}}")
            fused = f"{name}_{fused}"
        return [*steps, f"tir-parallel{{func={self.func} loop={fused}}}"]


_GRAIN = Knob(
    "parallel_grain",
    (2, 4, 8, 16, 32),
    "the first outer loop with at least this many iterations runs in parallel "
    "(else the one with the most)",
)


class ElementwiseTemplate(NestTemplate):
    """An elementwise nest stored along its innermost loop: that loop split
    by a vector width (0: left scalar), the inner part vectorized."""

    kind = "elementwise"

    def __init__(self, func: str, nest: Nest, widths: tuple[int, ...]) -> None:
        super().__init__(func, nest)
        self.widths = widths

    @staticmethod
    def widths_for(nest: Nest) -> tuple[int, ...]:
        """The vector widths dividing the innermost loop, when the nest is
        elementwise and stores along it; () otherwise. A loop longer than
        the widest width that no width divides (a padded copy's 113- or
        114-wide rows) takes the widest, its remainder a peeled tail (one
        vector when it has MIN_WHOLE_VECTOR lanes or more, else scalar);
        a shorter one, one vector of its largest divisor from
        MIN_WHOLE_VECTOR lanes (DenseNet's 14- and 7-wide BN-ReLU rows)."""
        innermost = nest.spatial[-1]
        assert nest.store is not None
        if any(isinstance(op, ForOp) for op in innermost.body.walk()):
            return ()
        if not nest.store.indices or nest.store.indices[-1] is not innermost.induction_variable:
            return ()
        dividing = tuple(w for w in VECTOR_WIDTHS if innermost.extent % w == 0)
        if dividing:
            return dividing
        if innermost.extent <= VECTOR_WIDTHS[0]:
            lanes = _whole_vector(innermost.extent)
            return () if lanes is None else (lanes,)
        return (VECTOR_WIDTHS[0],)

    def knobs(self) -> tuple[Knob, ...]:
        width = Knob("vector_width", (*self.widths, 0), "lanes of the vector loop (0: scalar)")
        return (width, *super().knobs())

    def default(self) -> Config:
        return {"vector_width": self.widths[0], **super().default()}

    def recipe(self, config: Mapping[str, KnobValue]) -> list[str]:
        innermost = self.nest.spatial[-1]
        width = int(config["vector_width"])
        outer = [(_name(loop), loop.extent) for loop in self.nest.spatial[:-1]]
        if width == 0:
            outer.append((_name(innermost), innermost.extent))
        elif innermost.extent != width:
            outer.append((f"{_name(innermost)}_o", innermost.extent // width))
        return self.vector_steps(config) + self.parallel(outer, config) + self.tail_steps(config)

    def vector_steps(self, config: Mapping[str, KnobValue], suffix: str = "") -> list[str]:
        """The innermost loop split and vectorized, its loops named with
        `suffix` (tir-compute-at's, once the nest is moved)."""
        innermost = self.nest.spatial[-1]
        width = int(config["vector_width"])
        name = _name(innermost) + suffix
        if width == 0:
            return []
        if innermost.extent == width:
            return [f"tir-vectorize{{func={self.func} loop={name}}}"]
        return [
            f"tir-split{{func={self.func} loop={name} factor={width}}}",
            f"tir-vectorize{{func={self.func} loop={name}_i}}",
        ]

    def tail_steps(self, config: Mapping[str, KnobValue], suffix: str = "") -> list[str]:
        """The split's peeled tail vectorized when it has MIN_WHOLE_VECTOR
        lanes or more (a 30-wide padded row's 14 columns: the copy of
        GoogLeNet's 192x28x28 3x3 max pool about 5% faster); last, so that
        a refusal stops nothing else."""
        extent = self.nest.spatial[-1].extent
        width = int(config["vector_width"])
        if width == 0 or extent % width < MIN_WHOLE_VECTOR:
            return []
        name = _name(self.nest.spatial[-1]) + suffix
        return [f"tir-vectorize{{func={self.func} loop={name}_tail}}"]


class RowReductionTemplate(NestTemplate):
    """A reduction along a contiguous row (softmax's max and sum, layer
    norm's mean and variance, global pooling): its innermost reduction loop
    split by a vector width (0: left scalar), the inner part given partial
    accumulators (`tir-rfactor`) and vectorized, the partials combined
    after the row."""

    kind = "row_reduction"

    def __init__(self, func: str, nest: Nest, reduction: ForOp, widths: tuple[int, ...]) -> None:
        super().__init__(func, nest)
        self.reduction = reduction
        self.widths = widths

    @staticmethod
    def find(nest: Nest) -> tuple[ForOp, tuple[int, ...]] | None:
        """(the innermost reduction loop, the partial counts it may take) when
        the reduction loops form one chain and the innermost reads a row
        along its variable; None otherwise. The counts divide the loop,
        each leaving two iterations or taking it whole (one vector),
        else the loop is one vector of its largest divisor from 5 to 16
        lanes (a 13x13 global pool's 13-wide rows)."""
        loops = [op for op in nest.spatial[-1].body.walk() if isinstance(op, ForOp)]
        pairs = zip(loops, loops[1:], strict=False)
        if not loops or any(inner.parent_op() is not outer for outer, inner in pairs):
            return None
        reduction = loops[-1]
        if not any(
            isinstance(op, memref.LoadOp)
            and op.indices
            and op.indices[-1] is reduction.induction_variable
            for op in reduction.body.walk()
        ):
            return None
        extent = reduction.extent
        widths = tuple(w for w in REDUCTION_WIDTHS if extent % w == 0 and extent >= 2 * w)
        widths += tuple(w for w in VECTOR_WIDTHS if extent == w)
        lanes = _whole_vector(extent) if not widths else None
        widths += (lanes,) if lanes is not None else ()
        return (reduction, widths) if widths else None

    def knobs(self) -> tuple[Knob, ...]:
        lanes = Knob("reduction_lanes", (*self.widths, 0), "partial sums of the row (0: scalar)")
        return (lanes, *super().knobs())

    def default(self) -> Config:
        return {"reduction_lanes": self.widths[0], **super().default()}

    def recipe(self, config: Mapping[str, KnobValue]) -> list[str]:
        func, r = self.func, _name(self.reduction)
        lanes = int(config["reduction_lanes"])
        steps: list[str] = []
        if lanes:
            if self.reduction.extent != lanes:
                steps.append(f"tir-split{{func={func} loop={r} factor={lanes}}}")
                r = f"{r}_i"
            steps += [
                f"tir-rfactor{{func={func} loop={r}}}",
                f"tir-vectorize{{func={func} loop={r}}}",
                f"tir-vectorize{{func={func} loop={r}_init}}",
            ]
            steps += [
                f"tir-vectorize{{func={func} loop={r}_wb{count}}}"
                for count in halving_stages(lanes)
                if count > 1
            ]
        outer = [(_name(loop), loop.extent) for loop in self.nest.spatial]
        return steps + self.parallel(outer, config)


class PrefetchingTemplate(NestTemplate):
    """A reduction nest that may prefetch the NCHW activation it reads in
    place (see `_activation_prefetch`)."""

    def __init__(self, func: str, nest: Nest) -> None:
        super().__init__(func, nest)
        self.prefetch_target = _prefetch_target(nest)

    def knobs(self) -> tuple[Knob, ...]:
        if self.prefetch_target is None:
            return super().knobs()
        return (*super().knobs(), _PREFETCH)

    def default(self) -> Config:
        config = super().default()
        if self.prefetch_target is not None:
            config["prefetch"] = PREFETCH_DISTANCE
        return config

    def hints(self, steps: list[str], config: Mapping[str, KnobValue]) -> list[str]:
        if self.prefetch_target is None:
            return []
        argument, reduction = self.prefetch_target
        distance = int(config["prefetch"])
        if distance == 0 or reduction.extent <= distance:
            return []
        if any(s.startswith("tir-cache-read") and f"buffer={argument}}}" in s for s in steps):
            return []
        # Split in blocks, the loop's inner part prefetches (across blocks too).
        loop = _name(reduction) + ("_i" if config.get("reduction_block") else "")
        return [
            f"tir-prefetch{{func={self.func} loop={loop} buffer={argument} "
            f"distance={distance}}}"
        ]


_PREFETCH = Knob(
    "prefetch",
    (0, 16, 32, 64),
    "reduction steps ahead that the activation read in place is prefetched (0: none)",
)


_WEIGHT_PREFETCH = Knob(
    "weight_prefetch",
    (0, 2048, 4096, 8192),
    "bytes ahead that the weights are prefetched along a channel block (0: none)",
)


class MicroKernelTemplate(PrefetchingTemplate):
    """A reduction nest as a register-blocked micro-kernel (module doc): the
    vector loop's column split, the register tile (rows x vectors), the
    order of the loops outside the tile, packing of the row slabs and the
    column panels, the prefetch distance, an unrolled innermost reduction
    loop, blocks of the outermost reduction loop swept by every tile in
    turn (`tir-hoist-reduction`), the parallel grain."""

    kind = "micro_kernel"

    def __init__(
        self,
        func: str,
        nest: Nest,
        vector: ForOp,
        blocked: int | None,
        block: ForOp | None = None,
        rows_within: int | None = None,
    ) -> None:
        super().__init__(func, nest)
        self.vector = vector
        strided = _strided_along(nest, vector)
        self.columns = _column_options(vector.extent, blocked, strided)
        self.block = block or [loop for loop in nest.spatial if loop is not vector][-1]
        self.rows_within = rows_within
        if rows_within is not None:
            # The rows are a weight's blocked channels: no activation row
            # to prefetch (the vectors read it along its contiguous row).
            self.prefetch_target = None
        self.rows_argument = _rows_argument(nest, self.block)
        default_split = _column_split(vector.extent, blocked, strided)
        assert default_split is not None
        if rows_within is not None:
            default_split = _row_columns(vector.extent)
            split, width = default_split
            option = f"{split}:{width}:{split // width}"
            self.columns = tuple(dict.fromkeys((option, *self.columns)))
        self.default_split = default_split
        self.panel_exists = _panel_argument(nest, vector, default_split[0]) is not None
        self.unrollable = _innermost_reduction(nest)
        self.window = _sliding_window(nest, self.block)
        self.weights = _weight_load(nest, vector)
        self.weight_step_bytes = _weight_step_bytes(nest, self.weights, default_split[0])
        self.weight_stream = _weight_stream(nest, self.weights)
        short_step = self.weight_step_bytes if self.weight_stream is not None else 0
        self.reduction_blocks = _reduction_blocks(nest, short_step)
        self.pinned: str | None = None
        """A loop that stays outermost whatever the tile order (the loop a
        producer nest's copy is computed at, `_copy_loop`: a plane or an
        output row)."""

    def tile_loops(self) -> tuple[str, ...]:
        """The loops outside the register tile that `tile_order` orders, in
        today's order with the rows not packed: the column blocks, the other
        spatial loops and the row blocks, each of more than one iteration
        at some config (the columns' or rows' knob). The pinned loop and a
        column block's second vector (`v_i_o`, one vector a tile) keep their
        place."""
        v, b = _name(self.vector), _name(self.block)
        most: dict[str, int] = {}
        for option in self.columns:
            split, width, vectors = (int(part) for part in option.split(":"))
            for name, extent in self.outer_loops(split, width, vectors)[0]:
                most[name] = max(most.get(name, 1), extent)
        rows = min(int(r) for r in self.rows_values())
        most[f"{b}_o"] = self.block.extent // rows
        split, width = self.default_split
        vectors = _tile_shape(self.block.extent, split // width, self.rows_within)[1]
        names = [name for name, _ in self.outer_loops(split, width, vectors)[0]] + [f"{b}_o"]
        return tuple(
            name
            for name in names
            if most.get(name, 1) > 1 and name not in (self.pinned, f"{v}_i_o")
        )

    def rows_values(self) -> tuple[int, ...]:
        """Rows dividing the blocked loop (a tail costs a second, smaller
        tile), and the default's when none does or too few do."""
        extent = self.block.extent
        split, width = self.default_split
        default_rows = _tile_shape(extent, split // width, self.rows_within)[0]
        return tuple(f for f in TILE_ROWS if extent % f == 0 or f == default_rows)

    def knobs(self) -> tuple[Knob, ...]:
        knobs = [
            Knob("columns", self.columns, "split:lanes:vectors of the vector loop's columns"),
            Knob("rows", self.rows_values(), "rows of the register tile"),
        ]
        loops = self.tile_loops()
        if len(loops) > 1:
            orders = tuple(",".join(order) for order in permutations(loops))
            knobs.append(Knob("tile_order", orders, "the loops outside the tile, outermost first"))
        if self.rows_argument is not None:
            knobs.append(
                Knob(
                    "pack_rows",
                    (0, 1),
                    "each row slab packed (and, without a tile order, the rows "
                    "outside the column blocks)",
                )
            )
        if self.panel_exists:
            knobs.append(Knob("pack_panel", (0, 1), "the column panel packed per column block"))
        if self.unrollable is not None:
            knobs.append(Knob("unroll_reduction", (0, 1), "the innermost reduction unrolled"))
        if self.weight_stream is not None:
            knobs.append(_WEIGHT_PREFETCH)
        if self.reduction_blocks:
            knobs.append(
                Knob(
                    "reduction_block",
                    (0, *self.reduction_blocks),
                    "steps of the outermost reduction loop that every tile sweeps before "
                    "the next block (0: the whole loop per tile)",
                )
            )
        return (*knobs, *super().knobs())

    def default(self) -> Config:
        split, width = self.default_split
        rows, vectors = _tile_shape(self.block.extent, split // width, self.rows_within)
        config: Config = {"columns": f"{split}:{width}:{vectors}", "rows": rows}
        outer, position = self.outer_loops(split, width, vectors)
        pack_rows = self.rows_argument is not None and self.rows_pay(outer, position)
        loops = self.tile_loops()
        if len(loops) > 1:
            if pack_rows:
                outer.insert(position, outer.pop(position + 1))
            elif self.weight_stream is not None:
                outer = self.rows_before_weight_blocks(outer)
            names = [name for name, _ in outer] + [f"{_name(self.block)}_o"]
            config["tile_order"] = ",".join(name for name in names if name in loops)
        if self.rows_argument is not None:
            config["pack_rows"] = int(pack_rows)
        if self.panel_exists:
            config["pack_panel"] = 1
        if self.unrollable is not None:
            config["unroll_reduction"] = 0
        if self.weight_stream is not None:
            streams = self.column_block_weight_bytes > REDUCTION_BLOCK_BYTES
            config["weight_prefetch"] = WEIGHT_PREFETCH_BYTES if streams else 0
        if self.reduction_blocks:
            config["reduction_block"] = self.default_reduction_block(rows)
        return {**config, **super().default()}

    def hints(self, steps: list[str], config: Mapping[str, KnobValue]) -> list[str]:
        """The activation's prefetch (PrefetchingTemplate), and the weights'
        `weight_prefetch` bytes ahead along a channel block (a nest whose
        rows leave no tail: the tail's loops are renamed)."""
        hints = super().hints(steps, config)
        ahead = int(config.get("weight_prefetch", 0))
        if self.weight_stream is None or not ahead or self.block.extent % int(config["rows"]):
            return hints
        loop, argument, inner_bytes = self.weight_stream
        columns = int(str(config["columns"]).split(":")[0])
        distance = -(-ahead // (inner_bytes * columns))
        return [
            *hints,
            f"tir-prefetch{{func={self.func} loop={loop} buffer={argument} distance={distance}}}",
        ]

    @property
    def column_block_weight_bytes(self) -> int:
        """The weights one column block reads over the whole reduction."""
        return _outer_reduction(self.nest).extent * self.weight_step_bytes

    def default_reduction_block(self, rows: int) -> int:
        """The reduction block of REDUCTION_BLOCK_BYTES of weights per column
        block (the largest of `reduction_blocks` within it), when a column
        block's whole weights are more than twice that and at least two
        tiles of `rows` rows read them; else 0, the whole loop."""
        if self.weight_stream is None or self.tiles_per_column_block(rows) < 2:
            return 0
        if self.column_block_weight_bytes <= 2 * REDUCTION_BLOCK_BYTES:
            return 0
        step = self.weight_step_bytes
        fitting = [b for b in self.reduction_blocks if b * step <= REDUCTION_BLOCK_BYTES]
        return max(fitting, default=0)

    def tiles_per_column_block(self, rows: int) -> int:
        """The register tiles of `rows` rows that read one column block's
        weights: the spatial loops the weights are not indexed by (the row
        blocks among them), but the vector loop."""
        weights = self.weights
        if weights is None:
            return 0
        tiles = 1
        for loop in self.nest.spatial:
            if loop is self.vector or loop.induction_variable in weights.indices:
                continue
            tiles *= loop.extent // rows if loop is self.block else loop.extent
        return tiles

    def outer_loops(
        self, split: int, width: int, vectors: int
    ) -> tuple[list[tuple[str, int]], int]:
        """The loops outside the tile (name, extent) and the position of the
        column blocks among them."""
        v = _name(self.vector)
        outer: list[tuple[str, int]] = []
        for loop in self.nest.spatial:
            if loop is self.vector:
                outer.append((f"{v}_o", loop.extent // split))
            elif loop is not self.block:
                outer.append((_name(loop), loop.extent))
        if split != width and vectors == 1:
            outer.append((f"{v}_i_o", split // width))
        position = next(i for i, (name, _) in enumerate(outer) if name == f"{v}_o")
        return outer, position

    def rows_before_weight_blocks(self, outer: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """`outer` with the first row loop (a spatial loop the weights are
        not indexed by) moved before the loop over weight blocks (the output
        channel blocks of a blocked conv) when re-reading the activation per
        weight block moves more bytes than re-reading the weights per row,
        `rows_pay`'s rule for an activation read in place: each row's
        activation is then read once, from L1, by every weight block.
        Inside the models (Xeon, 2 threads, per-call cycle counters, builds
        alternated): ResNet-50's seven such convs, over the unchanged
        kernels' time, 0.209 and 0.213 -> 0.188 and 0.183 (64->256 at 56x56,
        3 calls, 1.96 -> 1.71 ms; the 256->512 stride-2 projection 1.52 ->
        1.09; the 512->1024 one 1.21 -> 1.28, the only one slower);
        ResNet-18's two projections 0.20 -> 0.175 ms; GoogLeNet's 64->64 at
        56x56 0.153 -> 0.145."""
        weights = self.weights
        if weights is None:
            return outer
        by_name = {_name(loop): loop for loop in self.nest.spatial}
        indexes = weights.indices
        indexed = {name for name, loop in by_name.items() if loop.induction_variable in indexes}
        indexing = [at for at, (name, extent) in enumerate(outer) if extent > 1 and name in indexed]
        if not indexing:
            return outer
        blocks = indexing[0]
        rows = next(
            (
                at
                for at in range(blocks + 1, len(outer))
                if outer[at][1] > 1 and at not in indexing and outer[at][0] in by_name
            ),
            None,
        )
        if rows is None:
            return outer
        activation = _argument_bytes(self.nest, exclude=weights.memref.index)
        weight_bytes = _argument_size(weights.memref) or 0
        if activation * outer[blocks][1] <= weight_bytes * outer[rows][1]:
            return outer
        moved = list(outer)
        moved.insert(blocks, moved.pop(rows))
        return moved

    def rows_pay(self, outer: list[tuple[str, int]], position: int) -> bool:
        """Whether re-reading the activation per column block moves more
        bytes than re-reading the weights per row (then rows go first and
        each row slab is packed once)."""
        if self.rows_argument is None or position + 1 >= len(outer):
            return False
        argument, activation = self.rows_argument
        weights = _argument_bytes(self.nest, exclude=argument)
        row_count, column_blocks = outer[position + 1][1], outer[position][1]
        return weights * row_count < activation * column_blocks

    def recipe(self, config: Mapping[str, KnobValue]) -> list[str]:
        func, v, b = self.func, _name(self.vector), _name(self.block)
        split, width, vectors = (int(part) for part in str(config["columns"]).split(":"))
        rows = int(config["rows"])
        outer, position = self.outer_loops(split, width, vectors)
        steps = [f"tir-split{{func={func} loop={v} factor={split}}}"]
        reduction_block = int(config.get("reduction_block", 0))
        if reduction_block:
            r = _name(_outer_reduction(self.nest))
            steps.append(f"tir-split{{func={func} loop={r} factor={reduction_block}}}")
        if split == width:
            tile = [b, f"{v}_i"]
        else:
            steps.append(f"tir-split{{func={func} loop={v}_i factor={width}}}")
            tile = [b, f"{v}_i_o", f"{v}_i_i"] if vectors > 1 else [b, f"{v}_i_i"]
        packed_rows = None
        if config.get("pack_rows") and self.rows_argument and position + 1 < len(outer):
            outer.insert(position, outer.pop(position + 1))
            packed_rows = self.rows_argument[0], outer[position][0]
        remainder = self.block.extent % rows
        outer = self.ordered([*outer, (f"{b}_o", self.block.extent // rows)], config)
        names = [name for name, _ in outer]
        if names[-1] == f"{b}_o":
            # Today's steps: the rows split after the reorder, under the rest.
            steps += [
                f"tir-reorder{{func={func} order={','.join(names[:-1] + tile)}}}",
                f"tir-split{{func={func} loop={b} factor={rows}}}",
            ]
        else:
            # The row blocks among the outer loops: split first, the tile
            # cached under whichever loop ends up innermost. A peeled tail
            # leaves no perfect nest: tir-reorder refuses (an invalid config).
            steps += [
                f"tir-split{{func={func} loop={b} factor={rows}}}",
                f"tir-reorder{{func={func} order={','.join([*names, f'{b}_i', *tile[1:]])}}}",
            ]
        hoist = None
        if reduction_block:
            outside = self.blocks_outside(outer, config)
            hoist = f"tir-hoist-reduction{{func={func} loop={r}_o outside={outside}}}"
        steps += self.tile(config, b, tile[1:], "", rows, names[-1], hoist)
        if remainder:
            # The peeled rows (tir-split's `b_tail`, its loops suffixed) get
            # a register tile of their own, `remainder` rows high.
            steps += [
                f"tir-split{{func={func} loop={b}_tail factor={remainder}}}",
                *self.tile(config, f"{b}_tail", tile[1:], f"_{b}_tail", remainder),
            ]
        panel = _panel_argument(self.nest, self.vector, split)
        if config.get("pack_panel") and panel is not None and self.block.extent >= 2 * rows:
            # Pack the operand's column panel once per v_o: every row tile
            # then reads contiguous lines per reduction step.
            steps.append(f"tir-cache-read{{func={func} loop={v}_o buffer={panel}}}")
        if packed_rows is not None:
            buffer, loop = packed_rows
            steps.append(f"tir-cache-read{{func={func} loop={loop} buffer={buffer}}}")
        if remainder:  # a loop holding a peeled tail cannot run in parallel
            outer = [(name, extent) for name, extent in outer if name != f"{b}_o"]
        return steps + self.parallel(outer, config) + self.hints(steps, config)

    def blocks_outside(self, outer: list[tuple[str, int]], config: Mapping[str, KnobValue]) -> str:
        """The loop that the reduction's block loop goes around: the one
        inside the parallel loop, so that each thread sweeps its tiles block
        by block without a fork per block (ResNet-50's 256-channel conv,
        blocks of 64, cold: 455 GFLOP/s above the parallel loop, 464 inside);
        with the parallel loop innermost, the outermost loop (inside a
        pinned copy loop)."""
        names = [name for name, _ in outer]
        parallel = _parallel_loop(outer, int(config["parallel_grain"]))
        if parallel in names[:-1]:
            return names[names.index(str(parallel)) + 1]
        at = names.index(self.pinned) + 1 if self.pinned in names else 0
        return names[min(at, len(names) - 1)]

    def ordered(
        self, outer: list[tuple[str, int]], config: Mapping[str, KnobValue]
    ) -> list[tuple[str, int]]:
        """The loops outside the tile (name, extent) in the config's
        `tile_order`: its loops of more than one iteration take, in that
        order, the places those loops hold in `outer`; every other loop
        keeps its place (so orders differing only where a loop runs once
        give the same steps)."""
        if "tile_order" not in config:
            return outer
        extents = dict(outer)
        moving = [name for name in str(config["tile_order"]).split(",") if extents[name] > 1]
        placed = iter(moving)
        order = [next(placed) if name in moving else name for name, _ in outer]
        return [(name, extents[name]) for name in order]

    def tile(
        self,
        config: Mapping[str, KnobValue],
        rows: str,
        columns: list[str],
        suffix: str,
        height: int,
        cached: str | None = None,
        hoist: str | None = None,
    ) -> list[str]:
        """The register tile under `cached` (default `rows`_o; `height` rows
        of `rows`_i, the vectors and lanes `columns`, each named with
        `suffix` in a peeled tail): the accumulators cached, the window's
        column loop moved out of the innermost place where its reuse would
        spill (`SlidingWindow`), rows and vectors unrolled, lanes
        vectorized, the write-back. `hoist`, right after the caching, moves
        the reduction's block loop out of the tile's loops."""
        func = self.func
        columns = [f"{name}{suffix}" for name in columns]
        steps = [f"tir-cache-write{{func={func} loop={cached or f'{rows}_o'}}}"]
        steps += [hoist] if hoist is not None else []
        if self.window is not None and self.window.spills(height, len(columns)):
            blocked = bool(config.get("reduction_block"))
            names = self.window.swapped_order(blocked)
            order = ",".join(f"{name}{suffix}" for name in names)
            steps.append(f"tir-reorder{{func={func} order={order}}}")
        steps.append(f"tir-unroll{{func={func} loop={rows}_i}}")
        if len(columns) > 1:
            steps.append(f"tir-unroll{{func={func} loop={columns[0]}}}")
        if config.get("unroll_reduction") and self.unrollable is not None:
            steps.append(f"tir-unroll{{func={func} loop={_name(self.unrollable)}{suffix}}}")
        lanes = columns[-1]
        return [
            *steps,
            f"tir-vectorize{{func={func} loop={lanes}}}",
            f"tir-vectorize{{func={func} loop={lanes}_init}}",
            *_write_back(func, self.nest, self.block, [f"{n}_wb" for n in columns], f"{rows}_i_wb"),
        ]


class VectorBlocksTemplate(PrefetchingTemplate):
    """The micro-kernel when no other loop can be blocked (a matrix-vector
    product: one output row): the tile is several vectors of the vector
    loop itself, `v_o_i` x `v_i`."""

    kind = "vector_blocks"

    def __init__(self, func: str, nest: Nest, vector: ForOp, width: int) -> None:
        super().__init__(func, nest)
        self.vector = vector
        self.width = width

    def knobs(self) -> tuple[Knob, ...]:
        vectors = self.vector.extent // self.width
        factors = tuple(f for f in TILE_ROWS if f <= vectors)
        return (Knob("vectors", factors, "vectors of the register tile"), *super().knobs())

    def default(self) -> Config:
        return {"vectors": _block_factor(self.vector.extent // self.width, 1), **super().default()}

    def recipe(self, config: Mapping[str, KnobValue]) -> list[str]:
        func, v, width = self.func, _name(self.vector), self.width
        factor = int(config["vectors"])
        outer = [
            (_name(loop), loop.extent) for loop in self.nest.spatial if loop is not self.vector
        ]
        chain = [name for name, _ in outer] + [f"{v}_o", f"{v}_i"]
        steps = [
            f"tir-split{{func={func} loop={v} factor={width}}}",
            f"tir-reorder{{func={func} order={','.join(chain)}}}",
            f"tir-split{{func={func} loop={v}_o factor={factor}}}",
            f"tir-cache-write{{func={func} loop={v}_o_o}}",
            f"tir-unroll{{func={func} loop={v}_o_i}}",
            f"tir-vectorize{{func={func} loop={v}_i}}",
            f"tir-vectorize{{func={func} loop={v}_i_init}}",
            f"tir-vectorize{{func={func} loop={v}_i_wb}}",
        ]
        outer.append((f"{v}_o_o", self.vector.extent // width // factor))
        return steps + self.parallel(outer, config) + self.hints(steps, config)


def nest_template(func: str, nest: Nest) -> NestTemplate:
    """The template of a top-level nest: a micro-kernel for a reduction nest
    it fits, a vector loop for an elementwise nest, else a parallel loop."""
    if nest.accumulator is not None and nest.store is not None:
        if _reads_along_reduction(nest):
            row = RowReductionTemplate.find(nest)
            if row is not None:
                return RowReductionTemplate(func, nest, *row)
            if not _calls_math(nest):
                return NestTemplate(func, nest)
        found = _vector_loop(nest)
        columns = (
            _column_split(found[0].extent, found[1], _strided_along(nest, found[0]))
            if found is not None
            else None
        )
        if found is not None and columns is not None:
            vector = found[0]
            row = _output_row(nest, vector, found[1])
            if row is not None:
                return MicroKernelTemplate(func, nest, row, None, vector, found[1])
            others = [loop for loop in nest.spatial if loop is not vector]
            if others and others[-1].extent >= 2:
                rows = _rows_loop(nest, vector, others)
                return MicroKernelTemplate(func, nest, vector, found[1], rows)
            if vector.extent // columns[1] >= 2:
                return VectorBlocksTemplate(func, nest, vector, columns[1])
    elif nest.store is not None:
        widths = ElementwiseTemplate.widths_for(nest)
        if widths:
            return ElementwiseTemplate(func, nest, widths)
    return NestTemplate(func, nest)


@dataclass(frozen=True)
class KernelSchedule:
    """A kernel's templates, one per top-level nest; the kernel's space is
    theirs joined, each knob named `<nest>.<knob>`. The `prologue` steps
    (each a recipe of its own) come before any nest's, at every config."""

    func: str
    templates: tuple[NestTemplate, ...]
    prologue: tuple[str, ...] = ()
    computed_at: Mapping[int, str] = field(default_factory=dict[int, str])
    """Nests (by position) computed per iteration of a loop of the next
    nest (`_copy_loop`): their recipe comes after that nest's."""

    @property
    def kind(self) -> str:
        """The templates' kinds (kernels of one kind share a cost model)."""
        return "+".join(t.kind for t in self.templates)

    def space(self) -> Space:
        return Space(
            tuple(k for i, t in enumerate(self.templates) for k in prefixed(str(i), t.knobs()))
        )

    def default(self) -> Config:
        return {f"{i}.{k}": v for i, t in enumerate(self.templates) for k, v in t.default().items()}

    def recipes(self, config: Mapping[str, KnobValue]) -> list[list[str]]:
        """The prologue's steps, then those of each nest for `config` (a
        point of `space()`)."""
        nests = [
            [] if i in self.computed_at else t.recipe(_nest_config(config, i))
            for i, t in enumerate(self.templates)
        ]
        for i, at in self.computed_at.items():
            template = cast(ElementwiseTemplate, self.templates[i])
            root = _name(template.nest.spatial[0])
            nests[i + 1] += [
                f"tir-compute-at{{func={self.func} loop={root} at={at} local=true}}",
                *template.vector_steps(_nest_config(config, i), COMPUTE_AT_SUFFIX),
                *template.tail_steps(_nest_config(config, i), COMPUTE_AT_SUFFIX),
            ]
        return [[step] for step in self.prologue] + nests

    def steps(self, config: Mapping[str, KnobValue]) -> list[str]:
        return [step for recipe in self.recipes(config) for step in recipe]


def _nest_config(config: Mapping[str, KnobValue], nest: int) -> Config:
    prefix = f"{nest}."
    return {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}


def kernel_schedule(kernel: FuncOp) -> KernelSchedule:
    """The templates of `kernel`'s top-level nests."""
    if not kernel.body.blocks:
        return KernelSchedule(kernel.sym_name.data, ())
    name = kernel.sym_name.data
    nests = [op for op in kernel.body.block.ops if isinstance(op, ForOp)]
    templates = tuple(nest_template(name, analyse(op)) for op in nests)
    computed_at = {
        i: _name(loop)
        for i, template in enumerate(templates[:-1])
        if isinstance(template, ElementwiseTemplate)
        and (loop := _copy_loop(kernel, template.nest, templates[i + 1].nest)) is not None
    }
    for i, loop in computed_at.items():
        consumer = templates[i + 1]
        if isinstance(consumer, MicroKernelTemplate):
            consumer.pinned = loop  # the loop a copy is computed at stays outermost
    reuses = tuple(_term_reuses(kernel, nests, templates))
    return KernelSchedule(name, templates, reuses, computed_at)


def _copy_pays_per_plane(
    buffer: SSAValue, output: SSAValue, strided_pays: bool, is_pool: bool
) -> bool:
    """Whether a copy computed per plane of its reader gains: the whole
    copy outgrows the L2 cache, or (where `strided_pays`) the reader strides
    over it (it stores a fraction of the elements it reads), or the reader
    is a pool not strided over it (`is_pool`) and a plane of the copy holds
    at most SMALL_PLANE_ELEMENTS. A stride-1 depthwise conv over a copy
    that stays in L2 lost 10-30% so (MobileNet-v2's 192x28x28)."""
    buffer_type, output_type = buffer.type, output.type
    if not isinstance(buffer_type, MemRefType) or not isinstance(output_type, MemRefType):
        return False
    try:
        size = element_bytes(buffer_type.get_element_type())
    except ElementSizeError:
        return False
    elements = prod(buffer_type.get_shape())
    if elements * size > PLANE_COPY_MIN_BYTES:
        return True
    strided = elements >= STRIDED_READ_RATIO * prod(output_type.get_shape())
    if is_pool and not strided and prod(buffer_type.get_shape()[-2:]) <= SMALL_PLANE_ELEMENTS:
        return True
    return strided_pays and strided


def _copy_loop(kernel: FuncOp, producer: Nest, consumer: Nest) -> ForOp | None:
    """The consumer's loop that the producer's copy is computed at: its
    outermost loop of several iterations when each of its
    iterations reads one plane of the producer's buffer (a depthwise conv
    or a pool, one channel of its padded copy): the buffer is local to the
    kernel, stored by the producer and read only by the consumer at an
    index of that loop's variable. Computed there, the copy is one plane,
    in cache when the reduction reads it, and forks no threads of its own
    (MobileNet-v2's stride-2 depthwise 144x56x56 0.099 -> 0.062 ms; the
    3x3/2 max pool of ResNet's and GoogLeNet's stems, 64x113x113, 0.082 ->
    0.067 ms alone and about 0.21 -> 0.12 ms inside GoogLeNet). Where
    that loop has fewer than PARALLEL_ITERATIONS iterations (blocks of
    channels), the copy would not be shared among the threads: a pool then
    computes it per iteration of its first loop that has that many (its
    output rows, each reading the few rows of the copy its windows cover;
    ResNet-50's stem pool in NCHW32c, 2 planes, 0.21-0.23 -> 0.14-0.15 ms
    alone and 0.37 -> 0.19 ms inside the model on a 2-core Xeon), a
    depthwise conv keeps its copy a nest of its own."""
    if producer.store is None or consumer.store is None:
        return None
    buffer = producer.store.memref
    if not isinstance(buffer.owner, memref.AllocOp) or buffer.owner.parent_op() is not kernel:
        return None
    multiplies = any(isinstance(op, arith.MulfOp) for op in consumer.spatial[0].walk())
    pays = _copy_pays_per_plane(
        buffer, consumer.store.memref, strided_pays=multiplies, is_pool=not multiplies
    )
    if not pays:
        return None
    outer = next((loop for loop in consumer.spatial if loop.extent > 1), None)
    if outer is not None and outer.extent < PARALLEL_ITERATIONS and not multiplies:
        # Too few planes to run in parallel (2 blocks of 32 channels in
        # NCHW32c; per plane, one thread would copy each, the others
        # waiting: ResNet-50's blocked stem pool 0.07 -> 0.33 ms): a pool
        # takes the copy's rows per row of its own (the parallel loop)
        # instead, the rows its window overlaps copied again.
        wide = (loop for loop in consumer.spatial if loop.extent >= PARALLEL_ITERATIONS)
        outer = next(wide, None)
    if outer is None or outer.extent < PARALLEL_ITERATIONS:
        return None
    loads = [use.operation for use in buffer.uses if isinstance(use.operation, memref.LoadOp)]
    others = [
        use.operation
        for use in buffer.uses
        if not isinstance(use.operation, memref.LoadOp | memref.DeallocOp)
    ]
    if not loads or others != [producer.store]:
        return None
    root = consumer.spatial[0]
    for load in loads:
        if not root.is_ancestor(load):
            return None
        variables = [_affine_variables(index) for index in load.indices]
        if any(v is None for v in variables):
            return None
        if not any(outer.induction_variable in cast(set[SSAValue], v) for v in variables):
            return None
    return outer


def _term_reuses(
    kernel: FuncOp, nests: list[ForOp], templates: tuple[NestTemplate, ...]
) -> list[str]:
    """A `tir-reuse-term` step for each reduction whose term calls a math
    function that a later nest computes again (softmax's exp: stored by
    the sum into the output, which the last nest scales; BERT's 12x128x128
    softmax 0.083 -> 0.056 ms on one thread), the first such nest. Only a
    row reduction or a nest left scalar takes it: the register tile of a
    micro-kernel (tir-cache-write) holds no other store."""
    steps: list[str] = []
    taken: set[ForOp] = set()
    name = kernel.sym_name.data
    for position, (nest, template) in enumerate(zip(nests, templates, strict=True)):
        if type(template) not in (RowReductionTemplate, NestTemplate):
            continue
        for loop in nest.walk():
            if not isinstance(loop, ForOp) or any(isinstance(op, ForOp) for op in loop.body.walk()):
                continue
            for consumer in nests[position + 1 :]:
                if consumer in taken:
                    continue
                try:
                    reuse = find_reuse(kernel, loop, consumer, TirReuseTerm.name)
                except ScheduleError:
                    continue
                if reuse.calls_math():
                    taken.add(consumer)
                    names = f"loop={_name(loop)} consumer={_name(consumer)}"
                    steps.append(f"tir-reuse-term{{func={name} {names}}}")
                break
    return steps


def _outer_reduction(nest: Nest) -> ForOp:
    """The outermost reduction loop of a reduction nest."""
    return next(op for op in nest.spatial[-1].body.block.ops if isinstance(op, ForOp))


def _reduction_blocks(nest: Nest, short_step_bytes: int = 0) -> tuple[int, ...]:
    """The blocks that split the nest's outermost reduction loop into
    several: REDUCTION_BLOCKS and, over a blocked activation's channel
    blocks (`short_step_bytes` of weights per column block a step, 0 for
    another nest), SHORT_REDUCTION_BLOCKS of at least
    MIN_REDUCTION_BLOCK_BYTES; those dividing the loop and shorter than it."""
    extent = _outer_reduction(nest).extent
    short = [
        b for b in SHORT_REDUCTION_BLOCKS if b * short_step_bytes >= MIN_REDUCTION_BLOCK_BYTES
    ]
    return tuple(b for b in (*short, *REDUCTION_BLOCKS) if b < extent and extent % b == 0)


def _weight_load(nest: Nest, vector: ForOp) -> memref.LoadOp | None:
    """The reduction's load of the weights: the first load of a kernel
    argument inside the reduction whose indices the vector loop (the output
    channels) computes, directly or through a division (a conv writing NCHW
    whose weights are blocked by output channel); else, where the reduction
    reads none, the first load of the body indexed by the vector loop
    itself."""
    innermost = nest.spatial[-1]
    variable = vector.induction_variable
    indexed: memref.LoadOp | None = None
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not isinstance(op.memref, BlockArgument):
            continue
        if _inside_reduction(op, innermost) and any(
            depends_on(index, variable) for index in op.indices
        ):
            return op
        if indexed is None and variable in op.indices:
            indexed = op
    return indexed


def _channel_block_loop(nest: Nest) -> ForOp | None:
    """The loop over a block's channels of a blocked activation (NCHWc) that
    the reduction reads in place: the argument is indexed by the outermost
    reduction loop (its channel blocks) and, in its innermost dimension, by
    a loop nested in that one, this loop. None when the nest reads none (a
    matmul, an NCHW conv, a conv reading a padded copy)."""
    outer = _outer_reduction(nest)
    inner = {op.induction_variable: op for op in outer.body.walk() if isinstance(op, ForOp)}
    for op in outer.body.walk():
        if (
            isinstance(op, memref.LoadOp)
            and isinstance(op.memref, BlockArgument)
            and outer.induction_variable in op.indices
            and op.indices[-1] in inner
        ):
            return inner[op.indices[-1]]
    return None


def _weight_stream(nest: Nest, weights: memref.LoadOp | None) -> tuple[str, int, int] | None:
    """(the loop over a channel block's channels, the weight argument, the
    weight bytes a step of that loop reads per column) of a nest reading a
    blocked activation (`_channel_block_loop`) and its `weights`, a load of
    the reduction; None otherwise."""
    channels = _channel_block_loop(nest)
    if weights is None or channels is None:
        return None
    if not _inside_reduction(weights, nest.spatial[-1]):
        return None
    assert isinstance(weights.memref, BlockArgument)
    try:
        size = element_bytes(weights.res.type)
    except ElementSizeError:
        return None
    within = prod(loop.extent for loop in channels.body.walk() if isinstance(loop, ForOp))
    return _name(channels), weights.memref.index, within * size


def _weight_step_bytes(nest: Nest, weights: memref.LoadOp | None, split: int) -> int:
    """The bytes of `weights` one step of the outermost reduction loop reads
    for a column block of `split` columns (its inner reduction loops times
    the columns and the element size); 0 without a weight load."""
    if weights is None:
        return 0
    try:
        size = element_bytes(weights.res.type)
    except ElementSizeError:
        return 0
    outer = _outer_reduction(nest)
    inner = prod(op.extent for op in outer.body.walk() if isinstance(op, ForOp))
    return inner * split * size


def _prefetch_target(nest: Nest) -> tuple[int, ForOp] | None:
    """(the activation argument, the reduction loop) that the micro-kernel
    may prefetch: a conv's NCHW input read along the blocked row, each step
    a row piece of the next channel plane (a stride no hardware prefetcher
    follows). None when the nest reads none."""
    found = _vector_loop(nest)
    if found is None:
        return None
    others = [loop for loop in nest.spatial if loop is not found[0]]
    rows = _rows_argument(nest, others[-1]) if others else None
    innermost = nest.spatial[-1]
    reduction = next((op for op in innermost.body.block.ops if isinstance(op, ForOp)), None)
    if rows is None or reduction is None:
        return None
    return rows[0], reduction


VECTOR_REGISTERS = 32
"""AVX-512's vector registers (a register tile's accumulators, its weight
vectors and its broadcasts share them)."""


@dataclass(frozen=True)
class SlidingWindow:
    """A conv's reduction loops when the innermost (the window's column,
    kw) reads the activation at `column_step * kw + row_step * x` along the
    tile's rows x: after LLVM unrolls it, the rows' broadcasts overlap from
    one column to the next and are loaded once, kept in registers."""

    loops: tuple[ForOp, ...]
    row_step: int
    column_step: int

    def spills(self, height: int, vectors: int) -> bool:
        """Whether a tile of `height` rows x `vectors` vectors and the
        window's shared broadcasts need more than VECTOR_REGISTERS (SqueezeNet's
        55-wide 3x3 expands, 11 rows x 2 vectors and 13 broadcasts: the
        accumulators spill and move each column; with kh innermost 0.178 ->
        0.142 ms a call). Without overlap each broadcast folds into its FMA.
        Only a stride-1 window: the strided stems (SqueezeNet 1.1's conv1,
        MobileNet-v2's, ResNet's 7x7) measured 1-10% slower turned."""
        if self.row_step != 1:
            return False
        extent = self.loops[-1].extent
        columns = {
            self.row_step * x + self.column_step * k for x in range(height) for k in range(extent)
        }
        if len(columns) == height * extent:
            return False
        return height * vectors + vectors + len(columns) > VECTOR_REGISTERS

    def swapped_order(self, blocked: bool = False) -> list[str]:
        """The reduction loops with the window's column loop one place out
        (the outermost's inner part `_i` when it is split in blocks)."""
        names = [_name(loop) for loop in self.loops]
        if blocked:
            names[0] += "_i"
        return [*names[:-2], names[-1], names[-2]]


def _sliding_window(nest: Nest, block: ForOp) -> SlidingWindow | None:
    """The nest's reduction loops as a SlidingWindow when they form one
    chain of at least two and a load's last index moves with both the
    blocked loop and the innermost of them; None otherwise."""
    loops = [op for op in nest.spatial[-1].body.walk() if isinstance(op, ForOp)]
    pairs = zip(loops, loops[1:], strict=False)
    if len(loops) < 2 or any(inner.parent_op() is not outer for outer, inner in pairs):
        return None
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not op.indices:
            continue
        row_step = _coefficient(op.indices[-1], block.induction_variable)
        column_step = _coefficient(op.indices[-1], loops[-1].induction_variable)
        if row_step > 0 and column_step > 0:
            return SlidingWindow(tuple(loops), row_step, column_step)
    return None


def _innermost_reduction(nest: Nest) -> ForOp | None:
    """The innermost reduction loop, when it is short enough to unroll
    (2 to MAX_UNROLLED_REDUCTION iterations: a 3x3 kernel's row)."""
    loops = [op for op in nest.spatial[-1].body.walk() if isinstance(op, ForOp)]
    if not loops:
        return None
    last = loops[-1]
    if any(isinstance(op, ForOp) for op in last.body.walk()):
        return None
    return last if 2 <= last.extent <= MAX_UNROLLED_REDUCTION else None


def _parallel_loop(outer: list[tuple[str, int]], grain: int = PARALLEL_ITERATIONS) -> str | None:
    """The first outer loop with at least `grain` iterations, else the one
    with the most (None when all have one)."""
    for name, extent in outer:
        if extent >= grain:
            return name
    name, extent = max(outer, key=lambda entry: entry[1], default=("", 1))
    return name if extent > 1 else None


def _write_back(func: str, nest: Nest, block: ForOp, columns: list[str], rows: str) -> list[str]:
    """The tile's write-back loops (`rows` around the `columns`): vectorized
    along the columns, or, when the output is contiguous along the blocked
    loop (a conv2d's NCHW output row), turned so that each column stores
    (and reads its residual) as one vector along the rows."""
    assert nest.store is not None
    if nest.store.indices and nest.store.indices[-1] is block.induction_variable:
        return [
            f"tir-reorder{{func={func} order={','.join([*columns, rows])}}}",
            f"tir-vectorize{{func={func} loop={rows}}}",
        ]
    return [f"tir-vectorize{{func={func} loop={columns[-1]}}}"]


def _column_split(
    extent: int, blocked: int | None, strided: bool = False
) -> tuple[int, int] | None:
    """(the columns split off the vector loop, the lanes of a vector) for a
    vector loop of `extent`: a block of b (a blocked weight) is b / 16
    vectors of 16 or one vector of b; otherwise COLUMN_VECTORS vectors of
    the widest width that divides the extent so many times, else two, else
    one, else vectors of the extent's largest divisor from 5 to 16
    (`_whole_vector`). None when nothing fits."""
    if blocked is not None:
        if extent % blocked:
            return None
        if blocked % VECTOR_WIDTHS[0] == 0 and blocked <= 2 * VECTOR_WIDTHS[0]:
            return blocked, VECTOR_WIDTHS[0]
        return (blocked, blocked) if blocked in VECTOR_WIDTHS else None
    width = next((w for w in VECTOR_WIDTHS if extent % w == 0), None)
    lanes = _whole_vector(extent)
    if lanes is not None and (width is None or _whole_vector_pays(width, lanes, strided)):
        # A row no width divides (7, 13 or 27 wide) is vectors of its largest
        # divisor up to 16 lanes (7, 13 or 9): LLVM pads each to a register.
        # So is one that only a narrow width divides (28 wide: 14 lanes, not 4).
        return lanes, lanes
    if width is None:
        return None
    vectors = next(v for v in (COLUMN_VECTORS, 2, 1) if extent % (v * width) == 0)
    return vectors * width, width


COLUMN_VECTORS = 3
"""The vectors of a register tile's columns where they divide the vector
loop (and no weight block sets them): 8 rows of 3 vectors hold 24
accumulators, 3 weight vectors and a broadcast in AVX-512's 32 registers.
BERT's matmuls (128 rows, 768 and 3072 columns) alone, against 8 rows of 2
vectors (Intel Xeon, 2 threads): 768->3072 2.56 -> 2.35 ms, 3072->768
3.04 -> 2.88, 768->768 0.857 -> 0.772."""


WHOLE_VECTOR_GAIN = 2
"""How many times the lanes of the widest dividing width a row's largest
divisor up to 16 must hold to be the vector instead (a 28-wide pooled row:
14 lanes, not 4: GoogLeNet's 3x3 s1 max pool 0.045 ms against 0.087; a
56-wide depthwise conv row keeps 8, which measured faster than 14)."""


def _whole_vector_pays(width: int, lanes: int, strided: bool = False) -> bool:
    """Whether `lanes` beat the widest dividing `width`: by any margin for
    a strided window (each vector load of it is deinterleaved, a shuffle per
    load whatever its lanes: ResNet's 3x3 s2 max pool, 56-wide rows, 14
    lanes 0.17 ms against 0.25 with 8, one thread), else by
    WHOLE_VECTOR_GAIN."""
    if strided:
        return lanes > width
    return lanes >= WHOLE_VECTOR_GAIN * width


def _whole_vector(extent: int) -> int | None:
    """The lanes of a vector for a loop no vector width divides: its
    largest divisor from MIN_WHOLE_VECTOR to 16 (27 -> 9, 55 -> 11), None
    when there is none (a prime above 16)."""
    top = min(extent, VECTOR_WIDTHS[0])
    return next((d for d in range(top, MIN_WHOLE_VECTOR - 1, -1) if extent % d == 0), None)


def _column_options(extent: int, blocked: int | None, strided: bool = False) -> tuple[str, ...]:
    """Every `split:lanes:vectors` the vector loop may take: a blocked
    weight's block (b/16 vectors of 16, in the tile or one an outer loop),
    else one, two or COLUMN_VECTORS vectors of each width dividing the
    extent (the split's vectors in the tile or one), else vectors
    and vectors of `_whole_vector` lanes where no width divides or where
    they hold WHOLE_VECTOR_GAIN times the widest's lanes."""
    found: list[str] = []
    if blocked is not None:
        split, width = cast(tuple[int, int], _column_split(extent, blocked))
        found = [f"{split}:{width}:{split // width}"]
        if split != width:
            found.append(f"{split}:{width}:1")
        return tuple(found)
    for width in VECTOR_WIDTHS:
        for vectors in (COLUMN_VECTORS, 2):
            if extent % (vectors * width) == 0:
                split = vectors * width
                found += [f"{split}:{width}:{vectors}", f"{split}:{width}:1"]
        if extent % width == 0:
            found.append(f"{width}:{width}:1")
    widest = next((w for w in VECTOR_WIDTHS if extent % w == 0), None)
    lanes = _whole_vector(extent)
    if lanes is not None and (widest is None or _whole_vector_pays(widest, lanes, strided)):
        found.append(f"{lanes}:{lanes}:1")
    return tuple(found)


ROW_VECTOR_REDUCTION = 32
"""The most reduction steps of a conv whose vectors run along its output
row rather than its blocked output channels (`_output_row`)."""


def _output_row(nest: Nest, vector: ForOp, blocked: int | None) -> ForOp | None:
    """The loop of the output's contiguous row (an NCHW conv's x), when the
    register tile pays turned over: vectors along that row, read in place
    from the activation, rows over the weight's blocked output channels
    (broadcast). It does for a conv reading its input unpadded, at stride 1
    along the row, with a reduction of at most ROW_VECTOR_REDUCTION steps
    (a 1x1 conv from 16 to 32 channels: the tile's transposing write-back
    costs more than its few FMAs; MobileNet-v2's 16->96 at 112x112 1.8x
    faster) or output channels in blocks narrower than a vector (144->24:
    two 8-lane vectors, 2x faster as 14-lane rows). None otherwise."""
    assert nest.store is not None
    if blocked is None or not nest.store.indices:
        return None
    variables = {loop.induction_variable: loop for loop in nest.spatial}
    row = variables.get(nest.store.indices[-1])
    if row is None or row is vector or not _reads_row_in_place(nest, row):
        return None
    if _strided_along(nest, row) or _column_split(row.extent, None) is None:
        return None
    loops = [op for op in nest.spatial[-1].body.walk() if isinstance(op, ForOp)]
    steps = prod(loop.extent for loop in loops)
    if steps > ROW_VECTOR_REDUCTION and blocked >= VECTOR_WIDTHS[0]:
        return None
    return row


def _reads_row_in_place(nest: Nest, row: ForOp) -> bool:
    """Whether the reduction reads a kernel argument (not a padded copy)
    along `row`: its last index affine in the loop variables, `row` among
    them (a 1x1 conv's NCHW input, a grouped one's too)."""
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not op.indices:
            continue
        last = _affine_variables(op.indices[-1])
        if last is None or row.induction_variable not in last:
            continue
        if _inside_reduction(op, innermost) and _argument_size(op.memref) is not None:
            return True
    return False


def _row_columns(extent: int) -> tuple[int, int]:
    """(split, lanes) of an output row under rows within a weight block (at
    most 8 of them): the row's largest divisor up to 16 lanes, two vectors
    of it where they divide the row (56 wide: two of 14, measured 1.5x
    faster than one of 8)."""
    lanes = _whole_vector(extent) or next(w for w in VECTOR_WIDTHS if extent % w == 0)
    return (2 * lanes, lanes) if extent % (2 * lanes) == 0 else (lanes, lanes)


def _tile_shape(extent: int, vectors: int, within: int | None = None) -> tuple[int, int]:
    """(rows, vectors) of the register tile over a blocked loop of `extent`
    when a block of columns holds `vectors` vectors: all of them when some
    row count that fits divides the extent, else one vector (more rows fit).
    Rows `within` a weight block of that many channels divide it (a tile
    across two blocks measured 10x slower: its weight indices stay divisions)."""
    if within is not None:
        fits = [f for f in BLOCK_FACTORS if f * vectors <= MAX_ACCUMULATORS]
        rows = next((f for f in fits if within % f == 0 and extent % f == 0), None)
        if rows is not None:
            return rows, vectors
    if vectors > 1:
        rows = _block_factor(extent, vectors)
        if rows < MIN_DIVIDING_ROWS and extent >= 2 * TAILED_ROWS:
            return TAILED_ROWS, vectors
        if extent % rows == 0 or _block_factor(extent, 1) == rows:
            return rows, vectors
    return _block_factor(extent, 1), 1


PANEL_BYTES = 4 * 1024 * 1024
"""The largest operand panel the micro-kernel packs (tir-cache-read)."""


def _panel_argument(nest: Nest, vector: ForOp, width: int) -> int | None:
    """The position of the kernel argument that the reduction loads with
    `vector`'s variable as the last index (matmul's B, an IHWO weight),
    when packing its `width`-wide panel pays: the vector loop spans more
    than one vector and the panel fits PANEL_BYTES. None otherwise."""
    if vector.extent <= width:
        return None
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not op.indices:
            continue
        if op.indices[-1] is not vector.induction_variable:
            continue
        size = _argument_size(op.memref)
        if size is None or not _inside_reduction(op, innermost):
            continue
        assert isinstance(op.memref, BlockArgument) and isinstance(op.memref.type, MemRefType)
        panel = size // max(1, op.memref.type.get_shape()[-1]) * width
        return op.memref.index if 0 < panel <= PANEL_BYTES else None
    return None


def _rows_loop(nest: Nest, vector: ForOp, others: list[ForOp]) -> ForOp:
    """The register tile's rows: the last spatial loop of `others` (the
    loops but the vector loop), unless an operand the reduction reads is
    indexed by both it and the vector loop, which a tile loads once per
    row and vector each step; then the innermost loop of two iterations or
    more that no operand is indexed by along with the vector loop, when
    there is one. A Winograd input transform, rows[a, .., j, lane] = Σ_i
    Bᵀ[a, i] x[.., i, j, lane], tiles the positions a, not the tile
    columns j: two vector loads a step where there were twelve."""

    def paired(loop: ForOp) -> bool:
        return any(
            any(depends_on(index, vector.induction_variable) for index in load.indices)
            and any(depends_on(index, loop.induction_variable) for index in load.indices)
            for load in loads
        )

    innermost = nest.spatial[-1]
    loads = [
        op
        for op in innermost.body.walk()
        if isinstance(op, memref.LoadOp) and _inside_reduction(op, innermost)
    ]
    if not paired(others[-1]):
        return others[-1]
    unpaired = (loop for loop in reversed(others) if loop.extent >= 2 and not paired(loop))
    return next(unpaired, others[-1])


def _rows_argument(nest: Nest, block: ForOp) -> tuple[int, int] | None:
    """(position, bytes) of the kernel argument that the reduction reads
    with the blocked loop's variable in its last index, every index affine
    in the loop variables (a 1x1 convolution's NCHW input, not a padded
    window). None when there is none."""
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not op.indices:
            continue
        last = _affine_variables(op.indices[-1])
        if last is None or block.induction_variable not in last:
            continue
        if not _inside_reduction(op, innermost):
            continue
        size = _argument_size(op.memref)
        if size is None or any(_affine_variables(i) is None for i in op.indices):
            return None
        assert isinstance(op.memref, BlockArgument)
        return op.memref.index, size
    return None


def _argument_bytes(nest: Nest, exclude: int) -> int:
    """The bytes of the kernel arguments the reduction reads, but `exclude`
    (the weights, next to the activation)."""
    innermost = nest.spatial[-1]
    seen: dict[int, int] = {}
    for op in innermost.body.walk():
        if isinstance(op, memref.LoadOp) and _inside_reduction(op, innermost):
            size = _argument_size(op.memref)
            if size is not None and isinstance(op.memref, BlockArgument):
                seen[op.memref.index] = size
    return sum(size for position, size in seen.items() if position != exclude)


def _argument_size(buffer: SSAValue) -> int | None:
    """The bytes of a kernel argument; None for another buffer, and for an
    argument whose element type has no byte size (the lowering refuses it)."""
    if not isinstance(buffer, BlockArgument) or not isinstance(buffer.type, MemRefType):
        return None
    if not isinstance(buffer.block.parent_op(), FuncOp):
        return None
    try:
        bytes_each = element_bytes(buffer.type.get_element_type())
    except ElementSizeError:
        return None
    return bytes_each * prod(buffer.type.get_shape())


def _affine_variables(index: SSAValue) -> set[SSAValue] | None:
    """The loop variables of an index that is a sum of constant multiples
    of loop variables (what tir-cache-read can pack), None for another."""
    if isinstance(index, BlockArgument):
        return {index} if isinstance(index.block.parent_op(), ForOp) else None
    owner = index.owner
    if isinstance(owner, arith.ConstantOp):
        return set()
    if isinstance(owner, arith.AddiOp):
        lhs, rhs = _affine_variables(owner.lhs), _affine_variables(owner.rhs)
        return None if lhs is None or rhs is None else lhs | rhs
    if isinstance(owner, arith.MuliOp):
        lhs, rhs = _affine_variables(owner.lhs), _affine_variables(owner.rhs)
        if lhs is None or rhs is None or (lhs and rhs):
            return None
        return lhs | rhs
    return None


def _block_factor(extent: int, vectors: int) -> int:
    """Rows of a tile `vectors` registers wide: the largest that divides
    `extent` within MAX_ACCUMULATORS, else the largest that fits."""
    fits = [f for f in BLOCK_FACTORS if f * vectors <= MAX_ACCUMULATORS and f <= extent]
    for f in fits:
        if extent % f == 0:
            return f
    return fits[0] if fits else min(extent, BLOCK_FACTORS[-1])


def _vector_loop(nest: Nest) -> tuple[ForOp, int | None] | None:
    """The spatial loop that is the last index of a load in the reduction
    (a weight read along its contiguous axis), else of the output store;
    with the vector width that index imposes: b when it is `loop rem b` (a
    weight in blocks of b, OIHW16o), None when any width will do."""
    variables = {loop.induction_variable: loop for loop in nest.spatial}
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if isinstance(op, memref.LoadOp) and op.memref is not _memref_of(nest.accumulator):
            if op.indices and _inside_reduction(op, innermost):
                found = _loop_of_index(_lane_index(op), variables)
                if found is not None:
                    return found
    assert nest.store is not None
    if nest.store.indices:
        return _loop_of_index(nest.store.indices[-1], variables)
    return None


DOT_DEPTH = 4
"""8-bit values of one 32-bit lane of a packed integer operand (conv2d_u8s8's
weight, (O/16)×(C/4)×KH×KW×16×4)."""


def _lane_index(load: memref.LoadOp) -> SSAValue:
    """The index of a load that a vector's lanes run along: the last, or the
    one before it for a packed 8-bit operand (a last dimension of DOT_DEPTH
    read at a constant: four bytes of one lane)."""
    memref_type = load.memref.type
    if (
        len(load.indices) >= 2
        and isinstance(memref_type, MemRefType)
        and memref_type.get_shape()[-1] == DOT_DEPTH
        and _is_byte(memref_type.get_element_type())
        and constant_int(load.indices[-1]) is not None
    ):
        return load.indices[-2]
    return load.indices[-1]


def _is_byte(element_type: object) -> bool:
    return isinstance(element_type, IntegerType) and element_type.width.data == 8


def _strided_along(nest: Nest, vector: ForOp) -> bool:
    """Whether the reduction loads an operand at a stride above 1 along
    `vector` (a stride-2 pooling or depthwise window)."""
    innermost = nest.spatial[-1]
    return any(
        isinstance(op, memref.LoadOp)
        and op.indices
        and _inside_reduction(op, innermost)
        and _coefficient(op.indices[-1], vector.induction_variable) > 1
        for op in innermost.body.walk()
    )


def _coefficient(index: SSAValue, variable: SSAValue) -> int:
    """The multiple of `variable` in an index built of constants, loop
    variables, addi and muli by a constant (0 for any other index)."""
    if index is variable:
        return 1
    owner = index.owner
    if isinstance(owner, arith.AddiOp):
        return _coefficient(owner.lhs, variable) + _coefficient(owner.rhs, variable)
    if isinstance(owner, arith.MuliOp):
        for factor, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            constant = constant_int(factor)
            if constant is not None:
                return constant * _coefficient(other, variable)
    return 0


def _calls_math(nest: Nest) -> bool:
    """Whether the reduction body computes a math function (softmax's exp):
    vectors across the rows then pay for their gathers (measured on BERT's
    12x128x128 softmax: 2.6x faster than the scalar row sums)."""
    innermost = nest.spatial[-1]
    return any(
        op.name.startswith("math.") and _inside_reduction(op, innermost)
        for op in innermost.body.walk()
    )


def _reads_along_reduction(nest: Nest) -> bool:
    """Whether the reduction reads an operand along a reduction loop (a
    softmax or layer-norm row) and none along a spatial loop that also
    moves with the reduction (matmul's B, a conv's input row): vectors
    across the output would then gather one strided element per lane, and
    a plain sum or max runs faster along the row in scalar (BERT's 128x768
    layer norm: 2.7x)."""
    spatial = {loop.induction_variable for loop in nest.spatial}
    innermost = nest.spatial[-1]
    along_reduction = False
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not op.indices:
            continue
        if op.memref is _memref_of(nest.accumulator) or not _inside_reduction(op, innermost):
            continue
        variables = [_affine_variables(index) for index in op.indices]
        if any(v is None for v in variables):
            return False
        last = cast(set[SSAValue], variables[-1])
        moving = set[SSAValue]().union(*cast(list[set[SSAValue]], variables)) - spatial
        if last & spatial and moving:
            return False
        along_reduction |= bool(last) and not last & spatial
    return along_reduction


def _loop_of_index(
    index: SSAValue, variables: dict[SSAValue, ForOp]
) -> tuple[ForOp, int | None] | None:
    """(loop, None) for a loop variable, (loop, b) for `variable rem b`."""
    if index in variables:
        return variables[index], None
    owner = index.owner
    if isinstance(owner, arith.RemSIOp | arith.RemUIOp) and owner.lhs in variables:
        divisor = constant_int(owner.rhs)
        if divisor is not None:
            return variables[owner.lhs], divisor
    return None


def _inside_reduction(op: Operation, innermost: ForOp) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not innermost:
        if isinstance(parent, ForOp):
            return True
        parent = parent.parent_op()
    return False


def _memref_of(op: memref.AllocaOp | None) -> SSAValue | None:
    return op.memref if op is not None else None


def _rank(t: object) -> int:
    return len(t.get_shape()) if isinstance(t, MemRefType) else -1


def _name(loop: ForOp) -> str:
    return loop.loop_name.data
