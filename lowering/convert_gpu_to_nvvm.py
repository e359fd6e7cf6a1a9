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
- `tir.assert` -> where the check fails, a store of its fault word (the
  check's number, from 1, in the high 16 bits, its value's low 48 bits
  below) into the device global `@xtc_gpu_fault`, which the CUDA runtime
  reads after a run and reports as the check's message (fault_message);
  failing threads race, so a run reports one of its failed checks;
- f32 `math.powf` -> exp2(y · lg2|x|) (`llvm.nvvm.lg2.approx.f`, `llvm.exp2.f32`),
  with C's rules for a zero exponent and a negative base;
- math NVPTX has no instruction for (`llvm.exp.f64`, `llvm.tanh.f32`, libm's
  `erff`, ...) -> calls of CUDA's libdevice (`__nv_exp`, `__nv_tanhf`,
  `__nv_erff`; f16 through f32), which runtime/ptx.py links in
  (lowering/libdevice.py finds it).

Memrefs are generic pointers (LLVM's NVPTX back end turns the accesses of
kernel arguments into global ones). What the GPU has no definition of is
refused: heap allocation inside a kernel (`memref.alloc`) and libdevice
math where no libdevice is installed.
runtime/ptx.py marks the kernels `ptx_kernel` and emits the PTX.
"""

from __future__ import annotations

import re
from math import prod
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, math, memref, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnrealizedConversionCastOp,
    f32,
    i1,
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

from xtc.analysis.memory_spaces import SHARED_MEMORY_SPACE, is_shared
from xtc.dialects.llvm_ext import AddrSpaceCastOp
from xtc.dialects.tir import AssertOp, format_message
from xtc.lowering.convert_tir_to_llvm import ConvertTirToLLVM
from xtc.lowering.libdevice import (
    HOW_TO_GET,
    LIBM_NAMES,
    MATH_FUNCTIONS,
    LibdeviceError,
    find_libdevice,
    libdevice_function,
)
from xtc.lowering.llvm_emit import as_memref, llvm_type
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
not (CUDA's libdevice defines them as __nv_expf, ...: CallLibdevice), and
LLVM would stop the process where it meets one."""

_MATH_INTRINSIC = re.compile(r"llvm\.(\w+)\.(f16|f32|f64)")
"""A scalar math intrinsic: its function and its type."""


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


class CallLibdevice(RewritePattern):
    """A scalar math intrinsic NVPTX has no instruction for (`llvm.tanh.f32`)
    -> a call of its libdevice function (`__nv_tanhf`); f16 is computed in
    f32 and rounded back. The declarations come from declare_libdevice."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: llvm.CallIntrinsicOp, rewriter: PatternRewriter) -> None:
        name = op.intrin.data
        match = _MATH_INTRINSIC.fullmatch(name)
        if match is None or _NATIVE_INTRINSIC.fullmatch(name) or op.ress is None:
            return
        function, type_name = match.groups()
        if function not in MATH_FUNCTIONS:
            return
        t = op.ress.type
        if type_name != "f16":
            bits = 32 if isinstance(t, Float32Type) else 64
            rewriter.replace(
                op, llvm.CallOp(libdevice_function(function, bits), *op.args, return_type=t)
            )
            return
        wide = [llvm.FPExtOp(a, f32) for a in op.args]
        call = llvm.CallOp(libdevice_function(function, 32), *wide, return_type=f32)
        assert call.returned is not None
        rewriter.replace(op, [*wide, call, llvm.FPTruncOp(call.returned, t)])


def _rename_libm_calls(module: ModuleOp) -> None:
    """libm calls of convert-to-llvm (`erff`) -> their libdevice function
    (`__nv_erff`), declarations included."""
    for op in module.walk():
        if isinstance(op, llvm.CallOp) and op.callee is not None:
            target = LIBM_NAMES.get(op.callee.string_value())
            if target is not None:
                op.callee = SymbolRefAttr(target)
        elif isinstance(op, llvm.FuncOp) and not op.body.blocks:
            target = LIBM_NAMES.get(op.sym_name.data)
            if target is not None:
                op.sym_name = StringAttr(target)


def _declare_libdevice(module: ModuleOp) -> None:
    """Declares each `__nv_*` function the module calls and has not declared."""
    declared = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)}
    needed: dict[str, llvm.LLVMFunctionType] = {}
    for op in module.walk():
        if isinstance(op, llvm.CallOp) and op.callee is not None:
            name = op.callee.string_value()
            if name.startswith("__nv_") and name not in declared:
                result = op.returned.type if op.returned is not None else None
                needed[name] = llvm.LLVMFunctionType([a.type for a in op.args], result)
    for name, signature in sorted(needed.items()):
        module.body.block.add_op(llvm.FuncOp(name, signature, linkage=llvm.LinkageAttr("external")))


FAULT_GLOBAL = "xtc_gpu_fault"
"""The device global (one i64) a failed check of a kernel writes; 0: none."""
FAULT_VALUE_BITS = 48
_FAULT_TYPE = MemRefType(i64, [1])


def kernel_checks(module: ModuleOp) -> list[AssertOp]:
    """The `tir.assert`s of the module's kernels, in the order their fault
    words number them (from 1)."""
    return [
        op for kernel in gpu_kernels(module) for op in kernel.walk() if isinstance(op, AssertOp)
    ]


def fault_message(checks: list[AssertOp], word: int) -> str:
    """The message of the failed check a fault word (non-zero) records."""
    code = word >> FAULT_VALUE_BITS
    if not 1 <= code <= len(checks):
        return f"a kernel reported an unknown fault word {word:#x}"
    check = checks[code - 1]
    value = word & ((1 << FAULT_VALUE_BITS) - 1)
    if value >= 1 << (FAULT_VALUE_BITS - 1):
        value -= 1 << FAULT_VALUE_BITS
    return format_message(check.message.data, value if check.value is not None else None)


def _fault_word_stores(module: ModuleOp) -> None:
    """Each `tir.assert` of the (cloned) kernels -> `scf.if` failed: store
    its fault word into @xtc_gpu_fault (see the module docstring)."""
    checks = [op for op in module.walk() if isinstance(op, AssertOp)]
    if not checks:
        return
    zero = DenseIntOrFPElementsAttr.from_list(_FAULT_TYPE, [0])
    module.body.block.add_op(
        memref.GlobalOp.get(StringAttr(FAULT_GLOBAL), _FAULT_TYPE, zero, StringAttr("public"))
    )
    for code, check in enumerate(checks, start=1):
        block = check.parent_block()
        assert block is not None
        block.insert_ops_before(_fault_word_store(check, code), check)
        block.erase_op(check)


def _fault_word_store(check: AssertOp, code: int) -> list[Operation]:
    """`scf.if` the check failed: store its fault word (code, value)."""
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    def const(value: int, t: IntegerType = i64) -> SSAValue:
        return add(arith.ConstantOp(IntegerAttr(value, t)))

    failed = add(arith.XOrIOp(check.condition, const(1, i1)))
    word = const(code << FAULT_VALUE_BITS)
    if check.value is not None:
        value = check.value
        if isinstance(value.type, IndexType):
            value = add(arith.IndexCastOp(value, i64))
        elif cast(IntegerType, value.type).bitwidth < 64:
            value = add(arith.ExtSIOp(value, i64))
        low = add(arith.AndIOp(value, const((1 << FAULT_VALUE_BITS) - 1)))
        word = add(arith.OrIOp(word, low))
    fault = memref.GetGlobalOp(FAULT_GLOBAL, _FAULT_TYPE)
    first = arith.ConstantOp(IntegerAttr(0, IndexType()))
    store = memref.StoreOp.get(word, fault, [first])
    ops.append(scf.IfOp(failed, [], [fault, first, store, scf.YieldOp()]))
    return ops


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
    _fault_word_stores(lowered)
    PatternRewriteWalker(
        TypedPatternApplier(
            [LowerIdToSpecialRegister(), LowerBarrier(), LowerSharedBuffer(), LowerPowf()]
        )
    ).rewrite_module(lowered)
    ConvertTirToLLVM().apply(Context(), lowered)
    PatternRewriteWalker(TypedPatternApplier([CallLibdevice()])).rewrite_module(lowered)
    _rename_libm_calls(lowered)
    _declare_libdevice(lowered)
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
                    "(and libdevice does not define)"
                )
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp) or op.body.blocks:
            continue
        name = op.sym_name.data
        if name.startswith("llvm."):
            continue
        if name.startswith("__nv_"):
            _check_libdevice(name)
            continue
        why = _WHY_NO_DEFINITION.get(name, "no GPU definition (not in CUDA's libdevice)")
        raise NVVMLoweringError(f"a kernel calls @{name}, which the GPU has not: {why}")


def _check_libdevice(name: str) -> None:
    """Refuses a libdevice call where no libdevice is installed."""
    try:
        found = find_libdevice()
    except LibdeviceError as e:
        raise NVVMLoweringError(str(e)) from None
    if found is None:
        raise NVVMLoweringError(
            f"a kernel calls @{name}, which needs CUDA's libdevice: {HOW_TO_GET}"
        )
