"""The work-sharing functions of parallel loops (runtime/work_sharing.py),
compiled from their LLVM IR and called one claim at a time: a thread claims
its own chunk in order, then the last iterations of other threads' chunks;
every iteration is claimed once; slots nobody owns are empty; a thread past
the shared slots steals but is not stolen from; bounds up to 2^32 - 1."""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm_binding
import llvmlite.ir as ir
import numpy as np
import pytest

from xtc.runtime.llvm_jit import CpuTarget, new_target_machine
from xtc.runtime.work_sharing import NEXT, OWN, RESET, SLOT_BYTES, SLOTS, work_sharing_ir

WRAPPERS = f"""
define void @reset(ptr %slots) {{
  call void @{RESET}(ptr %slots)
  ret void
}}
define void @own(ptr %slot, i64 %begin, i64 %end) {{
  call void @{OWN}(ptr %slot, i64 %begin, i64 %end)
  ret void
}}
define i64 @next(ptr %slot, ptr %slots, i32 %thread, i32 %team) {{
  %k = call i64 @{NEXT}(ptr %slot, ptr %slots, i32 %thread, i32 %team)
  ret i64 %k
}}
"""


def _declaring_module() -> ir.Module:
    """A module declaring the three functions, as a lowered parallel loop does."""
    module = ir.Module()
    ptr = ir.PointerType()
    i32, i64 = ir.IntType(32), ir.IntType(64)
    ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr]), RESET)
    ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, i64, i64]), OWN)
    ir.Function(module, ir.FunctionType(i64, [ptr, ptr, i32, i32]), NEXT)
    return module


class Sharing:
    """The functions JIT-compiled, over one set of slots (and private ones)."""

    def __init__(self) -> None:
        module = _declaring_module()
        definitions = work_sharing_ir(module)
        assert all(name not in module.globals for name in (RESET, OWN, NEXT))
        machine = new_target_machine(CpuTarget.host())
        ref = llvm_binding.parse_assembly(str(module) + definitions + WRAPPERS)
        ref.triple, ref.data_layout = machine.triple, str(machine.target_data)
        ref.verify()
        self.engine = llvm_binding.create_mcjit_compiler(ref, machine)
        self.engine.finalize_object()
        address = self.engine.get_function_address
        self._reset = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address("reset"))
        self._own = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(
            address("own")
        )
        self._next = ctypes.CFUNCTYPE(
            ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32
        )(address("next"))
        words = SLOT_BYTES // 8
        self.slots = np.full(SLOTS * words + words, -1, np.int64)  # garbage until reset
        self.base = (self.slots.ctypes.data + SLOT_BYTES - 1) // SLOT_BYTES * SLOT_BYTES
        self.private: dict[int, np.ndarray] = {}
        self._reset(self.base)

    def slot(self, thread: int) -> int:
        if thread < SLOTS:
            return self.base + thread * SLOT_BYTES
        return int(self.private.setdefault(thread, np.zeros(1, np.int64)).ctypes.data)

    def own(self, thread: int, begin: int, end: int) -> None:
        self._own(self.slot(thread), begin, end)

    def next(self, thread: int, team: int) -> int:
        return int(self._next(self.slot(thread), self.base, thread, team))

    def drain(self, thread: int, team: int) -> list[int]:
        claimed: list[int] = []
        while (k := self.next(thread, team)) >= 0:
            claimed.append(k)
        return claimed


@pytest.fixture
def sharing() -> Sharing:
    return Sharing()


def test_a_thread_runs_its_chunk_in_order_then_steals_from_the_back(sharing: Sharing) -> None:
    sharing.own(0, 0, 4)
    sharing.own(1, 4, 8)
    assert sharing.next(1, 2) == 4
    assert [sharing.next(0, 2) for _ in range(6)] == [0, 1, 2, 3, 7, 6]
    assert sharing.next(1, 2) == 5
    assert sharing.next(0, 2) == -1
    assert sharing.next(1, 2) == -1


def test_the_reset_slots_are_empty(sharing: Sharing) -> None:
    # Thread 1 has not stored its chunk yet: there is nothing to take from it.
    sharing.own(0, 0, 2)
    assert sharing.drain(0, 2) == [0, 1]
    sharing.own(1, 2, 4)
    assert sharing.drain(1, 2) == [2, 3]


def test_every_iteration_is_claimed_once_whoever_asks(sharing: Sharing) -> None:
    rng = np.random.default_rng(5)
    team, extent = 5, 23
    chunk = -(-extent // team)
    for t in range(team):
        sharing.own(t, min(t * chunk, extent), min((t + 1) * chunk, extent))
    claimed: list[int] = []
    active = list(range(team))
    while active:
        t = int(rng.choice(active))
        k = sharing.next(t, team)
        if k < 0:
            active.remove(t)
        else:
            claimed.append(k)
    assert sorted(claimed) == list(range(extent))


def test_a_thread_past_the_slots_steals_and_is_not_stolen_from(sharing: Sharing) -> None:
    team = SLOTS + 6
    outside = SLOTS + 1
    sharing.own(0, 0, 3)
    sharing.own(outside, 100, 102)
    assert sharing.drain(0, team) == [0, 1, 2]  # thread 0 leaves 100, 101 alone
    sharing.own(0, 0, 3)  # a second loop: thread 0's chunk is there to take
    assert sharing.drain(outside, team) == [100, 101, 2, 1, 0]


def test_bounds_up_to_the_largest_u32(sharing: Sharing) -> None:
    top = 2**32 - 1
    sharing.own(0, top - 2, top)
    sharing.own(1, 0, 0)
    assert sharing.drain(1, 2) == [top - 1, top - 2]
    assert sharing.drain(0, 2) == []


def test_the_lowering_and_the_runtime_agree_on_names_and_sizes() -> None:
    # Each names the other's functions and sizes (the runtime imports no lowering).
    from xtc.lowering import tir_lower_parallel as lowering

    assert (lowering.SHARE_RESET, lowering.SHARE_OWN, lowering.SHARE_NEXT) == (RESET, OWN, NEXT)
    assert lowering.SHARE_SLOTS == SLOTS
    assert lowering.SHARE_SLOT_WORDS * 8 == SLOT_BYTES
