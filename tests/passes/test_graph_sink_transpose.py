"""graph-sink-transpose: moving transposes below elementwise ops, bias_adds
and pads keeps every output (graph interpreter, the FileCheck cases and
random permutations, constant shapes and pads), and a transpose met by its
inverse leaves none behind; the compile pipeline runs the pass."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from xtc.driver.compiler import GRAPH_PASSES
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module
from xtc.testing.graph_op import assert_pipeline_preserves_outputs

ROOT = Path(__file__).resolve().parents[2]
FILECHECK = (ROOT / "filecheck" / "passes" / "graph-sink-transpose.mlir").read_text()
PASSES = "graph-sink-transpose,dce"


def filecheck_functions() -> list[str]:
    """Each function of the FileCheck file, renamed @main."""
    bodies = re.findall(r"^func\.func @\w+.*?^}", FILECHECK, re.MULTILINE | re.DOTALL)
    return [re.sub(r"@\w+", "@main", body, count=1) for body in bodies]


def test_filecheck_cases_keep_their_outputs() -> None:
    functions = filecheck_functions()
    assert len(functions) == 4
    for text in functions:
        assert_pipeline_preserves_outputs(text, PASSES)


def tensor_type(shape: tuple[int, ...]) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}f32>"


def chain_text(
    shape: tuple[int, ...], perm: tuple[int, ...], constant: tuple[int, ...], pads: tuple[int, ...]
) -> str:
    """@main: x transposed by perm, times a constant of shape `constant`
    (broadcast), relu, padded, transposed back by perm's inverse."""
    moved = tuple(shape[i] for i in perm)
    rank = len(shape)
    padded = tuple(d + pads[i] + pads[i + rank] for i, d in enumerate(moved))
    back = tuple(int(i) for i in np.argsort(perm))
    out = tuple(padded[i] for i in back)
    values = np.arange(1, int(np.prod(constant)) + 1, dtype=np.float32).reshape(constant)
    literal = np.array2string(values, separator=", ", floatmode="fixed").replace("\n", "")
    x, t, c, p, o = (tensor_type(s) for s in (shape, moved, constant, padded, out))
    there, pad_list, back_list = (", ".join(map(str, v)) for v in (perm, pads, back))
    return f"""
func.func @main(%x: {x}) -> {o} {{
  %c = graph.constant dense<{literal}> : {c}
  %t = graph.transpose %x {{perm = array<i64: {there}>}} : ({x}) -> {t}
  %m = graph.mul %t, %c : ({t}, {c}) -> {t}
  %r = graph.relu %m : ({t}) -> {t}
  %p = graph.pad %r {{pads = array<i64: {pad_list}>, value = 1.5 : f32}} : ({t}) -> {p}
  %b = graph.transpose %p {{perm = array<i64: {back_list}>}} : ({p}) -> {o}
  func.return %b : {o}
}}
"""


@st.composite
def chains(draw: st.DrawFn) -> str:
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    perm = tuple(draw(st.permutations(range(rank))))
    moved = tuple(shape[i] for i in perm)
    kept = draw(st.integers(0, rank))
    constant = tuple(d if draw(st.booleans()) else 1 for d in moved[rank - kept :])
    pads = tuple(draw(st.lists(st.integers(0, 2), min_size=2 * rank, max_size=2 * rank)))
    return chain_text(shape, perm, constant, pads)


@settings(max_examples=25, deadline=None)
@given(chains())
def test_transpose_sinks_keeps_outputs_and_cancels(text: str) -> None:
    after = assert_pipeline_preserves_outputs(text, PASSES)
    assert "graph.transpose" not in module_to_text(after)


def test_a_pool_keeps_the_transpose_above_every_user() -> None:
    (stays,) = [f for f in filecheck_functions() if "max_pool2d" in f]
    after = module_to_text(apply_pipeline(parse_module(stays), PASSES))
    assert after.count("graph.transpose") == 2


def test_compile_pipeline_sinks_transposes_before_fusing() -> None:
    assert GRAPH_PASSES.index("graph-sink-transpose") < GRAPH_PASSES.index("graph-fuse-ops")
    assert GRAPH_PASSES.index("graph-qdq-to-integer") < GRAPH_PASSES.index("graph-sink-transpose")
