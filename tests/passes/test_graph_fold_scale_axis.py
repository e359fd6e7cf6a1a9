"""graph-fold-scale-axis: constant per-channel scales folded into conv2d,
dense and matmul weights keep every output (graph interpreter, random
shapes, strides, padding, biases and scale shapes); scales it must not fold
stay; dtypes are kept; an ONNX model compiled with xtc.compile matches
onnxruntime with the scales gone; the compile pipeline runs the pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

import xtc
from xtc.dialects.graph.base import int_attr, ints_attr
from xtc.dialects.graph.constant import ConstantOp, element_type_of
from xtc.dialects.graph.elementwise import AddOp, MulOp
from xtc.dialects.graph.nn import BiasAddOp, Conv2dOp, DenseOp, MatmulOp
from xtc.frontend.onnx import import_model
from xtc.testing.graph_op import assert_pipeline_preserves_outputs
from xtc.driver.compiler import pipeline
from xtc.driver.pipelines import apply_pipeline, pipeline_steps
from xtc.driver.textual_ir import module_to_text, parse_module

ROOT = Path(__file__).resolve().parents[2]
FILECHECK = (ROOT / "filecheck" / "passes" / "graph-fold-scale-axis.mlir").read_text()
PASSES = "graph-fold-scale-axis,dce"


# ------------------------------------------------------------ building graphs


class GraphBuilder:
    """Graph ops appended in order to `@main(%x)`, which returns the last."""

    def __init__(self, input_shape: Sequence[int], dtype: type = np.float32) -> None:
        self.input_type = TensorType(element_type_of(np.dtype(dtype)), list(input_shape))
        self.func = FuncOp("main", ([self.input_type], []))
        self.x: SSAValue = self.func.body.block.args[0]
        self.ops: list[Operation] = []

    def constant(self, array: np.ndarray) -> SSAValue:
        return self.op(ConstantOp.from_array(array, "c"))

    def op(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def text(self) -> str:
        result = self.ops[-1].results[0]
        self.func.body.block.add_ops([*self.ops, ReturnOp(result)])
        self.func.function_type = FunctionType.from_lists([self.input_type], [result.type])
        module = ModuleOp([self.func])
        module.verify()
        return module_to_text(module)


def kinds_after(text: str, rtol: float = 1e-4) -> list[type[Operation]]:
    """The op types left after the pass (and dce), the outputs checked equal."""
    after = assert_pipeline_preserves_outputs(text, PASSES, rtol=rtol)
    return [type(op) for op in after.walk()]


def channel_shaped(values: np.ndarray, rank: int, axis: int, form: str) -> np.ndarray:
    """One value per channel of `axis` of a rank-`rank` tensor, as a
    trailing-ones shape (`short`), a full-rank shape (`full`) or a scalar."""
    if form == "scalar":
        return np.asarray(values[0], values.dtype)
    trailing = (1,) * (rank - axis - 1)
    if form == "short":
        return values.reshape((-1, *trailing))
    return values.reshape((1,) * axis + (-1,) + trailing)


def _filecheck_functions() -> list[str]:
    """Each function of the FileCheck file as its own `@main` module, with
    the file's resources."""
    code, _, resources = FILECHECK.partition("{-#")
    body = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("//"))
    return [
        "func.func @main" + chunk[chunk.index("(") :] + "{-#" + resources
        for chunk in body.split("func.func @")[1:]
    ]


# -------------------------------------------------------------------- tests


def test_every_filecheck_case_is_numerically_unchanged() -> None:
    functions = _filecheck_functions()
    assert len(functions) == 18
    for text in functions:
        if "dense_resource<inf_scale>" in text:
            # inf makes a tolerance meaningless: the pass must not touch it.
            before = parse_module(text)
            after = apply_pipeline(parse_module(text), "graph-fold-scale-axis")
            assert module_to_text(after) == module_to_text(before)
        else:
            assert_pipeline_preserves_outputs(text, PASSES, rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(
    c_in=st.integers(1, 3),
    c_out=st.integers(1, 4),
    k=st.sampled_from([1, 3]),
    stride=st.integers(1, 2),
    pad=st.integers(0, 1),
    grouped=st.booleans(),
    bias=st.sampled_from(["none", "bias_add", "add"]),
    form=st.sampled_from(["short", "full", "scalar"]),
    scale_first=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_output_scale_folds_into_conv2d(
    c_in: int,
    c_out: int,
    k: int,
    stride: int,
    pad: int,
    grouped: bool,
    bias: str,
    form: str,
    scale_first: bool,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    groups = c_in if grouped else 1
    c_out *= groups
    g = GraphBuilder((2, c_in, 5, 5))
    w = g.constant(rng.standard_normal((c_out, c_in // groups, k, k)).astype(np.float32))
    props = {
        "strides": ints_attr([stride, stride]),
        "padding": ints_attr([pad] * 4),
        "groups": int_attr(groups),
    }
    y = g.op(Conv2dOp.build_inferred([g.x, w], props))
    if bias == "bias_add":
        b = g.constant(rng.standard_normal(c_out).astype(np.float32))
        y = g.op(BiasAddOp.build_inferred([y, b], {"axis": int_attr(1)}))
    elif bias == "add":
        b = g.constant(rng.standard_normal((c_out, 1, 1)).astype(np.float32))
        y = g.op(AddOp.build_inferred([b, y]))
    s = g.constant(channel_shaped(rng.uniform(0.2, 2.0, c_out).astype(np.float32), 4, 1, form))
    g.op(MulOp.build_inferred([s, y] if scale_first else [y, s]))
    kinds = kinds_after(g.text())
    assert MulOp not in kinds and kinds.count(Conv2dOp) == 1


@settings(max_examples=25, deadline=None)
@given(
    c_in=st.integers(1, 4),
    c_out=st.integers(1, 3),
    k=st.sampled_from([1, 2, 3]),
    stride=st.integers(1, 2),
    dilation=st.integers(1, 2),
    pad=st.integers(0, 2),
    form=st.sampled_from(["short", "full", "scalar"]),
    seed=st.integers(0, 1000),
)
def test_input_scale_folds_into_conv2d(
    c_in: int, c_out: int, k: int, stride: int, dilation: int, pad: int, form: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    g = GraphBuilder((1, c_in, 6, 6))
    s = g.constant(channel_shaped(rng.uniform(-2.0, 2.0, c_in).astype(np.float32), 4, 1, form))
    scaled = g.op(MulOp.build_inferred([g.x, s]))
    w = g.constant(rng.standard_normal((c_out, c_in, k, k)).astype(np.float32))
    props = {
        "strides": ints_attr([stride, stride]),
        "dilation": ints_attr([dilation, dilation]),
        "padding": ints_attr([pad, 0, 0, pad]),
    }
    g.op(Conv2dOp.build_inferred([scaled, w], props))
    kinds = kinds_after(g.text())
    assert MulOp not in kinds and kinds.count(Conv2dOp) == 1


@settings(max_examples=20, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    k=st.integers(1, 5),
    n=st.integers(1, 5),
    use_matmul=st.booleans(),
    with_bias=st.booleans(),
    form=st.sampled_from(["short", "full", "scalar"]),
    seed=st.integers(0, 1000),
)
def test_output_scale_folds_into_dense_and_matmul(
    batch: list[int],
    k: int,
    n: int,
    use_matmul: bool,
    with_bias: bool,
    form: str,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    g = GraphBuilder((*batch, k))
    if use_matmul:
        w = g.constant(rng.standard_normal((k, n)).astype(np.float32))
        y = g.op(MatmulOp.build_inferred([g.x, w]))
    else:
        w = g.constant(rng.standard_normal((n, k)).astype(np.float32))
        y = g.op(DenseOp.build_inferred([g.x, w]))
    rank = len(batch) + 1
    if with_bias:
        b = g.constant(rng.standard_normal(n).astype(np.float32))
        y = g.op(BiasAddOp.build_inferred([y, b], {"axis": int_attr(-1)}))
    scale = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    g.op(MulOp.build_inferred([y, g.constant(channel_shaped(scale, rank, rank - 1, form))]))
    kinds = kinds_after(g.text())
    assert MulOp not in kinds and kinds.count(MatmulOp if use_matmul else DenseOp) == 1


@settings(max_examples=20, deadline=None)
@given(
    varying=st.sets(st.sampled_from([0, 2, 3]), min_size=1),
    through_channel=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_a_scale_along_other_axes_stays(
    varying: set[int], through_channel: bool, seed: int
) -> None:
    """A scale that varies along the batch or a spatial axis (with or
    without the channel axis) is no per-channel scale: left alone."""
    rng = np.random.default_rng(seed)
    out_shape = (2, 3, 4, 4)
    g = GraphBuilder((2, 2, 4, 4))
    w = g.constant(rng.standard_normal((3, 2, 1, 1)).astype(np.float32))
    y = g.op(Conv2dOp.build_inferred([g.x, w]))
    axes = varying | ({1} if through_channel else set())
    shape = tuple(size if i in axes else 1 for i, size in enumerate(out_shape))
    g.op(MulOp.build_inferred([y, g.constant(rng.uniform(0.5, 2.0, shape).astype(np.float32))]))
    kinds = kinds_after(g.text())
    assert MulOp in kinds


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_dtype_is_kept(dtype: type) -> None:
    rng = np.random.default_rng(0)
    g = GraphBuilder((1, 2, 4, 4), dtype)
    s = g.constant(np.array([[[0.5]], [[2.0]]], dtype))
    scaled = g.op(MulOp.build_inferred([g.x, s]))
    w = g.constant(rng.standard_normal((3, 2, 3, 3)).astype(dtype))
    y = g.op(Conv2dOp.build_inferred([scaled, w], {"padding": ints_attr([1, 1, 1, 1])}))
    g.op(MulOp.build_inferred([y, g.constant(np.array([[[2.0]], [[0.25]], [[-1.0]]], dtype))]))
    text = g.text()
    kinds = kinds_after(text, rtol=1e-2 if dtype == np.float16 else 1e-9)
    assert MulOp not in kinds
    element = "f16" if dtype == np.float16 else "f64"
    after = module_to_text(apply_pipeline(parse_module(text), PASSES))
    assert f"tensor<3x2x3x3x{element}>" in after


def test_integer_tensors_are_left_alone() -> None:
    g = GraphBuilder((1, 2, 3), np.int32)
    w = g.constant(np.arange(12, dtype=np.int32).reshape(4, 3))
    y = g.op(DenseOp.build_inferred([g.x, w]))
    g.op(MulOp.build_inferred([y, g.constant(np.array([1, 2, 3, 4], np.int32))]))
    assert MulOp in kinds_after(g.text())


# ------------------------------------------------------------ end to end


def _onnx_model(
    nodes: list[onnx.NodeProto], initializers: dict[str, np.ndarray], out_shape: list[int]
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "fold_scale_axis",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def conv_mul_relu() -> onnx.ModelProto:
    """Conv (with bias, padded) -> Mul by a [4,1,1] constant -> Relu."""
    rng = np.random.default_rng(3)
    return _onnx_model(
        [
            helper.make_node("Conv", ["data", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
            helper.make_node("Mul", ["conv", "s"], ["scaled"]),
            helper.make_node("Relu", ["scaled"], ["out"]),
        ],
        {
            "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "b": rng.standard_normal(4).astype(np.float32),
            "s": rng.uniform(-2.0, 2.0, (4, 1, 1)).astype(np.float32),
        },
        [1, 4, 8, 8],
    )


def mul_conv() -> onnx.ModelProto:
    """Mul by a [1,3,1,1] constant -> Conv (padded, strided)."""
    rng = np.random.default_rng(4)
    return _onnx_model(
        [
            helper.make_node("Mul", ["s", "data"], ["scaled"]),
            helper.make_node("Conv", ["scaled", "w"], ["out"], pads=[1, 1, 1, 1], strides=[2, 2]),
        ],
        {
            "s": rng.uniform(-2.0, 2.0, (1, 3, 1, 1)).astype(np.float32),
            "w": rng.standard_normal((5, 3, 3, 3)).astype(np.float32),
        },
        [1, 5, 4, 4],
    )


@pytest.mark.parametrize("build", [conv_mul_relu, mul_conv])
def test_onnx_model_matches_onnxruntime(build: Callable[[], onnx.ModelProto]) -> None:
    model = build()
    x = np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = np.asarray(session.run(None, {"data": x})[0])
    (got,) = xtc.compile(model).run({"data": x})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))
    graph = apply_pipeline(import_model(model), f"graph-simplify-inference,{PASSES}")
    assert not any(isinstance(op, MulOp) for op in graph.walk())


def test_compile_pipeline_runs_the_pass_before_alter_layout() -> None:
    steps = pipeline_steps(pipeline(1))
    position = steps.index("graph-fold-scale-axis")
    assert steps[position - 1] == "graph-simplify-inference"
    assert position < steps.index("graph-alter-layout")
    assert "graph-fold-scale-axis" not in pipeline_steps(pipeline(0))
