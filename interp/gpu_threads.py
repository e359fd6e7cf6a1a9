"""Where each running GPU thread of the interpreter is, when a block's
threads run at once (interp/gpu.py): its place, its block's barrier and
shared buffers, its warp and lane. interp/tir.py reads the shared buffers
from here, so that it need not import interp/gpu.py."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from xdsl.dialects import memref

WARP = 32
SHUFFLE = "llvm.nvvm.shfl.sync.bfly."
"""The prefix of the warp shuffle intrinsics interpreted (butterfly: lane ^ offset)."""


class Warp:
    """The lanes of one warp meeting at each shuffle."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.meeting = threading.Barrier(lanes)
        self.values: list[Any] = [None] * lanes

    def exchange(self, lane: int, value: Any, offset: int) -> Any:
        """The value lane `lane ^ offset` brings to this shuffle."""
        self.values[lane] = value
        self.meeting.wait()
        other = lane ^ offset
        got = self.values[other] if other < self.lanes else value
        self.meeting.wait()  # nobody overwrites a value before every lane has read it
        return got


class _Thread(threading.local):
    """Where the running thread of the kernel is, per Python thread."""

    def __init__(self) -> None:
        self.place: dict[str, tuple[int, int, int]] = {}
        """"block", "thread", "grid" and "block_dim" (x, y, z)."""
        self.barrier: threading.Barrier | None = None
        """The block's barrier, while its threads run at once."""
        self.shared: dict[memref.AllocaOp, np.ndarray] | None = None
        """The block's shared buffers, while its threads run at once."""
        self.warp: Warp | None = None
        """The running thread's warp, while a block's threads run at once."""
        self.lane = 0


RUNNING = _Thread()


def shared_buffer(op: memref.AllocaOp) -> np.ndarray | None:
    """The running block's array for a shared buffer (interp/tir.py's
    alloca asks); None outside a block run in phases."""
    return None if RUNNING.shared is None else RUNNING.shared.get(op)
