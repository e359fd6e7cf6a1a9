"""bench/tune.py, tuned against untuned models and onnxruntime: a smoke run
on a tiny model (the numbers are the bench's business, not a test's), and
its helpers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunBench = Callable[..., CompletedProcess[str]]
"""The run_bench fixture (tests/tools/conftest.py)."""

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_model_is_tuned_compiled_and_timed(tmp_path: Path, run_bench: RunBench) -> None:
    output = tmp_path / "result.json"
    result = run_bench(
        "tune.py",
        "--models",
        "resnet18",
        "--small",
        "--time-budget",
        "5m",
        "--max-trials",
        "6",
        "--records-dir",
        str(tmp_path),
        "--threads",
        "1",
        "--repeat",
        "1",
        "--number",
        "2",
        "--json",
        str(output),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = json.loads(output.read_text())["models"]
    assert row["match"] == "ok" and row["trials"] > 0 and row["tuned_kernels"] > 0
    assert row["untuned_ms"] > 0 and row["tuned_ms"] > 0 and row["ort_ms"] > 0
    assert (tmp_path / "resnet18.jsonl").is_file()
    assert "resnet18" in result.stdout


def test_trials_to_reach() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from tune import trials_to_reach  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert trials_to_reach([1.0, 2.0, 2.0, 5.0], 2.0) == 2
    assert trials_to_reach([1.0, 2.0], 3.0) is None
