"""ONNX's node conformance cases through the importer and the interpreter:
the pass count never drops below the floor recorded beside this file, and
the coverage table (docs/reference/onnx-coverage.md) lists exactly the
cases that do not pass."""

import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from pytest import MonkeyPatch

from xtc.lowering.libdevice import find_libdevice
from xtc.tools.conformance import CaseResult, run_cuda_case, summarize_cuda
from xtc.tools.coverage import REFRESH, RESULTS_FILE, not_passed

FLOOR_FILE = Path(__file__).with_name("conformance_floor.txt")
COVERAGE_RESULTS = Path(__file__).resolve().parents[2] / "docs" / "reference" / RESULTS_FILE


RANDOM_CASES = ("test_bernoulli", "test_training_dropout")
"""Cases whose expected data is numpy's random stream (xtc has its own)."""


def test_conformance_pass_count_stays_above_the_floor(
    tmp_path: Path, session_cache_env: dict[str, str]
) -> None:
    report = tmp_path / "conformance.json"
    run = subprocess.run(
        [sys.executable, "-m", "xtc.tools.conformance", "--json", str(report), "--timeout", "120"],
        capture_output=True,
        text=True,
        check=False,
        env=session_cache_env,
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
    # a random op's case passes when its few draws happen to equal numpy's
    # stream (test_bernoulli did, once in CI): its status is no sign of staleness
    unsure = set(crashed) | {r["name"] for r in results if r["name"].startswith(RANDOM_CASES)}
    fresh = {n for n in not_passed(results) if n not in unsure}
    listed = {n for n in not_passed(json.loads(COVERAGE_RESULTS.read_text())) if n not in unsure}
    assert fresh == listed, (
        f"the coverage table is stale: now failing {sorted(fresh - listed)[:8]}, "
        f"now passing {sorted(listed - fresh)[:8]}; refresh it: {REFRESH}"
    )


def test_compiled_path_passes_what_the_interpreter_passes(
    tmp_path: Path, session_cache_env: dict[str, str]
) -> None:
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
        env=session_cache_env,
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
    """`--models` on four shipped directories: two opset-6 PyTorch exports
    (upgraded on import; the PReLU one keeps its per-channel slope), an
    opset-12 model of sequences (lists at import) and one whose op (a
    training Gradient) xtc does not have."""
    report = tmp_path / "models.json"
    sample = r"^test_(PReLU_2d_multiparam|BatchNorm2d_eval|sequence_model4|gradient_of_add)$"
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
            ("simple/sequence_model4", "passed"),
            ("simple/gradient_of_add", "unsupported"),
        ]
        for path in ("interp", "native")
    }
    assert run.stdout.strip().splitlines()[-1] == "native: 3 passed, 1 failed (1 unsupported)"


def test_cuda_target_builds_checks_and_compares_with_the_cpu_path(
    tmp_path: Path, session_cache_env: dict[str, str]
) -> None:
    """`--target cuda` on two cases xtc runs and one it fails (the data of
    test_dft_inverse holds float32 FFT noise past its atol): the cuda
    column builds and checks all three, and compares with the CPU path."""
    report = tmp_path / "cuda.json"
    sample = r"^test_(relu|softmax_axis_1|dft_inverse)$"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "xtc.tools.conformance",
            "--target",
            "cuda",
            "-k",
            sample,
            "--json",
            str(report),
            "--timeout",
            "120",
            "-j",
            "2",
        ],
        capture_output=True,
        text=True,
        check=False,
        env=session_cache_env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    statuses = {(r["name"], r["path"]): r["status"] for r in json.loads(report.read_text())}
    assert statuses == {
        ("test_relu", "interp"): "passed",
        ("test_relu", "cuda"): "passed",
        ("test_softmax_axis_1", "interp"): "passed",
        ("test_softmax_axis_1", "cuda"): "passed",
        ("test_dft_inverse", "interp"): "failed",
        ("test_dft_inverse", "cuda"): "failed",
    }
    lines = run.stdout.strip().splitlines()
    accepted = "ptxas-accepted 3 (ptxas -arch=sm_90:" if shutil.which("ptxas") else "not on PATH"
    assert lines[-2].startswith("cuda: built 3 of 3, "), lines[-2]
    assert accepted in lines[-2], lines[-2]
    assert "numerically checked 3, passed 2, built only 0 (none other)" in lines[-2]
    assert lines[-1] == "cuda: built 2 of the 2 cases the CPU interpreter passes (100.0%)"


@pytest.mark.skipif(find_libdevice() is None, reason="CUDA's libdevice is not installed")
def test_cuda_target_builds_libdevice_math_and_run_time_checks(
    tmp_path: Path, session_cache_env: dict[str, str]
) -> None:
    """tanh, log and sin (libdevice math) and Gather's index checks
    (`tir.assert` in a kernel) build for CUDA and pass on the interpreter
    device."""
    report = tmp_path / "cuda.json"
    sample = r"^test_(tanh|log|sin|gather_negative_indices)$"
    command = [sys.executable, "-m", "xtc.tools.conformance", "--target", "cuda", "-k", sample,
               "--json", str(report), "--timeout", "120", "-j", "2"]  # fmt: skip
    run = subprocess.run(
        command, capture_output=True, text=True, check=False, env=session_cache_env
    )
    assert run.returncode == 0, run.stderr[-2000:]
    statuses = {(r["name"], r["path"]): r["status"] for r in json.loads(report.read_text())}
    names = ("test_tanh", "test_log", "test_sin", "test_gather_negative_indices")
    assert {statuses[(name, "cuda")] for name in names} == {"passed"}, statuses
    assert run.stdout.strip().splitlines()[-1].endswith("(100.0%)")


@dataclass
class _Case:
    """A node case written here: a one-node model and one data set."""

    name: str
    model: onnx.ModelProto
    data_sets: list[tuple[list[np.ndarray], list[np.ndarray]]]
    rtol: float = 1e-3
    atol: float = 1e-7


def _relu_case(expected: np.ndarray) -> _Case:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    data = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
    return _Case("test_relu_here", model, [([data], [expected])])


RELU_OF_DATA = np.array([[0.0, 2.0, 0.0], [4.0, 0.0, 6.0]], np.float32)


def test_cuda_case_is_checked_on_the_interpreter_device() -> None:
    assert run_cuda_case(_relu_case(RELU_OF_DATA), 30.0).status == "passed"
    wrong = run_cuda_case(_relu_case(RELU_OF_DATA + 1), 30.0)
    assert (wrong.status, wrong.path) == ("failed", "cuda")
    assert "differs: 6 of 6 values" in wrong.detail


def test_cuda_case_without_time_to_check_counts_as_built_only() -> None:
    result = run_cuda_case(_relu_case(RELU_OF_DATA + 1), 0.0)
    assert result.status == "built"
    assert result.detail == "not checked: the interpreter device ran past 0 s"


def test_cuda_summary_says_when_ptxas_is_missing(monkeypatch: MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    results = [
        CaseResult("test_a", "Relu", "interp", "passed"),
        CaseResult("test_a", "Relu", "cuda", "built"),
        CaseResult("test_b", "Add", "interp", "passed"),
        CaseResult("test_b", "Add", "cuda", "error", "CompileError: no"),
    ]
    out = io.StringIO()
    summarize_cuda(results, out)
    assert out.getvalue().splitlines() == [
        "",
        "cuda: why cases the CPU interpreter passes were not built:",
        "     1  error: CompileError: no",
        "cuda: built 1 of 2, ptxas-accepted 0 (ptxas is not on PATH: not run), numerically "
        "checked 0, passed 0, built only 1 (1 error)",
        "cuda: built 1 of the 2 cases the CPU interpreter passes (50.0%)",
    ]


def test_collected_cases_are_kept_in_the_cache_per_onnx(monkeypatch: MonkeyPatch) -> None:
    """The node cases are collected once, stored in the compile cache and
    loaded from it after; another onnx version collects again, and an entry
    that does not unpickle is collected again and replaced."""
    from xtc.runtime.compile_cache import CompileCache
    from xtc.tools import conformance

    collected: list[str] = []

    def collect() -> dict[str, object]:
        collected.append(onnx.__version__)
        return {"test_a": ("model", [(np.arange(3.0), np.ones(2, np.int64))])}

    monkeypatch.setattr(conformance, "_collect_testcases", collect)
    first = conformance._collect()
    again = conformance._collect()
    assert collected == [onnx.__version__]
    assert again.keys() == first.keys() == {"test_a"}
    np.testing.assert_array_equal(again["test_a"][1][0][0], np.arange(3.0))
    assert again["test_a"][1][0][1].dtype == np.int64

    monkeypatch.setattr(onnx, "__version__", "0.0.1")
    conformance._collect()
    assert collected == [collected[0], "0.0.1"]

    CompileCache.default().put(conformance.CASES_CACHE_KIND, conformance._cases_key(), b"junk")
    assert conformance._collect().keys() == {"test_a"}
    assert collected[2:] == ["0.0.1"]
    assert conformance._collect().keys() == {"test_a"}
    assert len(collected) == 3


def test_bfloat16_outputs_are_compared_within_two_ulps_as_onnx_runner_does() -> None:
    import ml_dtypes

    from xtc.tools.conformance import _compare

    expected = np.array([1.0, 0.5, -2.0], ml_dtypes.bfloat16)
    one_ulp = np.array([1.0078125, 0.5, -2.0], ml_dtypes.bfloat16)  # 1 + 2**-7
    assert _compare("y", one_ulp, expected, rtol=1e-3, atol=1e-7) == ""
    far = np.array([1.0625, 0.5, -2.0], ml_dtypes.bfloat16)  # eight ulps off
    assert "1 of 3 values" in _compare("y", far, expected, rtol=1e-3, atol=1e-7)
    f32 = np.array([1.0, 0.5], np.float32)
    assert _compare("y", f32 * np.float32(1.0078125), f32, rtol=1e-3, atol=1e-7) != ""


def test_string_outputs_are_compared_by_their_text() -> None:
    from xtc.tools.conformance import _compare

    expected = np.array(["abc", "中"], dtype=object)
    assert _compare("y", np.array(["abc", "中"]), expected, rtol=0, atol=0) == ""
    assert _compare("y", np.array([b"abc", "中".encode()], dtype=object), expected, 0, 0) == ""
    assert "1 of 2 strings" in _compare("y", np.array(["abc", "x"], dtype=object), expected, 0, 0)
    assert "shape [1, 2]" in _compare("y", expected.reshape(1, 2), expected, 0, 0)
    assert "expected strings" in _compare("y", np.zeros(2), expected, 0, 0)
