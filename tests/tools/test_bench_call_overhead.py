"""bench/call_overhead.py: a smoke run (the numbers are the bench's business)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunBench = Callable[..., CompletedProcess[str]]
"""The run_bench fixture (tests/tools/conftest.py)."""


def test_each_case_is_timed_four_ways(tmp_path: Path, run_bench: RunBench) -> None:
    output = tmp_path / "overhead.json"
    result = run_bench(
        "call_overhead.py",
        "--calls",
        "20",
        "--repeat",
        "2",
        "--threads",
        "1",
        "--json",
        str(output),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(output.read_text())
    assert [row["case"] for row in rows] == ["relu_16", "softmax_1000"]
    for row in rows:
        assert 0 < row["native_us"] < row["run_list_us"]
        assert row["run_dict_us"] > 0 and row["ort_us"] > 0
