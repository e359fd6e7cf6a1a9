"""Native execution of llvm-level modules with llvmlite's MCJIT.

    jit = compile_module(module)          # module after convert-tir-to-llvm
    x = aligned_copy(np.random.rand(4, 8).astype(np.float32))
    y = aligned_empty((4, 8), np.float32)
    jit.call("main", [x, y])              # void main(float* x, float* y)

The module becomes LLVM IR (runtime/llvm_ir.py), is optimized by LLVM's O2
pipeline with loop and SLP vectorization for the host CPU's name and
features (`optimize_at`: xtc's -O3 is LLVM's O2 on a CPU), and is compiled
in process. Arguments are passed as the data pointers of numpy
arrays, which must be C-contiguous and 64-byte aligned (the generated code
may use aligned vector accesses): `aligned_empty` and `aligned_copy` make
such arrays. The C functions the code calls (libm's erf, tanh, ...;
aligned_alloc, free) resolve in the Python process; a module with parallel
loops also calls libgomp (GOMP_parallel, omp_get_thread_num, ...): the
system's, else one that pip installed (runtime/toolchain.py), loaded into
the process the first time one is compiled. Its parallel loops use
XTC_NUM_THREADS threads when that is set (`JitModule.set_num_threads`
changes it), else libgomp's default (OMP_NUM_THREADS, or all cores); one
libgomp pool serves the whole process. A call during which a check of the
code fails (a `tir.assert`: an index out of range, ...) raises InputError
with the check's message (runtime/faults.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm_binding
import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from xtc.analysis.host_cpu import host_cpu_features, host_cpu_name
from xtc.dialects.tir import OUTPUT_ATTR
from xtc.runtime.elf_symbols import undefined_symbols
from xtc.runtime.errors import InputError
from xtc.runtime.faults import FALLBACK, clear_fault, fault_message
from xtc.runtime.float_builtins import link_float_builtins
from xtc.runtime.llvm_ir import llvm_ir
from xtc.runtime.native_abi import (  # noqa: F401 - aligned_copy and aligned_empty re-exported
    ALIGNMENT,
    aligned_copy,
    aligned_empty,
    is_aligned,
    num_threads_from_environment,
)
from xtc.runtime.toolchain import OPENMP_SYMBOL, ToolchainError, find_openmp

_SYMBOLS_FROM_LIBM = ("erff", "erf", "tanhf", "expm1f", "log1pf", "cbrtf", "asinhf")
_SYMBOLS_FROM_LIBC = ("aligned_alloc", "free", "memcpy", "memset", "snprintf")
_LIBGOMP_PREFIXES = ("GOMP_", "omp_")
NUM_THREADS_GLOBAL = "xtc_num_threads"
"""The i32 global of a module with parallel loops holding their team size
(see xtc.lowering.tir_lower_parallel)."""


# ------------------------------------------------------------ the host CPU


@dataclass(frozen=True)
class CpuTarget:
    """The x86-64 CPU that code is compiled for, as LLVM names it: a CPU name
    ("znver5", "skylake-avx512", "x86-64") and features ("+avx2,-avx512fp16").
    Code compiled for the host runs here; so does code for a CPU whose
    features are a subset of the host's (`CpuTarget.host().without(...)`)."""

    cpu: str
    features: str = ""

    @staticmethod
    def host() -> CpuTarget:
        return CpuTarget(host_cpu(), host_features())

    def without(self, *features: str) -> CpuTarget:
        """This target with `features` ("avx512fp16", ...) turned off."""
        kept = [f for f in self.features.split(",") if f and f[1:] not in features]
        return CpuTarget(self.cpu, ",".join([*kept, *(f"-{f}" for f in features)]))


def new_target_machine(target: CpuTarget | None = None) -> llvm_binding.TargetMachine:
    """A JIT target machine for `target` (default: this CPU). An execution
    engine takes ownership of the one it is given, so each engine gets a new
    one."""
    _initialize()
    target = target or CpuTarget.host()
    return llvm_binding.Target.from_default_triple().create_target_machine(
        cpu=target.cpu, features=target.features, opt=3, jit=True
    )


@functools.cache
def host_target_machine() -> llvm_binding.TargetMachine:
    """The target machine that parsing and optimization use (never handed to
    an engine)."""
    return new_target_machine()


@functools.cache
def _initialize() -> None:
    llvm_binding.initialize_native_target()
    llvm_binding.initialize_native_asmprinter()
    _make_c_symbols_visible()


def host_cpu() -> str:
    """LLVM's name of this CPU (e.g. "znver3")."""
    _initialize()
    return host_cpu_name()


def host_features() -> str:
    """This CPU's features as LLVM spells them (analysis/host_cpu.py)."""
    _initialize()
    return host_cpu_features()


def _make_c_symbols_visible() -> None:
    """MCJIT resolves external calls in the process: load libm / libc
    globally if one of the functions the lowering calls is missing."""
    for library, symbols in (("m", _SYMBOLS_FROM_LIBM), ("c", _SYMBOLS_FROM_LIBC)):
        if all(llvm_binding.address_of_symbol(s) for s in symbols):
            continue
        path = ctypes.util.find_library(library)
        if path is None:
            raise RuntimeError(f"lib{library} not found: the JIT cannot call {symbols}")
        llvm_binding.load_library_permanently(path)


def uses_libgomp(module: ModuleOp) -> bool:
    """Whether an llvm-level module calls libgomp (it has parallel loops)."""
    return any(
        isinstance(op, llvm.FuncOp)
        and not op.body.blocks
        and op.sym_name.data.startswith(_LIBGOMP_PREFIXES)
        for op in module.ops
    )


def _make_libgomp_visible() -> None:
    """Loads an OpenMP runtime into the process (once) for the JIT to
    resolve GOMP_parallel and omp_*: the system's libgomp, else a pip one
    (runtime/toolchain.py); a ToolchainError naming what to install when
    there is none."""
    if llvm_binding.address_of_symbol(OPENMP_SYMBOL):
        return
    runtime = find_openmp()
    try:
        llvm_binding.load_library_permanently(runtime.load_name)
    except RuntimeError as e:
        raise ToolchainError(
            f"the OpenMP runtime {runtime.load_name} ({runtime.origin}) cannot be loaded: {e}"
        ) from None


def _parse_for(module: ModuleOp, machine: llvm_binding.TargetMachine) -> llvm_binding.ModuleRef:
    ref = llvm_binding.parse_assembly(llvm_ir(module))
    ref.triple = machine.triple
    ref.data_layout = str(machine.target_data)
    ref.verify()
    return ref


CPU_LLVM_LEVEL = 2
"""LLVM's highest speed level for a CPU: xtc's -O3 runs LLVM's O2 pipeline
there (with its loop and SLP vectorizers and loop unrolling, as at -O3). The
schedules unroll and vectorize the kernels already; what LLVM's O3 adds (an
unroll threshold twice as high, more inlining and combining) made ResNet-50's
kernels 23% larger and their optimization and code generation 31% slower,
and no faster: with O2, the kernels' summed times per model run were within
2% of O3's, either way, on six bench models (issue 14's note)."""


def optimize(ref: llvm_binding.ModuleRef) -> None:
    """xtc's -O3 (LLVM's O2, `CPU_LLVM_LEVEL`) with loop and SLP
    vectorization and loop unrolling, for the host."""
    optimize_at(ref, 3, host_target_machine())


def optimize_at(
    ref: llvm_binding.ModuleRef, opt_level: int, machine: llvm_binding.TargetMachine
) -> None:
    """LLVM's pipeline for xtc's -O`opt_level` (0 to 3) on `machine`: LLVM's
    level `opt_level`, at most `CPU_LLVM_LEVEL` on a CPU (NVPTX keeps O3);
    from -O2 on with loop and SLP vectorization and loop unrolling."""
    cpu = not machine.triple.startswith("nvptx")
    level = min(opt_level, CPU_LLVM_LEVEL) if cpu else opt_level
    options = llvm_binding.create_pipeline_tuning_options(speed_level=level)
    vectorize = opt_level >= 2
    options.loop_vectorization = vectorize
    options.slp_vectorization = vectorize
    options.loop_unrolling = vectorize
    builder = llvm_binding.create_pass_builder(machine, options)
    builder.getModulePassManager().run(ref, builder)


def optimized_llvm_ir(module: ModuleOp) -> str:
    """The LLVM IR of an llvm-level module after `optimize`."""
    ref = _parse_for(module, host_target_machine())
    optimize(ref)
    return str(ref)


def assembly_for(module: ModuleOp, target: CpuTarget) -> str:
    """The assembly of an llvm-level module optimized and compiled for
    `target`, which need not be this CPU (tests of instruction selection
    name the CPU they expect, never the host's)."""
    machine = new_target_machine(target)
    ref = _parse_for(module, machine)
    link_float_builtins(ref)
    optimize_at(ref, 3, machine)
    return machine.emit_assembly(ref)


# --------------------------------------------------------------- the JIT


@dataclass(frozen=True)
class NativeSignature:
    """What a native function takes: one pointer per argument, the bytes
    each must hold at least (from `llvm.dereferenceable`) when known, and
    which arguments it writes (marked `graph.output`)."""

    arg_bytes: tuple[int | None, ...]
    outputs: frozenset[int] = frozenset()


class JitModule:
    """Compiled native code; keeps the execution engine (and so the code)
    alive as long as it lives."""

    def __init__(
        self,
        engine: llvm_binding.ExecutionEngine,
        ref: llvm_binding.ModuleRef,
        signatures: dict[str, NativeSignature],
    ) -> None:
        self._engine = engine
        self._ref = ref
        self.signatures = signatures
        self._functions: dict[str, Callable[..., None]] = {}

    @property
    def optimized_ir(self) -> str:
        """The LLVM IR that was compiled (after `optimize_at`'s -O3)."""
        return str(self._ref)

    def set_num_threads(self, count: int) -> int:
        """Makes the module's parallel loops ask for `count` threads (0:
        libgomp's default) and returns the count asked for before; a module
        without parallel loops ignores it (and returns 0)."""
        if count < 0:
            raise ValueError(f"a thread count is at least 0, got {count}")
        address = self._engine.get_global_value_address(NUM_THREADS_GLOBAL)
        if not address:
            return 0
        slot = ctypes.c_int32.from_address(address)
        previous = slot.value
        slot.value = count
        return previous

    def address(self, name: str) -> int:
        """The address of function `name`, 0 if it is not in the code."""
        return self._engine.get_function_address(name)

    def call(self, name: str, arrays: Sequence[np.ndarray]) -> None:
        """Runs `void name(T0* a0, T1* a1, ...)` on the arrays' data. Refuses
        (ValueError) a wrong count of arrays, an array that is not
        C-contiguous and 64-byte aligned, or one smaller than the buffer the
        function reads or writes. Raises InputError with its message when a
        check of the code fails during the call (a run-time fault: see
        runtime/faults.py); the arrays then hold unspecified values."""
        signature = self.signatures.get(name)
        if signature is None:
            raise ValueError(
                f"no exported function @{name} taking buffers "
                f"(exported: {', '.join(sorted(self.signatures)) or 'none'})"
            )
        if len(arrays) != len(signature.arg_bytes):
            raise ValueError(f"@{name} takes {len(signature.arg_bytes)} buffers, got {len(arrays)}")
        for position, (array, needed) in enumerate(zip(arrays, signature.arg_bytes, strict=True)):
            if not isinstance(array, np.ndarray):
                raise ValueError(f"@{name} argument {position}: expected a numpy array")
            if not is_aligned(array):
                raise ValueError(
                    f"@{name} argument {position}: the array must be C-contiguous and "
                    f"{ALIGNMENT}-byte aligned (use aligned_copy)"
                )
            if position in signature.outputs and not array.flags.writeable:
                raise ValueError(f"@{name} argument {position}: the output array is read-only")
            if needed is not None and array.nbytes < needed:
                raise ValueError(
                    f"@{name} argument {position}: the array holds {array.nbytes} bytes, "
                    f"the function uses {needed}"
                )
        record = self._engine.get_global_value_address(FALLBACK)
        if record:
            clear_fault(record)
        self._function(name, len(arrays))(*(a.ctypes.data for a in arrays))
        message = fault_message(record) if record else None
        if message is not None:
            raise InputError(message)

    def caller(self, name: str, arrays: Sequence[np.ndarray]) -> BoundCall:
        """`name` on these arrays, checked once (as `call` checks), ready to
        call again and again (timing loops). The caller holds the arrays, so
        their addresses stay valid while it lives, whatever happens to the
        caller's own references."""
        self.call(name, arrays)
        return BoundCall(self._function(name, len(arrays)), tuple(arrays))

    def _function(self, name: str, arity: int) -> Callable[..., None]:
        if name not in self._functions:
            address = self.address(name)
            if not address:
                raise ValueError(f"@{name} is not in the compiled code")
            prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * arity))
            self._functions[name] = prototype(address)
        return self._functions[name]


class BoundCall:
    """A native function bound to arrays: each call passes their addresses.
    It holds the arrays: an address of an array freed meanwhile would be
    written through into memory the allocator has handed on."""

    __slots__ = ("_function", "_pointers", "arrays")

    def __init__(self, function: Callable[..., None], arrays: tuple[np.ndarray, ...]) -> None:
        self._function = function
        self._pointers = tuple(a.ctypes.data for a in arrays)
        self.arrays = arrays

    def __call__(self) -> None:
        self._function(*self._pointers)


class UnresolvedSymbolError(RuntimeError):
    """Compiled code calls a function that nothing in the process defines."""


def compile_module(module: ModuleOp, target: CpuTarget | None = None) -> JitModule:
    """JIT-compiles an llvm-level module (after convert-tir-to-llvm) for
    `target` (default: this CPU; another must be one this CPU can run); its
    parallel loops use XTC_NUM_THREADS threads when that is set. Refuses
    (UnresolvedSymbolError, naming them) code that calls a function the
    process cannot resolve, which MCJIT would bind to address 0."""
    threads = num_threads_from_environment()
    machine = host_target_machine() if target is None else new_target_machine(target)
    ref = _parse_for(module, machine)
    link_float_builtins(ref)
    optimize_at(ref, 3, machine)
    if uses_libgomp(module):
        _make_libgomp_visible()
    engine = llvm_binding.create_mcjit_compiler(ref, new_target_machine(target))
    objects: list[bytes] = []
    engine.set_object_cache(lambda _module, data: objects.append(bytes(data)))
    engine.finalize_object()
    unresolved = sorted(
        name
        for data in objects
        for name in undefined_symbols(data)
        if not llvm_binding.address_of_symbol(name)
    )
    if unresolved:
        raise UnresolvedSymbolError(
            f"the compiled code calls {', '.join(unresolved)}, which nothing in this process "
            "defines (a helper LLVM called for an instruction the target CPU lacks?)"
        )
    jit = JitModule(engine, ref, _exported_signatures(module))
    if threads is not None:
        jit.set_num_threads(threads)
    return jit


def _exported_signatures(module: ModuleOp) -> dict[str, NativeSignature]:
    """Functions callable from Python: defined, external, all pointer args."""
    signatures: dict[str, NativeSignature] = {}
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp) or not op.body.blocks:
            continue
        if op.linkage.linkage.data in ("internal", "private"):
            continue
        inputs = op.function_type.inputs.data
        if not all(isinstance(t, llvm.LLVMPointerType) for t in inputs):
            continue
        if not isinstance(op.function_type.output, llvm.LLVMVoidType):
            continue
        sizes: list[int | None] = []
        outputs: set[int] = set()
        attrs = op.arg_attrs.data if op.arg_attrs is not None else [None] * len(inputs)
        for position, arg_attrs in enumerate(attrs):
            entries = arg_attrs.data if arg_attrs is not None else {}
            size = entries.get("llvm.dereferenceable")
            sizes.append(size.value.data if isinstance(size, IntegerAttr) else None)
            if OUTPUT_ATTR in entries:
                outputs.add(position)
        signatures[op.sym_name.data] = NativeSignature(tuple(sizes), frozenset(outputs))
    return signatures
