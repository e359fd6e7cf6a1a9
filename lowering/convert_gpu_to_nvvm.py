"""The kernels of convert-tir-to-gpu at the llvm level for NVPTX: each
`gpu.func` of the module's `gpu.module`s becomes an `llvm.func` of a new
module, its body lowered by convert-tir-to-llvm's own patterns (one
lowering of loops, arithmetic and memory for the CPU and the GPU), after
the gpu ops it has become NVVM intrinsics:

- `gpu.thread_id x` -> `llvm.nvvm.read.ptx.sreg.tid.x` (ctaid for
  `gpu.block_id`, ntid for `gpu.block_dim`, nctaid for `gpu.grid_dim`),
  zero-extended to i64 (index);
- `gpu.barrier` -> `llvm.nvvm.barrier0` (`__syncthreads()`);
- a shared buffer (`memref.alloca` in memory space 3, tir-cache-read
  `scope=shared`) -> an `llvm.mlir.global` of address space 3 (`.shared`),
  used through its generic address (LLVM's NVPTX back end infers the
  `ld.shared`/`st.shared`);
- `llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"` (convert-tir-to-gpu's
  warp reductions) is already NVVM and passes through;
- f32 `math.powf` -> exp2(y · lg2|x|) (`llvm.nvvm.lg2.approx.f`, `llvm.exp2.f32`),
  with C's rules for a zero exponent and a negative base.

Memrefs are generic pointers (LLVM's NVPTX back end turns the accesses of
kernel arguments into global ones). What the GPU has no definition of is
refused: heap allocation inside a kernel (`memref.alloc`), run-time checks
(`tir.assert`), and math functions LLVM calls libm for (`erf`, `expf`
once LLVM expands it to a call): they need CUDA's libdevice, not linked
yet. runtime/ptx.py marks the kernels `ptx_kernel` and emits the PTX.
"""

from __future__ import annotations

import re
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, math, memref
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    f32,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from xtc.dialects.llvm_ext import AddrSpaceCastOp
from xtc.lowering.convert_tir_to_llvm import ConvertTirToLLVM
from xtc.lowering.llvm_emit import as_memref, llvm_type
from xtc.passes.gpu_memory import SHARED_MEMORY_SPACE, is_shared
from xtc.passes.typed_applier import TypedPatternApplier

_SPECIAL_REGISTERS: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}
"""The PTX special register each gpu id op reads."""

_WHY_NO_DEFINITION = {
    "aligned_alloc": "memref.alloc inside a kernel (allocate on the host)",
    "free": "memref.dealloc inside a kernel",
    "xtc_check": "tir.assert inside a kernel (run-time checks are CPU-only)",
}


_NATIVE_INTRINSIC = re.compile(
    r"llvm\.("
    r"nvvm\..*|xtc\..*|exp2\.f32|fptosi\.sat\..*|fptoui\.sat\..*|lifetime\..*|"
    r"(fabs|sqrt|floor|ceil|trunc|round|roundeven|rint|nearbyint|minnum|maxnum|minimum|"
    r"maximum|copysign|fma|fmuladd|smin|smax|umin|umax|abs|ctlz|cttz|ctpop|memcpy|memset|"
    r"prefetch)\..*)"
)
"""The LLVM intrinsics NVPTX emits as instructions. The others (llvm.exp,
llvm.log, llvm.sin, llvm.pow, ...) become calls of C functions the GPU has
not (CUDA's libdevice defines them as __nv_expf, ...: not linked yet), and
LLVM would stop the process where it meets one."""


class NVVMLoweringError(DiagnosticException):
    """A kernel that cannot be lowered for NVPTX."""


class LowerIdToSpecialRegister(RewritePattern):
    """`gpu.thread_id x` (block_id, block_dim, grid_dim) -> a read of the
    PTX special register, as i64 bridged back to index."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp,
        rewriter: PatternRewriter,
    ) -> None:
        register = _SPECIAL_REGISTERS[type(op)]
        dimension = op.dimension.data.value
        read = llvm.CallIntrinsicOp(f"llvm.nvvm.read.ptx.sreg.{register}.{dimension}", [], [i32])
        assert read.ress is not None
        wide = llvm.ZExtOp(read.ress, i64)
        index = UnrealizedConversionCastOp.get([wide.res], [IndexType()])
        rewriter.replace(op, [read, wide, index])


class LowerBarrier(RewritePattern):
    """`gpu.barrier` -> `llvm.nvvm.barrier0`: every thread of the block waits."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.BarrierOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, llvm.CallIntrinsicOp("llvm.nvvm.barrier0", [], []))


class LowerSharedBuffer(RewritePattern):
    """A shared buffer (`memref.alloca` in memory space 3) -> an internal
    `llvm.mlir.global` of address space 3 (PTX's `.shared`), one per
    buffer, its generic address (addrspacecast) bridged back to the memref
    for the loads and stores."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter) -> None:
        if not is_shared(op.memref):
            return
        t = op.memref.type
        assert isinstance(t, MemRefType)
        module = op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        taken = {g.sym_name.data for g in module.ops if isinstance(g, llvm.GlobalOp)}
        function = op.parent_op()
        while not isinstance(function, func.FuncOp):
            assert function is not None
            function = function.parent_op()
        base = f"{function.sym_name.data}_{op.memref.name_hint or 'shared'}"
        name = next(n for n in (f"{base}_{k}" for k in range(len(taken) + 1)) if n not in taken)
        buffer = llvm.GlobalOp(
            llvm.LLVMArrayType(prod(t.get_shape()), llvm_type(t.get_element_type())),
            name,
            "internal",
            addr_space=SHARED_MEMORY_SPACE,
            alignment=op.alignment.value.data if op.alignment else None,
        )
        rewriter.insert(buffer, InsertPoint.at_start(module.body.block))
        shared = llvm.LLVMPointerType(IntAttr(SHARED_MEMORY_SPACE))
        address = llvm.AddressOfOp(name, shared)
        generic = AddrSpaceCastOp(address.result, llvm.LLVMPointerType())
        rewriter.replace(op, [address, generic, as_memref(generic.res, t)])


class LowerPowf(RewritePattern):
    """f32 `math.powf x, y` -> exp2(y · lg2|x|) with PTX's lg2.approx.f32
    and ex2 (relative error ~2^-21), so that no libdevice `powf` is
    needed; C's rules for what the logarithm misses: pow(x, 0) = 1, an odd
    integer y keeps the sign of a negative x, a non-integer y of a
    negative x gives NaN (LRN's pow of a positive base)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.PowFOp, rewriter: PatternRewriter) -> None:
        if op.result.type != f32:
            return
        x, y = op.lhs, op.rhs

        def const(value: float) -> SSAValue:
            return add(arith.ConstantOp(FloatAttr(value, f32)))

        def add(new: Operation) -> SSAValue:
            rewriter.insert(new, InsertPoint.before(op))
            return new.results[0]

        log2 = add(llvm.CallIntrinsicOp("llvm.nvvm.lg2.approx.f", [add(math.AbsFOp(x))], [f32]))
        magnitude = add(llvm.CallIntrinsicOp("llvm.exp2.f32", [add(arith.MulfOp(y, log2))], [f32]))
        not_integer = add(arith.CmpfOp(y, add(math.TruncOp(y)), "une"))
        half = add(arith.MulfOp(y, const(0.5)))
        odd = add(arith.CmpfOp(half, add(math.TruncOp(half)), "one"))  # or not an integer
        negative = add(arith.CmpfOp(x, const(0.0), "olt"))
        signed = add(
            arith.SelectOp(
                add(arith.AndIOp(negative, odd)), add(arith.NegfOp(magnitude)), magnitude
            )
        )
        undefined = add(arith.AndIOp(negative, not_integer))
        real = add(arith.SelectOp(undefined, const(float("nan")), signed))
        zero_power = add(arith.CmpfOp(y, const(0.0), "oeq"))
        rewriter.replace(op, arith.SelectOp(zero_power, const(1.0), real))


def _kernel_as_function(kernel: gpu.FuncOp) -> func.FuncOp:
    """The kernel, cloned, as a `func.func` of its name (gpu.return ->
    func.return), so that convert-tir-to-llvm lowers it."""
    clone = kernel.clone()
    body = clone.body.clone()
    for block in body.blocks:
        last = block.last_op
        if isinstance(last, gpu.ReturnOp):
            block.erase_op(last)
            block.add_op(func.ReturnOp())
    function = func.FuncOp(kernel.sym_name.data, kernel.function_type, body)
    arg_attrs = kernel.attributes.get("arg_attrs")
    if arg_attrs is not None:
        function.arg_attrs = arg_attrs  # pyright: ignore[reportAttributeAccessIssue]
    return function


def gpu_kernels(module: ModuleOp) -> list[gpu.FuncOp]:
    """The kernels of the module's gpu.modules, in order."""
    return [
        op
        for inner in module.ops
        if isinstance(inner, gpu.ModuleOp)
        for op in inner.body.block.ops
        if isinstance(op, gpu.FuncOp) and op.kernel is not None
    ]


def kernels_to_llvm(module: ModuleOp) -> ModuleOp:
    """A new llvm-level module holding the module's kernels, each an
    `llvm.func` of its name (see the module docstring); `module` is left as
    it is. NVVMLoweringError for a module without kernels or a kernel that
    needs a function the GPU has not."""
    kernels = gpu_kernels(module)
    if not kernels:
        raise NVVMLoweringError(
            "no gpu.func kernel in the module: bind loops (tir-bind) and run convert-tir-to-gpu"
        )
    lowered = ModuleOp([_kernel_as_function(k) for k in kernels])
    PatternRewriteWalker(
        TypedPatternApplier(
            [LowerIdToSpecialRegister(), LowerBarrier(), LowerSharedBuffer(), LowerPowf()]
        )
    ).rewrite_module(lowered)
    ConvertTirToLLVM().apply(Context(), lowered)
    _check_defined(lowered)
    return lowered


def _check_defined(module: ModuleOp) -> None:
    """Refuses calls of functions the GPU has no definition of."""
    for op in module.walk():
        if isinstance(op, llvm.CallIntrinsicOp):
            name = op.intrin.data
            if not _NATIVE_INTRINSIC.fullmatch(name):
                raise NVVMLoweringError(
                    f"a kernel calls {name}, which NVPTX has no instruction for "
                    "(math that needs CUDA's libdevice, not linked yet)"
                )
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp) or op.body.blocks:
            continue
        name = op.sym_name.data
        if name.startswith("llvm."):
            continue
        why = _WHY_NO_DEFINITION.get(name, "math that needs CUDA's libdevice (not linked yet)")
        raise NVVMLoweringError(f"a kernel calls @{name}, which the GPU has not: {why}")
