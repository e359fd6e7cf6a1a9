"""Python's cyclic garbage collector held off while a compile builds IR.

A compile makes and drops millions of small IR objects (ops, values,
attributes: xDSL's IR is cyclic, op <-> block <-> region), and every
700 allocations CPython scans the young ones; each time enough have
survived, it scans the whole heap. In a compile that is 15-25% of the CPU
(DenseNet-121: the parent's 3.5-3.9 s of CPU -> 2.95-3.05 s, a kernel
worker's 6.15 -> 5.7 s over 45 units) for garbage that the end of the
compile frees anyway. `collection_paused` turns automatic collection off
for a block and collects what the block left once, at its end: the young
generations only, which hold everything made since the pause began (no
collection promoted it), so the cost is the block's own objects, never the
rest of the heap.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 1
"""The generations (0 and 1) a pause's end collects."""


@contextmanager
def collection_paused() -> Iterator[None]:
    """Automatic cyclic collection off for the block, then one collection of
    the young generations; inside a pause (or where collection is off
    already) the block runs as it is: only the outermost pause collects,
    so one nested per kernel unit does not rescan its caller's objects."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(YOUNG)
