"""graph-fuse-ops: the groups follow TVM's rules (one master at their head,
elementwise epilogues, injective chains, no fusion across a value with two
users), are convex, and the models compute the same before and after (graph
interpreter) and once lowered to te; fusion cuts resnet_like's kernels."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyTensorTypeConstr,
    ArrayAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import DiagnosticException

from xtc import interp
from xtc.dialects.graph.base import GraphOp, Props, defined_ops
from xtc.dialects.graph.constant import ConstantOp
from xtc.dialects.graph.elementwise import ReluOp, UnaryOp
from xtc.frontend.onnx import import_model
from xtc.testing.graph_op import random_inputs
from xtc.passes.graph_fuse_ops import (
    MASTERS,
    PRIMITIVE_ATTR,
    GraphFuseOps,
    GroupPlanner,
    OpPattern,
    is_primitive,
    op_pattern,
)
from xtc.tools.model_builders import bert_encoder, mobilenet_v2, resnet_like, squeezenet
from xtc.driver.compiler import compile_graph
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module

GRAPH_PASSES = "graph-simplify-inference,graph-fold-constants,dce"

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet_like": resnet_like,
    "bert_encoder": bert_encoder,
    "mobilenet_v2": lambda: mobilenet_v2(image=32, classes=10),
    # SqueezeNet's stride-2 stem and three stride-2 pools need 64 pixels.
    "squeezenet": lambda: squeezenet(image=64, classes=10),
}


def simplified(name: str) -> ModuleOp:
    return apply_pipeline(import_model(MODELS[name]()), GRAPH_PASSES)


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request: pytest.FixtureRequest) -> tuple[str, ModuleOp]:
    """(name, the model after the inference graph passes)."""
    return request.param, simplified(request.param)


def functions(module: ModuleOp) -> dict[str, FuncOp]:
    return {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, FuncOp)}


def primitives(module: ModuleOp) -> list[FuncOp]:
    return [f for f in functions(module).values() if is_primitive(f)]


def model_inputs(module: ModuleOp) -> list[np.ndarray]:
    inputs = random_inputs(module, seed=1)
    main = interp.entry_function(module)
    for i, name in enumerate(interp.input_names(main)):
        if name == "mask":
            inputs[i] = np.ones_like(inputs[i])
    return inputs


def test_models_compute_the_same_after_fusion(model: tuple[str, ModuleOp]) -> None:
    """The graph interpreter runs the calls of the primitive functions."""
    _, before = model
    after = apply_pipeline(before.clone(), "graph-fuse-ops")
    assert primitives(after)
    inputs = model_inputs(before)
    for got, expected in zip(interp.run(after, inputs), interp.run(before, inputs), strict=True):
        np.testing.assert_array_equal(got, expected)


def assert_group_follows_the_rules(func: FuncOp) -> None:
    assert func.sym_visibility == StringAttr("private")
    ops = list(func.body.block.ops)[:-1]
    assert len(ops) >= 2
    assert all(isinstance(op, GraphOp) and not isinstance(op, ConstantOp) for op in ops)
    patterns = [op_pattern(op) for op in ops]
    assert OpPattern.OPAQUE not in patterns
    if patterns[0] in MASTERS:
        # One master, heading an elementwise epilogue.
        assert all(p is OpPattern.ELEMENTWISE for p in patterns[1:]), patterns
    else:
        assert all(p in (OpPattern.ELEMENTWISE, OpPattern.INJECTIVE) for p in patterns)
    name = "fused_" + "_".join(op.name.removeprefix("graph.") for op in ops)
    assert func.sym_name.data.rsplit("_", 1)[0] == name
    # Every op but the last feeds only the group: one output.
    members = set(ops)
    for op in ops[:-1]:
        assert all(use.operation in members for r in op.results for use in r.uses)
    assert len(func.function_type.outputs.data) == 1


def test_groups_follow_the_rules(model: tuple[str, ModuleOp]) -> None:
    _, before = model
    after = apply_pipeline(before.clone(), "graph-fuse-ops")
    for func in primitives(after):
        assert_group_follows_the_rules(func)
    main = functions(after)["main"]
    calls = [op for op in main.body.block.ops if isinstance(op, CallOp)]
    assert {c.callee.string_value() for c in calls} == {f.sym_name.data for f in primitives(after)}


def users_outside(ops: set[Operation]) -> Iterator[Operation]:
    for op in ops:
        for result in op.results:
            for use in result.uses:
                if use.operation not in ops:
                    yield use.operation


def assert_convex(group: list[Operation]) -> None:
    """No path leaves the group and comes back into it."""
    members = set(group)
    seen: set[Operation] = set()
    frontier = list(users_outside(members))
    while frontier:
        op = frontier.pop()
        if op in seen:
            continue
        seen.add(op)
        for result in op.results:
            for use in result.uses:
                assert use.operation not in members, f"{op.name} leads back into the group"
                frontier.append(use.operation)


def test_planned_groups_are_convex(model: tuple[str, ModuleOp]) -> None:
    _, module = model
    groups = GroupPlanner().plan(functions(module)["main"].body.block)
    assert any(len(g.ops) >= 2 for g in groups)
    for group in groups:
        assert_convex(group.ops)


def test_the_convexity_check_can_fail() -> None:
    """a -> b and a -> c -> b: {a, b} is not convex."""
    module = parse_module("""
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
      %c = graph.exp %a : (tensor<4xf32>) -> tensor<4xf32>
      %b = graph.add %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.return %b : tensor<4xf32>
    }
    """)
    a, _, b, _ = functions(module)["main"].body.block.ops
    with pytest.raises(AssertionError, match="leads back"):
        assert_convex([a, b])
    # The planner fuses the diamond's last two ops only (%a has two users).
    groups = GroupPlanner().plan(functions(module)["main"].body.block)
    assert [[op.name for op in g.ops] for g in groups] == [
        ["graph.relu"],
        ["graph.exp", "graph.add"],
    ]


def kernels_of(module: ModuleOp) -> int:
    return len(functions(module)) - 1


def calls_in_main(module: ModuleOp) -> list[CallOp]:
    return [op for op in functions(module)["main"].body.block.ops if isinstance(op, CallOp)]


def test_fusion_cuts_resnet_like_kernels() -> None:
    plain = apply_pipeline(simplified("resnet_like"), "convert-graph-to-te")
    fused = apply_pipeline(simplified("resnet_like"), "graph-fuse-ops,convert-graph-to-te")
    # 9 conv + bias (+ add) (+ relu) groups and the fc's dense + bias: 33 calls
    # of 24 kernels become 13 calls of 13 kernels (max pool, global pool and
    # flatten stay alone).
    assert (kernels_of(plain), kernels_of(fused)) == (24, 13)
    assert (len(calls_in_main(plain)), len(calls_in_main(fused))) == (33, 13)
    assert not [op for op in fused.walk() if isinstance(op, GraphOp | FuncOp) and is_unlowered(op)]


def is_unlowered(op: Operation) -> bool:
    """A graph op other than a constant, or a leftover primitive function."""
    if isinstance(op, FuncOp):
        return PRIMITIVE_ATTR in op.attributes
    return not isinstance(op, ConstantOp)


@pytest.mark.parametrize("name", ["resnet_like", "bert_encoder"])
def test_fused_kernels_compute_the_same_at_te_level(name: str) -> None:
    """Small configurations: the te interpreter runs every scalar op in Python."""
    small = {
        "resnet_like": lambda: resnet_like(widths=(4, 8), image=16),
        "bert_encoder": lambda: bert_encoder(seq=8, hidden=16, heads=2, ffn=32),
    }[name]
    graph = apply_pipeline(import_model(small()), GRAPH_PASSES)
    te = apply_pipeline(graph.clone(), "graph-fuse-ops,convert-graph-to-te")
    assert any(f.sym_name.data.startswith("fused_") for f in functions(te).values())
    inputs = model_inputs(graph)
    for got, expected in zip(interp.run(te, inputs), interp.run(graph, inputs), strict=True):
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * scale)


def test_a_second_run_changes_nothing() -> None:
    once = apply_pipeline(simplified("resnet_like"), "graph-fuse-ops")
    twice = apply_pipeline(once.clone(), "graph-fuse-ops")
    assert module_to_text(twice) == module_to_text(once)


def test_names_avoid_existing_symbols() -> None:
    module = parse_module("""
    func.func private @fused_relu_exp_0(%a: tensor<4xf32>) -> tensor<4xf32> {
      func.return %a : tensor<4xf32>
    }
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
      %b = graph.exp %a : (tensor<4xf32>) -> tensor<4xf32>
      %c = func.call @fused_relu_exp_0(%b) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %c : tensor<4xf32>
    }
    """)
    apply_pipeline(module, "graph-fuse-ops")
    callees = [c.callee.string_value() for c in module.walk() if isinstance(c, CallOp)]
    assert callees == ["fused_relu_exp_1", "fused_relu_exp_0"]
    x = np.array([-1.0, 0.0, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(interp.run(module, [x])[0], np.exp(np.maximum(x, 0)), rtol=1e-6)


@irdl_op_definition
class ReindexOp(GraphOp):
    """An op from outside xtc: its class states how it fuses."""

    name = "test.reindex"
    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.INJECTIVE

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        return [operand_types[0]]


@irdl_op_definition
class UnfusedUnaryOp(UnaryOp):
    """A unary op whose class overrides its family's elementwise kind."""

    name = "test.unfused_unary"
    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.OPAQUE


def test_an_op_class_s_fusion_kind_overrides_its_family_s() -> None:
    tensor_type = TensorType(f32, [4])
    block = Block(arg_types=[tensor_type])
    reindex = ReindexOp.build_inferred([block.args[0]])
    relu = ReluOp.build_inferred([reindex.output])
    unfused = UnfusedUnaryOp.build_inferred([relu.output])
    assert [op_pattern(op) for op in (reindex, relu, unfused)] == [
        OpPattern.INJECTIVE,
        OpPattern.ELEMENTWISE,
        OpPattern.OPAQUE,
    ]
    block.add_ops([reindex, relu, unfused, ReturnOp(unfused.output)])
    module = ModuleOp([FuncOp("main", ([tensor_type], [tensor_type]), Region(block))])
    GraphFuseOps().apply(Context(), module)
    assert [f.sym_name.data for f in primitives(module)] == ["fused_test_reindex_relu_0"]
    main = functions(module)["main"]
    assert [op.name for op in main.body.block.ops] == [
        "func.call",
        "test.unfused_unary",
        "func.return",
    ]


@irdl_op_definition
class KindlessOp(GraphOp):
    """An op whose class states no fusion kind."""

    name = "test.kindless"
    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], props: Props) -> list[Attribute]:
        return [operand_types[0]]


def test_an_op_stating_no_fusion_kind_is_refused_not_left_unfused() -> None:
    block = Block(arg_types=[TensorType(f32, [4])])
    kindless = KindlessOp.build_inferred([block.args[0]])
    with pytest.raises(DiagnosticException, match="test.kindless states no fusion kind"):
        op_pattern(kindless)
    # Collecting the ops of this module (as the graph dialect collects its own).
    with pytest.raises(TypeError, match="test.kindless states no fusion kind"):
        defined_ops(sys.modules[__name__])


# ---------------------------------------------------------------------------
# Random elementwise chains after a conv2d or a dense: one group, same numbers.


@dataclass(frozen=True)
class Anchor:
    arguments: str
    op: str
    shape: str
    channels: str


ANCHORS = {
    "conv2d": Anchor(
        "%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>",
        "graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : "
        "(tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>",
        "1x4x6x6",
        "4x1x1",
    ),
    "dense": Anchor(
        "%x: tensor<3x5xf32>, %w: tensor<4x5xf32>",
        "graph.dense %x, %w : (tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>",
        "3x4",
        "4",
    ),
}
UNARY = [
    "relu",
    "sigmoid",
    "tanh",
    "neg",
    "abs",
    "gelu",
    "leaky_relu {alpha = 1.000000e-01 : f32}",
    "clip {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32}",
]
BINARY = ["add", "sub", "mul", "max", "min"]
OTHER_OPERANDS = ["channel", "residual", "self"]

Step = tuple[str, str]
"""("unary", op) or (binary op, other operand kind)."""

steps = st.one_of(
    st.sampled_from(UNARY).map(lambda op: ("unary", op)),
    st.tuples(st.sampled_from(BINARY), st.sampled_from(OTHER_OPERANDS)),
)


def chain_module(anchor_name: str, chain: list[Step]) -> str:
    """@main(x, w, r): the anchor, then the chain (a binary op's other operand
    is a per-channel constant, the argument %r or the value itself)."""
    anchor = ANCHORS[anchor_name]
    t, c = f"tensor<{anchor.shape}xf32>", f"tensor<{anchor.channels}xf32>"
    values = (
        "[0.5, -1.5, 2.0, 0.25]"
        if anchor.channels == "4"
        else ("[[[0.5]], [[-1.5]], [[2.0]], [[0.25]]]")
    )
    lines = [
        f"func.func @main({anchor.arguments}, %r: {t}) -> {t} {{",
        f"  %c = graph.constant dense<{values}> : {c}",
        f"  %v0 = {anchor.op}",
    ]
    for i, (kind, what) in enumerate(chain):
        value, result = f"%v{i}", f"%v{i + 1}"
        if kind == "unary":
            name, _, props = what.partition(" ")
            lines.append(f"  {result} = graph.{name} {value} {props} : ({t}) -> {t}")
        else:
            other, other_type = {"channel": ("%c", c), "residual": ("%r", t), "self": (value, t)}[
                what
            ]
            lines.append(f"  {result} = graph.{kind} {value}, {other} : ({t}, {other_type}) -> {t}")
    lines += [f"  func.return %v{len(chain)} : {t}", "}"]
    return "\n".join(lines)


@settings(max_examples=25, deadline=None)
@given(anchor=st.sampled_from(sorted(ANCHORS)), chain=st.lists(steps, min_size=1, max_size=6))
def test_an_elementwise_chain_after_an_anchor_is_one_group(anchor: str, chain: list[Step]) -> None:
    text = chain_module(anchor, chain)
    before = parse_module(text)
    fused = apply_pipeline(parse_module(text), "graph-fuse-ops")
    (primitive,) = primitives(fused)
    assert_group_follows_the_rules(primitive)
    ops = [op.name for op in primitive.body.block.ops][:-1]
    assert ops[0] == f"graph.{anchor}" and len(ops) == len(chain) + 1
    main = functions(fused)["main"]
    assert {op.name for op in main.body.block.ops} == {"graph.constant", "func.call", "func.return"}
    inputs = random_inputs(before, seed=len(chain))
    (expected,) = interp.run(before, inputs)
    np.testing.assert_array_equal(interp.run(fused, inputs)[0], expected)
    te = apply_pipeline(fused, "convert-graph-to-te")
    (kernel,) = [f for f in functions(te).values() if f.sym_name.data != "main"]
    assert kernel.attributes["te.ops"] == ArrayAttr([StringAttr(name) for name in ops])
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(interp.run(te, inputs)[0], expected, rtol=1e-5, atol=1e-5 * scale)


def u8_conv_then_transpose(perm: str) -> str:
    x, w, y = "tensor<1x6x7x8xui8>", "tensor<1x2x3x3x16x4xi8>", "tensor<1x4x5x16xi32>"
    t = "tensor<1x16x4x5xi32>" if perm == "0, 3, 1, 2" else "tensor<1x4x16x5xi32>"
    f = t.replace("i32", "f32")
    return f"""
func.func @main(%x: {x}, %w: {w}) -> {f} {{
  %y = graph.conv2d_u8s8 %x, %w : ({x}, {w}) -> {y}
  %t = graph.transpose %y {{perm = array<i64: {perm}>}} : ({y}) -> {t}
  %f = graph.cast %t {{to = f32}} : ({t}) -> {f}
  %r = graph.relu %f : ({f}) -> {f}
  func.return %r : {f}
}}
"""


def test_a_u8_conv_stores_its_output_transposed_back_to_nchw() -> None:
    """The NHWC-to-NCHW transpose graph-sink-transpose leaves after a u8
    conv joins the conv's epilogue (one kernel, storing NCHW: te-inline
    computes the conv at the transposed read); another permutation is a
    kernel of its own. Both compute what they did, natively too."""
    for perm, fused_name in (
        ("0, 3, 1, 2", "fused_conv2d_u8s8_transpose_cast_relu_0"),
        ("0, 1, 3, 2", "fused_transpose_cast_relu_0"),
    ):
        before = parse_module(u8_conv_then_transpose(perm))
        after = apply_pipeline(before.clone(), "graph-fuse-ops")
        assert [f.sym_name.data for f in primitives(after)] == [fused_name]
        inputs = random_inputs(before, 0)
        (expected,) = interp.run(before, inputs)
        (got,) = interp.run(after, inputs)
        np.testing.assert_array_equal(got, expected)
        (native,) = compile_graph(before, opt_level=3).run(inputs)
        np.testing.assert_array_equal(native, expected)
