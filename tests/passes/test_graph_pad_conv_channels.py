"""graph-pad-conv-channels computes a conv over a multiple of 16 output
channels and slices the extra ones off; with graph-sink-slice the slice
moves past the bias, relu and global pool. Outputs are kept on the
interpreter and natively, against onnxruntime."""

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text
from xtc.frontend.onnx import import_model
from xtc.passes.graph_pad_conv_channels import padded_channels
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, filecheck_cases

ROOT = Path(__file__).resolve().parents[2]
PASSES = ROOT / "filecheck" / "passes"


def test_every_filecheck_case_is_numerically_unchanged() -> None:
    for text in filecheck_cases((PASSES / "graph-pad-conv-channels.mlir").read_text()):
        assert_pipeline_preserves_outputs(text, "graph-pad-conv-channels{multiple=4},dce")
    for text in filecheck_cases((PASSES / "graph-sink-slice.mlir").read_text()):
        assert_pipeline_preserves_outputs(text, "graph-sink-slice,dce")


def test_padded_channels() -> None:
    assert padded_channels(1000, 16) == 1008
    assert padded_channels(1008, 16) is None
    assert padded_channels(10, 16) is None  # 6 zero channels for 10
    assert padded_channels(120, 16) == 128  # 8 for 120: at most 1/8


def test_padded_channels_take_a_whole_block_that_costs_little() -> None:
    assert padded_channels(1000, 16, 32) == 1024  # 24 zero channels: at most 1/32
    assert padded_channels(1008, 16, 32) == 1024
    assert padded_channels(1024, 16, 32) is None
    assert padded_channels(200, 16, 32) == 208  # 24 for a block: more than 1/32
    assert padded_channels(144, 16, 32) is None  # a multiple of 16; 160 is 1/9 more


def _classifier(c_in: int, c_out: int, side: int, k: int, seed: int) -> onnx.ModelProto:
    """SqueezeNet's head: conv with bias, relu, global average pool, flatten."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((c_out, c_in, k, k)).astype(np.float32)
    b = rng.standard_normal((c_out,)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k], pads=[k // 2] * 4),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, side, side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@settings(max_examples=6, deadline=None)
@given(
    blocks=st.integers(8, 16),
    short=st.integers(1, 15),
    c_in=st.integers(1, 8),
    side=st.integers(3, 9),
    k=st.sampled_from([1, 3]),
    seed=st.integers(0, 1000),
)
def test_padded_classifier_matches_onnxruntime(
    blocks: int, short: int, c_in: int, side: int, k: int, seed: int
) -> None:
    c_out = 16 * blocks - short
    model = _classifier(c_in, c_out, side, k, seed)
    module = import_model(model)
    apply_pipeline(module, "graph-pad-conv-channels,graph-sink-slice,dce")
    text = module_to_text(module)
    padded = padded_channels(c_out, 16, 32)
    if padded is not None:
        # The slice went past the bias, relu and pool: right before flatten.
        assert f"tensor<1x{padded}x1x1xf32>) -> tensor<1x{c_out}x1x1xf32>" in text
    x = np.random.default_rng(seed).standard_normal((1, c_in, side, side)).astype(np.float32)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (got,) = xtc.compile(model).run({"x": x})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))
