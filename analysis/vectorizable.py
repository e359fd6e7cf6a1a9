"""What keeps a vectorized loop serial whatever the rest of its body: the
one rule that `tir-vectorize` refuses by up front and the lowering
(lowering/tir_lower_vectorized.py) falls back on.

Only what no later pass of the pipeline undoes is here: the loop's extent,
an op with a region, an op with effects other than loads, stores and
run-time checks. The rest (which values vary, memory dependences between
lanes) is decided by the lowering on the final body, and reported as a
remark where it leaves the loop serial.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation
from xdsl.traits import is_side_effect_free

from xtc.dialects.tir import AssertOp, ForOp

MAX_VECTOR_LANES = 64
"""The widest vector a loop becomes (64 bytes of i8, four AVX-512 f32 vectors)."""


def is_pure(op: Operation) -> bool:
    """Without memory effects: every arith and math op is (xDSL leaves a
    few unmarked, extsi and remui), and ops that say so."""
    return op.name.startswith(("arith.", "math.")) or is_side_effect_free(op)


def op_keeping_loop_serial(op: Operation) -> str | None:
    """Why `op`, in a vectorized loop's body, keeps the loop serial whatever
    the other ops are; None when it does not by itself."""
    if op.regions:
        return f"'{op.name}' has a region"
    if isinstance(op, AssertOp | memref.LoadOp | memref.StoreOp):
        return None  # per lane, or as vector accesses: the lowering decides
    if not is_pure(op):
        return f"'{op.name}' may have side effects"
    return None


def loop_kept_serial(loop: ForOp) -> str | None:
    """Why `loop` cannot become vector code, by its extent or by one op of
    its body alone (see op_keeping_loop_serial); None when neither stops it."""
    if loop.extent > MAX_VECTOR_LANES:
        return f"its extent {loop.extent} is above {MAX_VECTOR_LANES}"
    for op in loop.body.block.ops:
        reason = op_keeping_loop_serial(op)
        if reason is not None:
            return reason
    return None
