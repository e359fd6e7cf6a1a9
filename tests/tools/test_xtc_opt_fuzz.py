"""Malformed IR never makes xtc-opt crash or print a traceback: random cuts
and insertions in valid files give a diagnostic (exit 1) or valid IR (exit 0)."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xtc.tools.xtc_opt import main

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p.read_text() for p in sorted((ROOT / "filecheck" / "dialects" / "graph").glob("ops*.mlir"))]
TOKENS = ["%", "{", "}", "(", ")", "<", ">", ":", ",", "->", "tensor<", "x", "f32", "array<i64:",
          "dense<", "dense_resource<", "\"", "graph.add", "@", "^bb0", "0x", "-1", "1e99", "#-}"]


@st.composite
def mutated_ir(draw: st.DrawFn) -> str:
    text = SOURCES[draw(st.integers(0, len(SOURCES) - 1))]
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            end = min(len(text), start + draw(st.integers(1, 40)))
            text = text[:start] + text[end:]
        else:
            text = text[:start] + draw(st.sampled_from(TOKENS)) + text[start:]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=mutated_ir())
def test_mutated_files_give_diagnostics(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mutated.mlir"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        main([str(path), "-o", str(tmp_path / "out.mlir")])
        raise SystemExit(0)
    err = capsys.readouterr().err
    assert exit_info.value.code in (0, 1)
    assert "Traceback" not in err and "internal error" not in err, err
    if exit_info.value.code == 1:
        assert ": error: " in err.splitlines()[0], err
