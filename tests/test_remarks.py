"""Remarks (xtc/remarks.py): a fallback a compile takes is said, never
silent. The collector is scoped to a block; a refused schedule step and a
loop the lowering leaves scalar reach `xtc.compile`'s `on_remark`, the
manifest's counts and `xtc compile --remarks`."""

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.func import FuncOp

import xtc.ops.schedules
from xtc.remarks import (
    SCHEDULE_REFUSED,
    VECTORIZE_MISSED,
    Remark,
    collect_remarks,
    count_by_category,
    report,
)
from xtc.tools.cli import main
from xtc.driver.compiler import compile_model


def remark(message: str, category: str = VECTORIZE_MISSED) -> Remark:
    return Remark("missed", category, "some-pass", message)


def test_a_block_collects_what_is_reported_inside_it_only() -> None:
    report(remark("before: nobody listens"))
    with collect_remarks() as outer:
        report(remark("a"))
        with collect_remarks() as inner:
            report(remark("b"))
        report(remark("c"))
    report(remark("after: nobody listens"))
    assert [r.message for r in outer] == ["a", "c"]
    assert [r.message for r in inner] == ["b"]


def test_the_collector_is_reset_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), collect_remarks() as first:
        raise RuntimeError
    with collect_remarks() as second:
        report(remark("x"))
    assert first == [] and len(second) == 1


def test_counts_by_category_and_text_names_the_pass() -> None:
    remarks = [remark("a"), remark("b", SCHEDULE_REFUSED), remark("c")]
    assert count_by_category(remarks) == {SCHEDULE_REFUSED: 1, VECTORIZE_MISSED: 2}
    assert remark("a").text() == "a [some-pass]"


def matmul(n: int = 8) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info(v, TensorProto.FLOAT, [n, n]) for v in ("a", "b")]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")
    graph = helper.make_graph([node], "matmul", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


class FallingBackSchedule:
    """A kernel schedule whose recipe vectorizes the reduction loop (which
    the lowering must leave scalar: every lane adds into one accumulator),
    then an outer loop (refused: it holds another loop), then a step that
    is never tried."""

    def __init__(self, kernel: FuncOp) -> None:
        self.func = kernel.sym_name.data

    def default(self) -> dict[str, int]:
        return {}

    def recipes(self, config: Mapping[str, int]) -> list[list[str]]:
        return [
            [
                f"tir-vectorize{{func={self.func} loop=r0}}",
                f"tir-vectorize{{func={self.func} loop=i0}}",
                f"tir-unroll{{func={self.func} loop=i1}}",
            ]
        ]


@pytest.fixture
def falling_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels get FallingBackSchedule, in this process: one compile job, so
    that the kernel units are scheduled here and not in worker processes."""
    monkeypatch.setattr(xtc.ops.schedules, "kernel_schedule", FallingBackSchedule)
    monkeypatch.setenv("XTC_COMPILE_JOBS", "1")


@pytest.mark.usefixtures("falling_back")
def test_compile_says_which_step_was_refused_and_which_loop_stayed_scalar() -> None:
    said: list[Remark] = []
    compiled = compile_model(matmul(), on_remark=said.append)
    assert compiled.manifest["remarks"] == {SCHEDULE_REFUSED: 1, VECTORIZE_MISSED: 1}
    assert compiled.manifest["pipeline"].count("tir-vectorize{") == 1
    refused, missed = said
    assert refused.category == SCHEDULE_REFUSED and refused.function == "matmul_0"
    assert refused.text() == (
        "step tir-vectorize{func=matmul_0 loop=i0} refused: tir-vectorize: loop 'i0' in "
        "@matmul_0 holds another loop; only an innermost loop vectorizes [tir-vectorize]"
    )
    assert missed.category == VECTORIZE_MISSED and missed.loop == "r0"
    assert missed.message.startswith("loop 'r0' in @matmul_0 not vectorized: ")
    assert "may hit the same element" in missed.message
    # the kernel is the one the steps before the refused one left (taken again)
    a, b = np.random.default_rng(3).standard_normal((2, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(compiled.run([a, b])[0], a @ b, rtol=1e-5, atol=1e-5)


def test_a_compile_without_fallbacks_counts_none() -> None:
    """The default schedule of a matmul takes no fallback, and the remarks
    of an earlier compile do not leak into this one's manifest."""
    assert compile_model(matmul()).manifest["remarks"] == {}


@pytest.mark.usefixtures("falling_back")
def test_xtc_compile_remarks_prints_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx.save(matmul(), tmp_path / "mm.onnx")
    for flag, printed in (([], 0), (["--remarks"], 2)):
        with pytest.raises(SystemExit) as stop:
            main(["compile", str(tmp_path / "mm.onnx"), "-o", str(tmp_path / "mm.tar"), *flag])
        assert stop.value.code == 0
        lines = [line for line in capsys.readouterr().err.splitlines() if "remark:" in line]
        assert len(lines) == printed
    assert lines[0].startswith(f"{tmp_path / 'mm.onnx'}: remark: step tir-vectorize{{")
    assert "remark: loop 'r0' in @matmul_0 not vectorized" in lines[1]
