"""Every graph op, through every level: each function of the graph dialect's
FileCheck files (together they use every op) runs on the graph interpreter,
the tir interpreter after convert-graph-to-te,convert-te-to-tir, and native
code (`compile_graph` at -O0: the lowerings only), on the same random inputs."""

import re
from pathlib import Path

import numpy as np
import pytest

from xtc import interp
from xtc.interp.testing import random_inputs
from xtc.tools.compiler import compile_graph
from xtc.tools.pipelines import apply_pipeline
from xtc.tools.textual_ir import parse_module

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "filecheck" / "dialects" / "graph").glob("ops-*.mlir"))
TIR_INTERPRETER_MAX_ELEMENTS = 4096
"""Larger functions skip the (slow) tir interpreter; native code still runs."""


def functions() -> list[tuple[str, str]]:
    cases = []
    for path in FILES:
        lines = path.read_text().splitlines()
        text = "\n".join(line for line in lines if not line.lstrip().startswith("//"))
        for chunk in re.split(r"\n(?=func\.func )", text):
            if chunk.lstrip().startswith("func.func"):
                name = re.search(r"@(\w+)", chunk)
                assert name is not None
                main = chunk.replace(f"@{name[1]}(", "@main(", 1)
                cases.append((f"{path.stem}:{name[1]}", main))
    return cases


def _valid_indices(inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Index operands (gather & co) get small non-negative values in range."""
    return [np.abs(a) % 2 if a.dtype.kind in "iu" else a for a in inputs]


@pytest.mark.parametrize("name, text", functions(), ids=[n for n, _ in functions()])
def test_graph_tir_and_native_agree(name: str, text: str) -> None:
    module = parse_module(text)
    inputs = _valid_indices(random_inputs(module, seed=3))
    expected = interp.run(module, inputs)
    native = compile_graph(parse_module(text), opt_level=0).run(inputs)
    outputs = sum(int(np.prod(e.shape)) for e in expected)
    lowered = None
    if outputs <= TIR_INTERPRETER_MAX_ELEMENTS:
        lowered = interp.run(
            apply_pipeline(parse_module(text), "convert-graph-to-te,convert-te-to-tir"), inputs
        )
    for i, e in enumerate(expected):
        tol = 1e-3 if e.dtype == np.float16 else 1e-5
        for got in [native[i]] + ([lowered[i]] if lowered is not None else []):
            assert got.dtype == e.dtype and got.shape == e.shape
            if e.dtype.kind == "f":
                np.testing.assert_allclose(got, e, rtol=tol, atol=tol, equal_nan=True)
            else:
                np.testing.assert_array_equal(got, e)
