"""Run-time faults of native code: what a failed `tir.assert` does.

convert-tir-to-llvm lowers each `tir.assert` to a call of

    void xtc_check(i1 ok, ptr before, i64 value, ptr after)

and a parallel loop holding one hands its thread's fault record to the
threads of its team (`xtc_fault_record` in the caller, `xtc_fault_redirect`
in each thread: lowering/tir_lower_parallel.py). `with_fault_support` defines
these functions, as LLVM IR text appended to a module that calls them, so
the JIT, `xtc-opt -t llvm-ir` and a model library all get the same code;
nothing outside the module is called but libc's `snprintf`.

A fault record is `{ i32 state, [512 x i8] message }`, state 0 until a check
fails. The first failing check claims it (a compare-and-swap of the state
from 0 to 1, so the first fault wins, among threads too) and writes
"<before><value><after>" into the message (`snprintf`, truncated to 511
bytes; just "<before>" when `after` is null). A thread's faults go to the
record `@xtc_fault_target` points to, or to the module's
`@xtc_fault_fallback` while it points nowhere.

- In a model library (`thread_local=True`), `@xtc_fault_target` is
  thread-local: `xtc_run` points it at the calling thread's own record for
  the run (runtime/library.py), so that runs in several threads at once each
  see their own faults, and `xtc_last_error()` reads that record.
- In the JIT (MCJIT cannot allocate thread-local storage), it is an ordinary
  global that stays null in the calling thread: faults land in
  `@xtc_fault_fallback`, which `JitModule.call` clears before each call and
  reads after (`clear_fault`, `fault_message`). Calls of one JIT module from
  several threads at once share that record.

The check itself is inlined by LLVM into a branch, marked unlikely, around a
call of the out-of-line (cold) report: the cost of a check that passes is
a compare and a branch.
"""

from __future__ import annotations

import ctypes

import llvmlite.ir as ir

CHECK = "xtc_check"
"""What a `tir.assert` calls (lowering/convert_to_llvm.py's FAULT_CHECK)."""
RECORD = "xtc_fault_record"
"""`ptr xtc_fault_record()`: the record the calling thread's faults go to."""
REDIRECT = "xtc_fault_redirect"
"""`ptr xtc_fault_redirect(ptr record)`: sends the calling thread's faults to
`record` (null: to the fallback); returns the record they went to before."""
FALLBACK = "xtc_fault_fallback"
"""The module's fault record for threads that were given none."""
TARGET = "xtc_fault_target"
HELPERS = (CHECK, RECORD, REDIRECT)
"""The functions lowered code calls and `with_fault_support` defines."""
MESSAGE_BYTES = 512
RECORD_TYPE = f"{{ i32, [{MESSAGE_BYTES} x i8] }}"
MESSAGE_OFFSET = 4
"""Where the message starts in a record (after the i32 state)."""


def uses_faults(llvm_module: ir.Module) -> bool:
    """Whether the module calls the fault functions (it has `tir.assert`s)."""
    return any(name in llvm_module.globals for name in HELPERS)


FAULT = "xtc_fault"
"""The out-of-line report a failed check calls."""
WHOLE, PROVIDER, CLIENT = "whole", "provider", "client"
"""The roles of a module in fault support: the whole program (everything
defined, internal); in a library of several objects, the one object that
provides the record and the functions (hidden: seen by the library's other
objects, not outside it), and the others, its clients (each with its own
inlined check, calling the provider's report)."""


def with_fault_support(
    llvm_module: ir.Module, thread_local: bool = False, always: bool = False, role: str = WHOLE
) -> str:
    """The module's LLVM IR text, with the fault functions defined when it
    calls them (or `always`); `thread_local` as a model library needs it
    (see the module docstring); `role` as fault_support_ir's. Their
    declarations in `llvm_module` are dropped from it."""
    if not (always or uses_faults(llvm_module)):
        return str(llvm_module)
    for name in HELPERS:
        if name in llvm_module.globals:
            del llvm_module.globals[name]
    declared = set(llvm_module.globals)
    if role == CLIENT:
        return str(llvm_module) + _client_ir(declared)
    return str(llvm_module) + fault_support_ir(thread_local, declared, role == PROVIDER)


def _client_ir(declared: set[str]) -> str:
    """A client object's part: its own inlined check, and the provider's
    functions declared."""
    lines = [
        "",
        "; run-time faults (xtc runtime/faults.py): reported by the library's provider object",
        f"declare ptr @{RECORD}() nounwind",
        f"declare ptr @{REDIRECT}(ptr) nounwind",
        f"declare void @{FAULT}(ptr, i64, ptr) cold",
    ]
    if "llvm.expect.i1" not in declared:
        lines.append("declare i1 @llvm.expect.i1(i1, i1)")
    return "\n".join(lines) + "\n" + _check_ir() + "\n"


def _check_ir() -> str:
    return "\n".join(
        [
            "",
            f"define internal void @{CHECK}(i1 %ok, ptr %before, i64 %value, ptr %after) "
            "alwaysinline nounwind {",
            "entry:",
            "  %expected = call i1 @llvm.expect.i1(i1 %ok, i1 true)",
            "  br i1 %expected, label %done, label %failed",
            "failed:",
            f"  call void @{FAULT}(ptr %before, i64 %value, ptr %after)",
            "  br label %done",
            "done:",
            "  ret void",
            "}",
        ]
    )


def fault_support_ir(
    thread_local: bool, declared: set[str] | frozenset[str] = frozenset(), provider: bool = False
) -> str:
    """The LLVM IR text defining the fault functions and records (see the
    module docstring); `declared`: the names the module already has, whose
    declarations are not repeated; `provider`: the record's functions and
    the report are hidden, not internal, for a library's other objects."""
    shared = "hidden" if provider else "internal"
    storage = "thread_local " if thread_local else ""
    # The JIT finds the fallback by name: external there, internal in a library.
    fallback_linkage = "internal " if thread_local else ""
    record = RECORD_TYPE
    lines = [
        "",
        "; run-time faults (xtc runtime/faults.py)",
        f"@{TARGET} = internal {storage}global ptr null, align 8",
        f"@{FALLBACK} = {fallback_linkage}global {record} zeroinitializer, align 8",
        '@xtc_fault_format = private unnamed_addr constant [9 x i8] c"%s%lld%s\\00", align 1',
        '@xtc_fault_format_plain = private unnamed_addr constant [3 x i8] c"%s\\00", align 1',
    ]
    if "snprintf" not in declared:
        lines.append("declare i32 @snprintf(ptr, i64, ptr, ...)")
    if "llvm.expect.i1" not in declared:
        lines.append("declare i1 @llvm.expect.i1(i1, i1)")
    lines += [
        "",
        f"define {shared} ptr @{RECORD}() nounwind {{",
        "entry:",
        f"  %target = load atomic ptr, ptr @{TARGET} monotonic, align 8",
        "  %none = icmp eq ptr %target, null",
        f"  %record = select i1 %none, ptr @{FALLBACK}, ptr %target",
        "  ret ptr %record",
        "}",
        "",
        f"define {shared} ptr @{REDIRECT}(ptr %record) nounwind {{",
        "entry:",
        f"  %previous = atomicrmw xchg ptr @{TARGET}, ptr %record monotonic, align 8",
        "  ret ptr %previous",
        "}",
        "",
        f"define {shared} void @{FAULT}(ptr %before, i64 %value, ptr %after) cold noinline {{",
        "entry:",
        f"  %record = call ptr @{RECORD}()",
        "  %claim = cmpxchg ptr %record, i32 0, i32 1 acq_rel monotonic, align 4",
        "  %first = extractvalue { i32, i1 } %claim, 1",
        "  br i1 %first, label %write, label %done",
        "write:",
        f"  %message = getelementptr inbounds {record}, ptr %record, i64 0, i32 1",
        "  %plain = icmp eq ptr %after, null",
        "  br i1 %plain, label %write_plain, label %write_value",
        "write_value:",
        "  %written = call i32 (ptr, i64, ptr, ...) @snprintf(ptr %message, "
        f"i64 {MESSAGE_BYTES}, ptr @xtc_fault_format, ptr %before, i64 %value, ptr %after)",
        "  br label %done",
        "write_plain:",
        "  %written_plain = call i32 (ptr, i64, ptr, ...) @snprintf(ptr %message, "
        f"i64 {MESSAGE_BYTES}, ptr @xtc_fault_format_plain, ptr %before)",
        "  br label %done",
        "done:",
        "  ret void",
        "}",
    ]
    return "\n".join(lines) + "\n" + _check_ir() + "\n"


def clear_fault(record_address: int) -> None:
    """Marks the fault record at this address as holding no fault."""
    ctypes.c_int32.from_address(record_address).value = 0


def fault_message(record_address: int) -> str | None:
    """The message of the fault recorded at this address; None if none is."""
    if ctypes.c_int32.from_address(record_address).value == 0:
        return None
    raw = ctypes.string_at(record_address + MESSAGE_OFFSET)
    return raw.decode("utf-8", errors="replace")
