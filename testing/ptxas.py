"""Checking PTX with CUDA's ptxas in tests: skipped where ptxas is not on
PATH."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def assert_ptxas_accepts(text: str, tmp_path: Path, arch: str = "sm_90") -> None:
    """`ptxas -arch=<arch>` assembles `text` (the test is skipped without ptxas)."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("CUDA's ptxas is not on PATH")
    source = tmp_path / "kernel.ptx"
    source.write_text(text)
    run = subprocess.run(
        [ptxas, f"-arch={arch}", str(source), "-o", str(tmp_path / "kernel.cubin")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
