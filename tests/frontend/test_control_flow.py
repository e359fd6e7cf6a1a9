"""If, Loop and Scan (frontend/converters/control.py) against onnxruntime,
on the interpreter and natively: their subgraphs inlined at import where the
control flow is known there, loops unrolled; graph.if and graph.loop where it
is known only at run time; and the messages where xtc cannot compile it."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc import interp
from xtc.driver.onnx_backend import specializing_model
from xtc.driver.specializing import graph_inputs_of
from xtc.driver.textual_ir import module_to_text
from xtc.frontend.converters import NeedsConstantError
from xtc.frontend.onnx import OnnxImportError, import_model

F32 = TensorProto.FLOAT
RNG = np.random.default_rng(7)


def model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[str],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 18,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_ort(m: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[Any]:
    session = onnxruntime.InferenceSession(
        m.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, inputs))


def check(m: onnx.ModelProto, inputs: dict[str, np.ndarray], native: bool = True) -> None:
    """The interpreter and native code (unless not `native`) give
    onnxruntime's outputs."""
    want = run_ort(m, inputs)
    runs = [specializing_model(m, "interp").run(inputs)]
    if native:
        runs.append(xtc.compile(m, target="llvm", cache=False).run(inputs))
    for got in runs:
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def tensor(name: str, shape: list[int], elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def branch(name: str, node: onnx.NodeProto, output: str) -> onnx.GraphProto:
    return helper.make_graph([node], name, [], [helper.make_empty_tensor_value_info(output)])


def if_model() -> onnx.ModelProto:
    """y = cond ? x + 1 : x * 2 (the branches read x from the outer graph)."""
    then = branch("then", helper.make_node("Add", ["x", "one"], ["a"]), "a")
    other = branch("else", helper.make_node("Mul", ["x", "two"], ["b"]), "b")
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)
    constants = {"one": np.float32(1), "two": np.float32(2)}
    return model(
        [node], [tensor("cond", [], TensorProto.BOOL), tensor("x", [3, 4])], ["y"], constants
    )


def test_if_takes_the_branch_its_run_time_condition_picks() -> None:
    """One compile, both branches: the condition is decided at run time."""
    m = if_model()
    assert "graph.if" in module_to_text(import_model(m))
    compiled = xtc.compile(m, target="llvm", cache=False)
    for condition in (True, False):
        x = RNG.standard_normal((3, 4)).astype(np.float32)
        inputs = {"cond": np.array(condition), "x": x}
        want = run_ort(m, inputs)[0]
        np.testing.assert_allclose(interp.run(import_model(m), inputs)[0], want, rtol=1e-6)
        np.testing.assert_allclose(compiled.run(inputs)[0], want, rtol=1e-6)


def test_the_if_condition_is_not_specialized() -> None:
    compiled = specializing_model(if_model(), "interp")
    x = np.full((3, 4), 3, np.float32)
    assert float(compiled.run({"cond": np.array(True), "x": x})[0][0, 0]) == 4.0
    assert float(compiled.run({"cond": np.array(False), "x": x})[0][0, 0]) == 6.0
    assert compiled.specialized_inputs == []


def test_an_if_whose_branches_differ_in_shape_specializes_its_condition() -> None:
    """A graph.if needs one type per result: else the condition is frozen."""
    then = branch("then", helper.make_node("Identity", ["x"], ["a"]), "a")
    other = branch("else", helper.make_node("Concat", ["x", "x"], ["b"], axis=0), "b")
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)
    m = model([node], [tensor("cond", [], TensorProto.BOOL), tensor("x", [2])], ["y"])
    with pytest.raises(OnnxImportError, match="branches give different types"):
        import_model(m)
    compiled = specializing_model(m, "interp")
    x = np.array([1, 2], np.float32)
    assert compiled.run({"cond": np.array(False), "x": x})[0].tolist() == [1, 2, 1, 2]
    assert compiled.specialized_inputs == ["cond"]


def loop_model(trip_count: int, scan_outputs: bool = True) -> onnx.ModelProto:
    """acc = x; for i < trip_count: acc = acc * 0.5 + i; outputs acc and,
    stacked, each iteration's acc."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["fi"], to=F32),
            helper.make_node("Mul", ["acc_in", "half"], ["scaled"]),
            helper.make_node("Add", ["scaled", "fi"], ["acc_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["acc_out"], ["acc_scan"]),
        ],
        "body",
        [
            tensor("i", [], TensorProto.INT64),
            tensor("cond_in", [], TensorProto.BOOL),
            tensor("acc_in", [2, 3]),
        ],
        [helper.make_empty_tensor_value_info(n) for n in ("cond_out", "acc_out", "acc_scan")][
            : 3 if scan_outputs else 2
        ],
    )
    node = helper.make_node(
        "Loop", ["M", "", "x"], ["acc", "scan"] if scan_outputs else ["acc"], body=body
    )
    constants = {"M": np.array(trip_count, np.int64), "half": np.float32(0.5)}
    return model(
        [node], [tensor("x", [2, 3])], ["acc", "scan"] if scan_outputs else ["acc"], constants
    )


@settings(max_examples=6, deadline=None)
@given(trip_count=st.integers(1, 6))
def test_a_loop_is_unrolled_to_its_trip_count(trip_count: int) -> None:
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    check(loop_model(trip_count), {"x": x}, native=trip_count == 3)


def test_a_loop_longer_than_the_unroll_limit_is_a_graph_loop() -> None:
    m = loop_model(5000, scan_outputs=False)
    text = module_to_text(import_model(m))
    assert "graph.loop" in text and "graph.concat" not in text
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    check(m, {"x": x})


def test_a_long_loop_with_a_constant_trip_count_stacks_its_scan_outputs() -> None:
    """5000 iterations, known at import: a graph.loop with scan results."""
    m = loop_model(5000)
    text = module_to_text(import_model(m))
    assert "graph.loop" in text and "tensor<5000x2x3xf32>" in text
    check(m, {"x": RNG.standard_normal((2, 3)).astype(np.float32)})


def test_scan_outputs_of_a_loop_of_a_run_time_trip_count_specialize_it() -> None:
    """Their row count would be known only at run time: the trip count is
    specialized on (and the loop unrolled)."""
    m = loop_model(3)
    m.graph.initializer.pop(0)  # M becomes an input
    m.graph.input.append(tensor("M", [], TensorProto.INT64))
    with pytest.raises(
        NeedsConstantError, match="scan outputs and a trip count known only at run time"
    ):
        import_model(m)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    inputs = {"x": x, "M": np.array(4, np.int64)}
    got = specializing_model(m, "interp").run(inputs)
    for g, w in zip(got, run_ort(m, inputs), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def counting_model() -> onnx.ModelProto:
    """x = x * 2 + 1, trip count M and start condition given at run time."""
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["x_in", "two"], ["doubled"]),
            helper.make_node("Add", ["doubled", "one"], ["x_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            tensor("i", [], TensorProto.INT64),
            tensor("cond_in", [], TensorProto.BOOL),
            tensor("x_in", [2, 3]),
        ],
        [helper.make_empty_tensor_value_info(n) for n in ("cond_out", "x_out")],
    )
    node = helper.make_node("Loop", ["M", "go", "x"], ["y"], body=body)
    inputs = [
        tensor("M", [], TensorProto.INT64),
        tensor("go", [], TensorProto.BOOL),
        tensor("x", [2, 3]),
    ]
    return model([node], inputs, ["y"], {"two": np.float32(2), "one": np.float32(1)})


def run_both(m: onnx.ModelProto, compiled: Any, inputs: dict[str, np.ndarray]) -> None:
    """The interpreter and `compiled` give onnxruntime's outputs."""
    want = run_ort(m, inputs)
    for got in (interp.run(import_model(m), inputs), compiled.run(inputs)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


COUNTING = counting_model()
COUNTING_COMPILED = None


def counting_compiled() -> Any:
    global COUNTING_COMPILED
    if COUNTING_COMPILED is None:
        COUNTING_COMPILED = xtc.compile(COUNTING, target="llvm", cache=False)
    return COUNTING_COMPILED


@settings(max_examples=8, deadline=None)
@given(trip_count=st.integers(-1, 9), going=st.booleans())
def test_a_loop_runs_its_run_time_trip_count(trip_count: int, going: bool) -> None:
    """One compile for every trip count; none when the condition is false
    or the count is not positive."""
    inputs = {
        "M": np.array(trip_count, np.int64),
        "go": np.array(going),
        "x": RNG.standard_normal((2, 3)).astype(np.float32),
    }
    run_both(COUNTING, counting_compiled(), inputs)


def while_model() -> onnx.ModelProto:
    """A while loop: x = x + x until sum(x) reaches the limit (no trip
    count); the iteration number is added to the step count."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc_in", "acc_in"], ["acc_out"]),
            helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "limit"], ["cond_out"]),
            helper.make_node("Add", ["steps_in", "i"], ["steps_out"]),
        ],
        "body",
        [
            tensor("i", [], TensorProto.INT64),
            tensor("cond_in", [], TensorProto.BOOL),
            tensor("acc_in", [2]),
            tensor("steps_in", [], TensorProto.INT64),
        ],
        [helper.make_empty_tensor_value_info(n) for n in ("cond_out", "acc_out", "steps_out")],
    )
    node = helper.make_node("Loop", ["", "go", "x", "zero"], ["acc", "steps"], body=body)
    constants = {"go": np.array(True), "zero": np.array(0, np.int64)}
    return model([node], [tensor("x", [2]), tensor("limit", [])], ["acc", "steps"], constants)


def test_a_loop_whose_condition_is_computed_in_its_body_runs_at_run_time() -> None:
    m = while_model()
    assert "graph.loop" in module_to_text(import_model(m))
    compiled = xtc.compile(m, target="llvm", cache=False)
    for limit in (0.5, 10.0, 1000.0):
        x = np.abs(RNG.standard_normal(2)).astype(np.float32) + 0.1
        run_both(m, compiled, {"x": x, "limit": np.array(limit, np.float32)})


def test_an_if_inside_a_loop_picks_its_branch_each_iteration() -> None:
    """x = i is even ? x + 1 : x * 2, for a run-time trip count."""
    parity = [
        helper.make_node("Mod", ["i", "two_i"], ["rest"]),
        helper.make_node("Equal", ["rest", "zero_i"], ["even"]),
    ]
    then = branch("then", helper.make_node("Add", ["x_in", "one"], ["a"]), "a")
    other = branch("else", helper.make_node("Mul", ["x_in", "two"], ["b"]), "b")
    pick = helper.make_node("If", ["even"], ["x_out"], then_branch=then, else_branch=other)
    body = helper.make_graph(
        [*parity, pick, helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [
            tensor("i", [], TensorProto.INT64),
            tensor("cond_in", [], TensorProto.BOOL),
            tensor("x_in", [3]),
        ],
        [helper.make_empty_tensor_value_info(n) for n in ("cond_out", "x_out")],
    )
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)
    constants = {
        "two_i": np.array(2, np.int64),
        "zero_i": np.array(0, np.int64),
        "one": np.float32(1),
        "two": np.float32(2),
    }
    m = model([node], [tensor("M", [], TensorProto.INT64), tensor("x", [3])], ["y"], constants)
    text = module_to_text(import_model(m))
    assert "graph.loop" in text and "graph.if" in text
    compiled = xtc.compile(m, target="llvm", cache=False)
    for trip_count in (0, 1, 2, 5):
        x = RNG.standard_normal(3).astype(np.float32)
        run_both(m, compiled, {"M": np.array(trip_count, np.int64), "x": x})


def test_a_loop_swapping_its_carried_values_keeps_both() -> None:
    """(a, b) = (b, a + b): the body yields one carried value in the other's place."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["a_in", "b_in"], ["sum"]),
            helper.make_node("Identity", ["b_in"], ["a_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            tensor("i", [], TensorProto.INT64),
            tensor("cond_in", [], TensorProto.BOOL),
            tensor("a_in", [2]),
            tensor("b_in", [2]),
        ],
        [helper.make_empty_tensor_value_info(n) for n in ("cond_out", "a_out", "sum")],
    )
    node = helper.make_node("Loop", ["M", "", "a", "b"], ["fa", "fb"], body=body)
    inputs = [tensor("M", [], TensorProto.INT64), tensor("a", [2]), tensor("b", [2])]
    m = model([node], inputs, ["fa", "fb"])
    compiled = xtc.compile(m, target="llvm", cache=False)
    one = np.ones(2, np.float32)
    run_both(m, compiled, {"M": np.array(6, np.int64), "a": one, "b": one})


def scan_model(reverse: int, axis: int, out_axis: int, opset: int = 18) -> onnx.ModelProto:
    """A running sum over the scan axis of x (4x5x3): state [5 or 4, 3]."""
    state = [4, 5, 3][:axis] + [4, 5, 3][axis + 1 :]
    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "row"], ["sum_out"]),
            helper.make_node("Identity", ["sum_out"], ["each"]),
        ],
        "body",
        [tensor("sum_in", state), tensor("row", state)],
        [helper.make_empty_tensor_value_info(n) for n in ("sum_out", "each")],
    )
    node = helper.make_node(
        "Scan",
        ["init", "x"],
        ["total", "partial"],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[axis],
        scan_input_directions=[reverse],
        scan_output_axes=[out_axis],
    )
    return model([node], [tensor("init", state), tensor("x", [4, 5, 3])], ["total", "partial"])


@pytest.mark.parametrize(("reverse", "axis", "out_axis"), [(0, 0, 0), (1, 0, 0), (0, 1, -1)])
def test_scan_runs_its_body_along_the_scan_axis(reverse: int, axis: int, out_axis: int) -> None:
    m = scan_model(reverse, axis, out_axis)
    state = [4, 5, 3][:axis] + [4, 5, 3][axis + 1 :]
    inputs = {
        "init": RNG.standard_normal(state).astype(np.float32),
        "x": RNG.standard_normal((4, 5, 3)).astype(np.float32),
    }
    check(m, inputs, native=(reverse, axis) == (1, 0))


@pytest.mark.parametrize(("reverse", "out_axis"), [(0, 0), (1, -1)])
def test_a_scan_longer_than_the_unroll_limit_is_a_graph_loop(reverse: int, out_axis: int) -> None:
    """A running sum over 1500 rows: one loop gathering a row per iteration."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["sum_in", "row"], ["sum_out"]),
            helper.make_node("Identity", ["sum_out"], ["each"]),
        ],
        "body",
        [tensor("sum_in", [2]), tensor("row", [2])],
        [helper.make_empty_tensor_value_info(n) for n in ("sum_out", "each")],
    )
    node = helper.make_node(
        "Scan",
        ["init", "x"],
        ["total", "partial"],
        body=body,
        num_scan_inputs=1,
        scan_input_directions=[reverse],
        scan_output_directions=[reverse],
        scan_output_axes=[out_axis],
    )
    m = model([node], [tensor("init", [2]), tensor("x", [1500, 2])], ["total", "partial"])
    text = module_to_text(import_model(m))
    assert "graph.loop" in text and "graph.concat" not in text
    inputs = {
        "init": RNG.standard_normal(2).astype(np.float32),
        "x": RNG.standard_normal((1500, 2)).astype(np.float32),
    }
    check(m, inputs, native=bool(reverse))


def test_an_unsupported_node_in_a_body_is_named_with_its_place() -> None:
    then = branch("then", helper.make_node("MaxRoiPool", ["x"], ["u"]), "u")
    other = branch("else", helper.make_node("Identity", ["x"], ["v"]), "v")
    node = helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then, else_branch=other)
    m = model([node], [tensor("x", [3])], ["y"], {"c": np.array(True)})
    with pytest.raises(
        OnnxImportError,
        match=r"MaxRoiPool node .pick/then_branch/MaxRoiPool_0. .*is not supported",
    ):
        import_model(m)


def test_a_value_inside_a_branch_traces_back_to_the_graph_inputs() -> None:
    """The specializer learns which inputs to freeze from a value named
    inside a subgraph (an Expand's shape computed in a branch)."""
    shape = helper.make_graph(
        [helper.make_node("Concat", ["n", "n"], ["s"], axis=0)],
        "then",
        [],
        [helper.make_empty_tensor_value_info("s")],
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=shape, else_branch=shape)
    m = model(
        [node], [tensor("c", [], TensorProto.BOOL), tensor("n", [1], TensorProto.INT64)], ["y"]
    )
    assert graph_inputs_of(m, "s") == ["n"]
    assert graph_inputs_of(m, "y") == ["c", "n"]
    assert interp.run(import_model(m, freeze={"c": np.array(True), "n": np.array([2])}), {})[
        0
    ].tolist() == [2, 2]


def test_without_control_regions_a_run_time_condition_is_specialized() -> None:
    """For cuda, which compiles no graph.if nor graph.loop: the condition
    must be known at import, so a specializing compile freezes it."""
    from xtc.driver.compiler import CompileError
    from xtc.driver.cuda import compile_graph_to_gpu

    with pytest.raises(NeedsConstantError, match="compiles no control flow") as needs:
        import_model(if_model(), control_regions=False)
    assert needs.value.value == "cond"
    with pytest.raises(NeedsConstantError, match="the trip count .input 0. must be a constant"):
        import_model(counting_model(), control_regions=False)
    with pytest.raises(OnnxImportError, match="its condition depends on run-time values"):
        import_model(while_model(), control_regions=False)
    with pytest.raises(CompileError, match=r"cuda target does not compile .*\(graph.if\)"):
        compile_graph_to_gpu(import_model(if_model()))
