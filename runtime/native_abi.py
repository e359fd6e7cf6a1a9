"""What a compiled model's library and the Python that calls it agree on,
importable without the compiler (no xDSL, no LLVM): loading and running a
compiled model (runtime/model.py, runtime/artifact.py, `xtc run`, a
compile-cache hit) imports this, not runtime/library.py or llvm_jit.py.

- the library's file name, ABI version and `xtc_run` statuses
  (runtime/library.py documents the C entry points);
- arrays as native code takes them: C-contiguous, 64-byte aligned
  (`aligned_empty`, `aligned_copy`, `is_aligned`);
- the thread count of parallel loops from XTC_NUM_THREADS.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from math import prod

import numpy as np

LIBRARY_NAME = "model.so"
ABI_VERSION = 2
"""What `xtc_abi_version()` returns: bumped when `xtc_run`'s contract changes
(2: a non-zero status for a run-time fault, and `xtc_last_error`)."""
STATUS_OK = 0
STATUS_FAULT = 1
"""`xtc_run`'s statuses: the run completed; a run-time check failed (the
outputs then hold unspecified values; `xtc_last_error()` says why)."""

ALIGNMENT = 64
"""The alignment of every buffer native code is given (it may use aligned
vector accesses)."""

NUM_THREADS_VARIABLE = "XTC_NUM_THREADS"


def aligned_empty(shape: Sequence[int] | int, dtype: np.typing.DTypeLike) -> np.ndarray:
    """An uninitialized C-contiguous array whose data is 64-byte aligned."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    element = np.dtype(dtype)
    nbytes = prod(dims) * element.itemsize
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGNMENT
    return np.ndarray(dims, element, raw, start)


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """A 64-byte aligned C-contiguous copy of `array`."""
    array = np.asarray(array)
    copy = aligned_empty(array.shape, array.dtype)
    np.copyto(copy, array)
    return copy


def is_aligned(array: np.ndarray) -> bool:
    """C-contiguous with 64-byte aligned data (an empty array always is)."""
    if array.size == 0:
        return True
    return bool(array.flags.c_contiguous) and array.ctypes.data % ALIGNMENT == 0


class ThreadCountError(ValueError):
    """XTC_NUM_THREADS is set to something other than a positive integer."""


def num_threads_from_environment() -> int | None:
    """XTC_NUM_THREADS as a thread count; None when it is not set. Refuses
    (ThreadCountError, a ValueError naming the variable) anything but a
    positive integer."""
    text = os.environ.get(NUM_THREADS_VARIABLE)
    if text is None:
        return None
    if not text.strip().isdecimal() or int(text) < 1:
        raise ThreadCountError(
            f"{NUM_THREADS_VARIABLE} must be a positive integer (the number of threads "
            f"parallel loops use), got {text!r}"
        )
    return int(text)
