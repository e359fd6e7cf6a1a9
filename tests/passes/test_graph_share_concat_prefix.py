"""graph-share-concat-prefix: each DenseNet layer's concat reads the one
before it, so the layers' batch norms fuse without their concat. Outputs are
kept on the interpreter and natively, against onnxruntime."""

import re
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

import xtc
from xtc.analysis.functions import is_primitive
from xtc.dialects.graph.tensor import ConcatOp
from xtc.driver.compiler import GRAPH_PASSES
from xtc.driver.pipelines import apply_pipeline
from xtc.frontend.onnx import import_model
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, filecheck_cases
from xtc.tools.model_builders import densenet

ROOT = Path(__file__).resolve().parents[2]
PASSES = ROOT / "filecheck" / "passes"


def test_every_filecheck_case_is_numerically_unchanged() -> None:
    for text in filecheck_cases((PASSES / "graph-share-concat-prefix.mlir").read_text()):
        assert_pipeline_preserves_outputs(text, "graph-share-concat-prefix")


def _after_graph_passes(model: onnx.ModelProto, skip: str = "") -> ModuleOp:
    module = import_model(model)
    apply_pipeline(module, ",".join(p for p in GRAPH_PASSES if p != skip))
    return module


def _kernel_kinds(module: ModuleOp) -> Counter[str]:
    """How many fused functions of each name, without their numbers."""
    functions = [op for op in module.walk() if isinstance(op, FuncOp) and is_primitive(op)]
    return Counter(re.sub(r"_\d+$", "", f.sym_name.data) for f in functions)


def test_densenet_layers_fuse_their_batch_norm_without_the_concat() -> None:
    blocks = (2, 3)
    model = densenet(blocks=blocks, growth=4, stem=8, image=32, classes=10)
    before = _after_graph_passes(model, skip="graph-share-concat-prefix")
    after = _after_graph_passes(model)
    # Layer j > 1 of a block, and the block's end, read a concat.
    concats = sum(blocks)
    assert _kernel_kinds(before)["fused_concat_mul_add_relu"] == concats
    # Each concat now adds one feature map to the one before it; only the
    # block's end still fuses its concat with the transition's (or the
    # last) batch norm, every layer's batch norm reads one value.
    widths = [len(op.inputs) for op in after.walk() if isinstance(op, ConcatOp)]
    assert widths == [2] * concats
    kinds = _kernel_kinds(after)
    assert kinds["fused_concat_mul_add_relu"] == len(blocks)
    assert kinds["fused_mul_add_relu"] == sum(blocks)


@settings(max_examples=3, deadline=None)
@given(
    layers=st.lists(st.integers(1, 4), min_size=1, max_size=2),
    growth=st.integers(1, 5),
    stem=st.integers(2, 9),
    seed=st.integers(0, 1000),
)
def test_dense_blocks_match_onnxruntime(
    layers: list[int], growth: int, stem: int, seed: int
) -> None:
    model = densenet(blocks=layers, growth=growth, stem=stem, image=16, classes=5, seed=seed)
    name = model.graph.input[0].name
    x = np.random.default_rng(seed).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, {name: x})
    (got,) = xtc.compile(model).run({name: x})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))
