"""graph-simplify-inference keeps outputs while removing batch norms,
dropout and identity."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xtc.dialects.graph.elementwise import DropoutOp, IdentityOp
from xtc.dialects.graph.nn import BatchNormOp, Conv2dOp, DenseOp
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, filecheck_cases

ROOT = Path(__file__).resolve().parents[2]
FILECHECK = (ROOT / "filecheck" / "passes" / "graph-simplify-inference.mlir").read_text()


def test_every_filecheck_case_is_numerically_unchanged() -> None:
    for text in filecheck_cases(FILECHECK):
        assert_pipeline_preserves_outputs(text, "graph-simplify-inference,dce", rtol=1e-4)
        assert_pipeline_preserves_outputs(
            text, "graph-simplify-inference,graph-fold-constants,dce", rtol=1e-4
        )


def _vec(rng: np.random.Generator, n: int, low: float = -1.0, high: float = 1.0) -> str:
    values = ", ".join(f"{v:.6e}" for v in rng.uniform(low, high, n))
    return f"dense<[{values}]> : tensor<{n}xf32>"


def _bn_params(rng: np.random.Generator, c: int) -> list[str]:
    return [
        f"  %gamma = graph.constant {_vec(rng, c)}",
        f"  %beta = graph.constant {_vec(rng, c)}",
        f"  %mean = graph.constant {_vec(rng, c)}",
        f"  %var = graph.constant {_vec(rng, c, 0.1, 2.0)}",
    ]


def _blob_weight(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[str, str]:
    """A weight as a hex blob: (the constant line, the resources entry)."""
    data = rng.standard_normal(shape).astype(np.float32)
    key = "w" + "x".join(map(str, shape)) + f"_{rng.integers(1 << 30)}"
    t = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    blob = "0x04000000" + data.tobytes().hex().upper()
    return f"  %w = graph.constant dense_resource<{key}> : {t}", f'{key}: "{blob}"'


@settings(max_examples=15, deadline=None)
@given(
    c_in=st.integers(1, 3),
    c_out=st.integers(1, 4),
    k=st.sampled_from([1, 3]),
    groups_one=st.booleans(),
    with_bias=st.booleans(),
    with_dropout=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_conv_batch_norm_folds(
    c_in: int, c_out: int, k: int, groups_one: bool, with_bias: bool, with_dropout: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    groups = 1 if groups_one else c_in
    c_out = c_out * groups
    x_t, y_t = f"tensor<1x{c_in}x5x5xf32>", f"tensor<1x{c_out}x5x5xf32>"
    w_line, resource = _blob_weight(rng, (c_out, c_in // groups, k, k))
    pad = (k - 1) // 2
    lines = [f"func.func @main(%x: {x_t}) -> {y_t} {{", w_line, *_bn_params(rng, c_out)]
    attrs = f"{{groups = {groups} : i64, padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
    lines.append(f"  %c = graph.conv2d %x, %w {attrs} : ({x_t}, {w_line.split(': ')[-1]}) -> {y_t}")
    value = "%c"
    if with_bias:
        lines.append(f"  %b = graph.constant {_vec(rng, c_out)}")
        lines.append(
            f"  %cb = graph.bias_add %c, %b {{axis = 1 : i64}} : "
            f"({y_t}, tensor<{c_out}xf32>) -> {y_t}"
        )
        value = "%cb"
    if with_dropout:
        lines.append(f"  %d = graph.dropout {value} : ({y_t}) -> {y_t}")
        value = "%d"
    params = ", ".join([f"tensor<{c_out}xf32>"] * 4)
    lines.append(
        f"  %y = graph.batch_norm {value}, %gamma, %beta, %mean, %var : ({y_t}, {params}) -> {y_t}"
    )
    lines += [
        f"  func.return %y : {y_t}",
        "}",
        "{-#",
        "dialect_resources: { builtin: {",
        resource,
        "}}",
        "#-}",
    ]
    after = assert_pipeline_preserves_outputs(
        "\n".join(lines), "graph-simplify-inference,graph-fold-constants,dce", rtol=1e-4
    )
    kinds = [type(op) for op in after.walk()]
    assert BatchNormOp not in kinds and DropoutOp not in kinds and IdentityOp not in kinds
    assert kinds.count(Conv2dOp) == 1


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 5), m=st.integers(1, 5), seed=st.integers(0, 1000))
def test_dense_batch_norm_folds(n: int, k: int, m: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    w_line, resource = _blob_weight(rng, (m, k))
    x_t, y_t = f"tensor<{n}x{k}xf32>", f"tensor<{n}x{m}xf32>"
    params = ", ".join([f"tensor<{m}xf32>"] * 4)
    text = "\n".join(
        [
            f"func.func @main(%x: {x_t}) -> {y_t} {{",
            w_line,
            *_bn_params(rng, m),
            f"  %d = graph.dense %x, %w : ({x_t}, tensor<{m}x{k}xf32>) -> {y_t}",
            f"  %y = graph.batch_norm %d, %gamma, %beta, %mean, %var : ({y_t}, {params}) -> {y_t}",
            f"  func.return %y : {y_t}",
            "}",
            "{-#",
            "dialect_resources: { builtin: {",
            resource,
            "}}",
            "#-}",
        ]
    )
    after = assert_pipeline_preserves_outputs(
        text, "graph-simplify-inference,graph-fold-constants,dce", rtol=1e-4
    )
    kinds = [type(op) for op in after.walk()]
    assert BatchNormOp not in kinds and kinds.count(DenseOp) == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_folded_weights_are_rounded_once_from_float64(dtype: type) -> None:
    """The folded weight is weight * scale computed in float64 and rounded
    once to the weight's type, as `(weight * scale).astype(dtype)` is."""
    from xtc.passes.graph_simplify_inference import _scaled

    rng = np.random.default_rng(0)
    weight = rng.standard_normal((8, 3, 3, 3)).astype(dtype)
    scale = rng.uniform(0.1, 3.0, (8, 1, 1, 1))
    folded = _scaled(weight, scale)
    assert folded.dtype == dtype
    np.testing.assert_array_equal(folded, (weight * scale).astype(dtype))
