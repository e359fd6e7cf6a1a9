"""tir-concat-in-place: a Concat's inputs are computed where its output has
them, so the compiled model calls no concat kernel; the numbers stay
onnxruntime's, natively, whether or not an input's place is aligned (one
that is not stays a copy, with a remark)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.driver.compiler import compile_model, pipeline
from xtc.passes.graph_pad_conv_channels import padded_channels
from xtc.passes.tir_concat_in_place import CONCAT_COPIED, VIEW_ALIGNMENT


def fire_model(squeeze: int, left: int, right: int, size: int) -> onnx.ModelProto:
    """A SqueezeNet fire module: a 1x1 squeeze conv, a 1x1 (`left`
    channels) and a 3x3 (`right`) expand conv of it, concatenated on the
    channels, then a 1x1 conv of the concatenation; the 3x3 conv's output is
    also max-pooled, so it is read again after the concat."""
    rng = np.random.default_rng(squeeze * 100 + left * 10 + right)

    def weight(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["data", "ws"], ["s"]),
        helper.make_node("Relu", ["s"], ["sr"]),
        helper.make_node("Conv", ["sr", "wl"], ["l"]),
        helper.make_node("Conv", ["sr", "wr"], ["r"], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["l", "r"], ["lr"], axis=1),
        helper.make_node("Conv", ["lr", "wo"], ["out"]),
        helper.make_node("MaxPool", ["r"], ["pooled"], kernel_shape=[2, 2]),
    ]
    initializers = [
        weight("ws", (squeeze, 3, 1, 1)),
        weight("wl", (left, squeeze, 1, 1)),
        weight("wr", (right, squeeze, 3, 3)),
        weight("wo", (5, left + right, 1, 1)),
    ]
    graph = helper.make_graph(
        nodes,
        "fire",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, size, size])],
        [
            helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 5, size, size]),
            helper.make_tensor_value_info(
                "pooled", TensorProto.FLOAT, [1, right, size - 1, size - 1]
            ),
        ],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _expected(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, {"data": x})]


@settings(max_examples=8, deadline=None)
@given(
    squeeze=st.integers(1, 8),
    left=st.integers(1, 20),
    right=st.integers(1, 20),
    size=st.integers(2, 9),
)
def test_fire_module_matches_onnxruntime(squeeze: int, left: int, right: int, size: int) -> None:
    model = fire_model(squeeze, left, right, size)
    x = np.random.default_rng(size).standard_normal((1, 3, size, size)).astype(np.float32)
    compiled = xtc.compile(model)
    for got, want in zip(compiled.run({"data": x}), _expected(model, x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    aligned = (left * size * size * 4) % VIEW_ALIGNMENT == 0
    # graph-pad-conv-channels computes 15 channels as 16 and slices: the
    # concat then fuses with the slice, a kernel this pass leaves alone
    sliced = any(padded_channels(c, 16, 32) is not None for c in (left, right))
    if not sliced:
        assert compiled.manifest["remarks"].get(CONCAT_COPIED, 0) == (0 if aligned else 1)


def test_fire_module_calls_no_concat() -> None:
    model = fire_model(4, 16, 16, 4)  # each expand: 16 x 4 x 4 floats, 1 KiB
    dumped: dict[str, str] = {}
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    compiled = compile_model(
        model, dump=lambda stage, text: dumped.__setitem__(stage, text), dump_stages=("te", "tir")
    )
    assert '"graph.concat"' in dumped["te"]
    # the kernel is gone with its call: it is not compiled
    assert "tir.concat_axis" not in dumped["tir"]
    assert "@concat" not in dumped["tir"]
    for got, want in zip(compiled.run({"data": x}), _expected(model, x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def chain_model(widths: tuple[int, int, int, int], size: int) -> onnx.ModelProto:
    """A dense block's concatenations, as graph-share-concat-prefix leaves
    them: four 1x1 convs of the input (`widths` channels) a, b, c, d;
    c1 = concat(a, b), c2 = concat(c1, c), c3 = concat(c2, d), each read
    by a 1x1 conv of its own (an output), so each stays a concat."""
    rng = np.random.default_rng(sum(widths) * 10 + size)

    def weight(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    parts = ["a", "b", "c", "d"]
    nodes = [helper.make_node("Conv", ["data", f"w{p}"], [p]) for p in parts]
    initializers = [weight(f"w{p}", (w, 3, 1, 1)) for p, w in zip(parts, widths, strict=True)]
    prefix = "a"
    for i, part in enumerate(parts[1:], start=1):
        nodes.append(helper.make_node("Concat", [prefix, part], [f"c{i}"], axis=1))
        nodes.append(helper.make_node("Conv", [f"c{i}", f"wo{i}"], [f"out{i}"]))
        initializers.append(weight(f"wo{i}", (5, sum(widths[: i + 1]), 1, 1)))
        prefix = f"c{i}"
    outputs = [
        helper.make_tensor_value_info(f"out{i}", TensorProto.FLOAT, [1, 5, size, size])
        for i in range(1, 4)
    ]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, size, size])],
        outputs,
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@settings(max_examples=6, deadline=None)
@given(
    widths=st.tuples(*[st.sampled_from([1, 3, 4, 8, 16]) for _ in range(4)]),
    size=st.integers(2, 6),
)
def test_concat_chain_matches_onnxruntime(widths: tuple[int, int, int, int], size: int) -> None:
    model = chain_model(widths, size)
    x = np.random.default_rng(size).standard_normal((1, 3, size, size)).astype(np.float32)
    compiled = xtc.compile(model, cache=False)
    for got, want in zip(compiled.run({"data": x}), _expected(model, x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    # a link stays a copy when its last input's place is not 64-byte aligned
    ends = np.cumsum(widths)[:-1] * size * size * 4
    misaligned = int(sum(end % VIEW_ALIGNMENT != 0 for end in ends))
    assert compiled.manifest["remarks"].get(CONCAT_COPIED, 0) == misaligned


def test_concat_chain_is_one_buffer_and_no_kernel() -> None:
    model = chain_model((16, 16, 16, 16), 4)  # each part: 1 KiB
    dumped: dict[str, str] = {}
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    compiled = compile_model(
        model, dump=lambda stage, text: dumped.__setitem__(stage, text), dump_stages=("te", "tir")
    )
    assert dumped["te"].count('"graph.concat"') == 3
    assert "@concat" not in dumped["tir"]
    assert CONCAT_COPIED not in compiled.manifest["remarks"]
    for got, want in zip(compiled.run({"data": x}), _expected(model, x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_compile_pipeline_runs_the_pass_before_the_kernels_are_split() -> None:
    # right after convert-te-to-tir: the units split after it miss the
    # concat kernels it erases
    steps = pipeline(1).split(",")
    assert steps.index("tir-concat-in-place") == steps.index("convert-te-to-tir") + 1
    assert steps.index("tir-concat-in-place") < steps.index("tir-plan-memory")
    assert "tir-concat-in-place" not in pipeline(0).split(",")
