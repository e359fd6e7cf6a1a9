"""Fixtures of the tools tests: running a bench script as a user does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

RunBench = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def run_bench() -> RunBench:
    """run_bench("compile.py", "--small", ...): the script run by this
    Python in a process of its own (output captured, exit status kept)."""

    def run(
        script: str, *args: str | Path, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(BENCH / script), *map(str, args)],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )

    return run
