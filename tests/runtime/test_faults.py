"""Run-time faults in native code: indices read from tensors at run time
(Gather, GatherElements, GatherND, ScatterElements, ScatterND) are checked,
negative ones counting from the end, and one out of range fails the run with
`xtc.InputError` naming the node and the index; an integer Div or Mod by zero
does too (onnxruntime refuses both), while INT_MIN / -1 wraps as onnxruntime
computes it. A failed run leaves nothing behind: the next run is right. The
checks hold in parallel loops (a fault in a worker thread fails the caller's
run), in vectorized loops, and per calling thread (runs in several threads at
once each report their own faults). OneHot is not checked: ONNX gives an
index out of range all off values, and xtc does too."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import xtc
from xtc import interp
from xtc.runtime.errors import InputError
from xtc.driver.native import run_native
from xtc.driver.textual_ir import parse_module

RNG = np.random.default_rng(0)
ONNX_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int8): TensorProto.INT8,
}


def one_node_model(
    op_type: str,
    inputs: Sequence[tuple[str, np.ndarray]],
    output_shape: Sequence[int],
    output_dtype: Any = np.float32,
    **attributes: Any,
) -> onnx.ModelProto:
    """A model of one node named "g" whose inputs are all given at run time."""
    node = helper.make_node(op_type, [n for n, _ in inputs], ["out"], name="g", **attributes)
    graph = helper.make_graph(
        [node],
        "faults",
        [helper.make_tensor_value_info(n, ONNX_TYPES[a.dtype], a.shape) for n, a in inputs],
        [helper.make_tensor_value_info("out", ONNX_TYPES[np.dtype(output_dtype)], output_shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def onnxruntime(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, inputs)[0]


class Case:
    """A one-node model with its run-time index input, valid indices
    (negative ones included), and a bad index that replaces one of them."""

    def __init__(
        self,
        op_type: str,
        data: np.ndarray,
        indices: np.ndarray,
        output_shape: Sequence[int],
        axis_message: str,
        extra: Sequence[tuple[str, np.ndarray]] = (),
        **attributes: Any,
    ) -> None:
        self.op_type = op_type
        self.data, self.indices, self.extra = data, indices, list(extra)
        self.axis_message = axis_message
        inputs = [("data", data), ("indices", indices), *self.extra]
        self.model = one_node_model(op_type, inputs, output_shape, **attributes)

    def inputs(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        return {"data": self.data, "indices": indices, **dict(self.extra)}

    def with_index(self, position: tuple[int, ...], value: int) -> np.ndarray:
        bad = self.indices.copy()
        bad[position] = value
        return bad


CASES = {
    "Gather": Case(
        "Gather",
        RNG.standard_normal((5, 3)).astype(np.float32),
        np.array([[0, -1], [4, -5]], np.int64),
        [2, 2, 3],
        "[-5, 5) on axis 0 of tensor<5x3xf32>",
        axis=0,
    ),
    "Gather (axis 1, int32)": Case(
        "Gather",
        RNG.standard_normal((2, 4)).astype(np.float32),
        np.array([3, -4, 0], np.int32),
        [2, 3],
        "[-4, 4) on axis 1 of tensor<2x4xf32>",
        axis=1,
    ),
    "GatherElements": Case(
        "GatherElements",
        RNG.standard_normal((3, 4)).astype(np.float32),
        np.array([[0, -1], [3, -4], [2, 1]], np.int64),
        [3, 2],
        "[-4, 4) on axis 1 of tensor<3x4xf32>",
        axis=1,
    ),
    "GatherND": Case(
        "GatherND",
        RNG.standard_normal((3, 4, 2)).astype(np.float32),
        np.array([[0, -1], [2, 3], [-3, 0]], np.int64),
        [3, 2],
        "[-4, 4) on axis 1 of tensor<3x4x2xf32>",
    ),
    "ScatterElements": Case(
        "ScatterElements",
        RNG.standard_normal((3, 4)).astype(np.float32),
        np.array([[0, -1, 2, 1], [-3, 1, 0, 2]], np.int64),
        [3, 4],
        "[-3, 3) on axis 0 of tensor<3x4xf32>",
        extra=[("updates", RNG.standard_normal((2, 4)).astype(np.float32))],
        axis=0,
        reduction="add",
    ),
    "ScatterND": Case(
        "ScatterND",
        RNG.standard_normal((4, 3)).astype(np.float32),
        np.array([[1], [-1]], np.int64),
        [4, 3],
        "[-4, 4) on axis 0 of tensor<4x3xf32>",
        extra=[("updates", RNG.standard_normal((2, 3)).astype(np.float32))],
        reduction="add",
    ),
}
BAD_POSITIONS = {
    "Gather": (1, 0),
    "Gather (axis 1, int32)": (2,),
    "GatherElements": (1, 1),
    "GatherND": (1, 1),
    "ScatterElements": (1, 2),
    "ScatterND": (1, 0),
}


@pytest.fixture(scope="module")
def compiled() -> dict[str, xtc.CompiledModel]:
    return {name: xtc.compile(case.model) for name, case in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_indices_in_range_negative_ones_included_match_onnxruntime(
    name: str, compiled: dict[str, xtc.CompiledModel]
) -> None:
    case = CASES[name]
    inputs = case.inputs(case.indices)
    (got,) = compiled[name].run(inputs)
    np.testing.assert_allclose(got, onnxruntime(case.model, inputs), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("sign", [1, -1])
def test_an_index_out_of_range_fails_the_run_naming_the_node_and_the_index(
    name: str, sign: int, compiled: dict[str, xtc.CompiledModel]
) -> None:
    """The message names the node, the index and the range; the run after
    it, with good indices, is right (the fault record is cleared)."""
    case = CASES[name]
    dim = int(case.axis_message[2 : case.axis_message.index(",")])
    bad_value = dim if sign > 0 else -dim - 1
    bad = case.with_index(BAD_POSITIONS[name], bad_value)
    message = f"{case.op_type} node 'g': index {bad_value} is out of range {case.axis_message}"
    with pytest.raises(xtc.InputError) as raised:
        compiled[name].run(case.inputs(bad))
    assert str(raised.value) == message
    with pytest.raises(Exception, match="ONNXRuntimeError"):
        onnxruntime(case.model, case.inputs(bad))  # onnxruntime refuses it too
    inputs = case.inputs(case.indices)
    (got,) = compiled[name].run(inputs)
    np.testing.assert_allclose(got, onnxruntime(case.model, inputs), rtol=1e-6, atol=1e-6)


def test_the_interpreter_gives_the_same_message(compiled: dict[str, xtc.CompiledModel]) -> None:
    from xtc.frontend.onnx import import_model

    case = CASES["GatherND"]
    bad = case.with_index(BAD_POSITIONS["GatherND"], 9)
    with pytest.raises(interp.RunTimeFault) as expected:
        interp.run(import_model(case.model), case.inputs(bad))
    with pytest.raises(xtc.InputError) as actual:
        compiled["GatherND"].run(case.inputs(bad))
    assert str(actual.value) == str(expected.value)


@settings(max_examples=10, deadline=None)
@given(
    rows=st.integers(1, 6),
    columns=st.integers(1, 40),
    count=st.integers(1, 70),
    data=st.data(),
)
def test_gather_of_any_shape_checks_every_index(
    rows: int, columns: int, count: int, data: st.DataObject
) -> None:
    """Many rows (a parallel nest), rows of 16 and more (vectorized): the
    first index out of range in row-major order is the one named."""
    table = RNG.standard_normal((rows, columns)).astype(np.float32)
    indices = RNG.integers(-rows, rows, (count,)).astype(np.int64)
    model = one_node_model(
        "Gather", [("data", table), ("indices", indices)], [count, columns], axis=0
    )
    compiled = xtc.compile(model)
    np.testing.assert_array_equal(
        compiled.run([table, indices])[0], onnxruntime(model, {"data": table, "indices": indices})
    )
    position = data.draw(st.integers(0, count - 1))
    value = data.draw(st.sampled_from([rows, rows + 7, -rows - 1, 2**40]))
    indices[position] = value
    with pytest.raises(xtc.InputError, match=rf"^Gather node 'g': index {value} is out of range"):
        compiled.run([table, indices])


@pytest.mark.parametrize("lanes", [(3, 9), (0, 15), (15,), (7, 8, 9)])
def test_a_vectorized_check_names_the_first_failing_lane(lanes: tuple[int, ...]) -> None:
    """Rows of 16 indices are checked 16 lanes at a time: the index named is
    the first bad one in the row, as a serial loop would name it."""
    data = RNG.standard_normal((4, 6)).astype(np.float32)
    indices = RNG.integers(-6, 6, (4, 16)).astype(np.int64)
    model = one_node_model(
        "GatherElements", [("data", data), ("indices", indices)], [4, 16], axis=1
    )
    compiled = xtc.compile(model)
    assert "tir-vectorize" in compiled.manifest["pipeline"]
    bad = indices.copy()
    for k, lane in enumerate(lanes):
        bad[2, lane] = 6 + k
    with pytest.raises(xtc.InputError, match=r"^GatherElements node 'g': index 6 is out of range"):
        compiled.run([data, bad])
    (got,) = compiled.run([data, indices])
    np.testing.assert_array_equal(got, onnxruntime(model, {"data": data, "indices": indices}))


def test_a_fault_in_a_worker_thread_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The indices' check nest runs in parallel: the last rows belong to the
    last thread of the team, which reports to the caller's run."""
    monkeypatch.setenv("XTC_NUM_THREADS", "4")
    table = RNG.standard_normal((10, 32)).astype(np.float32)
    indices = RNG.integers(-10, 10, (64, 8)).astype(np.int64)
    model = one_node_model("Gather", [("data", table), ("indices", indices)], [64, 8, 32], axis=0)
    compiled = xtc.compile(model)
    assert "tir-parallel" in compiled.manifest["pipeline"]
    for position in [(0, 0), (63, 7), (40, 3)]:
        bad = indices.copy()
        bad[position] = -11
        with pytest.raises(xtc.InputError, match="index -11 is out of range"):
            compiled.run([table, bad])
        (got,) = compiled.run([table, indices])
        np.testing.assert_array_equal(got, table[indices])


def test_runs_in_several_threads_keep_their_faults_apart() -> None:
    """One thread runs bad indices, another good ones, on one model at once:
    each sees its own outcome (the fault record is the calling thread's)."""
    case = CASES["Gather"]
    compiled = xtc.compile(case.model)
    good = case.inputs(case.indices)
    bad = case.inputs(case.with_index(BAD_POSITIONS["Gather"], 5))
    expected = onnxruntime(case.model, good)
    outcomes: dict[str, list[str]] = {"good": [], "bad": []}

    def work(kind: str, inputs: dict[str, np.ndarray]) -> None:
        for _ in range(300):
            try:
                (got,) = compiled.run(inputs)
                outcomes[kind].append("ok" if np.array_equal(got, expected) else "wrong")
            except xtc.InputError as e:
                outcomes[kind].append(str(e))

    threads = [threading.Thread(target=work, args=a) for a in (("good", good), ("bad", bad))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(outcomes["good"]) == {"ok"}
    assert set(outcomes["bad"]) == {
        "Gather node 'g': index 5 is out of range [-5, 5) on axis 0 of tensor<5x3xf32>"
    }


def test_an_unsigned_index_is_never_negative() -> None:
    """A ui64 index of 2^64 - 1 is out of range, not -1 counted from the end
    (the graph IR takes unsigned indices; ONNX does not)."""
    from xtc.dialects.graph import tensor as t
    from xtc.testing.graph_op import single_op_module, tensor_type_of
    from xtc.driver.compiler import compile_graph

    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    good, bad = np.array([2, 0], np.uint64), np.array([0, 2**64 - 1], np.uint64)
    module = single_op_module(t.GatherOp, [tensor_type_of(data), tensor_type_of(good)], {})
    compiled = compile_graph(module)
    np.testing.assert_array_equal(compiled.run([data, good])[0], data[[2, 0]])
    with pytest.raises(xtc.InputError, match=r"^Gather: index -1 is out of range \[-3, 3\)"):
        compiled.run([data, bad])
    with pytest.raises(interp.RunTimeFault, match=r"index 18446744073709551615 is out of range"):
        interp.run(module, [data, bad])


def test_constant_indices_out_of_range_fault_at_run_time() -> None:
    """The importer (and graph-fold-constants) leave an op that faults on
    its constants unfolded: it fails when the model runs, naming its node."""
    node = helper.make_node("Gather", ["data", "indices"], ["out"], name="g", axis=0)
    graph = helper.make_graph(
        [node],
        "constant",
        [],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])],
        initializer=[
            helper.make_tensor("data", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0]),
            helper.make_tensor("indices", TensorProto.INT64, [2], [0, -4]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    compiled = xtc.compile(model)
    message = "Gather node 'g': index -4 is out of range [-3, 3) on axis 0 of tensor<3xf32>"
    with pytest.raises(xtc.InputError) as raised:
        compiled.run([])
    assert str(raised.value) == message


def test_onehot_gives_all_off_values_for_an_index_out_of_range() -> None:
    """ONNX defines it (no fault), as onnxruntime computes it."""
    indices = np.array([0, -1, 4, 5, -6, 2], np.int64)
    node = helper.make_node("OneHot", ["indices", "depth", "values"], ["out"], name="g")
    graph = helper.make_graph(
        [node],
        "onehot",
        [helper.make_tensor_value_info("indices", TensorProto.INT64, [6])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [6, 5])],
        initializer=[
            helper.make_tensor("depth", TensorProto.INT64, [], [5]),
            helper.make_tensor("values", TensorProto.FLOAT, [2], [-1.0, 3.0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (got,) = xtc.compile(model).run([indices])
    expected = onnxruntime(model, {"indices": indices})
    np.testing.assert_array_equal(got, expected)
    assert (got[3] == -1.0).all() and (got[4] == -1.0).all()


# ------------------------------------------------------------ division


def division_model(
    op_type: str, dtype: Any, shape: Sequence[int], fmod: int = 0
) -> onnx.ModelProto:
    x = np.zeros(shape, dtype)
    attributes = {"fmod": fmod} if op_type == "Mod" else {}
    return one_node_model(op_type, [("a", x), ("b", x)], shape, dtype, **attributes)


DIVISIONS = [("Div", 0), ("Mod", 0), ("Mod", 1)]


@pytest.mark.parametrize("opt_level", [1, 3], ids=["scalar", "vectorized"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize(("op_type", "fmod"), DIVISIONS)
def test_integer_division_by_a_run_time_zero_fails_the_run(
    op_type: str, fmod: int, dtype: Any, opt_level: int
) -> None:
    """No SIGFPE: x / 0 and x % 0 fail the run naming the node (onnxruntime
    refuses them too), INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0 (what
    onnxruntime gives up to int32; it dies of SIGFPE on int64)."""
    shape = (4, 16)  # -O3 vectorizes the rows of 16
    model = division_model(op_type, dtype, shape, fmod)
    compiled = xtc.compile(model, opt_level=opt_level)
    assert ("tir-vectorize" in compiled.manifest["pipeline"]) == (opt_level == 3)
    low = np.iinfo(dtype).min
    a = RNG.integers(-100, 100, shape).astype(dtype)
    b = (RNG.integers(1, 9, shape) * RNG.choice([-1, 1], shape)).astype(dtype)
    a[0, :3], b[0, :3] = low, [-1, 1, 7]
    (got,) = compiled.run([a, b])
    if dtype != np.int64:
        np.testing.assert_array_equal(got, onnxruntime(model, {"a": a, "b": b}))
    assert got[0, 0] == (low if op_type == "Div" else 0)
    what = "division" if op_type == "Div" else "modulo"
    for position in [(0, 5), (3, 15)]:
        zero = b.copy()
        zero[position] = 0
        with pytest.raises(xtc.InputError, match=f"^{op_type} node 'g': integer {what} by zero$"):
            compiled.run([a, zero])
    (again,) = compiled.run([a, b])
    np.testing.assert_array_equal(again, got)


def test_float_division_by_zero_is_not_a_fault() -> None:
    compiled = xtc.compile(division_model("Div", np.float32, (3,)))
    (got,) = compiled.run([np.array([1, -1, 0], np.float32), np.zeros(3, np.float32)])
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


# ------------------------------------------------------------ the JIT


CHECKED_TIR = """
func.func @main(%data: memref<5xf32>, %idx: memref<4xi64>,
                %out: memref<4xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %idx[%i] : memref<4xi64>
    %hi = arith.constant 5 : i64
    %ok = arith.cmpi ult, %v, %hi : i64
    tir.assert %ok, "node 'n{{}}': index {} is out of range", %v : i64
    %lo = arith.constant 0 : i64
    %clamped = arith.minui %v, %lo : i64
    %at = arith.index_cast %clamped : i64 to index
    %x = memref.load %data[%at] : memref<5xf32>
    memref.store %x, %out[%i] : memref<4xf32>
  }
  func.return
}
"""


def test_the_jit_raises_the_fault_and_clears_it_for_the_next_call() -> None:
    module = parse_module(CHECKED_TIR)
    data = np.arange(5, dtype=np.float32)
    good = np.array([0, 1, 2, 3], np.int64)
    (out,) = run_native(module, [data, good])
    np.testing.assert_array_equal(out, [0, 0, 0, 0])
    with pytest.raises(InputError, match=r"^node 'n\{\}': index 7 is out of range$"):
        run_native(module, [data, np.array([0, 7, 9, 3], np.int64)])
    with pytest.raises(interp.RunTimeFault, match=r"node 'n\{\}': index 7 is out of range"):
        interp.run(module, [data, np.array([0, 7, 9, 3], np.int64)])
    (out,) = run_native(module, [data, good])
    np.testing.assert_array_equal(out, [0, 0, 0, 0])
