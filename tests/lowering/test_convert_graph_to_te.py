"""convert-graph-to-te: every graph op becomes a call of a shared te kernel,
the functions keep their signatures and constants, a model computes the same
before (graph interpreter) and after (te interpreter), and an op without a
compute rule is refused with a diagnostic that names it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    ArrayAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import PassFailedException

from xtc import interp
from xtc.dialects.graph import Graph
from xtc.dialects.graph.base import GraphOp, Props
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.control import CONTROL_OPS
from xtc.dialects.graph.elementwise import ReluOp
from xtc.dialects.te import ComputeOp
from xtc.dialects.tir import AssertOp
from xtc.frontend.onnx import import_model
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, single_op_module
from xtc.lowering.convert_graph_to_te import ConvertGraphToTe
from xtc.ops import load_compute_rules
from xtc.tools.model_builders import bert_encoder, resnet_like
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import make_context, module_to_text, parse_module

MODEL = """
func.func @main(%x: tensor<2x3x4xf32> {graph.name = "x"}, %n: tensor<4xi32> {graph.name = "n"})
    -> (tensor<2x4xf32> {graph.name = "y"}, tensor<2x2x4xf32>, tensor<4xi32>, tensor<4xi32>) {
  %w = graph.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  %one = graph.constant dense<3> : tensor<i32>
  %a = graph.mul %x, %w : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %b = graph.tanh %a : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %c = graph.add %b, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %d = graph.add %c, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %m = graph.reduce_max %d {axes = array<i64: 1>, keepdims = false}
    : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %t = graph.transpose %d {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %s:2 = graph.split %t {axis = 0 : i64, sizes = array<i64: 1, 2>}
    : (tensor<3x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<2x2x4xf32>)
  %e = graph.exp %s#1 : (tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %q = graph.div %n, %one : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %r = graph.mod %n, %one : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  func.return %m, %e, %q, %r : tensor<2x4xf32>, tensor<2x2x4xf32>, tensor<4xi32>, tensor<4xi32>
}
"""


def convert(text: str) -> ModuleOp:
    return apply_pipeline(parse_module(text), "convert-graph-to-te")


def functions(module: ModuleOp) -> dict[str, FuncOp]:
    return {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, FuncOp)}


def test_model_computes_the_same_before_and_after() -> None:
    assert_pipeline_preserves_outputs(MODEL, "convert-graph-to-te", seeds=(0, 1, 2))


def test_only_calls_and_constants_stay_in_main() -> None:
    module = convert(MODEL)
    main = functions(module)["main"]
    kinds = {type(op).__name__ for op in main.body.block.ops}
    assert kinds == {"ConstantOp", "CallOp", "ReturnOp"}
    assert not [
        op for op in module.walk() if isinstance(op, GraphOp) and not isinstance(op, ConstantOp)
    ]


def test_identical_ops_share_one_kernel() -> None:
    """The two adds have equal operand types and properties: one kernel."""
    module = convert(MODEL)
    callees = [c.callee.string_value() for c in module.walk() if isinstance(c, CallOp)]
    assert callees.count("add_0") == 2 and "add_1" not in callees
    kernels = {name: f for name, f in functions(module).items() if name != "main"}
    assert sorted(kernels) == sorted(set(callees))
    for kernel in kernels.values():
        assert kernel.sym_visibility == StringAttr("private")
        body_ops = {type(op) for op in kernel.body.block.ops}
        assert body_ops <= {ComputeOp, type(kernel.body.block.last_op)}


CHECKED_TWICE = """
func.func @main(%x: tensor<5x3xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = graph.gather %x, %i : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("first")
  %b = graph.gather %x, %j : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("second")
  %c = graph.gather %x, %i : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("first")
  func.return %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
"""


def test_ops_whose_kernels_check_values_share_them_only_by_node() -> None:
    """A kernel's fault messages name its node: two gathers of different
    nodes get a kernel each, naming it; ops of one node share theirs."""
    module = convert(CHECKED_TWICE)
    callees = [c.callee.string_value() for c in module.walk() if isinstance(c, CallOp)]
    assert callees == ["gather_0", "gather_1", "gather_0"]
    messages = {
        name: [op.message.data for op in kernel.walk() if isinstance(op, AssertOp)]
        for name, kernel in functions(module).items()
        if name != "main"
    }
    assert messages["gather_0"][0].startswith("Gather node 'first': index {}")
    assert messages["gather_1"][0].startswith("Gather node 'second': index {}")
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    i, j = np.array([4, -5], np.int64), np.array([1, 9], np.int64)
    with pytest.raises(interp.RunTimeFault, match="Gather node 'second': index 9"):
        interp.run(module, [x, i, j])


def test_main_keeps_its_signature_and_attributes() -> None:
    before = functions(parse_module(MODEL))["main"]
    after = functions(convert(MODEL))["main"]
    assert after.function_type == before.function_type
    assert after.arg_attrs == before.arg_attrs and after.res_attrs == before.res_attrs


def test_output_reads_back_from_its_text() -> None:
    module = convert(MODEL)
    for generic in (False, True):
        text = module_to_text(module, generic=generic)
        assert module_to_text(parse_module(text), generic=generic) == text


def test_kernel_names_avoid_existing_symbols() -> None:
    text = """
    func.func @relu_0(%a: tensor<2xf32>) -> tensor<2xf32> {
      func.return %a : tensor<2xf32>
    }
    func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      %r = graph.relu %a : (tensor<2xf32>) -> tensor<2xf32>
      %s = func.call @relu_0(%r) : (tensor<2xf32>) -> tensor<2xf32>
      func.return %s : tensor<2xf32>
    }
    """
    module = convert(text)
    assert "relu_1" in functions(module)
    (first, second) = [c.callee.string_value() for c in module.walk() if isinstance(c, CallOp)]
    assert (first, second) == ("relu_1", "relu_0")
    x = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_array_equal(interp.run(module, [x])[0], [0.0, 2.0])


def test_every_graph_op_has_a_compute_rule() -> None:
    """Constants and the control ops (lowered by convert-te-to-tir) aside."""
    rules = load_compute_rules()
    kept = {ConstantOp, *CONTROL_OPS}
    missing = [op.name for op in Graph.operations if op not in kept and op not in rules]
    assert missing == []


@irdl_op_definition
class UnknownOp(GraphOp):
    """An op no compute rule knows."""

    name = "graph.test_unknown"

    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        return [operand_types[0]]


def test_an_op_without_a_rule_is_refused_by_name() -> None:
    module = single_op_module(UnknownOp, [TensorType(f32, [2, 3])])
    main = functions(module)["main"]
    relu = ReluOp.build_inferred([main.body.block.args[0]])
    main.body.block.insert_op_before(relu, main.body.block.ops.first)
    message = r"no compute rule for graph\.test_unknown \(tensor<2x3xf32>\)"
    with pytest.raises(PassFailedException, match=message):
        ConvertGraphToTe().apply(make_context(), module)
    # Refused before anything changed.
    assert any(isinstance(op, ReluOp) for op in module.walk())


def test_xtc_opt_prints_the_refusal_as_a_diagnostic(tmp_path: Path) -> None:
    """With graph.relu's rule taken away, xtc-opt names the op and its operand
    types in one line and exits 1, with no traceback."""
    source = tmp_path / "model.mlir"
    source.write_text(MODEL.replace("graph.tanh", "graph.relu"))
    script = (
        "import sys\n"
        "from xtc.ops import load_compute_rules\n"
        "from xtc.dialects.graph.elementwise import ReluOp\n"
        "del load_compute_rules()[ReluOp]\n"
        "from xtc.tools.xtc_opt import main\n"
        "main(sys.argv[1:])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(source), "-p", "convert-graph-to-te"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "error: convert-graph-to-te: no compute rule for graph.relu (tensor<2x3x4xf32>)" in (
        result.stderr
    )


@pytest.mark.parametrize("build", [resnet_like, bert_encoder], ids=lambda b: b.__name__)
def test_architectures_convert_completely(build: Callable[[], onnx.ModelProto]) -> None:
    """Every op of the imported models has a rule (their numbers are checked
    at the tir and native levels, where running them is fast)."""
    module = import_model(build())
    graph_ops = [op for op in module.walk() if isinstance(op, GraphOp)]
    kept = [op for op in graph_ops if isinstance(op, ConstantOp)]
    apply_pipeline(module, "convert-graph-to-te")
    calls = [op for op in module.walk() if isinstance(op, CallOp)]
    assert len(calls) == len(graph_ops) - len(kept)
    remaining = [op for op in module.walk() if isinstance(op, GraphOp)]
    assert len(remaining) == len(kept)
    assert len(functions(module)) - 1 == len({c.callee.string_value() for c in calls})


def test_every_kernel_names_its_op() -> None:
    """te.ops lists the graph ops a kernel computes (schedules choose by it)."""
    module = convert(MODEL)
    ops = {
        name: [cast(StringAttr, a).data for a in cast(ArrayAttr[Attribute], f.attributes["te.ops"])]
        for name, f in functions(module).items()
        if name != "main"
    }
    assert ops["add_0"] == ["graph.add"] and ops["split_0"] == ["graph.split"]
    assert all(names == [f"graph.{name.rsplit('_', 1)[0]}"] for name, names in ops.items())


FUSED = """
func.func @main(%x: tensor<2x3xf32> {graph.name = "x"}, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %b = graph.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  %y = func.call @fused_dense_add_relu_0(%x, %w, %b)
    : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %z = func.call @fused_exp_mul_1(%y) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %u = func.call @fused_exp_mul_2(%z) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %u : tensor<2x4xf32>
}
func.func private @fused_dense_add_relu_0(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>,
    %b: tensor<4xf32>) -> tensor<2x4xf32> attributes {graph.primitive} {
  %d = graph.dense %x, %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %a = graph.add %d, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
func.func private @fused_exp_mul_1(%y: tensor<2x4xf32>) -> tensor<2x4xf32>
    attributes {graph.primitive} {
  %half = graph.constant dense<0.5> : tensor<f32>
  %e = graph.exp %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = graph.mul %e, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %m : tensor<2x4xf32>
}
func.func private @fused_exp_mul_2(%y: tensor<2x4xf32>) -> tensor<2x4xf32>
    attributes {graph.primitive} {
  %half = graph.constant dense<0.5> : tensor<f32>
  %e = graph.exp %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = graph.mul %e, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %m : tensor<2x4xf32>
}
"""


def test_a_primitive_function_becomes_one_kernel() -> None:
    """Its ops' computes in one kernel; identical primitives (a constant in
    them included) share it; the primitive functions are gone."""
    module = assert_pipeline_preserves_outputs(FUSED, "convert-graph-to-te", seeds=(0, 1))
    kernels = {name: f for name, f in functions(module).items() if name != "main"}
    assert sorted(kernels) == ["fused_dense_add_relu_0", "fused_exp_mul_0"]
    callees = [c.callee.string_value() for c in module.walk() if isinstance(c, CallOp)]
    assert callees == ["fused_dense_add_relu_0", "fused_exp_mul_0", "fused_exp_mul_0"]
    dense = kernels["fused_dense_add_relu_0"]
    assert dense.attributes["te.ops"] == ArrayAttr(
        [StringAttr("graph.dense"), StringAttr("graph.add"), StringAttr("graph.relu")]
    )
    assert [type(op) for op in dense.body.block.ops] == [ComputeOp, ComputeOp, ComputeOp, ReturnOp]
    exp_mul = kernels["fused_exp_mul_0"]
    assert [op.name for op in exp_mul.body.block.ops] == [
        "graph.constant",
        "te.compute",
        "te.compute",
        "func.return",
    ]
    assert not [
        op for op in module.walk() if isinstance(op, GraphOp) and op.name != "graph.constant"
    ]
    # The kernel runs at tir level too (its constant becomes a memref.global).
    inputs = [np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)]
    expected = interp.run(parse_module(FUSED), inputs)
    tir = apply_pipeline(module, "convert-te-to-tir")
    np.testing.assert_allclose(interp.run(tir, inputs)[0], expected[0], rtol=1e-6)


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("%s = arith.constant 1.0 : f32", "arith.constant"),
        (
            "%s = func.call @fused_exp_mul_1(%y) : (tensor<2x4xf32>) -> tensor<2x4xf32>",
            "a call of the primitive function @fused_exp_mul_1",
        ),
    ],
)
def test_a_primitive_holding_other_ops_is_refused(body: str, what: str) -> None:
    text = FUSED.replace("  %e = graph.exp %y", f"  {body}\n  %e = graph.exp %y", 1)
    module = parse_module(text)
    message = f"the primitive function @fused_exp_mul_1 holds {what}; it may hold only graph ops"
    with pytest.raises(PassFailedException, match=message):
        ConvertGraphToTe().apply(make_context(), module)
    assert any(isinstance(op, ReluOp) for op in module.walk())


def test_xtc_opt_prints_a_refused_primitive_as_a_diagnostic(tmp_path: Path) -> None:
    source = tmp_path / "fused.mlir"
    source.write_text(
        FUSED.replace(
            "  %e = graph.exp %y", "  %s = arith.constant 1.0 : f32\n  %e = graph.exp %y", 1
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "xtc.tools.xtc_opt", str(source), "-p", "convert-graph-to-te"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert (
        "error: convert-graph-to-te: the primitive function @fused_exp_mul_1 holds" in result.stderr
    )
