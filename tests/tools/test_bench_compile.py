"""bench/compile.py, cold and warm compile time and memory per bench model:
a smoke run on small models (the numbers are the bench's business), and the parsing of
the --timing report it reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunBench = Callable[..., CompletedProcess[str]]
"""The run_bench fixture (tests/tools/conftest.py)."""


def test_small_models_are_compiled_timed_and_measured(tmp_path: Path, run_bench: RunBench) -> None:
    output = tmp_path / "compile.json"
    result = run_bench(
        "compile.py",
        "--models",
        "resnet18,bert",
        "--small",
        "--repeat",
        "1",
        "--json",
        str(output),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(output.read_text())
    assert [row["model"] for row in rows] == ["resnet18", "bert"]
    for row in rows:
        assert not row["error"]
        assert len(row["seconds"]) == 1 and all(s > 0 for s in row["seconds"])
        # A Python process with numpy, xDSL and LLVM loaded is past 50 MB.
        assert all(peak > 50 for peak in row["peak_mb"] + row["warm_peak_mb"])
        # Warm compiles are cache hits: no import, no lowering.
        assert len(row["warm_seconds"]) == 1
        assert max(row["warm_seconds"]) < min(row["seconds"])
        assert row["weights_mb"] > 0
        assert {"import", "tir-lower-vectorized", "convert-to-llvm", "llvm"} <= set(row["stages"])
        assert sum(row["stages"].values()) <= max(row["seconds"]) * 1.01
    assert "resnet18" in result.stdout and "bert" in result.stdout


def test_an_unknown_model_is_a_usage_error(run_bench: RunBench) -> None:
    result = run_bench("compile.py", "--models", "lenet")
    assert result.returncode == 2 and "unknown model lenet" in result.stderr
