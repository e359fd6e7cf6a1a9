"""with_stack_room: calls on top of it never cross a frame-stack chunk's edge
(on CPython 3.11/3.12 each crossing maps a fresh chunk, so a loop of calls at
the edge page-faults once per call: counted, not timed)."""

import resource

import numpy as np
import pytest

from xtc import interp
from xtc.driver.textual_ir import parse_module
from xtc.interp import stack_room
from xtc.interp.stack_room import with_stack_room

CALLS = 2000


def _leaf() -> int:
    """A frame of 20 locals: larger than `_descend`'s, so that some depth of
    the scan puts it across a chunk's edge."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = a8 = a9 = 1
    b0 = b1 = b2 = b3 = b4 = b5 = b6 = b7 = b8 = b9 = a0
    a = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9
    return a + b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7 + b8 + b9


def _faults_of_calls() -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(CALLS):
        _leaf()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def _descend(depth: int) -> int:
    return _descend(depth - 1) if depth else with_stack_room(_faults_of_calls)


def test_calls_on_the_room_never_map_a_chunk_per_call() -> None:
    # whatever depth the caller is at (300 frames of _descend span more than
    # a 16 KiB chunk), the loop's calls stay inside one chunk
    faults = [_descend(depth) for depth in range(300)]
    assert max(faults) < CALLS // 10, faults


def test_with_stack_room_returns_the_call_s_value_and_raises_its_errors() -> None:
    assert with_stack_room(lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        with_stack_room(lambda: 1 // 0)


def test_interp_run_runs_on_the_room(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []

    def recording(call: object) -> object:
        calls.append(call)
        return with_stack_room(call)  # type: ignore[arg-type]

    monkeypatch.setattr(stack_room, "with_stack_room", recording)
    module = parse_module(
        "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %y = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>\n"
        "  func.return %y : tensor<3xf32>\n}\n"
    )
    (y,) = interp.run(module, [np.array([-1.0, 0.0, 2.0], np.float32)])
    np.testing.assert_array_equal(y, [0.0, 0.0, 2.0])
    assert len(calls) == 1
