"""`xtc compile` and `xtc run`, the command line a script relies on: the
artifact they write and read, the stage dumps, the timing and top-N tables,
the exit statuses and one-line errors."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import xtc
from xtc.tools.cli import main
from xtc.driver.compiler import pipeline
from xtc.tools.model_builders import resnet_like


def xtc_cli(*argv: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Runs `xtc argv...` in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as stop:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return int(stop.value.code or 0), out, err


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("cli")
    onnx.save(resnet_like(), directory / "resnet.onnx")
    main_args = [
        "compile",
        str(directory / "resnet.onnx"),
        "-o",
        str(directory / "resnet.tar"),
        "--dump-ir",
        "graph,te,tir,llvm,asm",
    ]
    with pytest.raises(SystemExit) as stop:
        main(main_args)
    assert stop.value.code == 0
    return directory / "resnet.tar"


def test_compile_writes_the_artifact_and_the_dumps(artifact: Path) -> None:
    model = xtc.load(artifact)
    assert model.input_specs[0].name == "data"
    dumps = {
        suffix: artifact.with_name(artifact.name + suffix).read_text()
        for suffix in (".graph.mlir", ".te.mlir", ".tir.mlir", ".ll", ".s")
    }
    assert "graph.conv2d" in dumps[".graph.mlir"]
    assert "graph.batch_norm" not in dumps[".graph.mlir"]  # folded at -O3
    assert "te.compute" in dumps[".te.mlir"]
    assert "tir.for" in dumps[".tir.mlir"] and "memref.view" in dumps[".tir.mlir"]
    assert re.search(r"define .*i32 @xtc_run\(ptr", dumps[".ll"])
    assert "xtc_run:" in dumps[".s"]


def test_print_pipeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    onnx.save(resnet_like(widths=(4, 8), image=16), tmp_path / "m.onnx")
    status, out, err = xtc_cli(
        "compile",
        tmp_path / "m.onnx",
        "-O1",
        "--print-pipeline",
        "-o",
        tmp_path / "m.tar",
        capsys=capsys,
    )
    assert status == 0
    assert out.strip() == pipeline(1)
    assert "compiled" in err and "without reuse" in err
    assert xtc.load(tmp_path / "m.tar").manifest["opt_level"] == 1


def test_compile_timing_prints_the_time_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx.save(resnet_like(widths=(4, 8), image=16), tmp_path / "m.onnx")
    status, _, err = xtc_cli(
        "compile",
        tmp_path / "m.onnx",
        "--timing",
        "--verify-each",
        "-o",
        tmp_path / "m.tar",
        capsys=capsys,
    )
    assert status == 0
    report = err[err.index("Execution time report") :]
    rows = re.findall(r"^ +\d+\.\d{4} \( *\d+\.\d%\)  (.*)$", report, re.MULTILINE)
    for name in (
        "import",
        "graph-fuse-ops",
        "tir-lower-vectorized",
        "convert-to-llvm",
        "export",
        "Total",
    ):
        assert name in rows, name
    # the kernels are scheduled and lowered in worker processes: their steps
    # are summed under the kernel objects
    assert any(r.strip().startswith("schedule-kernels (kernels, summed)") for r in rows)
    assert any(r.strip().startswith("convert-tir-to-llvm (kernels, summed)") for r in rows)
    assert "llvm" in rows and "  optimize" in rows and "  link" in rows
    # --verify-each verifies after every pass, so no stage-end verification.
    assert not any(r.startswith("verify ") for r in rows)


def test_run_with_inputs_and_outputs_files(
    artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", data=x)
    status, _, err = xtc_cli(
        "run",
        artifact,
        "--inputs",
        tmp_path / "in.npz",
        "--output",
        tmp_path / "out.npz",
        capsys=capsys,
    )
    assert status == 0, err
    model = xtc.load(artifact)
    with np.load(tmp_path / "out.npz") as out:
        assert out.files == [model.output_specs[0].name]
        np.testing.assert_array_equal(out[out.files[0]], model.run([x])[0])


def test_run_print_top_and_time(artifact: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = xtc_cli(
        "run",
        artifact,
        "--fill-mode",
        "ones",
        "--print-top",
        "3",
        "--print-time",
        "--repeat",
        "2",
        "--number",
        "1",
        capsys=capsys,
    )
    assert status == 0
    lines = out.splitlines()
    expected = xtc.load(artifact).run([np.ones((1, 3, 32, 32), np.float32)])[0].ravel()
    top = np.argsort(-expected, kind="stable")[:3]
    assert lines[0].startswith("top 3 of output")
    assert [int(line.split()[1]) for line in lines[2:5]] == list(top)
    assert [float(line.split()[2]) for line in lines[2:5]] == pytest.approx(expected[top], rel=1e-5)
    assert lines[5] == "Execution time summary:"
    assert len(lines[7].split()) == 5


def test_run_profile_prints_each_kernels_time_in_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx.save(resnet_like(widths=(4, 8), image=16), tmp_path / "small.onnx")
    status, _, err = xtc_cli(
        "compile", tmp_path / "small.onnx", "--profile", "-o", tmp_path / "small.tar", capsys=capsys
    )
    assert status == 0, err
    status, out, _ = xtc_cli(
        "run", tmp_path / "small.tar", "--profile", "--repeat", "2", "--number", "3", capsys=capsys
    )
    assert status == 0
    lines = out.splitlines()
    assert re.fullmatch(r"Profile of 6 runs, [0-9.]+ ms per run:", lines[0])
    assert lines[1].split() == ["kernel", "calls", "ms/run", "us/call", "percent"]
    kernels = xtc.load(tmp_path / "small.tar").manifest["profile"]["kernels"]
    rows = {name: values for name, *values in (line.rsplit(maxsplit=4) for line in lines[2:])}
    assert set(rows) == {*kernels, "(model function)"}
    assert sum(float(r[3]) for r in rows.values()) == pytest.approx(100.0, abs=0.1 * len(rows))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "{dir}/missing.tar"], "missing.tar: no such file"),
        (["run", "{dir}/resnet.onnx"], "not an xtc model"),
        (["run", "{artifact}", "--inputs", "{dir}/resnet.onnx"], "not a numpy .npz file"),
        (["run", "{artifact}", "--inputs", "{dir}/wrong.npz"], "'image' is not an input"),
        (["compile", "{dir}/missing.onnx"], "missing.onnx"),
        (["compile", "{artifact}"], "not an ONNX model"),
        (["compile", "{dir}/resnet.onnx", "--target", "rocm"], "unknown target 'rocm'"),
        (["compile", "{dir}/resnet.onnx", "--dump-ir", "bytecode"], "unknown IR stage bytecode"),
        (["compile", "{dir}/resnet.onnx", "-o", "{dir}/no/such/dir/m.tar"], "cannot write"),
        (["run", "{artifact}", "--profile"], "--profile: the model was compiled without profiling"),
        (["compile", "{dir}/resnet.onnx", "--target", "cuda", "--profile"], "--profile is not"),
    ],
)
def test_errors_are_one_line_and_exit_1(
    argv: list[str], message: str, artifact: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = artifact.parent
    np.savez(directory / "wrong.npz", image=np.zeros((1, 3, 32, 32), np.float32))
    args = [a.format(dir=directory, artifact=artifact) for a in argv]
    status, _, err = xtc_cli(*args, capsys=capsys)
    assert status == 1
    assert err.startswith("xtc: error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv", [["run"], ["compile", "m.onnx", "-O7"], ["run", "m.tar", "--repeat", "0"]]
)
def test_bad_command_lines_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = xtc_cli(*argv, capsys=capsys)
    assert status == 2 and "usage: xtc" in err


def test_the_installed_command_runs_end_to_end(artifact: Path) -> None:
    """The console script itself, in a subprocess: what a shell script sees."""
    command = Path(sys.executable).parent / "xtc"
    env = {**os.environ, "PATH": f"{command.parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ["xtc", "run", str(artifact), "--print-top", "5"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 7
    bad = subprocess.run(
        ["xtc", "run", str(artifact.with_name("nope.tar"))],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1 and bad.stderr.startswith("xtc: error:")


def test_run_with_an_index_out_of_range_is_one_error_line(tmp_path: Path) -> None:
    """A run-time fault in native code (an index given in the inputs file
    that is out of range) is one `xtc: error:` line naming the node and the
    index, exit 1, also when timing; good inputs still run."""
    node = onnx.helper.make_node("Gather", ["table", "indices"], ["rows"], name="pick", axis=0)
    graph = onnx.helper.make_graph(
        [node],
        "pick",
        [
            onnx.helper.make_tensor_value_info("table", onnx.TensorProto.FLOAT, [5, 3]),
            onnx.helper.make_tensor_value_info("indices", onnx.TensorProto.INT64, [4]),
        ],
        [onnx.helper.make_tensor_value_info("rows", onnx.TensorProto.FLOAT, [4, 3])],
    )
    onnx.save(onnx.helper.make_model(graph), tmp_path / "pick.onnx")
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    np.savez(tmp_path / "bad.npz", table=table, indices=np.array([0, -6, 1, 2], np.int64))
    np.savez(tmp_path / "good.npz", table=table, indices=np.array([0, -5, 1, 2], np.int64))
    command = Path(sys.executable).parent / "xtc"
    env = {**os.environ, "PATH": f"{command.parent}{os.pathsep}{os.environ['PATH']}"}

    def xtc_command(*argv: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["xtc", *map(str, argv)], env=env, capture_output=True, text=True, check=False
        )

    compiled = xtc_command("compile", tmp_path / "pick.onnx", "-o", tmp_path / "pick.tar")
    assert compiled.returncode == 0, compiled.stderr
    message = (
        "xtc: error: Gather node 'pick': index -6 is out of range [-5, 5) on axis 0 "
        "of tensor<5x3xf32>\n"
    )
    for extra in ([], ["--print-time"]):
        bad = xtc_command("run", tmp_path / "pick.tar", "--inputs", tmp_path / "bad.npz", *extra)
        assert (bad.returncode, bad.stderr, bad.stdout) == (1, message, "")
    good = xtc_command("run", tmp_path / "pick.tar", "--inputs", tmp_path / "good.npz")
    assert good.returncode == 0 and good.stderr == ""
    assert "rows: float32[4,3]: [0. 1. 2. 0. 1. 2. 3. 4.] ..." in good.stdout
