"""xDSL's cse and dce on graph modules keep the outputs."""

from pathlib import Path

import pytest

from xtc.dialects.graph.base import GraphOp
from xtc.testing.graph_op import assert_pipeline_preserves_outputs

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("pass_name, ops_left", [("cse", 5), ("dce", 1)])
def test_filecheck_example_keeps_outputs(pass_name: str, ops_left: int) -> None:
    text = (ROOT / "filecheck" / "passes" / f"{pass_name}.mlir").read_text()
    after = assert_pipeline_preserves_outputs(text, pass_name)
    assert sum(isinstance(op, GraphOp) for op in after.walk()) == ops_left
