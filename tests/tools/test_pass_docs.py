"""Passes are discoverable: every xtc pass has a summary and every option a
meaning (its attribute docstring); `xtc-opt --list-passes` lists xtc's
passes first with their options, `--help-pass NAME` shows one in full, and
an unknown name is one line."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from xtc.tools.pass_docs import OptionDoc, describe_pass, format_pass_help, option_docstrings
from xtc.driver.universe import XTC_PASSES, multiverse

XTC_OPT = str(Path(sys.executable).parent / "xtc-opt")


def xtc_opt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([XTC_OPT, *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("name", sorted(XTC_PASSES))
def test_every_xtc_pass_says_what_it_does_and_what_each_option_means(name: str) -> None:
    doc = describe_pass(XTC_PASSES[name]())
    assert doc.name == name
    assert doc.summary, f"{name}: the class has no docstring"
    undocumented = [option.name for option in doc.options if not option.help]
    assert not undocumented, f"{name}: options without an attribute docstring: {undocumented}"


@pytest.mark.parametrize("name", sorted(XTC_PASSES))
def test_every_example_is_a_pipeline_that_parses(name: str) -> None:
    example = describe_pass(XTC_PASSES[name]()).example
    passes = list(PassPipeline.parse_spec(multiverse().all_passes, example).passes)
    assert [p.name for p in passes] == [name]


@dataclass(frozen=True, kw_only=True)
class _Toy(ModulePass):
    """Does nothing, carefully.

    Longer text."""

    name = "toy"

    size: int = 4
    """How big."""
    label: str
    flags: tuple[int, ...] = (1, 2)
    """Which ones."""
    strict: bool = False
    """Refuse more."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        del ctx, op


def test_options_come_from_fields_and_their_docstrings() -> None:
    doc = describe_pass(_Toy)
    assert doc.summary == "Does nothing, carefully."
    assert doc.description.endswith("Longer text.")
    assert doc.options == (
        OptionDoc("size", "int", "4", "How big."),
        OptionDoc("label", "str", None, ""),
        OptionDoc("flags", "tuple[int, ...]", "1,2", "Which ones."),
        OptionDoc("strict", "bool", "false", "Refuse more."),
    )
    assert option_docstrings(_Toy) == {
        "size": "How big.",
        "flags": "Which ones.",
        "strict": "Refuse more.",
    }


def test_pass_help_lists_options_and_a_default_example() -> None:
    text = format_pass_help(describe_pass(_Toy))
    assert text.startswith("toy\n  Does nothing, carefully.\n")
    assert "  - label (str, required)\n" in text
    assert "  - size (int, default 4): How big.\n" in text
    assert "xtc-opt input.mlir -p 'toy'" in text


def test_list_passes_puts_xtc_first_with_options() -> None:
    result = xtc_opt("--list-passes")
    assert result.returncode == 0, result.stderr
    xtc_part, other_part = result.stdout.split("xDSL and plugin passes:")
    for name in XTC_PASSES:
        assert f"\n  {name}\n" in xtc_part
    assert "- factor (int, required): The inner loop's extent" in xtc_part
    assert "\n  canonicalize\n" in other_part and "\n  tir-split\n" not in other_part


def test_help_pass_shows_one_pass_in_full() -> None:
    result = xtc_opt("--help-pass", "tir-split")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tir-split\n  Splits loop `loop` by `factor`")
    assert '- func (str, default ""): The function to schedule' in result.stdout
    assert "xtc-opt input.mlir -p 'tir-split{func=matmul_0 loop=i1 factor=16}'" in result.stdout
    assert "Expects: tir-level functions" in result.stdout


def test_help_pass_of_an_unknown_pass_is_one_line() -> None:
    result = xtc_opt("--help-pass", "tir-splat")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        "xtc-opt: error: --help-pass: unknown pass 'tir-splat' (--list-passes lists them)\n"
    )


def test_passes_help_points_to_list_passes() -> None:
    result = xtc_opt("--help")
    assert "--list-passes lists the passes" in result.stdout
    assert "convert-tir-to-llvm" not in result.stdout


def test_a_script_adds_its_own_passes_to_xtc_opt(capsys: pytest.CaptureFixture[str]) -> None:
    from xtc.tools.xtc_opt import main

    main(["--help-pass", "toy"], passes={"toy": lambda: _Toy})
    assert capsys.readouterr().out.startswith("toy\n  Does nothing, carefully.\n")


def test_an_added_pass_may_not_take_a_name_in_use(capsys: pytest.CaptureFixture[str]) -> None:
    from xtc.tools.xtc_opt import main

    with pytest.raises(SystemExit) as exited:
        main(["--list-passes"], passes={"dce": lambda: _Toy})
    assert exited.value.code == 1
    assert capsys.readouterr().err == "xtc-opt: error: pass dce already defined\n"
