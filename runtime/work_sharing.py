"""Work sharing of parallel loops: static chunks that idle threads steal from.

lowering/tir_lower_parallel.py runs a parallel loop's E iterations on a team
of T threads. Thread t owns the t-th chunk of ceil(E / T) iterations, as a
static schedule would give it, so that from one loop to the next each core
works on the same part of the data and finds it in its cache. When a thread
has run its own chunk, it takes iterations from the back of another
thread's: a thread slowed down (another tenant on its core, a late wake-up)
no longer holds the whole team back, and with threads of equal speed
nothing moves.

Each chunk is a slot, one i64 packing [next, end) as two u32 (next in the
low half), alone in its cache line. The owner claims `next` and the thief
`end - 1`, each by a compare-and-swap of the whole slot, so every iteration
runs exactly once. The caller of the loop holds SLOTS slots on its stack and
zeroes them (empty) before the team starts; a thread that looks at a slot
before its owner filled it finds nothing to take there. Threads numbered
SLOTS or more (teams of more threads) keep their chunk in a slot of their
own stack: they steal, but nobody steals from them.

The functions below are defined, internal, in every module that calls them
(`work_sharing_ir`), as LLVM IR text; the lowering declares them:

    void xtc_share_reset(ptr slots)                 zeroes the SLOTS slots
    void xtc_share_own(ptr slot, i64 begin, i64 end)  a thread's chunk
    i64 xtc_share_next(ptr slot, ptr slots, i32 thread, i32 team)
        the next iteration for this thread: its own first, then another's
        from the back; -1 when none is left
"""

from __future__ import annotations

import llvmlite.ir as ir

RESET = "xtc_share_reset"
OWN = "xtc_share_own"
NEXT = "xtc_share_next"
FUNCTIONS = (RESET, OWN, NEXT)
SLOTS = 64
"""Slots a loop's caller holds: threads 0 to 63 can be stolen from."""
SLOT_BYTES = 64
"""One cache line per slot, so that owners claiming their own iterations do
not make each other's lines move."""


def uses_work_sharing(llvm_module: ir.Module) -> bool:
    return any(name in llvm_module.globals for name in FUNCTIONS)


def work_sharing_ir(llvm_module: ir.Module) -> str:
    """The definitions of the work-sharing functions when the module calls
    them ("" otherwise); their declarations are dropped from the module."""
    if not uses_work_sharing(llvm_module):
        return ""
    for name in FUNCTIONS:
        if name in llvm_module.globals:
            del llvm_module.globals[name]
    declare_memset = "llvm.memset.p0.i64" not in llvm_module.globals
    return _definitions(declare_memset)


def _definitions(declare_memset: bool) -> str:
    words = SLOT_BYTES // 8
    lines = ["", "; work sharing of parallel loops (xtc runtime/work_sharing.py)"]
    if declare_memset:
        lines.append("declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
    lines += [
        "",
        f"define internal void @{RESET}(ptr %slots) nounwind alwaysinline {{",
        "entry:",
        f"  call void @llvm.memset.p0.i64(ptr align {SLOT_BYTES} %slots, i8 0, "
        f"i64 {SLOTS * SLOT_BYTES}, i1 false)",
        "  ret void",
        "}",
        "",
        f"define internal void @{OWN}(ptr %slot, i64 %begin, i64 %end) nounwind alwaysinline {{",
        "entry:",
        "  %high = shl i64 %end, 32",
        "  %packed = or i64 %high, %begin",
        "  store atomic i64 %packed, ptr %slot release, align 8",
        "  ret void",
        "}",
        "",
        f"define internal i64 @{NEXT}(ptr %slot, ptr %slots, i32 %thread, i32 %team) nounwind {{",
        "entry:",
        "  br label %own",
        "own:",
        "  %mine = load atomic i64, ptr %slot acquire, align 8",
        "  %next = and i64 %mine, 4294967295",
        "  %end = lshr i64 %mine, 32",
        "  %left = icmp ult i64 %next, %end",
        "  br i1 %left, label %take_own, label %steal",
        "take_own:",
        "  %claimed = add i64 %mine, 1",
        "  %swap = cmpxchg ptr %slot, i64 %mine, i64 %claimed acq_rel acquire, align 8",
        "  %won = extractvalue { i64, i1 } %swap, 1",
        "  br i1 %won, label %got_own, label %own",
        "got_own:",
        "  ret i64 %next",
        "steal:",
        f"  %shared = icmp ult i32 %team, {SLOTS}",
        f"  %victims = select i1 %shared, i32 %team, i32 {SLOTS}",
        "  br label %victim",
        "victim:",
        "  %distance = phi i32 [ 1, %steal ], [ %further, %empty ]",
        "  %more = icmp ult i32 %distance, %team",
        "  br i1 %more, label %look, label %none",
        "look:",
        "  %sum = add i32 %thread, %distance",
        "  %wrapped = urem i32 %sum, %team",
        "  %stealable = icmp ult i32 %wrapped, %victims",
        "  br i1 %stealable, label %try, label %empty",
        "try:",
        "  %index = zext i32 %wrapped to i64",
        f"  %other = getelementptr [{words} x i64], ptr %slots, i64 %index",
        "  %theirs = load atomic i64, ptr %other acquire, align 8",
        "  %their_next = and i64 %theirs, 4294967295",
        "  %their_end = lshr i64 %theirs, 32",
        "  %their_left = icmp ult i64 %their_next, %their_end",
        "  br i1 %their_left, label %take_theirs, label %empty",
        "take_theirs:",
        "  %shortened = sub i64 %theirs, 4294967296",
        "  %steal_swap = cmpxchg ptr %other, i64 %theirs, i64 %shortened acq_rel acquire, align 8",
        "  %stole = extractvalue { i64, i1 } %steal_swap, 1",
        "  br i1 %stole, label %got_theirs, label %try",
        "got_theirs:",
        "  %last = sub i64 %their_end, 1",
        "  ret i64 %last",
        "empty:",
        "  %further = add i32 %distance, 1",
        "  br label %victim",
        "none:",
        "  ret i64 -1",
        "}",
    ]
    return "\n".join(lines) + "\n"
