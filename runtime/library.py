"""An llvm-level model module as one native shared library with a C entry.

    build_library(module, directory, opt_level=3) -> LibraryInfo

writes `directory/model.so`. The library exports

    int32_t xtc_run(const void *const *inputs, void *const *outputs);
    const char *xtc_last_error(void);
    int32_t xtc_abi_version(void);
    int32_t xtc_set_num_threads(int32_t n);

`xtc_run` calls the model function (`@main`, renamed `xtc_main` and kept
internal, so a C program may have its own `main`) on the pointers in the two
arrays: one native call per inference. It returns XTC_STATUS_OK (0), or
XTC_STATUS_FAULT (1) when a run-time check failed (an index out of range,
an integer division by zero: a `tir.assert`); `xtc_last_error()` then gives
the first failed check's message, naming the node and the value, until the
calling thread's next `xtc_run`. The record is the calling thread's own
(thread-local; the threads of its parallel loops report into it, see
runtime/faults.py), so runs in several threads at once keep their faults
apart. After a successful run, and before any, `xtc_last_error()` is "";
it never returns NULL. The weights (every `llvm.mlir.global`
holding data) are not written as LLVM IR text: they go, 64-byte aligned, into
one binary file that the assembler includes (`.incbin`) in the library's
read-only data, so large models compile fast and load with one `mmap`.
`xtc_set_num_threads` sets how many threads the model's parallel loops ask
libgomp for (0, the default: libgomp's own default, OMP_NUM_THREADS or all
cores; a negative n counts as 0) and returns the count set before; a library
with parallel loops links an OpenMP runtime (libgomp), whose one thread
pool serves the process.

The code is optimized like the JIT's (runtime/llvm_jit.py) at `opt_level`,
emitted as a position-independent object for the host CPU, and linked by
runtime/toolchain.py: with the system's `cc` and libgomp where present,
else with `zig cc` (the ziglang package) and an OpenMP runtime that pip
installed; `LibraryInfo` says which. Every symbol must resolve at link time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as llvm_binding
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr

from xtc.dialects.tir import OUTPUT_ATTR
from xtc.runtime.faults import (
    CLIENT,
    HELPERS,
    PROVIDER,
    RECORD_TYPE,
    REDIRECT,
    WHOLE,
)
from xtc.runtime.float_builtins import link_float_builtins
from xtc.runtime.llvm_ir import global_bytes, translate_module, with_runtime_functions
from xtc.runtime.llvm_jit import NUM_THREADS_GLOBAL, CpuTarget, uses_libgomp
from xtc.runtime.native_abi import ABI_VERSION, LIBRARY_NAME, STATUS_FAULT, STATUS_OK
from xtc.runtime.timing import NO_TIMER, Timer
from xtc.runtime.toolchain import (
    Assembly,
    Linker,
    OpenMPRuntime,
    ToolchainError,
    find_linker,
    find_openmp,
    link_shared,
)
from xtc.runtime.work_sharing import FUNCTIONS as WORK_SHARING_FUNCTIONS

MODEL_FUNCTION = "main"
WEIGHT_ALIGNMENT = 64


class LibraryError(Exception):
    """The library cannot be built (no linker, no OpenMP runtime for its
    parallel loops, a link error, bad input)."""


@dataclass(frozen=True)
class LibraryInfo:
    path: Path
    triple: str
    cpu: str
    features: str
    weights_bytes: int
    optimized_ir: str
    """The LLVM IR that was compiled, after optimization (--dump-ir llvm)."""
    linker: Linker
    openmp: OpenMPRuntime | None
    """What runs its parallel loops; None when it has none."""

    def toolchain(self) -> dict[str, object]:
        """The manifest's "toolchain": the linker and OpenMP runtime used."""
        return {
            "linker": self.linker.to_json(),
            "openmp": self.openmp.to_json() if self.openmp is not None else None,
        }


@dataclass(frozen=True)
class KernelObject:
    """A relocatable object of kernels, built apart (build_kernel_object)
    and linked beside the model's object by build_library."""

    data: bytes
    parallel: bool
    """Whether it calls libgomp (it has parallel loops)."""


def build_kernel_object(
    module: ModuleOp,
    opt_level: int = 3,
    timer: Timer = NO_TIMER,
    *,
    target: CpuTarget | None = None,
) -> KernelObject:
    """Compiles an llvm-level module of kernels (no model function, no
    weights) into an object for build_library's `kernel_objects`: its
    functions hidden (seen by the library's other objects only), its failed
    checks reported to the model object's fault record, its parallel loops
    sized by the model object's `xtc_set_num_threads`, its calls of the f16
    helpers (runtime/float_builtins.py; made only for a `target` CPU, this
    one by default, without the conversion instructions) bound to the model
    object's definitions: each library compiles them once, not per object."""
    from xtc.runtime.llvm_jit import optimize_at

    target = target or CpuTarget.host()
    parallel = uses_libgomp(module)
    with timer.scope("translate"):
        ir_module = translate_module(module, declared=_thread_count(module))
        text = with_runtime_functions(ir_module, thread_local=True, role=CLIENT)
    machine = _pic_target_machine(target.cpu, target.features, opt_level)
    with timer.scope("parse"):
        ref = _parsed(text, machine, False)
        for function in ref.functions:
            if not function.is_declaration and function.linkage == llvm_binding.Linkage.external:
                function.visibility = "hidden"
    with timer.scope("optimize"):
        optimize_at(ref, opt_level, machine)
    with timer.scope("codegen"):
        return KernelObject(machine.emit_object(ref), parallel)


def _parsed(
    text: str, machine: llvm_binding.TargetMachine, float_builtins: bool
) -> llvm_binding.ModuleRef:
    """The module of `text` for `machine`; with `float_builtins`, defining
    the f16 helpers (hidden) for itself and the library's kernel objects."""
    ref = llvm_binding.parse_assembly(text)
    ref.triple = machine.triple
    ref.data_layout = str(machine.target_data)
    ref.verify()
    if float_builtins:
        link_float_builtins(ref)
    return ref


def _thread_count(module: ModuleOp) -> tuple[str, ...]:
    """(`xtc_num_threads`,) when the module has that global (its parallel
    loops' team size), else ()."""
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp) and op.sym_name.data == NUM_THREADS_GLOBAL:
            return (NUM_THREADS_GLOBAL,)
    return ()


def build_library(
    module: ModuleOp,
    directory: Path,
    opt_level: int = 3,
    keep_assembly: bool = False,
    entry: str = MODEL_FUNCTION,
    *,
    in_place: bool = False,
    timer: Timer = NO_TIMER,
    kernels: Callable[[], Sequence[KernelObject]] | None = None,
) -> LibraryInfo:
    """Compiles an llvm-level model module (after convert-tir-to-llvm), whose
    model function is `@entry`, into `directory/model.so`; `keep_assembly`
    also writes `model.s`. The module is left as it is, unless `in_place`
    (the caller is done with it: no copy of it and its weights is made).
    `timer` gets the time of each step (translate, optimize, codegen, link).
    With `kernels`, what `kernels()` returns is linked in too: the objects
    of the kernels the module declares, built apart (build_kernel_object;
    it is called once the module's own object is built, so that they may
    be built elsewhere meanwhile); the module's object then provides the
    fault record and the thread count to theirs."""
    from xtc.runtime.llvm_jit import host_cpu, host_features, optimize_at

    split = kernels is not None
    try:
        linker = find_linker()
    except ToolchainError as e:
        raise LibraryError(str(e)) from None
    if not in_place:
        module = module.clone()
    n_inputs, n_outputs = _rename_model_function(module, entry)
    directory.mkdir(parents=True, exist_ok=True)
    kernel_objects: Sequence[KernelObject] = ()
    scratch_objects: list[Path] = []
    path = directory / LIBRARY_NAME
    openmp: OpenMPRuntime | None = None
    try:
        blob = _move_weights_out(module, directory / "weights.bin")
        thread_count = _thread_count(module) if split else ()
        has_thread_count = False if split else _hide_thread_count(module)
        with timer.scope("translate"):
            ir_module = translate_module(module, declared=blob.names + thread_count)
            for name in thread_count:  # defined by the entry points, for every object
                del ir_module.globals[name]
            role = PROVIDER if split else WHOLE
            text = with_runtime_functions(ir_module, thread_local=True, always=True, role=role)
            text += _entry_points(n_inputs, n_outputs, has_thread_count, split)
        machine = _pic_target_machine(host_cpu(), host_features(), opt_level)
        with timer.scope("parse"):
            ref = _parsed(text, machine, True)
            _protect_profile_table(ref)
        with timer.scope("optimize"):
            optimize_at(ref, opt_level, machine)
        with timer.scope("codegen"):
            (directory / "model.o").write_bytes(machine.emit_object(ref))
            if keep_assembly:
                (directory / "model.s").write_text(machine.emit_assembly(ref))
        (directory / "weights.s").write_text(_weights_assembly(blob, directory / "weights.bin"))
        # the weights' object (a copy of every byte: 0.3 s for ResNet-50) is
        # assembled while the kernels' objects are still being built
        weights = Assembly(linker, directory / "weights.s", directory / "weights.o")
        try:
            kernel_objects = kernels() if kernels is not None else ()
        except BaseException:
            weights.abandon()
            raise
        with timer.scope("weights object"):
            weights.wait()
        scratch_objects = [directory / f"kernels{i}.o" for i in range(len(kernel_objects))]
        for scratch, kernel in zip(scratch_objects, kernel_objects, strict=True):
            scratch.write_bytes(kernel.data)
        parallel = uses_libgomp(module) or any(k.parallel for k in kernel_objects)
        openmp = find_openmp() if parallel else None
        with timer.scope("link"):
            objects = [directory / "model.o", *scratch_objects, directory / "weights.o"]
            link_shared(linker, objects, path, openmp)
    except ToolchainError as e:
        raise LibraryError(str(e)) from None
    finally:
        for scratch in (
            directory / "model.o",
            directory / "weights.bin",
            directory / "weights.s",
            directory / "weights.o",
        ):
            scratch.unlink(missing_ok=True)
        for scratch in scratch_objects:
            scratch.unlink(missing_ok=True)
    return LibraryInfo(
        path,
        machine.triple,
        host_cpu(),
        host_features(),
        blob.size,
        str(ref),
        linker,
        openmp,
    )


RUNTIME_FUNCTIONS = (*HELPERS, *WORK_SHARING_FUNCTIONS)
"""The xtc_ functions lowered code may declare: the library defines them."""


def _protect_profile_table(ref: llvm_binding.ModuleRef) -> None:
    """A profiled model's table (passes/tir_profile_calls.py), exported for
    its reader, is `protected`: the model's own code updates its own table
    even where another library or the program defines one of that name."""
    from xtc.passes.tir_profile_calls import PROFILE_GLOBAL

    for variable in ref.global_variables:
        if variable.name == PROFILE_GLOBAL and not variable.is_declaration:
            variable.visibility = "protected"


def _rename_model_function(module: ModuleOp, entry: str) -> tuple[int, int]:
    """`@entry` -> internal `@xtc_main`; its numbers of inputs and outputs
    (the arguments marked `graph.output`, which come last)."""
    taken = [
        op
        for op in module.ops
        if isinstance(op, llvm.FuncOp)
        and op.sym_name.data.startswith("xtc_")
        and not (op.sym_name.data in RUNTIME_FUNCTIONS and not op.body.blocks)
    ]
    if taken:
        raise LibraryError(f"@{taken[0].sym_name.data}: names starting with xtc_ are reserved")
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.sym_name.data == entry and op.body.blocks:
            inputs = op.function_type.inputs.data
            if not all(isinstance(t, llvm.LLVMPointerType) for t in inputs):
                raise LibraryError(f"@{entry} must take only buffers")
            attrs = op.arg_attrs.data if op.arg_attrs is not None else ()
            n_outputs = sum(1 for a in attrs if OUTPUT_ATTR in a.data)
            op.sym_name = StringAttr("xtc_main")
            op.linkage = llvm.LinkageAttr("internal")
            return len(inputs) - n_outputs, n_outputs
    raise LibraryError(f"the module has no @{entry} function (the model)")


@dataclass
class _Blob:
    size: int
    names: tuple[str, ...]
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]


def _move_weights_out(module: ModuleOp, path: Path) -> _Blob:
    """Every global holding data is renamed `xtc_weight_<i>` and its bytes
    written (64-aligned) to the blob file at `path`, one weight at a time
    (never joined in memory); its definition becomes a declaration."""
    renames: dict[str, str] = {}
    offsets: list[int] = []
    sizes: list[int] = []
    size = 0
    with path.open("wb") as blob:
        for op in module.ops:
            if not isinstance(op, llvm.GlobalOp) or op.value is None:
                continue
            raw = global_bytes(op)
            if not raw:
                continue
            new_name = f"xtc_weight_{len(renames)}"
            renames[op.sym_name.data] = new_name
            op.sym_name = StringAttr(new_name)
            op.properties.pop("value", None)
            padding = -size % WEIGHT_ALIGNMENT
            blob.write(bytes(padding))
            blob.write(raw)
            offsets.append(size + padding)
            sizes.append(len(raw))
            size += padding + len(raw)
    for op in module.walk():
        if isinstance(op, llvm.AddressOfOp) and op.global_name.root_reference.data in renames:
            op.global_name = SymbolRefAttr(renames[op.global_name.root_reference.data])
    return _Blob(size, tuple(renames.values()), tuple(offsets), tuple(sizes))


def _hide_thread_count(module: ModuleOp) -> bool:
    """Makes the module's `@xtc_num_threads` (parallel loops' team size)
    internal, so that each library loaded in a process has its own; whether
    the module has one."""
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp) and op.sym_name.data == NUM_THREADS_GLOBAL:
            op.linkage = llvm.LinkageAttr("internal")
            return True
    return False


def _entry_points(
    n_inputs: int, n_outputs: int, has_thread_count: bool = False, shared_thread_count: bool = False
) -> str:
    """LLVM IR of `xtc_run` (clears the calling thread's fault record
    `@xtc_last_fault` and sends the run's faults there, reads the two
    pointer arrays, calls the model, returns whether a fault was recorded),
    `xtc_last_error`, `xtc_abi_version` and `xtc_set_num_threads` (defining
    `@xtc_num_threads` when the module has no parallel loop to define it:
    hidden, with `shared_thread_count`, for the kernel objects linked beside).
    The module's text before them defines the fault functions
    (runtime/faults.py, thread-local)."""
    lines = [
        "",
        f"@xtc_last_fault = internal thread_local global {RECORD_TYPE} zeroinitializer, align 8",
        "@xtc_no_fault = private unnamed_addr constant [1 x i8] zeroinitializer, align 1",
        "",
        "define i32 @xtc_run(ptr %inputs, ptr %outputs) {",
        "entry:",
        "  store atomic i32 0, ptr @xtc_last_fault monotonic, align 8",
        f"  %previous = call ptr @{REDIRECT}(ptr @xtc_last_fault)",
    ]
    args: list[str] = []
    for array, count, stem in (("%inputs", n_inputs, "in"), ("%outputs", n_outputs, "out")):
        for i in range(count):
            lines.append(f"  %{stem}{i}.slot = getelementptr inbounds ptr, ptr {array}, i64 {i}")
            lines.append(f"  %{stem}{i} = load ptr, ptr %{stem}{i}.slot, align 8")
            args.append(f"ptr %{stem}{i}")
    lines += [
        f"  call void @xtc_main({', '.join(args)})",
        f"  %restored = call ptr @{REDIRECT}(ptr %previous)",
        "  %state = load atomic i32, ptr @xtc_last_fault acquire, align 8",
        "  %failed = icmp ne i32 %state, 0",
        f"  %status = select i1 %failed, i32 {STATUS_FAULT}, i32 {STATUS_OK}",
        "  ret i32 %status",
        "}",
        "",
        "define ptr @xtc_last_error() {",
        "entry:",
        "  %state = load atomic i32, ptr @xtc_last_fault acquire, align 8",
        "  %failed = icmp ne i32 %state, 0",
        f"  %message = getelementptr inbounds {RECORD_TYPE}, ptr @xtc_last_fault, i64 0, i32 1",
        "  %text = select i1 %failed, ptr %message, ptr @xtc_no_fault",
        "  ret ptr %text",
        "}",
        "",
    ]
    lines.append("define i32 @xtc_abi_version() {")
    lines.append("entry:")
    lines.append(f"  ret i32 {ABI_VERSION}")
    lines.append("}")
    if not has_thread_count:
        linkage = "hidden" if shared_thread_count else "internal"
        lines += ["", f"@{NUM_THREADS_GLOBAL} = {linkage} global i32 0, align 4"]
    lines += [
        "",
        "define i32 @xtc_set_num_threads(i32 %n) {",
        "entry:",
        f"  %previous = load i32, ptr @{NUM_THREADS_GLOBAL}, align 4",
        "  %negative = icmp slt i32 %n, 0",
        "  %count = select i1 %negative, i32 0, i32 %n",
        f"  store i32 %count, ptr @{NUM_THREADS_GLOBAL}, align 4",
        "  ret i32 %previous",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _pic_target_machine(cpu: str, features: str, opt_level: int) -> llvm_binding.TargetMachine:
    target = llvm_binding.Target.from_default_triple()
    return target.create_target_machine(
        cpu=cpu, features=features, opt=opt_level, reloc="pic", codemodel="default"
    )


def _weights_assembly(blob: _Blob, data_file: Path) -> str:
    """GNU assembler source placing each weight, aligned, in .rodata from
    the binary file (hidden symbols: each library keeps its own)."""
    quoted = str(data_file.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    lines = ['\t.section .rodata.xtc_weights,"a"']
    for name, offset, size in zip(blob.names, blob.offsets, blob.sizes, strict=True):
        lines += [
            f"\t.balign {WEIGHT_ALIGNMENT}",
            f"\t.globl {name}",
            f"\t.hidden {name}",
            f"\t.type {name}, @object",
            f"\t.size {name}, {size}",
            f"{name}:",
            f'\t.incbin "{quoted}", {offset}, {size}',
        ]
    lines.append('\t.section .note.GNU-stack,"",@progbits')
    return "\n".join(lines) + "\n"
