"""ONNX's node conformance cases through the importer and the interpreter:
the pass count never drops below the floor recorded beside this file."""

import json
import subprocess
import sys
from pathlib import Path

FLOOR_FILE = Path(__file__).with_name("conformance_floor.txt")


def test_conformance_pass_count_stays_above_the_floor(tmp_path: Path) -> None:
    report = tmp_path / "conformance.json"
    run = subprocess.run(
        [sys.executable, "-m", "xtc.tools.conformance", "--json", str(report), "--timeout", "120"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(report.read_text())
    passed = sum(r["status"] == "passed" for r in results)
    floor = int(FLOOR_FILE.read_text().split()[0])
    summary = run.stdout.strip().splitlines()[-1]
    assert len(results) >= 1800, summary
    assert passed >= floor, f"{summary}; the floor is {floor}"
    crashed = [r["name"] for r in results if r["status"] in ("crashed", "timeout")]
    assert len(crashed) <= 5, crashed
