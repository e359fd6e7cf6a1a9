"""Every guide in docs/guides/ runs as written. In a fresh temporary
directory, blocks are handled in file order by their info string:

- a block with `file=NAME` is not run: its text is written to NAME first;
- `python` blocks run in-process, one namespace per guide, cwd the temp dir
  (also on sys.path, so a written module imports);
- `sh` blocks run with `bash -euo pipefail` in the temp dir, this Python's
  tools first on PATH; `# expect-fail` as the first line expects a
  non-zero exit;
- any other block is shown, not run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

GUIDES = Path(__file__).resolve().parents[1] / "docs" / "guides"
FENCE = re.compile(r"^```([^`\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
EXPECT_FAIL = "# expect-fail"


@dataclass(frozen=True)
class Block:
    language: str
    file: str | None
    text: str
    line: int
    """The line of the opening fence, counted from 1."""


def blocks_of(markdown: str) -> list[Block]:
    found: list[Block] = []
    for match in FENCE.finditer(markdown):
        words = match.group(1).split()
        names = [w.removeprefix("file=") for w in words if w.startswith("file=")]
        found.append(
            Block(
                language=words[0] if words and "=" not in words[0] else "",
                file=names[0] if names else None,
                text=match.group(2),
                line=markdown.count("\n", 0, match.start()) + 1,
            )
        )
    return found


def run_guide(guide: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = blocks_of(guide.read_text(encoding="utf-8"))
    for block in blocks:
        if block.file is not None:
            target = workdir / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
    monkeypatch.chdir(workdir)
    monkeypatch.syspath_prepend(str(workdir))
    namespace: dict[str, object] = {"__name__": f"guide_{guide.stem.replace('-', '_')}"}
    for block in blocks:
        where = f"{guide.name}:{block.line}"
        if block.file is not None:
            continue
        if block.language == "python":
            exec(compile(block.text, where, "exec"), namespace)  # noqa: S102 - the guide's code
        elif block.language == "sh":
            _run_sh(block, where, workdir)


def _run_sh(block: Block, where: str, workdir: Path) -> None:
    tools = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.text],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    expect_fail = block.text.lstrip().startswith(EXPECT_FAIL)
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    if expect_fail:
        assert result.returncode != 0, f"{where}: expected a failure, got exit 0\n{output}"
    else:
        assert result.returncode == 0, f"{where}: exit {result.returncode}\n{output}"


@pytest.mark.parametrize("guide", sorted(GUIDES.glob("*.md")), ids=lambda p: p.name)
def test_guide_runs(guide: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_guide(guide, tmp_path, monkeypatch)


# ---------------------------------------------------------------------------
# The runner itself.

SAMPLE = """\
# A guide

```text
shown only
```

```python file=helper.py
VALUE = 41
```

```python
import helper
answer = helper.VALUE + 1
```

```sh
test -f helper.py
echo ok > out.txt
```

```sh
# expect-fail
false
```

```python
assert answer == 42
assert open("out.txt").read() == "ok\\n"
```
"""


def _guide(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "guide.md"
    path.write_text(text, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    return path


def test_blocks_are_read_with_their_info_string() -> None:
    blocks = blocks_of(SAMPLE)
    assert [(b.language, b.file, b.line) for b in blocks] == [
        ("text", None, 3),
        ("python", "helper.py", 7),
        ("python", None, 11),
        ("sh", None, 16),
        ("sh", None, 21),
        ("python", None, 26),
    ]
    assert blocks[1].text == "VALUE = 41\n"


def test_runner_writes_files_runs_python_and_sh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_guide(_guide(tmp_path, SAMPLE), tmp_path / "work", monkeypatch)
    assert (tmp_path / "work" / "out.txt").read_text() == "ok\n"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("```sh\nfalse\n```\n", "guide.md:1: exit 1"),
        ("```sh\n# expect-fail\ntrue\n```\n", "guide.md:1: expected a failure"),
        ("```sh\nfalse | true\n```\n", "guide.md:1: exit 1"),
    ],
)
def test_a_failing_sh_block_fails_the_guide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: str, message: str
) -> None:
    with pytest.raises(AssertionError, match=message):
        run_guide(_guide(tmp_path, block), tmp_path / "work", monkeypatch)


def test_a_failing_python_block_fails_the_guide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ZeroDivisionError):
        run_guide(_guide(tmp_path, "```python\n1 / 0\n```\n"), tmp_path / "work", monkeypatch)
