"""docs/reference/ is what tools/gen_docs.py generates from the code: a
change to an op, a pass or its options that is not regenerated fails here,
saying the command to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtc.driver.universe import XTC_DIALECTS, XTC_PASSES
from xtc.tools import gen_docs


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return gen_docs.generate()


def test_committed_reference_is_up_to_date(pages: dict[str, str]) -> None:
    out_of_date = gen_docs.stale(pages, gen_docs.REFERENCE)
    assert not out_of_date, (
        f"docs/reference/{', '.join(out_of_date)} out of date: run `{gen_docs.REGENERATE}`"
    )


def test_generation_is_deterministic(pages: dict[str, str]) -> None:
    assert gen_docs.generate() == pages


def test_every_op_and_pass_has_a_section_with_an_example(pages: dict[str, str]) -> None:
    for name, factory in XTC_DIALECTS.items():
        page = pages[f"{name}.md"]
        for op in factory().operations:
            section = page.split(f"### `{op.name}`\n", 1)[1].split("\n### ", 1)[0]
            assert "Example:\n\n```mlir\n" in section, f"{op.name}: no example in ops*.mlir"
    for name in XTC_PASSES:
        assert f"## `{name}`\n" in pages["passes.md"]


def test_op_section_lists_operands_properties_and_the_example(pages: dict[str, str]) -> None:
    section = pages["tir.md"].split("### `tir.prefetch`\n", 1)[1]
    assert "| `buffer` | `MemRefType` |  |" in section
    assert "| `locality` | `IntegerAttr<IntegerType>` |  |" in section
    assert "tir.prefetch %A[%at] {locality = 2 : i64} : memref<4x3xf32>" in section


def test_check_fails_on_a_stale_page_and_names_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gen_docs.main(["--out", str(tmp_path)]) == 0
    assert gen_docs.main(["--check", "--out", str(tmp_path)]) == 0
    (tmp_path / "tir.md").write_text("old\n", encoding="utf-8")
    assert gen_docs.main(["--check", "--out", str(tmp_path)]) == 1
    message = capsys.readouterr().err
    assert "tir.md" in message and "python -m xtc.tools.gen_docs" in message


def test_coverage_table_finds_the_converters_of_other_domains_by_their_full_name() -> None:
    from xtc.tools.coverage import coverage_page

    page = coverage_page([], ["ai.onnx.preview.training.Adam", "ai.onnx.ml.Binarizer"])
    rows = {line.split(" | ")[0]: line for line in page.splitlines() if line.startswith("| ")}
    assert rows["| Adam"].split(" | ")[2] == "yes"
    assert rows["| Binarizer"].split(" | ")[2] == "yes"
    assert rows["| Adagrad"].split(" | ")[2] == "no"
