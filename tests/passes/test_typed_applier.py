"""TypedPatternApplier tries on each op only the patterns of its class, and
gives exactly what xDSL's GreedyRewritePatternApplier gives: the same
lowering, op for op, of every case of convert-tir-to-llvm's FileCheck file
and of a whole model."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import arith, llvm
from xdsl.ir import Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException

import xtc.lowering.convert_to_llvm as lowering
from xtc.frontend.onnx import import_model
from xtc.lowering.convert_tir_to_llvm import STAGE_NAMES
from xtc.lowering.convert_to_llvm import Externals, LowerCompare, LowerNegf
from xtc.passes.typed_applier import TypedPatternApplier, matched_types
from xtc.driver.compiler import pipeline
from xtc.driver.scheduling import schedule_kernels
from xtc.tools.model_builders import resnet_like
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module

ROOT = Path(__file__).resolve().parents[2]
CASES = (ROOT / "filecheck" / "lowering" / "convert-tir-to-llvm.mlir").read_text()


class AnyOp(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        pass


class AddOrSub(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp | arith.SubiOp, rewriter: PatternRewriter) -> None:
        pass


def test_each_pattern_says_which_op_classes_it_takes() -> None:
    externals = Externals()
    assert matched_types(LowerNegf(externals)) == (arith.NegfOp,)
    assert matched_types(LowerCompare(externals)) == (arith.CmpiOp, arith.CmpfOp)
    assert matched_types(AddOrSub()) == (arith.AddiOp, arith.SubiOp)
    assert matched_types(AnyOp()) == (Operation,)


def test_an_op_meets_its_own_patterns_and_the_untyped_ones_in_order() -> None:
    negf, compare, anything = LowerNegf(Externals()), LowerCompare(Externals()), AnyOp()
    applier = TypedPatternApplier([negf, anything, compare])
    assert applier._patterns_for(arith.CmpfOp) == [anything, compare]  # pyright: ignore[reportPrivateUsage]
    assert applier._patterns_for(arith.NegfOp) == [negf, anything]  # pyright: ignore[reportPrivateUsage]
    assert applier._patterns_for(llvm.AddOp) == [anything]  # pyright: ignore[reportPrivateUsage]


def lowered(text: str) -> str:
    """The lowered module's text, or the first line of the error."""
    try:
        return module_to_text(apply_pipeline(parse_module(text), "convert-tir-to-llvm"))
    except DiagnosticException as e:
        return "error: " + str(e).splitlines()[0]


def lowered_both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    typed = lowered(text)
    with monkeypatch.context() as patch:
        patch.setattr(lowering, "TypedPatternApplier", GreedyRewritePatternApplier)
        greedy = lowered(text)
    return typed, greedy


@pytest.mark.parametrize("case", range(len(CASES.split("// -----"))))
def test_the_filecheck_cases_lower_as_with_xdsls_applier(
    case: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    typed, greedy = lowered_both_ways(CASES.split("// -----")[case], monkeypatch)
    assert typed == greedy


def test_a_scheduled_model_lowers_as_with_xdsls_applier(monkeypatch: pytest.MonkeyPatch) -> None:
    module = import_model(resnet_like())
    for name in pipeline(3).split(","):
        if name == STAGE_NAMES[0]:
            break
        apply_pipeline(module, name)
        if name == "convert-te-to-tir":
            schedule_kernels(module, "main")
    typed, greedy = lowered_both_ways(module_to_text(module), monkeypatch)
    assert typed == greedy
    assert "tir." not in typed and "arith." not in typed
