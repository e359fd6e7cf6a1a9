"""bench/ops.py, the per-operator benchmark against onnxruntime: its cases
(valid ONNX, the coverage issue 14 asks for), its command line, a quick
smoke run on three small ops, and the mismatch and failure paths."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from types import ModuleType, SimpleNamespace

import numpy as np
import onnx
import pytest

from xtc.testing.scripts import load_script

RunBench = Callable[..., CompletedProcess[str]]
"""The run_bench fixture (tests/tools/conftest.py)."""

BENCH_PATH = Path(__file__).resolve().parents[2] / "bench" / "ops.py"
SMALL_OPS = "Softmax 1x1000|ChannelShuffle g2|Concat 2 "


@pytest.fixture(scope="module")
def ops() -> ModuleType:
    """bench/ops.py imported by path (bench/ is a folder of scripts, not a package)."""
    return load_script(BENCH_PATH, "bench_ops")


def ints(node: onnx.NodeProto, name: str) -> list[int]:
    """An ints attribute of the node; [] when it has none."""
    return next((list(a.ints) for a in node.attribute if a.name == name), [])


def integer(node: onnx.NodeProto, name: str) -> int | None:
    """An int attribute of the node; None when it has none."""
    return next((int(a.i) for a in node.attribute if a.name == name), None)


def test_every_case_is_valid_onnx_with_a_static_output(ops: ModuleType) -> None:
    for case in ops.CASES:
        model = onnx.shape_inference.infer_shapes(case.build(), strict_mode=True)
        onnx.checker.check_model(model, full_check=True)
        dims = model.graph.output[0].type.tensor_type.shape.dim
        assert dims and all(d.dim_value > 0 for d in dims), case.label


def test_cases_cover_the_conv_and_pool_variants_of_the_issue(ops: ModuleType) -> None:
    convs = [case.build().graph.node[0] for case in ops.CASES if case.group == "conv"]
    assert {ints(n, "kernel_shape")[0] for n in convs} >= {1, 3, 5, 7, 11}
    assert {ints(n, "strides")[0] for n in convs} >= {1, 2, 4}
    assert {integer(n, "group") for n in convs} >= {1, 2, 3, 96, 144, 240}
    assert 2 in {ints(n, "dilations")[0] for n in convs}
    pools = [case.build().graph.node[0] for case in ops.CASES if case.group == "pool"]
    assert {n.op_type for n in pools} == {
        "MaxPool",
        "AveragePool",
        "LpPool",
        "GlobalAveragePool",
        "GlobalMaxPool",
    }
    assert any(integer(n, "ceil_mode") == 1 for n in pools)
    assert any(integer(n, "count_include_pad") == 1 for n in pools)
    assert any(ints(n, "pads") == [0, 0, 0, 0] for n in pools)
    assert any(ints(n, "pads") == [1, 1, 1, 1] for n in pools)


def test_the_issue_table_rows_are_cases(ops: ModuleType) -> None:
    labels = {(case.op, case.shape) for case in ops.CASES}
    assert {
        ("Conv 5x5 g2 p2", "96->256 27x27"),
        ("Conv 1x1 g3", "240->240 28x28"),
        ("Concat 3", "3x 256x28x28"),
        ("Softmax", "1x1000"),
        ("Conv 3x3 g2 p1", "384->384 13x13"),
        ("MaxPool 3x3 s2", "96x55x55"),
        ("DWConv 3x3 s2 p1", "240x28x28"),
        ("AvgPool 3x3 s2 p1", "240x28x28"),
        ("Conv 1x1", "512->1000 13x13"),
        ("Conv 3x3 p1", "64->64 224x224"),
        ("LRN 5", "96x55x55"),
        ("Gemm", "1x9216 * 9216x4096"),
    } <= labels


def test_conv_labels_are_spelled_from_the_parameters(ops: ModuleType) -> None:
    depthwise = ops.conv_case("x", 32, 32, 14, 3, stride=2, pad=1, groups=32)
    assert (depthwise.op, depthwise.shape) == ("DWConv 3x3 s2 p1", "32x14x14")
    dilated = ops.conv_case("x", 8, 16, 14, 3, pad=2, groups=2, dilation=2)
    assert (dilated.op, dilated.shape) == ("Conv 3x3 g2 d2 p2", "8->16 14x14")
    (node,) = dilated.build().graph.node
    assert ints(node, "dilations") == [2, 2] and integer(node, "group") == 2


def test_geomeans_per_group_and_over_all(ops: ModuleType) -> None:
    rows = [
        ops.OpRow("conv", "a", "", "", ratio=2.0),
        ops.OpRow("conv", "b", "", "", ratio=8.0),
        ops.OpRow("pool", "c", "", "", ratio=0.5),
        ops.OpRow("pool", "d", "", "", error="boom"),
    ]
    means = ops.geomeans(rows)
    assert list(means) == ["conv", "pool", "all"]
    assert means["conv"] == pytest.approx(4.0) and means["pool"] == pytest.approx(0.5)
    assert means["all"] == pytest.approx(2.0)


def test_quick_run_on_three_small_ops(tmp_path: Path, run_bench: RunBench) -> None:
    report = tmp_path / "ops.json"
    result = run_bench(
        "ops.py", "--quick", "--threads", "1", "--ops", SMALL_OPS, "--json", report, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == "threads=1 repeat=1 ops=3"
    assert lines[1].split()[:8] == [
        "group",
        "op",
        "shape",
        "compile_s",
        "xtc_ms",
        "ort_ms",
        "xtc/ort",
        "match",
    ]
    rows = lines[2:5]
    assert [row.split()[0] for row in rows] == ["norm", "tensor", "tensor"]
    for row in rows:
        assert "  ok  " in row and "ERROR" not in row, result.stdout
    assert lines[5].startswith("geomean ratio (xtc/ort): ") and lines[5].endswith("over 3 op(s)")
    assert lines[6].startswith("per group: norm ")
    data = json.loads(report.read_text())
    assert [r["op"] for r in data["rows"]] == ["Softmax", "Concat 2", "ChannelShuffle g2"]
    assert all(r["xtc_ms"] > 0 and r["ort_ms"] > 0 and r["match"] == "ok" for r in data["rows"])
    assert data["config"]["threads"] == 1 and data["geomean_ratio_vs_onnxruntime"]["all"] > 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ops", "no such op"], "matches no op"),
        (["--ops", "("], "not a regular expression"),
        (["--threads", "0"], "positive integer"),
    ],
)
def test_bad_arguments_are_usage_errors(
    ops: ModuleType, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        ops.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


class WrongAnswers:
    """Stands in for a compiled model whose every answer is far off."""

    def run(self, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
        return [np.full((1, 1000), 1e6, np.float32)]

    def benchmark(self, inputs: object, repeat: int, number: int, warmup: int) -> object:
        return SimpleNamespace(runs_ms=(1.0,) * repeat)


def test_a_mismatch_and_a_failure_show_in_their_rows_and_fail_the_run(
    ops: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def compile_or_refuse(model: onnx.ModelProto) -> tuple[object, float]:
        if model.graph.node[0].op_type == "Softmax":
            return WrongAnswers(), 0.5
        raise RuntimeError("Concat node 'x' is not supported\nmore detail")

    monkeypatch.setattr(ops, "compile_timed", compile_or_refuse)
    monkeypatch.setenv("XTC_NUM_THREADS", "1")  # main sets it; restored afterwards
    status = ops.main(["--quick", "--ops", "Softmax 1x1000|Concat 2 "])
    out = capsys.readouterr().out
    assert status == 1
    (softmax,) = [line for line in out.splitlines() if line.startswith("norm ")]
    assert "MISMATCH" in softmax and "max abs diff" in softmax
    (concat,) = [line for line in out.splitlines() if line.startswith("tensor ")]
    assert "ERROR  RuntimeError: Concat node 'x' is not supported" in concat
    assert "more detail" not in concat
    assert "geomean ratio (xtc/ort): " in out
    assert "FAILED: Softmax 1x1000; Concat 2 2x 64x55x55" in out


def test_list_prints_the_selected_ops_without_running_them(
    ops: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ops.main(["--list", "--ops", "LRN"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines] == [["norm", "LRN", "5"]] * 2


def test_best_block_medians_ignore_a_stalled_block(
    ops: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ops, "interleaved_medians", lambda *_: next(pairs))
    pairs = iter([(20.0, 0.5), (1.0, 4.0), (3.0, 0.25)])
    assert ops.best_block_medians(list, list, 3) == (1.0, 0.25)
