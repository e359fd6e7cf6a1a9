"""Every graph op, through every level: each function of the graph dialect's
FileCheck files (together they use every op) runs on the graph interpreter,
the tir interpreter after convert-graph-to-te,convert-te-to-tir, and native
code (`compile_graph` at -O0: the lowerings only), on the same random inputs."""

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from xtc import interp
from xtc.analysis.loops import trips_around
from xtc.dialects.tir import ForOp
from xtc.testing.graph_op import random_inputs
from xtc.runtime.errors import InputError
from xtc.driver.compiler import compile_graph
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "filecheck" / "dialects" / "graph").glob("ops-*.mlir"))
TIR_INTERPRETER_MAX_ELEMENTS = 4096
TIR_INTERPRETER_MAX_STEPS = 200_000
"""Functions with more outputs, or more operations to interpret (`_steps`:
the 3x3 convs, Winograd's, cubic resize, 5-12 s each on a 2.1 GHz Xeon), skip
the (slow) tir interpreter; native code still runs, and tests/ops/test_nn_rules.py
interprets their te kernels."""
SCALED_TOLERANCE = {
    "ops-nn:winograd": "its transforms sum terms of both signs: f32 cancels to an error "
    "relative to the largest output, not to each",
}
"""Cases compared with an absolute tolerance scaled by the largest output."""
RUN_ENTROPY = "graph.fresh_seed"
"""An op whose value is new on every run (tests/ops/test_random_rules.py
tests it): the levels cannot agree on it, so its functions are left out."""


def functions() -> list[tuple[str, str]]:
    cases = []
    for path in FILES:
        lines = path.read_text().splitlines()
        text = "\n".join(line for line in lines if not line.lstrip().startswith("//"))
        for chunk in re.split(r"\n(?=func\.func )", text):
            if chunk.lstrip().startswith("func.func") and RUN_ENTROPY not in chunk:
                name = re.search(r"@(\w+)", chunk)
                assert name is not None
                main = chunk.replace(f"@{name[1]}(", "@main(", 1)
                cases.append((f"{path.stem}:{name[1]}", main))
    return cases


def _integer_choices(inputs: list[np.ndarray]) -> list[list[np.ndarray]]:
    """The inputs with small integer operands: 0 or 1 (indices in range of
    any axis of 2 or more: gather & co), then all 1 (divisors that are not
    zero: the integer Div and Mod fault on a zero)."""
    return [
        [np.abs(a) % 2 if a.dtype.kind in "iu" else a for a in inputs],
        [np.ones_like(a) if a.dtype.kind in "iu" else a for a in inputs],
    ]


def _steps(module: ModuleOp) -> int:
    """The operations one run of `module` interprets: each op times the trip
    counts of the loops around it."""
    return sum(trips_around(op) for op in module.walk() if not isinstance(op, ForOp))


@pytest.mark.parametrize("name, text", functions(), ids=[n for n, _ in functions()])
def test_graph_tir_and_native_agree(name: str, text: str) -> None:
    """On the first choice of integer inputs that does not fault; a choice
    that faults faults alike at every level, with the same message."""
    module = parse_module(text)
    native_model = compile_graph(parse_module(text), opt_level=0)
    tir = apply_pipeline(parse_module(text), "convert-graph-to-te,convert-te-to-tir")
    for inputs in _integer_choices(random_inputs(module, seed=3)):
        try:
            expected = interp.run(module, inputs)
        except interp.RunTimeFault as fault:
            with pytest.raises(InputError) as native_fault:
                native_model.run(inputs)
            with pytest.raises(interp.RunTimeFault) as tir_fault:
                interp.run(tir, inputs)
            assert str(native_fault.value) == str(tir_fault.value) == str(fault)
            continue
        break
    else:
        pytest.fail(f"{name} faults on every choice of inputs")
    native = native_model.run(inputs)
    outputs = sum(int(np.prod(e.shape)) for e in expected)
    lowered = None
    if outputs <= TIR_INTERPRETER_MAX_ELEMENTS and _steps(tir) <= TIR_INTERPRETER_MAX_STEPS:
        lowered = interp.run(tir, inputs)
    for i, e in enumerate(expected):
        tol = 1e-3 if e.dtype == np.float16 else 1e-5
        scale = float(np.abs(e).max(initial=1.0)) if name in SCALED_TOLERANCE else 1.0
        for got in [native[i]] + ([lowered[i]] if lowered is not None else []):
            assert got.dtype == e.dtype and got.shape == e.shape
            if e.dtype.kind == "f":
                np.testing.assert_allclose(got, e, rtol=tol, atol=tol * scale, equal_nan=True)
            else:
                np.testing.assert_array_equal(got, e)
