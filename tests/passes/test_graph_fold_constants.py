"""graph-fold-constants keeps the module's outputs and leaves no graph op with
only constant operands."""

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from xtc.dialects.graph.base import GraphOp
from xtc.dialects.graph.constant import ConstantOp
from xtc.testing.graph_op import assert_pipeline_preserves_outputs

ROOT = Path(__file__).resolve().parents[2]

BINARY = ["add", "sub", "mul", "max", "min"]
UNARY = ["relu", "neg", "abs", "exp", "tanh", "sigmoid"]


@st.composite
def random_graphs(draw: st.DrawFn) -> str:
    """A function over one argument and a few constants: a random DAG of
    unary and binary elementwise ops on 2x3 tensors."""
    t = "tensor<2x3xf32>"
    lines = ["func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {"]
    values = ["%x"]
    for i in range(draw(st.integers(1, 3))):
        data = draw(st.lists(st.floats(-2, 2, width=32), min_size=6, max_size=6))
        rows = ", ".join(
            "[" + ", ".join(f"{v:.6e}" for v in data[r * 3 : r * 3 + 3]) + "]" for r in range(2)
        )
        lines.append(f"  %c{i} = graph.constant dense<[{rows}]> : {t}")
        values.append(f"%c{i}")
    for i in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(UNARY))
            a = draw(st.sampled_from(values))
            lines.append(f"  %v{i} = graph.{op} {a} : ({t}) -> {t}")
        else:
            op = draw(st.sampled_from(BINARY))
            a, b = draw(st.sampled_from(values)), draw(st.sampled_from(values))
            lines.append(f"  %v{i} = graph.{op} {a}, {b} : ({t}, {t}) -> {t}")
        values.append(f"%v{i}")
    lines.append(f"  func.return {values[-1]} : {t}")
    lines.append("}")
    return "\n".join(lines)


@settings(max_examples=30, deadline=None)
@given(random_graphs())
def test_folding_preserves_outputs_and_folds_everything_constant(text: str) -> None:
    after = assert_pipeline_preserves_outputs(text, "graph-fold-constants,dce")
    for op in after.walk():
        if isinstance(op, GraphOp) and not isinstance(op, ConstantOp):
            assert not all(isinstance(o.owner, ConstantOp) for o in op.operands), text


def test_filecheck_example_is_numerically_unchanged() -> None:
    text = (ROOT / "filecheck" / "passes" / "graph-fold-constants.mlir").read_text()
    chain = text[text.index("func.func @chain(") : text.index("// Large results")]
    after = assert_pipeline_preserves_outputs(chain, "graph-fold-constants,dce")
    assert sum(isinstance(op, GraphOp) for op in after.walk()) == 2


def test_folded_ints_keep_their_dtype() -> None:
    text = """
    func.func @main() -> tensor<3xi64> {
      %a = graph.constant dense<[1, 2, 3]> : tensor<3xi64>
      %b = graph.mul %a, %a : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
      func.return %b : tensor<3xi64>
    }"""
    after = assert_pipeline_preserves_outputs(text, "graph-fold-constants,dce")
    (const,) = [op for op in after.walk() if isinstance(op, ConstantOp)]
    np.testing.assert_array_equal(const.to_array(), np.array([1, 4, 9], np.int64))
