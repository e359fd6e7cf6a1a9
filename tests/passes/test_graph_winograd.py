"""graph-winograd computes blocked stride-1 3×3 convs by Winograd's minimal
filtering: the transforms are exact, the rewrite keeps the outputs on the
interpreter, and a compiled model that takes it matches onnxruntime."""

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.passes.graph_winograd import TRANSFORMS, tile_size, transformed_weight
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, filecheck_cases

ROOT = Path(__file__).resolve().parents[2]
PASSES = ROOT / "filecheck" / "passes"


def test_every_filecheck_case_is_numerically_unchanged() -> None:
    for text in filecheck_cases((PASSES / "graph-winograd.mlir").read_text()):
        assert_pipeline_preserves_outputs(text, "graph-winograd{min_size=1},dce")


@pytest.mark.parametrize("m", sorted(TRANSFORMS))
def test_transforms_compute_the_correlation(m: int) -> None:
    """Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d Bᵀᵀ)] A is the 3×3 correlation of an α×α tile
    (in f64, to rounding)."""
    t = TRANSFORMS[m]
    rng = np.random.default_rng(m)
    g, d = rng.standard_normal((3, 3)), rng.standard_normal((m + 2, m + 2))
    got = t.output @ ((t.weight @ g @ t.weight.T) * (t.input @ d @ t.input.T)) @ t.output.T
    want = np.array(
        [[np.sum(d[y : y + 3, x : x + 3] * g) for x in range(m)] for y in range(m)]
    )
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m", sorted(TRANSFORMS))
def test_transformed_weight_is_g_w_gt_per_channel_pair(m: int) -> None:
    """U[a, b, k, c, l] = (G W[k·b + l, c] Gᵀ)[a, b] for a blocked weight
    (K/b×C×3×3×b), each to within an f32 rounding of the f64 product."""
    t = TRANSFORMS[m]
    rng = np.random.default_rng(m)
    weight = rng.standard_normal((3, 5, 3, 3, 4)).astype(np.float32)
    u = transformed_weight(weight, t)
    assert u.shape == (m + 2, m + 2, 3, 5, 4) and u.dtype == np.float32
    for k, c, lane in [(0, 0, 0), (2, 4, 3), (1, 2, 1)]:
        want = t.weight @ weight[k, c, :, :, lane].astype(np.float64) @ t.weight.T
        np.testing.assert_allclose(u[:, :, k, c, lane], want, rtol=2e-7, atol=1e-7)


def test_tile_size_takes_the_fewer_products_of_enough_tiles() -> None:
    assert tile_size(56, 56) == 4  # 14x14 tiles of 36 against 28x28 of 16
    assert tile_size(28, 28) == 4  # 49 partial F(4) tiles of 36 against 196 of 16
    assert tile_size(14, 14) == 2  # 16 F(4) tiles: too few (MIN_GEMM_ROWS)
    assert tile_size(14, 14, batch=2) == 4  # 32 F(4) tiles: enough
    assert tile_size(2, 2) == 2  # one tile either way: 16 products against 36


def _bottleneck(channels: int, side: int, padding: int, seed: int) -> onnx.ModelProto:
    """1x1 conv, relu, 3x3 conv, relu and three 1x1 convs (a ResNet
    bottleneck and more pointwise convs, so that graph-block-activations
    finds the region worth its two layout transforms): the compile blocks
    the convs, and the 3x3 one reads a blocked input (what graph-winograd
    takes)."""
    rng = np.random.default_rng(seed)
    weights = [
        numpy_helper.from_array(
            (rng.standard_normal((channels, channels, k, k)) / (k * channels**0.5)).astype(
                np.float32
            ),
            name,
        )
        for name, k in (("w1", 1), ("w3", 3), ("w4", 1), ("w5", 1), ("w6", 1))
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w3"], ["c3"], pads=[padding] * 4),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Conv", ["r3", "w4"], ["c4"]),
        helper.make_node("Conv", ["c4", "w5"], ["c5"]),
        helper.make_node("Conv", ["c5", "w6"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "bottleneck",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, side, side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@settings(max_examples=4, deadline=None)
@given(
    channels=st.sampled_from([32, 64]),
    side=st.integers(10, 19),
    padding=st.integers(0, 1),
    seed=st.integers(0, 1000),
)
def test_compiled_winograd_conv_matches_onnxruntime(
    channels: int, side: int, padding: int, seed: int
) -> None:
    model = _bottleneck(channels, side, padding, seed)
    compiled = xtc.compile(model, cache=False)
    assert "func=fused_winograd_conv2d" in compiled.manifest["pipeline"]
    x = np.random.default_rng(seed).standard_normal((1, channels, side, side)).astype(np.float32)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (got,) = compiled.run({"x": x})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))
