"""The README's tour runs as written."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tour_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text[text.index("## A tour") :]
    block = block[block.index("```sh") + len("```sh") : block.index("```", block.index("```sh") + 5)]
    return [line.split("  #")[0].strip() for line in block.strip().splitlines() if line.strip()]


CONFORMANCE_SAMPLE = "-k '^test_(relu|conv_with_strides_padding|BatchNorm2d_eval)$'"
"""The tour's `xtc conformance` commands run on a sample here (the last -k
wins): the whole runs took 48 of this test's 70 s, and
tests/frontend/test_conformance.py checks their results. They use the
session's cache (`session_cache_env`), where the node cases onnx gives are
collected once per test process (an xdist worker has a session cache of its
own), not once per test (10 s of CPU each)."""


def test_tour_commands_succeed(tmp_path: Path, session_cache_env: dict[str, str]) -> None:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path}
    commands = tour_commands()
    assert len(commands) >= 4
    for command in commands:
        command = command.replace("filecheck/", f"{ROOT}/filecheck/")
        run_env = env
        if command.startswith("xtc conformance"):
            command = f"{command} {CONFORMANCE_SAMPLE}"
            run_env = {**session_cache_env, "PATH": path}
        if command.startswith("python "):
            command = shlex.quote(sys.executable) + command[len("python") :]
        result = subprocess.run(
            command, shell=True, cwd=tmp_path, env=run_env, capture_output=True, text=True,
            check=False,
        )
        assert result.returncode == 0, f"{command}\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr


def python_examples() -> list[str]:
    text = (ROOT / "README.md").read_text()
    blocks = text.split("```python")[1:]
    return [block[: block.index("```")] for block in blocks]


def test_python_examples_run(tmp_path: Path) -> None:
    examples = python_examples()
    assert len(examples) >= 2
    setup = "import onnx, xtc.tools.model_builders as m; onnx.save(m.resnet_like(), 'resnet.onnx')"
    for code in examples:
        result = subprocess.run(
            [sys.executable, "-c", setup + "\n" + code + "\nassert logits.shape == (1, 10)"],
            cwd=tmp_path, capture_output=True, text=True, check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
