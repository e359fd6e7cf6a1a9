"""`xtc.compile` of a model whose shapes depend on input values: it keeps
them as inputs, compiles one native model per distinct value (through the
compile cache), and exports the specializations compiled so far; a loaded
artifact refuses other values, naming the input and the values it holds."""

import tarfile
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import xtc
from xtc.driver.compiler import CompileError, compile_model
from xtc.runtime.archive import ArtifactError
from xtc.runtime.model import CompiledModel
from xtc.runtime.specialized_model import SpecializedModel
from xtc.testing.onnx_models import reshape_relu_model

DATA = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)


def run_on(model: SpecializedModel, shape: list[int]) -> np.ndarray:
    (got,) = model.run({"data": DATA, "shape": np.array(shape, np.int64)})
    np.testing.assert_array_equal(got, np.maximum(DATA.reshape(shape), 0))
    return got


@pytest.fixture(scope="module")
def compiled() -> SpecializedModel:
    model = xtc.compile(reshape_relu_model())
    assert isinstance(model, SpecializedModel)
    return model


def test_compile_keeps_shape_inputs_as_inputs() -> None:
    compiled = xtc.compile(reshape_relu_model())
    assert isinstance(compiled, SpecializedModel)
    assert compiled.specialized_inputs == ["shape"]
    assert compiled.input_names == ["data", "shape"]
    assert compiled.specializations == []  # nothing compiled before a value is seen


def test_one_specialization_per_distinct_value(compiled: SpecializedModel) -> None:
    for shape in ([3, 4], [4, 3], [3, 4]):
        assert run_on(compiled, shape).shape == tuple(shape)
    assert [s.describe() for s in compiled.specializations] == ["shape=[3, 4]", "shape=[4, 3]"]
    assert compiled.manifest["specialized_inputs"] == ["shape"]
    assert [e["values"]["shape"]["data"] for e in compiled.manifest["specializations"]] == [
        [3, 4],
        [4, 3],
    ]


def test_a_specialization_compiled_before_comes_from_the_compile_cache() -> None:
    first = xtc.compile(reshape_relu_model())
    assert isinstance(first, SpecializedModel)
    run_on(first, [6, 2])
    again = xtc.compile(reshape_relu_model())
    assert isinstance(again, SpecializedModel)
    run_on(again, [6, 2])
    assert first.specializations[0].model.manifest.get("compile_cache") is None
    assert again.specializations[0].model.manifest.get("compile_cache") == "hit"


def test_the_artifact_runs_the_values_it_holds_and_refuses_others(
    compiled: SpecializedModel, tmp_path: Path
) -> None:
    run_on(compiled, [3, 4])
    run_on(compiled, [4, 3])
    compiled.export(tmp_path / "model.tar")
    loaded = xtc.load(tmp_path / "model.tar")
    assert isinstance(loaded, SpecializedModel)
    assert loaded.specialized_inputs == ["shape"]
    run_on(loaded, [4, 3])
    (got,) = loaded.run([DATA, np.array([3, 4], np.int64)])  # a list, in order
    assert got.shape == (3, 4)
    with pytest.raises(
        xtc.InputError,
        match=r"values of shape and holds no specialization for shape=\[12, 1\]: "
        r"it accepts shape=\[3, 4\]; shape=\[4, 3\]",
    ):
        loaded.run({"data": DATA, "shape": np.array([12, 1], np.int64)})


def test_wrong_inputs_are_named(compiled: SpecializedModel) -> None:
    with pytest.raises(xtc.InputError, match=r"missing input 'shape'"):
        compiled.run({"data": DATA})
    with pytest.raises(xtc.InputError, match=r"takes 2 inputs \(data, shape\), got 1"):
        compiled.run([DATA])
    with pytest.raises(xtc.InputError, match=r"input 'data' has shape \[3, 4\]"):
        compiled.run({"data": DATA.reshape(3, 4), "shape": np.array([3, 4], np.int64)})


def test_an_empty_model_is_not_exported(tmp_path: Path) -> None:
    model = xtc.compile(reshape_relu_model())
    with pytest.raises(ArtifactError, match="no specialization"):
        model.export(tmp_path / "empty.tar")
    assert not (tmp_path / "empty.tar").exists()


def test_dumping_ir_of_a_specialized_model_is_refused() -> None:
    with pytest.raises(CompileError, match="not supported for a model specialized"):
        compile_model(reshape_relu_model(), dump_stages=["graph"], dump=lambda s, t: None)


def test_a_model_without_shape_inputs_compiles_as_before() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = xtc.compile(helper.make_model(graph))
    assert type(model) is CompiledModel


def test_an_artifact_missing_a_specialization_is_refused(
    compiled: SpecializedModel, tmp_path: Path
) -> None:
    run_on(compiled, [3, 4])
    run_on(compiled, [4, 3])
    compiled.export(tmp_path / "model.tar")
    with (
        tarfile.open(tmp_path / "model.tar") as whole,
        tarfile.open(tmp_path / "cut.tar", "w") as cut,
    ):
        for member in whole.getmembers():
            if not member.name.startswith("specialization-1/"):
                cut.addfile(member, whole.extractfile(member))
    with pytest.raises(
        ArtifactError, match=r"has no specialization-1/manifest.json: it is incomplete"
    ):
        xtc.load(tmp_path / "cut.tar")
