"""convert-tir-to-llvm is a pipeline of registered passes: running its
stages one by one gives what it gives, and each stage is registered under
its name (tests/test_layout.py checks that no import circle is left)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module
from xtc.driver.universe import XTC_UNIVERSE
from xtc.lowering.convert_tir_to_llvm import STAGE_NAMES, STAGES

ROOT = Path(__file__).resolve().parents[2]
CASES = [
    case
    for case in (ROOT / "filecheck" / "lowering" / "convert-tir-to-llvm.mlir")
    .read_text()
    .split("// -----")
    if "CHECK: convert-tir-to-llvm:" not in case  # the cases that are errors
]


def test_the_stages_are_registered_in_order() -> None:
    assert STAGE_NAMES == (
        "tir-lower-parallel",
        "tir-lower-unrolled",
        "tir-lower-vectorized",
        "tir-cse",
        "convert-tir-to-cf",
        "convert-to-llvm",
    )
    for name, stage in zip(STAGE_NAMES, STAGES, strict=True):
        assert XTC_UNIVERSE.all_passes[name]() is stage


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_stages_one_by_one_lower_as_the_whole(case: int) -> None:
    whole = apply_pipeline(parse_module(CASES[case]), "convert-tir-to-llvm")
    module = parse_module(CASES[case])
    for name in STAGE_NAMES:
        # each stage's output is valid IR that prints and parses back
        module = parse_module(module_to_text(apply_pipeline(module, name)))
    assert module_to_text(module) == module_to_text(whole)
