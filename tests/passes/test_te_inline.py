"""te-inline: after graph-fuse-ops and convert-graph-to-te, a conv2d or dense
with its elementwise epilogue is one te.compute (plus conv2d's padding stage)
and one loop nest after convert-te-to-tir, and the models compute the same:
te interpreter and native code against the graph interpreter."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation

from xtc import interp
from xtc.dialects.te import ComputeOp, ReduceOp
from xtc.dialects.tir import ForOp
from xtc.frontend.onnx import import_model
from xtc.testing.graph_op import random_inputs
from xtc.passes.te_inline import MAX_DUPLICATED_OPS
from xtc.tools.model_builders import bert_encoder, mobilenet_v2, resnet_like, squeezenet
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module

GRAPH_PASSES = "graph-simplify-inference,graph-fold-constants,dce"
TO_TE = "graph-fuse-ops,convert-graph-to-te,te-inline"
"""The pipeline tested: GRAPH_PASSES, TO_TE, convert-te-to-tir, then
tir-plan-memory and convert-tir-to-llvm for native runs."""

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet_like": resnet_like,
    "bert_encoder": bert_encoder,
    "mobilenet_v2": lambda: mobilenet_v2(image=32, classes=10),
    "squeezenet": lambda: squeezenet(image=64, classes=10),
}


def functions(module: ModuleOp) -> dict[str, FuncOp]:
    return {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, FuncOp)}


def kernels(module: ModuleOp) -> list[FuncOp]:
    return [f for name, f in functions(module).items() if name != "main"]


def te_ops(kernel: FuncOp) -> list[str]:
    return [
        cast(StringAttr, a).data for a in cast(ArrayAttr[Attribute], kernel.attributes["te.ops"])
    ]


def computes(kernel: FuncOp) -> list[ComputeOp]:
    return [op for op in kernel.body.block.ops if isinstance(op, ComputeOp)]


def has_reduce(op: Operation) -> bool:
    return any(isinstance(o, ReduceOp) for o in op.walk())


def model_inputs(module: ModuleOp) -> list[np.ndarray]:
    inputs = random_inputs(module, seed=2)
    for i, name in enumerate(interp.input_names(interp.entry_function(module))):
        if name == "mask":
            inputs[i] = np.ones_like(inputs[i])
    return inputs


def run_planned(tir: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Plans memory, lowers to LLVM, JIT-compiles and calls `main`."""
    return run_native(tir, inputs, "tir-plan-memory,convert-tir-to-llvm")


def assert_close(got: list[np.ndarray], expected: list[np.ndarray], rtol: float = 1e-4) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_run_natively_as_the_graph_interpreter_says(name: str) -> None:
    graph = apply_pipeline(import_model(MODELS[name]()), GRAPH_PASSES)
    inputs = model_inputs(graph)
    te = apply_pipeline(graph.clone(), TO_TE)
    assert any(len(te_ops(k)) > 1 for k in kernels(te))
    tir = apply_pipeline(te, "convert-te-to-tir")
    assert_close(run_planned(tir, inputs), interp.run(graph, inputs))


@pytest.mark.parametrize(
    "build",
    [
        lambda: resnet_like(widths=(4, 8), image=8),
        lambda: bert_encoder(seq=8, hidden=16, heads=2, ffn=32),
    ],
    ids=["resnet_like", "bert_encoder"],
)
def test_inlined_kernels_compute_the_same_at_te_level(build: Callable[[], onnx.ModelProto]) -> None:
    """Small configurations: the te interpreter runs every scalar op in Python."""
    graph = apply_pipeline(import_model(build()), GRAPH_PASSES)
    inputs = model_inputs(graph)
    te = apply_pipeline(graph.clone(), TO_TE)
    assert_close(interp.run(te, inputs), interp.run(graph, inputs), rtol=1e-5)


@pytest.fixture(scope="module")
def resnet_te() -> ModuleOp:
    return apply_pipeline(apply_pipeline(import_model(resnet_like()), GRAPH_PASSES), TO_TE)


def test_conv_epilogues_are_one_compute(resnet_te: ModuleOp) -> None:
    """conv2d + bias (+ residual add) (+ relu): the padding stage when there is
    padding, then ONE compute holding the reduction and the epilogue."""
    convs = [k for k in kernels(resnet_te) if te_ops(k)[0] == "graph.conv2d"]
    assert len(convs) == 9 and all(len(te_ops(k)) >= 2 for k in convs)
    for kernel in convs:
        *padding, out = computes(kernel)
        assert len(padding) <= 1 and not any(has_reduce(p) for p in padding)
        assert has_reduce(out)
        returned = kernel.body.block.last_op
        assert returned is not None and returned.operands[0] is out.result
        # The epilogue's ops follow the reduction in the same body.
        body = list(out.body.block.ops)
        reduce_at = next(i for i, op in enumerate(body) if isinstance(op, ReduceOp))
        assert any(isinstance(op, arith.AddfOp) for op in body[reduce_at + 1 :])
        if te_ops(kernel)[-1] == "graph.relu":
            assert any(isinstance(op, arith.MaximumfOp) for op in body[reduce_at + 1 :])
    (dense,) = [k for k in kernels(resnet_te) if te_ops(k) == ["graph.dense", "graph.bias_add"]]
    assert len(computes(dense)) == 1


def test_conv_epilogue_is_one_loop_nest(resnet_te: ModuleOp) -> None:
    """convert-te-to-tir gives one nest per compute: the padding's, then the
    conv's, where bias and relu are applied after the reduction loops, right
    before the store into the output."""
    tir = apply_pipeline(resnet_te.clone(), "convert-te-to-tir")
    stem = functions(tir)["fused_conv2d_bias_add_relu_0"]
    nests = [op for op in stem.body.block.ops if isinstance(op, ForOp)]
    assert len(nests) == 2
    padding_nest, conv_nest = nests
    assert not any(isinstance(op, arith.MaximumfOp) for op in padding_nest.walk())
    (relu,) = [op for op in conv_nest.walk() if isinstance(op, arith.MaximumfOp)]
    block = relu.parent_block()
    assert block is not None
    body = list(block.ops)
    before, after = body[: body.index(relu)], body[body.index(relu) + 1 :]
    reductions = [op for op in before if isinstance(op, ForOp)]
    assert [op.loop_name.data for op in reductions] == ["r0"]
    assert any(isinstance(op, arith.AddfOp) for op in before[before.index(reductions[0]) :])
    (store,) = after
    assert isinstance(store, memref.StoreOp) and store.memref is stem.body.block.args[-1]


def test_softmax_epilogue_joins_its_last_stage() -> None:
    """softmax's max and sum stages are read across the axis: kept; its last
    stage (no reduction) is inlined into the epilogue's compute."""
    text = """
    func.func @main(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
      %half = graph.constant dense<0.5> : tensor<f32>
      %s = graph.softmax %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
      %m = graph.mul %s, %half : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
      func.return %m : tensor<2x5xf32>
    }
    """
    te = apply_pipeline(parse_module(text), TO_TE)
    (kernel,) = kernels(te)
    assert te_ops(kernel) == ["graph.softmax", "graph.mul"]
    peak, total, out = computes(kernel)
    assert has_reduce(peak) and has_reduce(total) and not has_reduce(out)
    assert any(op.name == "math.exp" for op in out.walk())
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True) * 0.5
    np.testing.assert_allclose(interp.run(te, [x])[0], expected, rtol=1e-6)


# ---------------------------------------------------------------------------
# Rules on small kernels.


def kernel_text(producer_body: str, reads: str) -> str:
    return f"""
    func.func private @k(%x: tensor<4xf32>) -> tensor<4xf32> {{
      %p = te.compute : tensor<4xf32> {{
      ^bb0(%i: index):
        %v = tensor.extract %x[%i] : tensor<4xf32>
{producer_body}
      }}
      %c = te.compute : tensor<4xf32> {{
      ^bb0(%i: index):
{reads}
      }}
      func.return %c : tensor<4xf32>
    }}
    """


def long_body(size: int) -> str:
    """A producer body of `size` ops (the read, then size - 1 tanh) and its yield."""
    chain = [
        f"        %t{k} = math.tanh {'%v' if k == 0 else f'%t{k - 1}'} : f32"
        for k in range(size - 1)
    ]
    return "\n".join([*chain, f"        te.yield %t{size - 2} : f32"])


READ_TWICE = """
        %a = tensor.extract %p[%i] : tensor<4xf32>
        %b = tensor.extract %p[%i] : tensor<4xf32>
        %s = arith.addf %a, %b : f32
        te.yield %s : f32"""
READ_ONCE = """
        %a = tensor.extract %p[%i] : tensor<4xf32>
        te.yield %a : f32"""


@pytest.mark.parametrize(
    ("size", "reads", "inlined"),
    [
        (MAX_DUPLICATED_OPS, READ_TWICE, True),
        (MAX_DUPLICATED_OPS + 1, READ_TWICE, False),
        (MAX_DUPLICATED_OPS + 1, READ_ONCE, True),
    ],
)
def test_a_large_compute_is_not_copied_to_several_reads(
    size: int, reads: str, inlined: bool
) -> None:
    text = kernel_text(long_body(size), reads)
    module = apply_pipeline(parse_module(text), "te-inline")
    assert len(computes(functions(module)["k"])) == (1 if inlined else 2)
    x = np.array([-1.0, -0.5, 0.0, -2.0], np.float32)
    before = interp.run(parse_module(text), [x], "k")
    np.testing.assert_allclose(interp.run(module, [x], "k")[0], before[0], rtol=1e-6)


def test_an_unsigned_copy_is_inlined_into_a_reduction() -> None:
    """A reindexing of unsigned elements (read through their signless twin)
    is a pure copy: inlined into the reduction that reads it."""
    text = """
    func.func private @k(%x: tensor<2x3xui8>) -> tensor<3xi32> {
      %t = te.compute : tensor<3x2xui8> {
      ^bb0(%i: index, %j: index):
        %v = tensor.extract %x[%j, %i] : tensor<2x3xui8>
        %s = builtin.unrealized_conversion_cast %v : ui8 to i8
        %u = builtin.unrealized_conversion_cast %s : i8 to ui8
        te.yield %u : ui8
      }
      %c = te.compute : tensor<3xi32> {
      ^bb0(%i: index):
        %r = te.reduce {kind = "sum", extents = array<i64: 2>} : i32 {
        ^bb0(%k: index):
          %v = tensor.extract %t[%i, %k] : tensor<3x2xui8>
          %s = builtin.unrealized_conversion_cast %v : ui8 to i8
          %w = arith.extui %s : i8 to i32
          te.yield %w : i32
        }
        te.yield %r : i32
      }
      func.return %c : tensor<3xi32>
    }
    """
    module = apply_pipeline(parse_module(text), "te-inline")
    assert len(computes(functions(module)["k"])) == 1
    x = np.array([[200, 1, 2], [100, 3, 4]], np.uint8)
    np.testing.assert_array_equal(interp.run(module, [x], "k")[0], [300, 4, 6])


# ---------------------------------------------------------------------------
# Random elementwise chains after a conv2d or a dense.

CONV = (
    "%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>",
    "graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : "
    "(tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>",
    "1x4x6x6",
    "4x1x1",
)
DENSE = (
    "%x: tensor<3x5xf32>, %w: tensor<4x5xf32>",
    "graph.dense %x, %w : (tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>",
    "3x4",
    "4",
)
UNARY = [
    "relu",
    "sigmoid",
    "tanh",
    "neg",
    "gelu",
    "clip {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32}",
]
BINARY = ["add", "mul", "max"]


def epilogue_module(anchor: tuple[str, str, str, str], chain: list[tuple[str, bool]]) -> str:
    """@main: the anchor, then the chain: a unary op, or a binary op with the
    per-channel constant %c (False) or the argument %r (True)."""
    arguments, op, shape, channels = anchor
    t, c = f"tensor<{shape}xf32>", f"tensor<{channels}xf32>"
    lines = [
        f"func.func @main({arguments}, %r: {t}) -> {t} {{",
        f"  %c = graph.constant dense<-0.25> : {c}",
        f"  %v0 = {op}",
    ]
    for i, (name, residual) in enumerate(chain):
        if name in BINARY:
            other, other_type = ("%r", t) if residual else ("%c", c)
            lines.append(f"  %v{i + 1} = graph.{name} %v{i}, {other} : ({t}, {other_type}) -> {t}")
        else:
            op_name, _, props = name.partition(" ")
            lines.append(f"  %v{i + 1} = graph.{op_name} %v{i} {props} : ({t}) -> {t}")
    lines += [f"  func.return %v{len(chain)} : {t}", "}"]
    return "\n".join(lines)


@settings(max_examples=12, deadline=None)
@given(
    conv=st.booleans(),
    chain=st.lists(
        st.tuples(st.sampled_from(UNARY + BINARY), st.booleans()), min_size=1, max_size=5
    ),
)
def test_an_anchor_and_its_epilogue_become_one_compute(
    conv: bool, chain: list[tuple[str, bool]]
) -> None:
    text = epilogue_module(CONV if conv else DENSE, chain)
    graph = parse_module(text)
    te = apply_pipeline(parse_module(text), TO_TE)
    (kernel,) = kernels(te)
    *padding, out = computes(kernel)
    assert len(padding) == (1 if conv else 0)
    assert has_reduce(out) and not any(has_reduce(p) for p in padding)
    inputs = random_inputs(graph, seed=len(chain))
    expected = interp.run(graph, inputs)
    assert_close(interp.run(te, inputs), expected, rtol=1e-5)
    tir = apply_pipeline(te, "convert-te-to-tir")
    assert_close(run_planned(tir, inputs), expected)
