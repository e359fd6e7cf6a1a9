"""convert-tir-to-gpu: tir functions whose outermost loops are bound to GPU
axes (tir-bind) become kernels of xDSL's `gpu` dialect, launched by a host
function of the same name.

    func.func @relu_0(%x: memref<4x256xf32>, %y: memref<4x256xf32>) {
      tir.for %i0 = 0 to 4 step 1 {name = "i0", kind = "blockIdx.x"} {
        tir.for %i1 = 0 to 256 step 1 {name = "i1", kind = "threadIdx.x"} {
          BODY(%i0, %i1)
    }}}

becomes

    gpu.module @xtc_kernels {
      gpu.func @relu_0(%x: memref<4x256xf32>, %y: memref<4x256xf32>) kernel {
        %i0 = gpu.block_id x
        %i1 = gpu.thread_id x
        BODY(%i0, %i1)
        gpu.return
    }}
    func.func @relu_0(%x: memref<4x256xf32>, %y: memref<4x256xf32>) {
      gpu.launch_func @xtc_kernels::@relu_0 blocks in (4, 1, 1) threads in (256, 1, 1)
          args(%x : memref<4x256xf32>, %y : memref<4x256xf32>)
      func.return
    }

so that callers (`@main`) are unchanged. A bound loop with a lower bound
or a step other than 0 and 1 gets `lower + id * step`.

A block may run in phases, its threads through shared memory:

    tir.for %b = 0 to 64 step 1 {name = "b", kind = "blockIdx.x"} {
      %a_shared = memref.alloca() : memref<16x32xf32, 3 : i64>
      tir.for %c = 0 to 256 step 1 {name = "c", kind = "threadIdx.x"} { COPY }
      tir.for %t = 0 to 256 step 1 {name = "t", kind = "threadIdx.x"} { COMPUTE }
    }

becomes a kernel of 256 threads per block running COPY, `gpu.barrier`,
COMPUTE, each phase's loop variable the thread id.

The host contract (what a CUDA runtime walks to build its launch plan).
After cuda-default-schedule and convert-tir-to-gpu on a model from
convert-te-to-tir (any -O level), every `func.func` (`@main` and the host
functions) holds only these ops, at its top level (no loops, no regions):

- `func.call` of another host function (in order: a function with several
  nests calls its launchers `@f_k0`, `@f_k1`, ... one after another);
- `gpu.launch_func @xtc_kernels::@k`, grid and block sizes
  `arith.constant` index values, its arguments memrefs only (no async
  token, cluster or dynamic shared memory);
- `memref.alloc` (static shape, maybe `alignment`) and `memref.dealloc`:
  device buffers, intermediate tensors and a function's temporaries (a
  temporary lives from its alloc to its dealloc, around the launches that
  use it);
- `memref.get_global @w`: a weight, a module-level `memref.global` with a
  dense or resource initial value, constant;
- `arith.constant` (index: the launch sizes);
- `func.return` (no results: outputs are the arguments marked
  `graph.output`).

No memref view (reinterpret_cast, collapse_shape, expand_shape, subview),
no memref.alloca, no memref.copy and no load or store occurs in host code:
reshapes and concatenations are kernels at the tir level, and
cuda-default-schedule moves every other op to a kernel of one thread.
Kernels allocate no global memory (a rank-0 memref.alloca accumulator
inside a thread is a register).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from xtc.dialects.tir import GPU_AXES, ForOp
from xtc.passes.cuda_cross_thread_reduction import lower_lanes
from xtc.passes.gpu_memory import (
    MAX_SHARED_BYTES,
    is_shared,
    is_thread_loop,
    outermost_thread_loops,
    shared_buffers,
    shared_bytes,
    thread_loops,
    thread_shape,
)
from xtc.passes.tir_bind import MAX_THREADS_PER_BLOCK, is_bound
from xtc.passes.tir_loops import is_pure_scalar, loop_name, loops_in

KERNEL_MODULE = "xtc_kernels"
"""The `gpu.module` holding every kernel."""


class GPULoweringError(DiagnosticException):
    """A function convert-tir-to-gpu cannot make a kernel; `op` is the
    offending operation (for a located diagnostic)."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(f"convert-tir-to-gpu: {message}")
        self.op = op


def _dimension(axis: str) -> gpu.DimensionAttr:
    return gpu.DimensionAttr(gpu.DimensionEnum(axis.split(".")[1]))


def _has_bound_loop(function: func.FuncOp) -> bool:
    return any(is_bound(loop) for loop in loops_in(function))


def _is_shared_buffer(op: Operation) -> bool:
    return isinstance(op, memref.AllocaOp) and is_shared(op.memref)


def _bound_chain(function: func.FuncOp) -> tuple[list[ForOp], list[ForOp]]:
    """The function's outermost loops, each the only loop of its parent's
    body, down to the last bound one, and the block's phases
    (block_phases); refuses a body with anything else than pure scalar ops
    around them, and a bound loop elsewhere."""
    name = function.sym_name.data
    chain: list[ForOp] = []
    block = function.body.block
    while True:
        loops = [op for op in block.ops if isinstance(op, ForOp)]
        others = [op for op in block.ops if not isinstance(op, ForOp | func.ReturnOp)]
        if len(loops) != 1 or not is_bound(loops[0]) or any(map(_is_shared_buffer, others)):
            break  # a block's shared buffers are allocated around its phases
        for op in others:
            if not is_pure_scalar(op):
                raise GPULoweringError(
                    f"@{name}: '{op.name}' is outside the bound loops; a kernel function "
                    "holds its bound loop nest only",
                    op,
                )
        chain.append(loops[0])
        block = loops[0].body.block
    if not chain:
        first = next(loop for loop in loops_in(function) if is_bound(loop))
        raise GPULoweringError(
            f"@{name}: loop '{loop_name(first)}' is bound to {first.kind.data} but the "
            "function's body is not one bound loop (bind the outermost loop)",
            first,
        )
    phases = block_phases(function, chain)
    for loop in loops_in(chain[-1]):
        if loop is not chain[-1] and is_bound(loop) and not _in_phase(loop, phases):
            raise GPULoweringError(
                f"@{name}: loop '{loop_name(loop)}' is bound to {loop.kind.data} below a "
                "loop that is not: bound loops must be the outermost",
                loop,
            )
        if loop.kind.data == "parallel":
            raise GPULoweringError(
                f"@{name}: loop '{loop_name(loop)}' is parallel inside a kernel; its threads "
                "come from bound loops (tir-bind)",
                loop,
            )
    return chain, phases


def block_phases(function: func.FuncOp, chain: list[ForOp]) -> list[ForOp]:
    """The phases of a block: when the last loop of the bound chain is a
    blockIdx one whose body holds threadIdx-bound loops, those not inside
    another (each with the thread loops nested in it runs once per thread
    of the block, one phase after another); empty otherwise. Refuses
    phases of different thread shapes, a phase under an op other than a
    serial tir.for (a barrier must be reached by every thread), and a
    block using more shared memory than CUDA gives it."""
    name = function.sym_name.data
    last = chain[-1]
    if is_thread_loop(last):
        return []
    phases = outermost_thread_loops(last)
    if not phases:
        return []
    shapes = {thread_shape(phase) for phase in phases}
    if len(shapes) > 1:
        raise GPULoweringError(
            f"@{name}: the threadIdx-bound loop nests of a block differ in shape; every "
            "phase of a block runs on the same threads",
            phases[0],
        )
    threads = prod(extent for _, extent in shapes.pop())
    if threads > MAX_THREADS_PER_BLOCK:
        raise GPULoweringError(
            f"@{name}: {threads} threads per block; CUDA allows at most {MAX_THREADS_PER_BLOCK}",
            phases[0],
        )
    for phase in phases:
        parent = phase.parent_op()
        while parent is not last:
            assert parent is not None
            if not isinstance(parent, ForOp) or parent.kind.data != "serial":
                raise GPULoweringError(
                    f"@{name}: loop '{loop_name(phase)}' is bound to {phase.kind.data} under "
                    f"'{parent.name}'; threads of a block are bound at its top or under serial "
                    "loops only (every thread must reach the barriers between them)",
                    phase,
                )
            parent = parent.parent_op()
    taken = shared_bytes(shared_buffers(last))
    if taken > MAX_SHARED_BYTES:
        raise GPULoweringError(
            f"@{name}: a block uses {taken} bytes of shared memory; CUDA gives a block "
            f"{MAX_SHARED_BYTES} bytes of static shared memory",
            last,
        )
    return phases


def _in_phase(loop: ForOp, phases: list[ForOp]) -> bool:
    return any(loop is phase or phase.is_ancestor(loop) for phase in phases)


@dataclass
class SharedAccesses:
    """The shared buffers phases read and write."""

    reads: set[SSAValue]
    writes: set[SSAValue]

    @staticmethod
    def of(op: Operation) -> SharedAccesses:
        accesses = SharedAccesses(set(), set())
        for inner in op.walk():
            if isinstance(inner, memref.LoadOp) and is_shared(inner.memref):
                accesses.reads.add(inner.memref)
            elif isinstance(inner, memref.StoreOp) and is_shared(inner.memref):
                accesses.writes.add(inner.memref)
        return accesses

    def conflicts(self, later: SharedAccesses) -> bool:
        """Whether `later` must wait for these: it reads what they write or
        writes what they read or write."""
        return bool(later.reads & self.writes or later.writes & (self.reads | self.writes))

    def add(self, other: SharedAccesses) -> None:
        self.reads |= other.reads
        self.writes |= other.writes


def insert_barriers(
    block: Block, repeated: bool, pending: SharedAccesses, rewriter: PatternRewriter
) -> SharedAccesses:
    """`gpu.barrier` before each phase of `block` that touches a shared
    buffer a phase since the last barrier wrote (or writes one it read),
    and at the end of the body of a serial loop (`repeated`) whose next
    iteration would so touch what this one left; `pending` are the
    accesses since the last barrier, on entry and (returned) on exit."""
    holders = [op for op in block.ops if any(is_thread_loop(loop) for loop in loops_in(op))]
    for op in holders:
        if isinstance(op, ForOp) and not is_thread_loop(op):
            pending = insert_barriers(op.body.block, op.extent > 1, pending, rewriter)
            continue
        accesses = SharedAccesses.of(op)
        if pending.conflicts(accesses):
            rewriter.insert(gpu.BarrierOp(), InsertPoint.before(op))
            pending = SharedAccesses(set(), set())
        pending.add(accesses)
    if repeated and holders:
        whole = SharedAccesses(set(), set())
        for op in holders:
            whole.add(SharedAccesses.of(op))
        if pending.conflicts(whole):
            rewriter.insert(gpu.BarrierOp(), InsertPoint.after(holders[-1]))
            pending = SharedAccesses(set(), set())
    return pending


def launch_sizes(chain: list[ForOp], phases: list[ForOp]) -> tuple[list[int], list[int]]:
    """The grid and block sizes (x, y, z) the bound loops ask for."""
    extents = {loop.kind.data: loop.extent for loop in chain}
    if phases:
        extents.update(thread_shape(phases[0]))
    grid = [extents.get(axis, 1) for axis in GPU_AXES[:3]]
    block = [extents.get(axis, 1) for axis in GPU_AXES[3:]]
    return grid, block


def _replace_loop_by_id(loop: ForOp, rewriter: PatternRewriter) -> None:
    """The loop's body inlined where it stands, its variable the block or
    thread id (times the step, plus the lower bound)."""
    axis = loop.kind.data
    dimension = _dimension(axis)
    id_op = gpu.ThreadIdOp(dimension) if axis.startswith("thread") else gpu.BlockIdOp(dimension)
    new_ops: list[Operation] = [id_op]
    value: SSAValue = id_op.result
    step, lower = loop.step.value.data, loop.lower.value.data
    if step != 1:
        factor = arith.ConstantOp(IntegerAttr(step, IndexType()))
        scaled = arith.MuliOp(value, factor.result)
        new_ops += [factor, scaled]
        value = scaled.result
    if lower != 0:
        offset = arith.ConstantOp(IntegerAttr(lower, IndexType()))
        shifted = arith.AddiOp(value, offset.result)
        new_ops += [offset, shifted]
        value = shifted.result
    rewriter.insert(new_ops, InsertPoint.before(loop))
    rewriter.inline_block(loop.body.block, InsertPoint.before(loop), [value])
    rewriter.erase(loop)


def _host_launcher(function: func.FuncOp, grid: list[int], block: list[int]) -> func.FuncOp:
    """A function of `function`'s name and signature that launches its kernel."""
    inputs = function.function_type.inputs.data
    body = Block(arg_types=inputs)
    for new, old in zip(body.args, function.args, strict=True):
        new.name_hint = old.name_hint
    constants = {n: arith.ConstantOp(IntegerAttr(n, IndexType())) for n in sorted({*grid, *block})}
    kernel = SymbolRefAttr(KERNEL_MODULE, [function.sym_name.data])
    launch = gpu.LaunchFuncOp(
        kernel,
        [constants[n] for n in grid],
        [constants[n] for n in block],
        kernelOperands=list(body.args),
    )
    body.add_ops([*constants.values(), launch, func.ReturnOp()])
    host = func.FuncOp(
        function.sym_name.data,
        function.function_type,
        Region(body),
        function.sym_visibility,
        arg_attrs=function.arg_attrs,
    )
    return host


HOST_OPS = (
    func.CallOp,
    gpu.LaunchFuncOp,
    memref.AllocOp,
    memref.DeallocOp,
    memref.GetGlobalOp,
    arith.ConstantOp,
    func.ReturnOp,
)
"""The ops host code may hold (the host contract of the module docstring)."""


def check_host_code(module: ModuleOp) -> None:
    """Refuses (GPULoweringError, pointing at the op) a `func.func` of the
    module holding an op outside the host contract of the module
    docstring, or a launch with other than memref arguments."""
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        for op in function.body.ops:
            if not isinstance(op, HOST_OPS):
                raise GPULoweringError(
                    f"@{function.sym_name.data}: '{op.name}' in host code; host functions "
                    "call, launch, allocate, free and read weights only",
                    op,
                )
            if isinstance(op, gpu.LaunchFuncOp) and not all(
                isinstance(a.type, MemRefType) for a in op.kernelOperands
            ):
                raise GPULoweringError(
                    f"@{function.sym_name.data}: a launch of {op.kernel} takes a non-memref "
                    "argument",
                    op,
                )


@dataclass(frozen=True)
class FunctionToKernel(RewritePattern):
    """A function with bound loops -> a kernel in `kernels` and a host
    function of its name launching it."""

    kernels: Block

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not op.body.blocks or not _has_bound_loop(op):
            return
        if op.function_type.outputs.data:
            raise GPULoweringError(f"@{op.sym_name.data}: a kernel returns nothing", op)
        chain, phases = _bound_chain(op)
        grid, block = launch_sizes(chain, phases)
        host = _host_launcher(op, grid, block)
        kernel = gpu.FuncOp(
            op.sym_name.data,
            op.function_type,
            rewriter.move_region_contents_to_new_regions(op.body),
            kernel=True,
            known_block_size=block,
            known_grid_size=grid,
        )
        if op.arg_attrs is not None:
            kernel.attributes["arg_attrs"] = op.arg_attrs
        self.kernels.add_op(kernel)
        if phases:
            insert_barriers(chain[-1].body.block, False, SharedAccesses(set(), set()), rewriter)
        for loop in [*chain, *(inner for phase in phases for inner in thread_loops(phase))]:
            _replace_loop_by_id(loop, rewriter)
        returned = kernel.body.block.last_op
        assert isinstance(returned, func.ReturnOp)
        rewriter.replace(returned, gpu.ReturnOp([]))
        rewriter.replace(op, host)


@dataclass(frozen=True)
class ConvertTirToGPU(ModulePass):
    """Makes each tir function whose outermost loops are bound to GPU axes
    a kernel of xDSL's `gpu` dialect.

    Expects: tir-level functions (convert-te-to-tir, schedules); in each
    function to run on the GPU, a body that is one loop bound by tir-bind,
    holding (with pure scalar ops) one bound loop, and so on down to the
    last bound loop, which may hold anything tir has but parallel and
    bound loops. Or a block in phases: the last bound loop is a blockIdx
    one whose body holds the block's shared buffers (memref.alloca in
    memory space 3, tir-cache-read scope=shared) and several
    threadIdx-bound loop nests (the phases: cooperative copies, the
    compute), at its top or under serial loops (a reduction-tile loop),
    all of one thread shape.

    Produces: a `gpu.module @xtc_kernels` holding, per such function, a
    `gpu.func` kernel of its name and signature whose bound loops are
    `gpu.block_id` / `gpu.thread_id` (times the step, plus the lower
    bound); the function itself launches it (`gpu.launch_func`, grid and
    block sizes the bound extents, 1 along unbound axes), so callers are
    unchanged. The module gets the `gpu.container_module` attribute.
    First, each cross-thread reduction of cuda-default-schedule (a
    threadIdx.x lane loop storing its partial into `part[lane]`, followed
    by a loop folding `part` into an accumulator) becomes a lane loop
    around its whole parent body: the partial a register, folded across
    the warp by `llvm.nvvm.shfl.sync.bfly.f32` calls, the accumulator and
    the rest of the body updated by lane 0 only
    (xtc.passes.cuda_cross_thread_reduction.lower_lanes).
    Functions without bound loops are left as they are. A module without
    bound loops is unchanged. In a block in phases every phase's loops
    become thread ids too (the block size is the phases' thread shape), and
    a `gpu.barrier` goes before each phase that reads a shared buffer a
    phase since the last barrier wrote (or writes one such a phase read
    or wrote), and at the end of a serial loop's body when its next
    iteration would do so (insert_barriers); the shared buffers stay
    memref.allocas in memory space 3 (runtime/ptx.py makes them `.shared`
    variables). The interpreter runs the result with the threads of many
    blocks in lockstep, as numpy lanes (xtc.interp.gpu); runtime/ptx.py
    makes PTX of the kernels.

    Refuses (naming the function and pointing at the op): a bound loop
    that is not among the outermost (or in a phase), a body with other
    ops than the bound nest and pure scalar ops, a parallel loop inside a
    kernel, a function with results; for a block in phases, phases of
    different thread shapes, a phase under an op other than a serial loop
    (a barrier every thread must reach), more than 1024 threads per block
    and more than 48 KiB of shared memory per block.
    """

    name = "convert-tir-to-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for lane in [loop for loop in loops_in(op) if loop.kind.data == "threadIdx.x"]:
            lower_lanes(lane)  # a cross-thread reduction: the lane loop wraps its body
        kernels = Block()
        PatternRewriteWalker(
            FunctionToKernel(kernels), apply_recursively=False, walk_regions_first=False
        ).rewrite_module(op)
        if not kernels.ops:
            return
        first = op.body.block.first_op
        assert first is not None, "a kernel's host function is in the module"
        # gpu.ModuleOp's __init__ types its name as a SymbolRefAttr; the op holds a StringAttr.
        kernel_module = gpu.ModuleOp.create(
            properties={"sym_name": StringAttr(KERNEL_MODULE)}, regions=[Region(kernels)]
        )
        op.body.block.insert_op_before(kernel_module, first)
        op.attributes["gpu.container_module"] = UnitAttr()
