"""xtc-opt gives diagnostics, never tracebacks, and exits non-zero on errors."""

import subprocess
import sys
from pathlib import Path

import pytest

from xtc.driver.universe import multiverse

ROOT = Path(__file__).resolve().parents[2]
XTC_OPT = str(Path(sys.executable).parent / "xtc-opt")

GOOD = """\
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}
"""

BAD_RESULT_TYPE = """\
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.relu %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
"""


def xtc_opt(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [XTC_OPT, *args], input=stdin, capture_output=True, text=True, check=False
    )


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout


def test_prints_valid_ir() -> None:
    result = xtc_opt(stdin=GOOD)
    assert result.returncode == 0, result.stderr
    assert "graph.relu" in result.stdout


def test_malformed_file_gets_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(GOOD.replace("%0 = graph.relu %a", "%0 = graph.relu %a,"))
    result = xtc_opt(str(path))
    assert result.returncode == 1
    assert_no_traceback(result)
    assert result.stderr.startswith(f"{path}:2:"), result.stderr
    assert ": error: " in result.stderr.split("\n")[0]


def test_verifier_error_points_at_the_op(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(BAD_RESULT_TYPE)
    result = xtc_opt(str(path))
    assert result.returncode == 1
    assert_no_traceback(result)
    assert result.stderr.startswith(f"{path}:2:3: error: 'graph.relu' op"), result.stderr


def test_split_input_file_lines_count_from_the_file_start(tmp_path: Path) -> None:
    path = tmp_path / "two.mlir"
    path.write_text(GOOD + "\n// -----\n" + BAD_RESULT_TYPE)
    result = xtc_opt(str(path), "--split-input-file", "--diagnostics-to-output")
    assert result.returncode == 0, result.stderr
    assert f"{path}:9:3: error: 'graph.relu' op" in result.stdout


def test_verify_diagnostics_passes_when_annotations_match(tmp_path: Path) -> None:
    path = tmp_path / "annotated.mlir"
    annotated = BAD_RESULT_TYPE.replace(
        "  %0 = graph.relu", "  // expected-error@+1 {{'graph.relu' op}}\n  %0 = graph.relu"
    )
    path.write_text(GOOD + "// -----\n" + annotated)
    result = xtc_opt(str(path), "--split-input-file", "--verify-diagnostics")
    assert (result.returncode, result.stderr) == (0, "")
    # As mlir-opt: the chunk without diagnostics is printed, the other is not.
    assert result.stdout.count("func.func @main") == 1
    assert result.stdout.rstrip().endswith("// -----")


def test_verify_diagnostics_fails_on_each_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "mismatch.mlir"
    path.write_text(
        GOOD.replace("  %1 =", "  // expected-error@+1 {{never}}\n  %1 =")
        + "// -----\n"
        + BAD_RESULT_TYPE
    )
    result = xtc_opt(str(path), "--split-input-file", "--verify-diagnostics")
    assert result.returncode == 1
    assert_no_traceback(result)
    assert result.stderr.splitlines() == [
        f'{path}:3:26: error: expected error "never" was not produced',
        f"{path}:9:3: error: unexpected error: 'graph.relu' op result type tensor<3x2xf32>"
        " does not match the type inferred from its operands tensor<2x3xf32>"
        " (operands: tensor<2x3xf32>)",
    ]


def test_verify_and_output_diagnostics_exclude_each_other() -> None:
    result = xtc_opt("--verify-diagnostics", "--diagnostics-to-output", stdin=GOOD)
    assert result.returncode == 1
    assert result.stderr.startswith("xtc-opt: error: --verify-diagnostics and")


@pytest.mark.parametrize(
    "pipeline, message",
    [
        ("no-such-pass", "Unrecognized passes: ['no-such-pass']"),
        ("cse{bogus=1}", "bogus"),
        ("cse{", "Expected argument name"),
    ],
)
def test_bad_pipeline_is_one_line(pipeline: str, message: str) -> None:
    result = xtc_opt("-p", pipeline, stdin=GOOD)
    assert result.returncode == 1
    assert_no_traceback(result)
    lines = result.stderr.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith("xtc-opt: error:"), result.stderr
    assert message in lines[0]


def test_bad_pass_option_value_is_one_line() -> None:
    result = xtc_opt("-p", "canonicalize{max-iterations=abc}", stdin=GOOD)
    assert result.returncode == 1
    assert_no_traceback(result)
    assert result.stderr.startswith("xtc-opt: error:")


def test_missing_input_file() -> None:
    result = xtc_opt("does-not-exist.mlir")
    assert result.returncode == 1
    assert (
        result.stderr.strip() == "xtc-opt: error: cannot open 'does-not-exist.mlir': no such file"
    )


def test_binary_input_is_refused_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "noise.mlir"
    path.write_bytes(bytes(range(256)))
    result = xtc_opt(str(path))
    assert result.returncode == 1
    assert_no_traceback(result)


def test_print_ir_after_all_goes_to_stderr() -> None:
    result = xtc_opt("-p", "cse,dce", "--print-ir-after-all", stdin=GOOD)
    assert result.returncode == 0, result.stderr
    assert "IR Dump After cse" in result.stderr and "IR Dump After dce" in result.stderr
    assert "IR Dump" not in result.stdout


def test_print_ir_after_one_pass() -> None:
    result = xtc_opt("-p", "cse,dce", "--print-ir-after=dce", stdin=GOOD)
    assert result.returncode == 0, result.stderr
    assert "IR Dump After dce" in result.stderr and "After cse" not in result.stderr


def test_print_ir_after_unknown_pass() -> None:
    result = xtc_opt("-p", "cse", "--print-ir-after=nope", stdin=GOOD)
    assert result.returncode == 1
    assert result.stderr.strip() == "xtc-opt: error: --print-ir-after: unknown pass nope"


def test_generic_form_round_trips() -> None:
    generic = xtc_opt("--print-op-generic", stdin=GOOD)
    assert '"graph.relu"(%' in generic.stdout
    again = xtc_opt(stdin=generic.stdout)
    assert again.returncode == 0
    assert again.stdout == xtc_opt(stdin=GOOD).stdout


def test_op_plugins_are_loaded_only_for_a_name_no_dialect_has() -> None:
    """xtc-opt registers the op plugins' dialects (loading every room of
    xtc) only when the IR names something xtc's and xDSL's dialects lack."""
    from xdsl.parser import Parser

    from xtc.tools.xtc_opt import PluginLoadingContext

    ctx = PluginLoadingContext()
    for name, factory in multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    graph = (
        "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %y = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>\n"
        "  func.return %y : tensor<3xf32>\n}\n"
    )
    Parser(ctx, graph).parse_module()
    assert not ctx.plugins_registered
    with pytest.raises(Exception, match="nowhere.op is not registered"):
        Parser(ctx, '"nowhere.op"() : () -> ()').parse_module()
    assert ctx.plugins_registered
