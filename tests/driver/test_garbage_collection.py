"""driver/garbage_collection.py: automatic cyclic collection is off while a
compile (or a kernel unit) builds IR, and its garbage is collected once, at
the end, from the young generations only."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from xtc.driver.compiler import compile_model
from xtc.driver.garbage_collection import YOUNG, collection_paused
from xtc.driver.kernel_units import UnitPlan, compile_unit

UNIT = """builtin.module {
  func.func @scale(%in0: memref<64xf32>, %out0: memref<64xf32> {graph.output = 0 : i64}) {
    tir.for %i = 0 to 64 step 1 {name = "i", kind = "serial"} {
      %0 = memref.load %in0[%i] : memref<64xf32>
      %1 = arith.addf %0, %0 : f32
      memref.store %1, %out0[%i] : memref<64xf32>
    }
    func.return
  }
}
"""


@contextmanager
def collections_seen() -> Iterator[list[int]]:
    """The generation of each collection that starts inside the block."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(int(info["generation"]))

    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)


def make_cycles(count: int) -> None:
    """`count` two-object cycles, dropped at once: garbage only the cyclic
    collector frees (far past its 700-allocation trigger)."""
    for _ in range(count):
        a: list[Any] = []
        b: list[Any] = [a]
        a.append(b)


def test_no_automatic_collection_inside_and_one_young_collection_after() -> None:
    assert gc.isenabled()
    with collections_seen() as seen:
        with collection_paused():
            assert not gc.isenabled()
            make_cycles(20_000)
            assert seen == []
        assert gc.isenabled()
        assert seen == [YOUNG]


def test_garbage_of_the_block_is_freed_at_its_end() -> None:
    gc.collect()
    with collection_paused():
        make_cycles(5_000)
        before = gc.get_count()[0]
    assert before >= 10_000  # two lists a cycle, none collected during the block
    assert gc.get_count()[0] < 1_000


def test_a_nested_pause_leaves_collection_to_the_outermost() -> None:
    with collections_seen() as seen:
        with collection_paused():
            with collection_paused():
                make_cycles(5_000)
            assert not gc.isenabled()
            assert seen == []
        assert seen == [YOUNG]


def test_collection_is_back_on_after_an_error() -> None:
    try:
        with collection_paused():
            raise RuntimeError("stop")
    except RuntimeError:
        pass
    assert gc.isenabled()


def test_a_kernel_unit_compiles_without_automatic_collection() -> None:
    """compile_unit (what each worker runs) collects once, after the unit:
    automatic collections in its parsing, lowering and LLVM would scan the
    unit's IR every 700 allocations."""
    compile_unit(UNIT, 2, UnitPlan(schedule=True))  # first use: imports, caches
    with collections_seen() as seen:
        result = compile_unit(UNIT, 2, UnitPlan(schedule=True))
    assert result.object_data
    assert seen == [YOUNG]


def test_a_models_passes_run_without_automatic_collection() -> None:
    """compile_model's passes (each reports its start to `progress`) run
    with automatic collection off; it is back on after the compile."""
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph(
        [node],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    collecting: dict[str, bool] = {}

    def progress(stage: str, done: int, total: int) -> None:
        collecting[stage] = gc.isenabled()

    compiled = compile_model(model, cache=False, jobs=1, progress=progress)
    passes = [stage for stage in collecting if stage not in ("import", "llvm", "done")]
    assert "convert-te-to-tir" in passes
    assert not any(collecting[stage] for stage in passes)
    assert gc.isenabled()
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    np.testing.assert_array_equal(compiled.run({"x": x})[0], np.maximum(x, 0))
