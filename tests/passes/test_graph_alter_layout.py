"""graph-alter-layout keeps outputs while laying constant weights out for
vector code (conv2d weights in blocks of output channels or IHWO, dense as
matmul with a K×N weight), on the interpreter and natively; the batch-norm
fold still works on those weights."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from xtc import interp
from xtc.frontend.onnx import import_model
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, filecheck_cases
from xtc.driver.compiler import compile_graph
from xtc.tools.model_builders import bert_encoder, mobilenet_v2, resnet_like
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text

ROOT = Path(__file__).resolve().parents[2]
FILECHECK = (ROOT / "filecheck" / "passes" / "graph-alter-layout.mlir").read_text()


def test_every_filecheck_case_is_numerically_unchanged() -> None:
    for text in filecheck_cases(FILECHECK):
        assert_pipeline_preserves_outputs(text, "graph-alter-layout,dce", rtol=1e-5)


def _conv_model(c_in: int, c_out: int, k: int, stride: int, pad: int, groups: int, seed: int):  # noqa: ANN202
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((c_out, c_in // groups, k, k)).astype(np.float32)
    fc = rng.standard_normal((5, c_out)).astype(np.float32)
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w"],
            ["c"],
            kernel_shape=[k, k],
            strides=[stride] * 2,
            pads=[pad] * 4,
            group=groups,
        ),
        helper.make_node("GlobalAveragePool", ["c"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(fc, "fc")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@settings(max_examples=12, deadline=None)
@given(
    c_in=st.sampled_from([1, 2, 4]),
    c_out=st.sampled_from([2, 4, 16]),
    k=st.integers(1, 3),
    stride=st.integers(1, 2),
    pad=st.integers(0, 1),
    grouped=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_conv_and_dense_keep_their_outputs_natively(
    c_in: int, c_out: int, k: int, stride: int, pad: int, grouped: bool, seed: int
) -> None:
    groups = 2 if grouped and c_in % 2 == 0 and c_out % 2 == 0 else 1
    module = import_model(_conv_model(c_in, c_out, k, stride, pad, groups, seed))
    x = np.random.default_rng(seed).standard_normal((1, c_in, 9, 9)).astype(np.float32)
    (expected,) = interp.run(module, [x])
    apply_pipeline(module, "graph-alter-layout,dce")
    text = module_to_text(module)
    assert "graph.dense" not in text and "graph.matmul" in text
    if groups == 1:
        layout = {2: "IHWO", 4: "OIHW4o", 16: "OIHW16o"}[c_out]
        assert f'kernel_layout = "{layout}"' in text
    elif c_out == 16:
        # 8 output channels a group: one block each.
        assert 'kernel_layout = "OIHW8o"' in text
    else:
        assert "kernel_layout" not in text
    np.testing.assert_allclose(interp.run(module, [x])[0], expected, rtol=1e-5, atol=1e-5)
    (native,) = compile_graph(module, opt_level=0).run([x])
    np.testing.assert_allclose(native, expected, rtol=1e-5, atol=1e-5)


def test_whole_models_keep_their_outputs() -> None:
    rng = np.random.default_rng(0)
    models: list[tuple[onnx.ModelProto, list[np.ndarray]]] = [
        (resnet_like(), [rng.standard_normal((1, 3, 32, 32)).astype(np.float32)]),
        (
            mobilenet_v2(image=32, classes=10),
            [rng.standard_normal((1, 3, 32, 32)).astype(np.float32)],
        ),
        (
            bert_encoder(),
            [rng.standard_normal((1, 16, 32)).astype(np.float32), np.ones((1, 16), np.int64)],
        ),
    ]
    for model, inputs in models:
        module = import_model(model)
        expected = interp.run(module, inputs)
        apply_pipeline(
            module, "graph-simplify-inference,graph-alter-layout,graph-fold-constants,dce"
        )
        for got, want in zip(interp.run(module, inputs), expected, strict=True):
            scale = float(np.abs(want).max())
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize(("widths", "layout"), [((4, 8), "OIHW4o"), ((2, 6), "IHWO")])
def test_batch_norm_folds_into_a_laid_out_weight(widths: tuple[int, int], layout: str) -> None:
    """simplify-inference after alter-layout scales the output-channel axes
    of a blocked (the first and the last) or IHWO weight (the last)."""
    model = resnet_like(widths=widths, image=16)
    module = import_model(model)
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (expected,) = interp.run(module, [x])
    apply_pipeline(module, "graph-alter-layout")
    assert f'kernel_layout = "{layout}"' in module_to_text(module)
    apply_pipeline(module, "graph-simplify-inference,graph-fold-constants,dce")
    assert "graph.batch_norm" not in module_to_text(module)
    (got,) = interp.run(module, [x])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))
