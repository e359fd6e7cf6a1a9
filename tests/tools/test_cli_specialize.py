"""`xtc compile` and `xtc run` of a model whose shapes depend on input
values: compile asks for the values (--specialize), the artifact runs those
and refuses others with one line."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import xtc
from xtc.runtime.specialized_model import SpecializedModel
from xtc.testing.onnx_models import reshape_relu_model
from xtc.tools.cli import main, parse_specialization

DATA = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)


def xtc_cli(*argv: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Runs `xtc argv...` in this process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as stop:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return int(stop.value.code or 0), out, err


@pytest.fixture(scope="module")
def onnx_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("specialize") / "reshape.onnx"
    onnx.save(reshape_relu_model(), path)
    return path


def test_compile_without_values_says_which_to_give(
    onnx_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = xtc_cli("compile", onnx_file, "-o", tmp_path / "m.tar", capsys=capsys)
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("xtc: error: ")
    assert "depend on the values of input shape" in err
    assert "--specialize 'shape=[...]'" in err
    assert not (tmp_path / "m.tar").exists()


def test_compile_and_run_the_values_given(
    onnx_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tar = tmp_path / "m.tar"
    code, _, err = xtc_cli(
        "compile", onnx_file, "-o", tar, "--specialize", "shape=[3,4]",
        "--specialize", "shape=[4, 3]", capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "2 specializations on shape: shape=[3, 4]; shape=[4, 3]" in err
    loaded = xtc.load(tar)
    assert isinstance(loaded, SpecializedModel)
    assert [v["shape"].tolist() for v in loaded.held_values()] == [[3, 4], [4, 3]]

    held, unheld = tmp_path / "held.npz", tmp_path / "unheld.npz"
    np.savez(held, data=DATA, shape=np.array([4, 3], np.int64))
    np.savez(unheld, data=DATA, shape=np.array([6, 2], np.int64))
    code, _, err = xtc_cli(
        "run", tar, "--inputs", held, "--output", tmp_path / "o.npz", capsys=capsys
    )
    assert code == 0, err
    with np.load(tmp_path / "o.npz") as outputs:
        np.testing.assert_array_equal(outputs["out"], np.maximum(DATA.reshape(4, 3), 0))

    code, out, err = xtc_cli("run", tar, capsys=capsys)  # shape: the first held value
    assert code == 0, err
    assert out.startswith("out: float32[3,4]")

    code, _, err = xtc_cli("run", tar, "--inputs", unheld, capsys=capsys)
    assert code == 1
    assert err.count("\n") == 1
    assert "no specialization for shape=[6, 2]: it accepts shape=[3, 4]; shape=[4, 3]" in err


def test_bad_values_are_refused_in_one_line(
    onnx_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for values, message in (
        ("data=[1]", "input 'data' does not determine shapes"),
        ("shape=[3", "the value of shape is not a number or a list"),
        ("nope=[1]", "'nope' is not an input of the model"),
    ):
        code, _, err = xtc_cli(
            "compile", onnx_file, "-o", tmp_path / "m.tar", "--specialize", values, capsys=capsys
        )
        assert code == 1 and err.count("\n") == 1 and message in err, err


def test_specialize_on_a_model_without_shape_inputs_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    onnx.save(helper.make_model(graph), tmp_path / "relu.onnx")
    code, _, err = xtc_cli(
        "compile", tmp_path / "relu.onnx", "-o", tmp_path / "r.tar", "--specialize", "x=[1]",
        capsys=capsys,
    )  # fmt: skip
    assert code == 1 and "has no input that determines shapes" in err


def test_parse_specialization() -> None:
    assert parse_specialization("shape=[3, 4] axes=[0]") == {"shape": [3, 4], "axes": [0]}
    assert parse_specialization("k=5") == {"k": 5}


def test_compile_for_cuda_specializes_too(
    onnx_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xtc.runtime.artifact import load_artifact
    from xtc.runtime.cuda_model import CudaModel

    tar = tmp_path / "m.tar"
    code, _, err = xtc_cli(
        "compile", onnx_file, "--target", "cuda", "-o", tar, "--specialize", "shape=[3,4]",
        "--specialize", "shape=[4, 3]", capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "2 specializations on shape: shape=[3, 4]; shape=[4, 3]" in err
    loaded = load_artifact(tar, device="interp")
    assert isinstance(loaded, SpecializedModel)
    assert all(isinstance(s.model, CudaModel) for s in loaded.specializations)
    assert loaded.manifest["target"] == {"name": "cuda", "arch": "sm_80"}
    (out,) = loaded.run({"data": DATA, "shape": np.array([4, 3], np.int64)})
    np.testing.assert_array_equal(out, np.maximum(DATA.reshape(4, 3), 0))
    code, _, err = xtc_cli(
        "compile", onnx_file, "--target", "cuda", "-o", tmp_path / "m.ptx",
        "--specialize", "shape=[3,4]", capsys=capsys,
    )  # fmt: skip
    assert code == 1 and err.count("\n") == 1 and "not PTX" in err
