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


def test_compiled_path_passes_what_the_interpreter_passes(tmp_path: Path) -> None:
    """A sample of ops on both paths (the whole compiled run takes minutes:
    `xtc conformance --compiled`)."""
    report = tmp_path / "compiled.json"
    sample = r"test_(relu|add|sub_bcast|conv_with_strides_padding|softmax_axis_1|matmul_2d|gemm_default_single_elem_vector_bias|maxpool_2d_pads|averagepool_2d_default|reduce_sum_keepdims_example|transpose_default|concat_2d_axis_0|gather_0|where_example|cast_FLOAT_to_INT32|layer_normalization_2d_axis0|resize_upsample_scales_linear)$"  # noqa: E501
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "xtc.tools.conformance",
            "--compiled",
            "-k",
            sample,
            "--json",
            str(report),
            "--timeout",
            "120",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(report.read_text())
    passed = {
        path: {r["name"] for r in results if r["path"] == path and r["status"] == "passed"}
        for path in ("interp", "native")
    }
    assert len(passed["interp"]) >= 15, run.stdout[-1500:]
    assert passed["native"] == passed["interp"], run.stdout[-1500:]


def test_shipped_models_run_with_their_data_sets(tmp_path: Path) -> None:
    """`--models` on three shipped directories: two opset-6 PyTorch exports
    (upgraded on import; the PReLU one keeps its per-channel slope) and an
    opset-12 model whose only op xtc does not have."""
    report = tmp_path / "models.json"
    sample = r"^test_(PReLU_2d_multiparam|BatchNorm2d_eval|sequence_model4)$"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "xtc.tools.conformance",
            "--models",
            "--compiled",
            "-k",
            sample,
            "--json",
            str(report),
            "-j",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    statuses = {(r["op"], r["path"]): r["status"] for r in json.loads(report.read_text())}
    assert statuses == {
        (op, path): status
        for op, status in [
            ("pytorch-converted/PReLU_2d_multiparam", "passed"),
            ("pytorch-converted/BatchNorm2d_eval", "passed"),
            ("simple/sequence_model4", "unsupported"),
        ]
        for path in ("interp", "native")
    }
    assert run.stdout.strip().splitlines()[-1] == "native: 2 passed, 1 failed (1 unsupported)"
