"""GPU memory spaces as memref types carry them, numbered as NVVM numbers
them: 3 for a block's shared memory, 5 for a thread's local memory
(`memref<16x64xf32, 3 : i64>`). A memref without one is global memory."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Attribute, SSAValue

SHARED_MEMORY_SPACE = 3
LOCAL_MEMORY_SPACE = 5


def memory_space(t: Attribute) -> int | None:
    """The integer memory space of a memref type (None when it has none)."""
    if not isinstance(t, MemRefType):
        return None
    space = t.memory_space
    return space.value.data if isinstance(space, IntegerAttr) else None


def is_shared(value: SSAValue) -> bool:
    """Whether `value` is a buffer in a block's shared memory."""
    return memory_space(value.type) == SHARED_MEMORY_SPACE
