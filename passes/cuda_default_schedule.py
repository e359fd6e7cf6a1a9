"""cuda-default-schedule: the default CUDA schedule, one thread per element of
a kernel's output: each top-level loop nest of a function its own kernel,
its spatial loops fused into one, split into blocks of threads, bound to
blockIdx.x x threadIdx.x; a warp per output where few outputs have long
reductions (cuda_cross_thread_reduction)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp, StringAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from xtc.dialects.tir import ForOp
from xtc.passes.cuda_cross_thread_reduction import lane_schedule
from xtc.passes.independent_iterations import check_independent_iterations
from xtc.passes.register_tiling import reuse_axis, tile_outputs
from xtc.passes.schedule_pass import PassOptionError, Refuser, SchedulePass
from xtc.passes.tir_bind import MAX_THREADS_PER_BLOCK, bound_loops
from xtc.passes.tir_fuse import TirFuse
from xtc.passes.tir_loops import (
    ScheduleError,
    is_pure_scalar,
    loop_name,
    nest_of,
    new_loop,
    only_inner_loop,
)
from xtc.passes.tir_split import TirSplit
from xtc.remarks import Remark, report

GPU_SINGLE_THREAD = "gpu-single-thread"
"""The remark category of a loop nest run by one thread: its outer loop's
iterations may not run at once (a whole-tensor reduction)."""


WARP = 32
MAX_OUTPUTS_PER_THREAD = 16
"""The most outputs one thread computes: each takes a register and a copy
of the reduction body."""
FILLING_BLOCKS = 256
"""Blocks enough to keep every multiprocessor of a large GPU busy (an
H100 has 132) with two blocks each."""


def threads_for(extent: int, most: int) -> int:
    """The threads of a block: a divisor of `extent` up to `most`, so that
    the blocks tile the iterations with no tail. The largest that is a
    whole number of warps and still leaves FILLING_BLOCKS blocks, else the
    largest at all: a small output (ResNet-50's 7x7x512 convs) in blocks
    of 256 would leave most multiprocessors idle while each thread runs a
    long reduction."""
    divisors = [d for d in range(1, min(extent, most) + 1) if extent % d == 0]
    filling = [d for d in divisors if d % WARP == 0 and extent // d >= FILLING_BLOCKS]
    return max(filling or divisors)


def fills_only_untiled(outputs: int, per_thread: int) -> bool:
    """Whether `outputs` threads would fill the GPU (FILLING_BLOCKS blocks
    of a warp or more) and `outputs / per_thread` would not: register tiling
    then loses more to idle multiprocessors than it saves in loads
    (ResNet-50's 7x7x512 convs at batch 1)."""
    filling = FILLING_BLOCKS * WARP
    return outputs // per_thread < filling <= outputs


def spatial_chain(func: FuncOp) -> list[ForOp]:
    """The function's one loop nest, from its outermost loop down through
    each loop that holds just one loop (and pure scalar ops): the loops
    whose iterations write distinct outputs in a kernel from
    convert-te-to-tir (split_nests leaves one nest per function)."""
    chain = [next(op for op in func.body.block.ops if isinstance(op, ForOp))]
    while (inner := only_inner_loop(chain[-1])) is not None:
        chain.append(inner)
    return chain


def independent_prefix(pass_name: str, func: FuncOp, chain: list[ForOp]) -> list[ForOp]:
    """The outer loops of `chain` down to the first one whose iterations
    may not run at once (as tir-bind checks it): the loops whose
    iterations become threads."""
    prefix: list[ForOp] = []
    for loop in chain:
        try:
            check_independent_iterations(loop, Refuser(pass_name, func, loop))
        except ScheduleError:
            break
        prefix.append(loop)
    return prefix


def erase_empty_nest(func: FuncOp) -> bool:
    """Erases the body (but its return) of a one-nest function whose
    perfectly nested outer loops include one of extent 0 (an empty tensor):
    it runs no iteration, and a kernel of no threads cannot be launched.
    Whether it did."""
    if not any(loop.extent == 0 for loop in spatial_chain(func)):
        return False
    for op in reversed(list(func.body.block.ops)):
        if not isinstance(op, ReturnOp):
            func.body.block.erase_op(op, safe_erase=False)
    return True


def is_one_nest(func: FuncOp) -> bool:
    """Whether the function's body is one loop nest, pure scalar ops and
    its return: a kernel as it stands."""
    ops = list(func.body.block.ops)
    loops = [op for op in ops if isinstance(op, ForOp)]
    return len(loops) == 1 and all(
        isinstance(op, ForOp | ReturnOp) or is_pure_scalar(op) for op in ops
    )


def _outside_values(nest: ForOp) -> list[SSAValue]:
    """The values `nest` uses that are defined outside it, each once."""
    inside = {id(op) for op in nest.walk()}
    seen: dict[int, SSAValue] = {}
    for op in nest.walk():
        for value in op.operands:
            owner = value.owner
            defined_inside = (
                id(owner.parent_op()) in inside if isinstance(owner, Block) else id(owner) in inside
            )
            if not defined_inside:
                seen.setdefault(id(value), value)
    return list(seen.values())


def _pure_definitions(values: list[SSAValue], pass_name: str, func: FuncOp) -> list[Operation]:
    """The pure scalar ops that compute `values` (and what they use), in
    the function's order, to be copied into a kernel."""
    needed: dict[int, Operation] = {}
    pending = [v.owner for v in values if isinstance(v.owner, Operation)]
    while pending:
        op = pending.pop()
        if id(op) in needed:
            continue
        if not is_pure_scalar(op):
            raise ScheduleError(
                pass_name,
                f"@{func.sym_name.data}: a loop nest uses '{op.name}' from the function's "
                "top level, which is neither a buffer nor a pure scalar op",
                op,
            )
        needed[id(op)] = op
        pending += [v.owner for v in op.operands if isinstance(v.owner, Operation)]
    return [op for op in func.body.block.ops if id(op) in needed]


def _is_buffer(value: SSAValue) -> bool:
    return isinstance(value.type, MemRefType)


def outline_nest(pass_name: str, func: FuncOp, nest: ForOp, name: str) -> FuncOp:
    """A function `name` holding `nest`, its arguments the buffers the nest
    uses from `func` (arguments and temporaries, in the order they are
    defined), its pure scalar inputs copied in; `nest` becomes a call."""
    outside = _outside_values(nest)
    order = {id(a): i for i, a in enumerate(func.args)}
    order |= {id(r): len(order) + i for i, op in enumerate(func.body.block.ops) for r in op.results}
    buffers = sorted((v for v in outside if _is_buffer(v)), key=lambda v: order[id(v)])
    scalars = [v for v in outside if not _is_buffer(v)]
    body = Block(arg_types=[b.type for b in buffers])
    mapping: dict[SSAValue, SSAValue] = {}
    for i, (new, old) in enumerate(zip(body.args, buffers, strict=True)):
        new.name_hint = old.name_hint or f"tmp{i}"
        mapping[old] = new
    for op in _pure_definitions(scalars, pass_name, func):
        body.add_op(op.clone(value_mapper=mapping))
    body.add_ops([nest.clone(value_mapper=mapping), ReturnOp()])
    signature = FunctionType.from_lists([b.type for b in buffers], [])
    kernel = FuncOp(name, signature, Region(body), func.sym_visibility)
    call = CallOp(name, buffers, [])
    nest_parent = nest.parent_block()
    assert nest_parent is not None, "a top-level nest is in the function's body"
    nest_parent.insert_op_before(call, nest)
    nest.detach()
    nest.erase()
    return kernel


def hoist_temporaries(func: FuncOp) -> None:
    """The function's top-level `memref.alloca`s -> `memref.alloc`s freed
    before it returns: buffers the host allocates in device memory."""
    returned = func.body.block.last_op
    assert isinstance(returned, ReturnOp), "a function body ends with its return"
    for op in list(func.body.block.ops):
        if isinstance(op, memref.AllocaOp):
            alloc = memref.AllocOp(op.dynamic_sizes, [], op.memref.type, op.alignment)
            alloc.memref.name_hint = op.memref.name_hint
            Rewriter.replace_op(op, alloc)
            func.body.block.insert_op_before(memref.DeallocOp.get(alloc.memref), returned)


STAYS_ON_HOST = (ForOp, ReturnOp, memref.AllocOp, memref.AllocaOp, memref.DeallocOp)
"""What stays at a function's top level when its nests become kernels
(with pure scalar ops): the nests (calls, then), its temporaries, its return."""


def wrap_stray_ops(pass_name: str, func: FuncOp) -> None:
    """Each run of other top-level ops (a store initializing an output; the
    epilogue of a reduction into one element: load, scalar ops, store)
    -> a nest of one block (`once<i>_b`) of one thread (`once<i>_t`). A
    pure scalar op that uses a run's result joins the run; one that does
    not stays on the host, moved before the run."""
    runs: list[list[Operation]] = [[]]
    hoisted: list[list[Operation]] = [[]]
    in_runs: set[SSAValue] = set()
    for op in func.body.block.ops:
        if isinstance(op, STAYS_ON_HOST):
            if runs[-1]:
                runs.append([])
                hoisted.append([])
        elif is_pure_scalar(op) and not any(v in in_runs for v in op.operands):
            if runs[-1]:
                hoisted[-1].append(op)
        else:
            runs[-1].append(op)
            in_runs.update(op.results)
    for run, before in zip(runs, hoisted, strict=True):
        for op in before:
            op.detach()
            func.body.block.insert_op_before(op, run[0])
    for i, run in enumerate(r for r in runs if r):
        for op in run:
            for result in op.results:
                if any(use.operation not in run for use in result.uses):
                    raise ScheduleError(
                        pass_name,
                        f"@{func.sym_name.data}: the result of '{op.name}' at the top level is "
                        "used outside it; only loop nests and buffers move to kernels",
                        op,
                    )
        once = new_loop(f"once{i}_b", 1, "blockIdx.x")
        func.body.block.insert_op_before(once, run[0])
        body = nest_of([once, new_loop(f"once{i}_t", 1, "threadIdx.x")])
        for op in run:
            op.detach()
            body.add_op(op)


def copies_as_kernels(module: ModuleOp) -> None:
    """Each top-level `memref.copy` of a function (an output that is an
    input, or a constant's buffer) -> a call of a new function
    `@copy_<i>(%source, %target)` holding the element-by-element copy as a
    loop nest, scheduled like any kernel (the host contract has no copy)."""
    copies = [
        op
        for f in module.ops
        if isinstance(f, FuncOp) and f.body.blocks
        for op in f.body.block.ops
        if isinstance(op, memref.CopyOp)
    ]
    for i, copy in enumerate(copies):
        source = cast(MemRefType[Attribute], copy.source.type)
        target = cast(MemRefType[Attribute], copy.destination.type)
        name = f"copy_{i}"
        body = Block(arg_types=[source, target])
        shape = source.get_shape() or (1,)
        loops = [new_loop(f"i{d}", extent) for d, extent in enumerate(shape)]
        inner = nest_of(loops)
        indices = [loop.induction_variable for loop in loops] if source.get_shape() else []
        value = memref.LoadOp.get(body.args[0], indices)
        inner.add_ops([value, memref.StoreOp.get(value, body.args[1], indices)])
        body.add_ops([loops[0], ReturnOp()])
        kernel = FuncOp(
            name, FunctionType.from_lists([source, target], []), Region(body), "private"
        )
        module.body.block.add_op(kernel)
        Rewriter.replace_op(copy, CallOp(name, [copy.source, copy.destination], []))


def split_nests(pass_name: str, module: ModuleOp, func: FuncOp) -> list[FuncOp]:
    """Each top-level loop nest of `func` -> a function `@<func>_k<i>` (in
    order) called where the nest stood; `func`'s temporaries become host
    allocations passed to them. The new functions, in order."""
    hoist_temporaries(func)
    wrap_stray_ops(pass_name, func)
    nests = [op for op in func.body.block.ops if isinstance(op, ForOp)]
    name = func.sym_name.data
    kernels = [outline_nest(pass_name, func, nest, f"{name}_k{i}") for i, nest in enumerate(nests)]
    for op in list(func.body.block.ops):
        if is_pure_scalar(op) and not any(r.uses for r in op.results):
            op.detach()
            op.erase()
    anchor: Operation = func
    for kernel in kernels:
        module.body.block.insert_op_after(kernel, anchor)
        anchor = kernel
    return kernels


def single_thread(pass_name: str, func: FuncOp, nest: ForOp) -> None:
    """`nest` inside loops of one iteration bound to blockIdx.x and
    threadIdx.x: one thread runs it, which a remark says."""
    block, thread = new_loop("single_b", 1, "blockIdx.x"), new_loop("single_t", 1, "threadIdx.x")
    nest_parent = nest.parent_block()
    assert nest_parent is not None, "a top-level nest is in the function's body"
    nest_parent.insert_op_before(block, nest)
    nest.detach()
    inner = nest_of([block, thread])
    inner.add_op(nest)
    report(
        Remark(
            "missed",
            GPU_SINGLE_THREAD,
            pass_name,
            f"@{func.sym_name.data}: loop '{loop_name(nest)}' may not run its iterations at "
            "once (a reduction into one element); its nest runs as one block of one thread",
            function=func.sym_name.data,
            loop=loop_name(nest),
            op=nest,
        )
    )


@dataclass(frozen=True)
class CudaDefaultSchedule(ModulePass):
    """The default CUDA schedule: one thread per output element.

    Expects: tir-level functions; each function with loops, or loads and
    stores at its top level, and no bound loop (those are left as
    scheduled) holds loop nests at its top level, with temporaries
    (memref.alloc/alloca/dealloc), pure scalar ops and other ops whose
    results stay at the top level (a store initializing an output; the
    epilogue of a reduction into one element: a load of its accumulator,
    scalar ops on it, a store); the outer loops of a nest, down to the
    first loop holding something else than one loop and pure scalar ops,
    are serial from 0 with step 1 (the spatial loops of a kernel from convert-te-to-tir: a
    reduction's accumulator stays inside a thread).

    Produces: a function that is not one nest becomes a host function:
    each nest moves to a function `@<f>_k<i>` (in order) called in its
    place, whose arguments are the buffers it uses (arguments of `@f`,
    then temporaries, in order of definition), its pure scalar inputs
    copied in; each run of other top-level ops moves likewise, in a nest
    of one block (`once<i>_b`) of one thread (`once<i>_t`), with the pure
    scalar ops that use its results (the others stay on the host); a
    memref.alloca at the top level becomes a memref.alloc freed before the
    return, so the host allocates every temporary. In each one-nest
    function, the independent outer loops (as tir-bind checks them), down
    to the first that is not, are fused into one loop `F` (tir-fuse:
    `i0_i1_...`), split by T (tir-split: `F_o`, `F_i`), `F_o` bound to
    blockIdx.x and `F_i` to threadIdx.x, T the largest divisor of the
    fused extent up to `threads` (no tail remains; threads_for: fewer
    where that leaves too few blocks to fill the GPU); the innermost spatial
    loop varies fastest with threadIdx.x, so neighbouring threads write
    neighbouring outputs. A nest whose outermost loop is not independent
    (a reduction into one element) goes into loops `single_b` x
    `single_t` of one iteration bound to blockIdx.x and threadIdx.x, with
    a `gpu-single-thread` remark. convert-tir-to-gpu then makes each
    one-nest function a kernel. A nest with an outer loop of extent 0
    (an empty tensor) runs nothing: it is erased, leaving its function an
    empty host function (no kernel, no launch). A top-level `memref.copy`
    becomes a call of a function `@copy_<i>` copying element by element
    (copies_as_kernels), scheduled as a kernel.

    Refuses (naming the function): a top-level op, other than a loop,
    temporary or pure scalar op, whose result is used outside its run
    (it cannot move to a kernel), and what tir-fuse and tir-split refuse
    on the way (a loop from a non-zero bound).

    With `cross_thread` (the default), first, a kernel with fewer than
    CROSS_THREAD_OUTPUTS outputs whose innermost spatial body (or whole
    body: a reduction into one element) holds one f32 reduction nest of at
    least MIN_REDUCTION iterations folding by addf, mulf, maximumf or
    minimumf into a rank-0 accumulator gets a warp per output
    (cuda_cross_thread_reduction.lane_schedule): the reduction split across
    32 lanes (`<r0>_lane`, threadIdx.x; lane l folds iterations l, l + 32,
    ... so that neighbouring lanes read neighbouring elements), then a
    serial loop `<r0>_lanes` folding the lanes' partials into the
    accumulator, the epilogue after it; the outputs fused and split into
    blocks of up to OUTPUTS_PER_BLOCK warps (`F_o` blockIdx.x, `F_i`
    threadIdx.y), or one block `lanes_b` for a reduction into one element
    (no `gpu-single-thread` remark then). convert-tir-to-gpu makes the
    lanes' combination warp shuffles. `cross_thread=false` turns this off.

    With `outputs_per_thread=K` (K > 1), before the fusion, a kernel
    whose innermost independent loop holds reduction loops (a convolution,
    a matmul) gives each thread K outputs along the independent loop, not
    the innermost, whose extent K divides and that the most coalesced
    loads of the reduction do not depend on (register_tiling.reuse_axis:
    the output channels of a convolution): that loop `a` runs to extent/K
    as `a_o`, and the innermost body holds K jammed copies of itself for
    a = a_o * K + j, with K accumulators, each load shared by the copies
    read once (register_tiling.tile_outputs). A kernel with no such loop,
    or whose outputs fill the GPU with one thread each but would not with
    K each (fills_only_untiled), is scheduled as above.

    By default (`shared_tiling=false` turns it off), a reduction kernel
    whose two innermost spatial loops make tiles of 64 threads or more is
    computed by blocks of such output tiles, its operands copied into shared memory one reduction
    tile at a time (xtc.passes.cuda_shared_tiling); other kernels are
    scheduled as above. With `shared_outputs_per_thread=K` (K > 1), a
    shared-tiled kernel's block tile is K times longer along its reuse
    axis with the same threads, each thread computing K outputs from one
    load of the other operand's shared value (cuda_shared_tiling).

    Command line: `cuda-default-schedule{threads=128}`,
    `cuda-default-schedule{outputs_per_thread=4}`,
    `cuda-default-schedule{shared_tiling=false}`,
    `cuda-default-schedule{shared_outputs_per_thread=4}`,
    `cuda-default-schedule{cross_thread=false}`.
    """

    name = "cuda-default-schedule"

    threads: int = 256
    """The most threads per block (a divisor of the fused extent is taken)."""

    outputs_per_thread: int = 1
    """The outputs of a reduction nest each thread computes (register tiling; 1: off)."""

    shared_tiling: bool = True
    """Reduction kernels in output tiles per block through shared memory
    (xtc.passes.cuda_shared_tiling); the others as without it."""

    shared_outputs_per_thread: int = 1
    """The outputs each thread of a shared-tiled kernel computes along the
    tile's reuse axis, the block's tile that many times longer (1: one each)."""

    cross_thread: bool = True
    """A warp per output for few outputs with long reductions (cuda_cross_thread_reduction)."""

    def __post_init__(self) -> None:
        if not 1 <= self.threads <= MAX_THREADS_PER_BLOCK:
            raise PassOptionError(
                self.name, f"threads={self.threads} is outside [1, {MAX_THREADS_PER_BLOCK}]"
            )
        if not 1 <= self.outputs_per_thread <= MAX_OUTPUTS_PER_THREAD:
            raise PassOptionError(
                self.name,
                f"outputs_per_thread={self.outputs_per_thread} is outside "
                f"[1, {MAX_OUTPUTS_PER_THREAD}]",
            )
        if not 1 <= self.shared_outputs_per_thread <= MAX_OUTPUTS_PER_THREAD:
            raise PassOptionError(
                self.name,
                f"shared_outputs_per_thread={self.shared_outputs_per_thread} is outside "
                f"[1, {MAX_OUTPUTS_PER_THREAD}]",
            )

    def schedule_of(self, func: FuncOp) -> list[SchedulePass]:
        """The schedule passes that fuse and split `func`'s independent
        outer loops (as tir-bind checks them: after the fusion the index
        is a division and a remainder, which the check cannot follow;
        distinct iterations of the fused loop differ in a first original
        loop, whose iterations write apart); none when the outermost loop
        is not independent. Register-tiles `func` first (in place) where
        `outputs_per_thread` asks for it and a loop saves loads."""
        name = func.sym_name.data
        chain = independent_prefix(self.name, func, spatial_chain(func))
        if not chain:
            return []
        outputs = prod(loop.extent for loop in chain)
        axis = reuse_axis(chain, self.outputs_per_thread)
        if axis is not None and not fills_only_untiled(outputs, self.outputs_per_thread):
            tile_outputs(chain, axis, self.outputs_per_thread)  # `axis` shorter: still independent
        steps: list[SchedulePass] = []
        fused = loop_name(chain[-1])
        for outer in reversed(chain[:-1]):  # inner pairs first: the fused body is perfect
            steps.append(TirFuse(func=name, outer=loop_name(outer), inner=fused))
            fused = f"{loop_name(outer)}_{fused}"
        extent = prod(loop.extent for loop in chain)
        assert extent > 0, "nests of no iteration are erased first (erase_empty_nest)"
        threads = threads_for(extent, self.threads)
        return [*steps, TirSplit(func=name, loop=fused, factor=threads)]

    def tile_through_shared(self, ctx: Context, module: ModuleOp, func: FuncOp) -> bool:
        """Whether `func` is now tiled through shared memory (cuda_shared_tiling)."""
        from xtc.passes.cuda_shared_tiling import apply_shared_tiling

        chain = independent_prefix(self.name, func, spatial_chain(func))
        return apply_shared_tiling(ctx, module, func, chain, self.shared_outputs_per_thread)

    def lanes_of(self, func: FuncOp) -> list[SchedulePass] | None:
        """Where `cross_thread` asks for it and the kernel qualifies, its
        reduction split across lanes and the passes that give it blocks
        of warps (cuda_cross_thread_reduction.lane_schedule); else None."""
        if not self.cross_thread:
            return None
        chain = independent_prefix(self.name, func, spatial_chain(func))
        return lane_schedule(func, chain)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        copies_as_kernels(op)
        functions = [
            f
            for f in op.ops
            if isinstance(f, FuncOp)
            and f.body.blocks
            and (
                any(isinstance(o, ForOp) for o in f.body.walk())
                or any(isinstance(o, memref.LoadOp | memref.StoreOp) for o in f.body.block.ops)
            )
            and not bound_loops(f)
        ]
        kernels: list[FuncOp] = []
        for f in functions:
            kernels += [f] if is_one_nest(f) else split_nests(self.name, op, f)
        kernels = [k for k in kernels if not bound_loops(k)]  # the stray ops' nests are bound
        kernels = [k for k in kernels if not erase_empty_nest(k)]
        if self.shared_tiling:
            kernels = [k for k in kernels if not self.tile_through_shared(ctx, op, k)]
        laned = {k.sym_name.data: s for k in kernels if (s := self.lanes_of(k)) is not None}
        schedules = {
            f.sym_name.data: laned[f.sym_name.data]
            if f.sym_name.data in laned
            else self.schedule_of(f)
            for f in kernels
        }
        for f in kernels:  # each step names its kernel: applied to it alone
            for step in schedules[f.sym_name.data]:
                step.apply_to(f)
        for f in kernels:
            nest = next(o for o in f.body.block.ops if isinstance(o, ForOp))
            if f.sym_name.data in laned:
                if laned[f.sym_name.data]:  # not a whole-tensor reduction, bound already
                    warps = only_inner_loop(nest)
                    assert warps is not None, "tir-split leaves no tail: the factor divides"
                    nest.properties["kind"] = StringAttr("blockIdx.x")
                    warps.properties["kind"] = StringAttr("threadIdx.y")
                continue
            if not schedules[f.sym_name.data]:
                single_thread(self.name, f, nest)
                continue
            threads = only_inner_loop(nest)
            assert threads is not None, "tir-split leaves no tail: the factor divides"
            nest.properties["kind"] = StringAttr("blockIdx.x")
            threads.properties["kind"] = StringAttr("threadIdx.x")
