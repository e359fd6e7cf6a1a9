"""graph-apply-pdl with the example patterns (examples/pdl/): the outputs
stay the same on random inputs (graph interpreter, and native code for the
fused swish), the rewrites happen and leave nothing they should have
matched; a pattern file it cannot use is refused with one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from xtc import interp
from xtc.dialects.graph import elementwise as ew
from xtc.testing.graph_op import assert_pipeline_preserves_outputs, random_inputs
from xtc.passes.graph_apply_pdl import MAX_SWEEPS, GraphApplyPdl
from xtc.driver.compiler import compile_graph
from xtc.driver.textual_ir import make_context, parse_module

ROOT = Path(__file__).resolve().parents[2]
RELU_RELU = ROOT / "examples" / "pdl" / "relu-relu.mlir"
SWISH = ROOT / "examples" / "pdl" / "swish.mlir"
FILECHECK = ROOT / "filecheck" / "passes" / "graph-apply-pdl.mlir"
XTC_OPT = str(Path(sys.executable).parent / "xtc-opt")
T = "tensor<2x3xf32>"


def apply_pdl(path: Path | str) -> str:
    return f'graph-apply-pdl{{file="{path}"}}'


def filecheck_functions() -> dict[str, str]:
    """Each function of the FileCheck test, renamed @main."""
    lines = [x for x in FILECHECK.read_text().splitlines() if not x.startswith("//")]
    chunks = re.split(r"\n(?=func\.func )", "\n".join(lines))
    return {
        re.search(r"@(\w+)", c)[1]: re.sub(r"@\w+", "@main", c, count=1)  # type: ignore[index]
        for c in chunks
        if c.lstrip().startswith("func.func")
    }


FUNCTIONS = filecheck_functions()


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("graph.")]


@pytest.mark.parametrize("patterns", [RELU_RELU, SWISH], ids=lambda p: p.stem)
@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_outputs_are_kept(function: str, patterns: Path) -> None:
    assert_pipeline_preserves_outputs(FUNCTIONS[function], apply_pdl(patterns), seeds=(0, 1, 2))


def test_relu_chain_folds_to_one_relu_per_value() -> None:
    after = assert_pipeline_preserves_outputs(FUNCTIONS["relu_chain"], apply_pdl(RELU_RELU))
    assert op_names(after) == ["graph.relu", "graph.neg", "graph.relu"]


def test_products_with_the_sigmoid_become_swish() -> None:
    after = assert_pipeline_preserves_outputs(FUNCTIONS["swish"], apply_pdl(SWISH))
    assert op_names(after) == ["graph.swish", "graph.swish"]


@st.composite
def random_graphs(draw: st.DrawFn) -> str:
    """A random DAG over %x of relu, sigmoid, neg and mul, where mul often
    takes a value and the sigmoid of that value (in either order)."""
    lines = [f"func.func @main(%x: {T}) -> {T} {{"]
    values = ["%x"]
    for i in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["relu", "relu", "sigmoid", "neg", "mul", "swish-like"]))
        a = draw(st.sampled_from(values))
        if kind == "swish-like":
            lines.append(f"  %s{i} = graph.sigmoid {a} : ({T}) -> {T}")
            pair = [a, f"%s{i}"] if draw(st.booleans()) else [f"%s{i}", a]
            lines.append(f"  %v{i} = graph.mul {pair[0]}, {pair[1]} : ({T}, {T}) -> {T}")
        elif kind == "mul":
            b = draw(st.sampled_from(values))
            lines.append(f"  %v{i} = graph.mul {a}, {b} : ({T}, {T}) -> {T}")
        else:
            lines.append(f"  %v{i} = graph.{kind} {a} : ({T}) -> {T}")
        values.append(f"%v{i}")
    lines += [f"  func.return {values[-1]} : {T}", "}"]
    return "\n".join(lines)


def leftover_matches(module: ModuleOp) -> list[str]:
    """relu(relu(x)) and mul(x, sigmoid(x)) still in the module."""
    found: list[str] = []
    for op in module.walk():
        operands = [v.owner for v in op.operands]
        if isinstance(op, ew.ReluOp) and isinstance(operands[0], ew.ReluOp):
            found.append("relu of relu")
        if isinstance(op, ew.MulOp):
            for value, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                if isinstance(other.owner, ew.SigmoidOp) and other.owner.input == value:
                    found.append("mul of sigmoid")
    return found


@settings(max_examples=30, deadline=None)
@given(text=random_graphs())
def test_random_graphs_keep_outputs_and_leave_no_match(text: str) -> None:
    pipeline = f"{apply_pdl(RELU_RELU)},{apply_pdl(SWISH)}"
    after = assert_pipeline_preserves_outputs(text, pipeline)
    assert leftover_matches(after) == []
    before = parse_module(text)
    if leftover_matches(before):
        assert len(op_names(after)) < len(op_names(before))


def test_fused_swish_runs_natively_as_before() -> None:
    before = parse_module(FUNCTIONS["swish"])
    after = assert_pipeline_preserves_outputs(FUNCTIONS["swish"], apply_pdl(SWISH))
    inputs = random_inputs(before, seed=5)
    (expected,) = interp.run(before, inputs)
    for module in (before, after):
        (got,) = compile_graph(module).run(inputs)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


LEAKY_TO_SWISH = """\
pdl.pattern @leaky_to_swish : benefit(1) {
  %x = pdl.operand
  %type = pdl.type
  %a = pdl.attribute = 0.1 : f32
  %l = pdl.operation "graph.leaky_relu"(%x : !pdl.value) {"alpha" = %a} -> (%type : !pdl.type)
  pdl.rewrite %l {
    %b = pdl.attribute = 0.5 : f32
    %s = pdl.operation "graph.swish"(%x : !pdl.value) {"alpha" = %b} -> (%type : !pdl.type)
    pdl.replace %l with %s
  }
}
"""


def test_properties_are_matched_and_set_as_properties(tmp_path: Path) -> None:
    patterns = tmp_path / "leaky.mlir"
    patterns.write_text(LEAKY_TO_SWISH)
    module = parse_module(
        f"func.func @main(%x: {T}) -> ({T}, {T}) {{\n"
        f"  %0 = graph.leaky_relu %x {{alpha = 0.1 : f32}} : ({T}) -> {T}\n"
        f"  %1 = graph.leaky_relu %x {{alpha = 0.2 : f32}} : ({T}) -> {T}\n"
        f"  func.return %0, %1 : {T}, {T}\n}}"
    )
    GraphApplyPdl(file=str(patterns)).apply(make_context(), module)
    swish, leaky = (op for op in module.walk() if op.name.startswith("graph."))
    assert isinstance(swish, ew.SwishOp) and isinstance(leaky, ew.LeakyReluOp)
    assert swish.alpha is not None and swish.alpha.value.data == 0.5
    assert swish.attributes == {}


# ---------------------------------------------------------------- refusals

RELU_INPUT = "%x = pdl.operand\n  %t = pdl.type\n"
RELU_MATCH = '%r = pdl.operation "graph.relu"(%x : !pdl.value) -> (%t : !pdl.type)\n'


def pattern(body: str, rewrite: str) -> str:
    return (
        f"pdl.pattern @p : benefit(1) {{\n  {RELU_INPUT}  {RELU_MATCH}  {body}\n"
        f"  pdl.rewrite %r {{\n    {rewrite}\n  }}\n}}\n"
    )


BAD_FILES = {
    "garbled": ("pdl.pattern @p : benefit(1) {", r"garbled\.mlir:\d+:\d+: \S"),
    "no-pattern": (
        f"func.func @f(%x: {T}) -> {T} {{\n  func.return %x : {T}\n}}",
        "holds no pdl.pattern",
    ),
    "no-rewrite": (
        f"pdl.pattern @p : benefit(1) {{\n  {RELU_INPUT}  {RELU_MATCH}}}",
        "does not verify",
    ),
    "unknown-op": (
        pattern("", 'pdl.operation "graph.rleu"(%x : !pdl.value) -> (%t : !pdl.type)'),
        "pattern @p uses the unknown op 'graph.rleu'",
    ),
    "native": (
        pattern('pdl.apply_native_constraint "small"(%x : !pdl.value)', "pdl.erase %r"),
        "pattern @p calls the native function 'small'",
    ),
    "no-result-types": (
        pattern(
            "", '%s = pdl.operation "graph.swish"(%x : !pdl.value)\n    pdl.replace %r with %s'
        ),
        "creates 'graph.swish' without result types",
    ),
    "wrong-result-type": (
        pattern(
            "",
            "%u = pdl.type : tensor<7xf32>\n"
            '    %s = pdl.operation "graph.swish"(%x : !pdl.value) -> (%u : !pdl.type)\n'
            "    pdl.replace %r with %s",
        ),
        "produce IR that does not verify: 'graph.swish' op result type tensor<7xf32>",
    ),
    "rewrites-forever": (
        pattern(
            "", '%s = pdl.operation "graph.relu"(%x : !pdl.value) -> (%t : !pdl.type)\n'
            "    pdl.replace %r with %s",
        ),
        f"still match after {MAX_SWEEPS} sweeps",
    ),
}  # fmt: skip


def run_pass(file: str) -> None:
    module = parse_module(FUNCTIONS["relu_chain"])
    GraphApplyPdl(file=file).apply(make_context(), module)


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_unusable_pattern_file_is_refused(tmp_path: Path, name: str) -> None:
    text, message = BAD_FILES[name]
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    with pytest.raises(PassFailedException, match=message) as refused:
        run_pass(str(path))
    assert str(refused.value).startswith("graph-apply-pdl: ")
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "file, message",
    [("", "no pattern file"), ("missing.mlir", "cannot open 'missing.mlir': no such file")],
)
def test_missing_pattern_file_is_refused(file: str, message: str) -> None:
    with pytest.raises(PassFailedException, match=message):
        run_pass(file)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PassFailedException, match="cannot open .*: Is a directory"):
        run_pass(str(tmp_path))


def test_xtc_opt_reports_a_refusal_on_one_line(tmp_path: Path) -> None:
    source = tmp_path / "model.mlir"
    source.write_text(FUNCTIONS["relu_chain"])
    patterns = tmp_path / "typo.mlir"
    patterns.write_text(BAD_FILES["unknown-op"][0])
    result = subprocess.run(
        [XTC_OPT, str(source), "-p", apply_pdl(patterns)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"{source}: error: graph-apply-pdl: {patterns}: "
        "pattern @p uses the unknown op 'graph.rleu'\n"
    )
