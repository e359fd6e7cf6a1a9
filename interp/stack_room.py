"""A call run with room on CPython's frame stack, so that a deep interpreter
does not thrash its stack chunks.

CPython 3.11 and 3.12 keep Python frames in 16 KiB chunks and free a chunk as
soon as its first frame returns (python/cpython#142183, fixed by a cached
chunk in 3.13.3 and 3.14). A loop whose calls go back and forth across a
chunk's edge then maps and unmaps a chunk on every call: the xDSL
interpreter, deep in its regions, did so about 3.8 million times in one
test of tests/lowering (2 s alone, 20 s at a depth 5 frames deeper under
pytest-xdist, most of it in mmap, munmap and TLB flushes).

`with_stack_room(call)` runs `call()` on top of a frame of FRAME_SLOTS
slots, which CPython places at the start of a chunk of twice its
size: the calls above it have the other half to themselves (ROOM_BYTES,
about 300 interpreter frames) before they reach another chunk's edge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

FRAME_SLOTS = 8200
"""Local variables of the base frame (8 bytes each): past 64 KiB, so CPython
gives it a chunk of 128 KiB."""
ROOM_BYTES = 128 * 1024 - 8 * FRAME_SLOTS


def _base_frame() -> Callable[[Callable[[], Any], bool], Any]:
    """A function whose frame holds FRAME_SLOTS local variables, assigned on
    a branch never taken (its frame has their slots all the same)."""
    names = " = ".join(f"v{i}" for i in range(FRAME_SLOTS))
    source = f"def base(call, never):\n    if never:\n        {names} = never\n    return call()\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, "<xtc.interp.stack_room>", "exec"), namespace)  # noqa: S102
    return namespace["base"]


_BASE = _base_frame()


def with_stack_room(call: Callable[[], T]) -> T:
    """`call()`, its frames with ROOM_BYTES of one stack chunk to themselves."""
    return _BASE(call, False)
