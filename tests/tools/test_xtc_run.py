"""`xtc-run`: runs a module's function at every level (graph, te, tir by the
interpreter or natively, llvm natively), with inputs from a .npz or filled,
prints the results in a fixed text and saves them; every refusal and fault
is one line and exit 1. Also `run_native(function=...)`."""

import io
from pathlib import Path

import numpy as np
import pytest

from xtc import interp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import module_to_text, parse_module
from xtc.tools.xtc_run import filled, format_values, main

GRAPH = """
func.func @main(%x: tensor<2x3xf32> {graph.name = "x"}) -> (tensor<2x3xf32> {graph.name = "y"}) {
  %w = graph.constant dense<[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]> : tensor<2x3xf32>
  %s = graph.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = graph.relu %s : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""

# A kernel whose output argument comes first, and a private helper.
TIR = """
func.func @main(%c: memref<2x4xf32> {graph.output = 0 : i64},
                %a: memref<2x3xf32> {graph.name = "a"}, %b: memref<3x4xf32> {graph.name = "b"}) {
  tir.for %i = 0 to 2 step 1 {name = "i0", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "i1", kind = "serial"} {
      %acc = memref.alloca() : memref<f32>
      %zero = arith.constant 0.000000e+00 : f32
      memref.store %zero, %acc[] : memref<f32>
      tir.for %k = 0 to 3 step 1 {name = "r0", kind = "serial"} {
        %x = memref.load %a[%i, %k] : memref<2x3xf32>
        %y = memref.load %b[%k, %j] : memref<3x4xf32>
        %m = arith.mulf %x, %y : f32
        %s0 = memref.load %acc[] : memref<f32>
        %s1 = arith.addf %s0, %m : f32
        memref.store %s1, %acc[] : memref<f32>
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i, %j] : memref<2x4xf32>
    }
  }
  func.return
}

func.func private @negate(%x: memref<3xi32>, %y: memref<3xi32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 3 step 1 {name = "i0", kind = "serial"} {
    %v = memref.load %x[%i] : memref<3xi32>
    %zero = arith.constant 0 : i32
    %n = arith.subi %zero, %v : i32
    memref.store %n, %y[%i] : memref<3xi32>
  }
  func.return
}
"""

CHECKED = """
func.func @main(%data: memref<5xf32> {graph.name = "data"},
                %idx: memref<2xi64> {graph.name = "idx"},
                %out: memref<2xf32> {graph.output = 0 : i64}) {
  tir.for %i = 0 to 2 step 1 {name = "i", kind = "serial"} {
    %v = memref.load %idx[%i] : memref<2xi64>
    %hi = arith.constant 5 : i64
    %ok = arith.cmpi ult, %v, %hi : i64
    tir.assert %ok, "index {} is out of range", %v : i64
    %at = arith.index_cast %v : i64 to index
    %x = memref.load %data[%at] : memref<5xf32>
    memref.store %x, %out[%i] : memref<2xf32>
  }
  func.return
}
"""

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.arange(12, dtype=np.float32).reshape(3, 4) / 4


def xtc_run(*argv: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Runs `xtc-run argv...` in this process: (exit status, stdout, stderr)."""
    try:
        main([str(a) for a in argv])
        status = 0
    except SystemExit as stop:
        status = int(stop.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def npz(tmp_path: Path, **arrays: np.ndarray) -> Path:
    path = tmp_path / "inputs.npz"
    np.savez(path, **arrays)
    return path


def assert_one_error_line(status: int, err: str, message: str) -> None:
    assert status == 1
    assert err.startswith("xtc-run: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---------------------------------------------------------------- printing


def test_a_graph_module_runs_in_the_interpreter_and_prints_its_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = xtc_run(write(tmp_path, "g.mlir", GRAPH), "--fill", "ones", capsys=capsys)
    assert (status, err) == (0, "")
    assert out == "result 0: tensor<2x3xf32>\n[[2, 0, 4],\n [0, 6, 0]]\n"


def test_values_print_the_same_whatever_numpy_print_options() -> None:
    values = np.array([[1.5, -0.25], [1e-7, 123456789.0]], np.float32)
    with np.printoptions(precision=1, linewidth=8, threshold=2):
        text = format_values(values)
    assert text == "[[        1.5,       -0.25],\n [      1e-07, 1.23457e+08]]"
    assert format_values(values, precision=3) == "[[     1.5,    -0.25],\n [   1e-07, 1.23e+08]]"


def test_values_of_every_rank_and_kind() -> None:
    assert format_values(np.array(2.5, np.float32)) == "2.5"
    assert format_values(np.arange(8, dtype=np.int64).reshape(2, 2, 2)) == (
        "[[[0, 1],\n  [2, 3]],\n [[4, 5],\n  [6, 7]]]"
    )
    assert format_values(np.array([True, False])) == "[ true, false]"
    assert format_values(np.array([np.nan, np.inf, -np.inf], np.float64)) == "[ nan,  inf, -inf]"
    assert format_values(np.array([2**40, -3], np.int64)) == "[1099511627776,            -3]"
    assert format_values(np.zeros((2, 0), np.float32)) == "[[],\n []]"


def test_a_result_over_the_print_limit_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "g.mlir", GRAPH)
    status, out, _ = xtc_run(path, "--fill", "ones", "--print-limit", "5", capsys=capsys)
    assert status == 0
    assert out.splitlines()[1] == (
        "<6 elements, over --print-limit 5: raise it, or save them with --output>"
    )


# ------------------------------------------------------------------ inputs


def test_inputs_come_from_the_npz_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = npz(tmp_path, x=np.array([[0.5, 1, -1], [2, -3, 4]], np.float32))
    status, out, _ = xtc_run(write(tmp_path, "g.mlir", GRAPH), "--inputs", inputs, capsys=capsys)
    assert status == 0
    assert out.splitlines()[1:] == ["[[1.5,   0,   2],", " [  0,   2,   0]]"]


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"x": np.zeros((3, 2), np.float32)}, "input 'x' is 3x2xf32, expected tensor<2x3xf32>"),
        ({"x": np.zeros((2, 3), np.float64)}, "input 'x' is 2x3xf64, expected tensor<2x3xf32>"),
        ({"x": np.zeros((2, 3), "U1")}, "input 'x' is 2x3x<U1, expected tensor<2x3xf32>"),
        ({"y": np.zeros((2, 3), np.float32)}, "'y' is not an input of @main (it takes x: "),
    ],
)
def test_an_input_that_does_not_fit_is_named(
    arrays: dict[str, np.ndarray],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write(tmp_path, "g.mlir", GRAPH)
    status, _, err = xtc_run(path, "--inputs", npz(tmp_path, **arrays), capsys=capsys)
    assert_one_error_line(status, err, message)


def test_missing_inputs_without_fill_list_what_the_function_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = xtc_run(write(tmp_path, "t.mlir", TIR), capsys=capsys)
    assert_one_error_line(
        status,
        err,
        "@main takes a: memref<2x3xf32>, b: memref<3x4xf32>; missing a, b: give them with "
        "--inputs FILE.npz (keys are these names) or --fill random|zeros|ones",
    )


def test_fill_fills_only_what_the_npz_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "t.mlir", TIR)
    inputs = npz(tmp_path, a=A)
    status, _, _ = xtc_run(
        path, "--inputs", inputs, "--fill", "ones", "--output", tmp_path / "o.npz", capsys=capsys
    )
    assert status == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["result0"], A @ np.ones((3, 4)))


def test_random_fill_is_deterministic_per_seed_and_in_range_per_dtype() -> None:
    def draw(dtype: str, seed: int) -> np.ndarray:
        return filled((1000,), np.dtype(dtype), "random", np.random.default_rng(seed))

    floats = draw("float32", 3)
    assert floats.dtype == np.float32 and -1 <= floats.min() and floats.max() < 1
    np.testing.assert_array_equal(floats, draw("float32", 3))
    assert not np.array_equal(floats, draw("float32", 4))
    ints, unsigned, flags = draw("int8", 0), draw("uint16", 0), draw("bool", 0)
    assert ints.dtype == np.int8 and set(ints.tolist()) == set(range(-4, 5))
    assert unsigned.dtype == np.uint16 and set(unsigned.tolist()) == set(range(9))
    assert flags.dtype == np.bool_ and set(flags.tolist()) == {True, False}


def test_the_seed_changes_the_random_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "g.mlir", GRAPH)
    outs = [xtc_run(path, "--fill", "random", "--seed", s, capsys=capsys)[1] for s in "112"]
    assert outs[0] == outs[1] != outs[2]


# --------------------------------------------------------------- executing


@pytest.mark.parametrize("native", [False, True])
def test_a_tir_nest_runs_the_same_interpreted_and_native_and_saves_its_results(
    native: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "t.mlir", TIR)
    flags = ["--native"] if native else []
    out_npz = tmp_path / "out.npz"
    status, out, _ = xtc_run(
        path, "--inputs", npz(tmp_path, a=A, b=B), "--output", out_npz, *flags, capsys=capsys
    )
    assert (status, out) == (0, "")  # --output alone prints nothing
    with np.load(out_npz) as saved:
        assert saved.files == ["result0"]
        np.testing.assert_allclose(saved["result0"], A @ B, rtol=1e-6)
    status, out, _ = xtc_run(
        path, "--inputs", tmp_path / "inputs.npz", "--output", out_npz, "--print-result", *flags,
        capsys=capsys,
    )  # fmt: skip
    assert out.startswith("result 0: memref<2x4xf32>\n[[   5, 5.75,  6.5, 7.25],\n")


@pytest.mark.parametrize("native", [False, True])
def test_entry_runs_a_private_function(
    native: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "t.mlir", TIR)
    flags = ["--native"] if native else []
    status, out, _ = xtc_run(path, "--entry", "negate", "--fill", "ones", *flags, capsys=capsys)
    assert status == 0
    assert out == "result 0: memref<3xi32>\n[-1, -1, -1]\n"


def test_a_te_module_runs_natively_after_convert_te_to_tir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    te = module_to_text(apply_pipeline(parse_module(GRAPH), "convert-graph-to-te"))
    path = write(tmp_path, "te.mlir", te)
    interpreted = xtc_run(path, "--fill", "random", "--seed", "5", capsys=capsys)
    native = xtc_run(path, "--fill", "random", "--seed", "5", "--native", capsys=capsys)
    assert interpreted[0] == native[0] == 0
    assert interpreted[1] == native[1] and interpreted[1].startswith("result 0: tensor<2x3xf32>")


def test_a_graph_module_compiles_natively_like_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "g.mlir", GRAPH)
    interpreted = xtc_run(path, "--fill", "random", capsys=capsys)
    native = xtc_run(path, "--fill", "random", "--native", capsys=capsys)
    assert interpreted == native and interpreted[0] == 0


def test_a_module_reads_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(GRAPH))
    status, out, _ = xtc_run("-", "--fill", "zeros", capsys=capsys)
    assert status == 0 and out.startswith("result 0: tensor<2x3xf32>\n[[1, 0, 3],")


# -------------------------------------------------------------- llvm level


def lowered(text: str) -> str:
    return module_to_text(apply_pipeline(parse_module(text), "convert-tir-to-llvm"))


def test_an_llvm_module_runs_natively_with_its_arg_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "l.mlir", lowered(TIR))
    inputs = npz(tmp_path, a=A, b=B)
    types = "2x4xf32,memref<2x3xf32>,3x4xf32"
    status, out, _ = xtc_run(path, "--arg-types", types, "--inputs", inputs, capsys=capsys)
    assert status == 0
    assert out.splitlines()[:2] == ["result 0: memref<2x4xf32>", "[[   5, 5.75,  6.5, 7.25],"]


@pytest.mark.parametrize(
    "types, message",
    [
        (None, "@main is an llvm-level function of pointers (arg0 (32 bytes, output 0), a (24 "),
        ("2x4xf32,2x3xf32", "--arg-types gives 2 types, @main takes 3 pointers"),
        ("2x4xf32,2x3xf32,3x4", "--arg-types: '3x4' is not a type like 2x3xf32"),
        ("2x4xf32,2x3xf32,3x3xf32", "--arg-types: 'b' is 48 bytes, memref<3x3xf32> holds 36"),
    ],
)
def test_llvm_arg_types_are_required_and_checked(
    types: str | None, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "l.mlir", lowered(TIR))
    flags = ["--arg-types", types] if types else []
    status, _, err = xtc_run(path, "--fill", "ones", *flags, capsys=capsys)
    assert_one_error_line(status, err, message)


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("native", [False, True])
def test_a_run_time_fault_is_one_line(
    native: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = npz(tmp_path, data=np.arange(5, dtype=np.float32), idx=np.array([1, 7], np.int64))
    flags = ["--native"] if native else []
    path = write(tmp_path, "c.mlir", CHECKED)
    status, out, err = xtc_run(path, "--inputs", inputs, *flags, capsys=capsys)
    assert_one_error_line(status, err, "xtc-run: error: index 7 is out of range")
    assert out == ""


@pytest.mark.parametrize(
    "text, argv, message",
    [
        (GRAPH, ["--entry", "nope"], "no function @nope to run (functions: @main)"),
        ("func.func @main(\n", [], "f.mlir:2:1: Expected argument or type"),
        (
            "func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {\n"
            "  func.return %x : tensor<2xf32>\n}\n",
            [],
            "f.mlir:2:3: ",
        ),
        (
            GRAPH,
            ["--arg-types", "2xf32"],
            "--arg-types is for llvm-level functions; @main is graph",
        ),
        (GRAPH, ["--inputs", "{dir}/missing.npz"], "cannot open '{dir}/missing.npz': no such file"),
        (GRAPH, ["--inputs", "{dir}/f.mlir"], "f.mlir: not a numpy .npz file of arrays"),
        (GRAPH, ["--fill", "ones", "--output", "{dir}/no/o.npz"], "{dir}/no/o.npz: No such file"),
        (
            "func.func @main(%x: i32) -> i32 {\n  func.return %x : i32\n}\n",
            [],
            "@main: 'arg0' is i32; xtc-run passes only tensors and memrefs",
        ),
    ],
)
def test_refusals_are_one_line_and_exit_1(
    text: str, argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "f.mlir", text)
    args = [a.format(dir=tmp_path) for a in argv]
    status, _, err = xtc_run(path, *args, capsys=capsys)
    assert_one_error_line(status, err, message.format(dir=tmp_path))


def test_a_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = xtc_run(tmp_path / "none.mlir", capsys=capsys)
    assert_one_error_line(status, err, f"cannot open '{tmp_path / 'none.mlir'}': no such file")


@pytest.mark.parametrize("command", [["compile"], ["run"], ["tune"]])
def test_xtc_points_textual_ir_to_xtc_run(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xtc.tools.cli import main as xtc_main

    path = write(tmp_path, "g.mlir", GRAPH)
    with pytest.raises(SystemExit) as stop:
        xtc_main([*command, str(path)])
    err = capsys.readouterr().err
    assert stop.value.code == 1
    assert "is textual IR, not an ONNX model" in err or "is textual IR, not a model.tar" in err
    assert f"run it with xtc-run {path}, transform it with xtc-opt {path} -p PASSES" in err


# -------------------------------------------------------------- run_native


def test_run_native_calls_the_function_it_is_given() -> None:
    module = parse_module(TIR)
    x = np.array([1, -2, 3], np.int32)
    (got,) = run_native(module, [x], function="negate")
    np.testing.assert_array_equal(got, -x)
    (want,) = interp.run(module, [x], function="negate")
    np.testing.assert_array_equal(got, want)
    (product,) = run_native(module, [A, B])  # default: @main, its output argument first
    np.testing.assert_allclose(product, A @ B, rtol=1e-6)
    with pytest.raises(interp.InterpreterError, match="no function @nope"):
        run_native(module, [x], function="nope")
    with pytest.raises(ValueError, match="@main takes 2 inputs, got 1"):
        run_native(module, [A])
