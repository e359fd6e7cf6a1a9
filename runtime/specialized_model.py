"""A compiled model specialized on the values of its shape-determining inputs.

An ONNX model may take shape-determining values as inputs (Reshape's
`shape`, Slice's `starts`, TopK's `k`...). xtc compiles static shapes, so
`xtc.compile` keeps those inputs as run-time inputs and compiles one native
model per distinct value (driver/specializing.py). This holds the
specializations compiled so far:

    m = xtc.compile(model)                   # a SpecializedModel
    m.run({"data": x, "shape": np.array([3, 4])})
    m.specialized_inputs                     # ["shape"]
    m.export("model.tar"); xtc.load("model.tar")

A loaded artifact holds only what was exported: running it on another value
of a specialized input is an InputError naming the input and the values the
artifact holds. The artifact is a tar archive: a top manifest.json (format
"xtc-model", `specialized_inputs`, and each specialization's values and
folder) and each specialization's own artifact files in its folder.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ml_dtypes  # noqa: F401 - names bfloat16, float8_*, int4, ... for np.dtype
import numpy as np

from xtc.runtime.archive import FORMAT, FORMAT_VERSION, MANIFEST_NAME, MEMBERS, ArtifactError
from xtc.runtime.errors import InputError
from xtc.runtime.model import BenchmarkResult, CompiledModel, TensorSpec

if TYPE_CHECKING:
    from xtc.runtime.cuda_model import CudaModel


@dataclass(frozen=True)
class Specialization:
    """One native model, built with the specialized inputs set to `values`."""

    values: dict[str, np.ndarray]
    model: CompiledModel | CudaModel

    def matches(self, inputs: Mapping[str, np.ndarray]) -> bool:
        return all(np.array_equal(v, inputs[n]) for n, v in self.values.items())

    def describe(self) -> str:
        """`shape=[3, 4] axes=[0]`."""
        return " ".join(f"{n}={v.tolist()}" for n, v in self.values.items())


class SpecializedModel:
    """The specializations of a model compiled so far (see the module doc).
    A model that cannot compile more (a loaded artifact) refuses other
    values; driver/specializing.py's subclass compiles them."""

    def __init__(
        self,
        name: str,
        input_names: Sequence[str],
        specialized_inputs: Sequence[str],
        specializations: Sequence[Specialization] = (),
        owner: Any = None,
    ) -> None:
        self.name = name
        self.input_names = list(input_names)
        """Every run-time input, in order, the specialized ones included."""
        self.specialized_inputs = list(specialized_inputs)
        """The inputs whose values select (or compile) a specialization."""
        self.specializations = list(specializations)
        self.owner = owner

    @property
    def manifest(self) -> dict[str, Any]:
        """The artifact's top manifest: which inputs are specialized, and on
        which values each specialization was built (with its folder)."""
        first = self.specializations[0].model.manifest if self.specializations else {}
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "name": self.name,
            "xtc_version": first.get("xtc_version"),
            "target": first.get("target"),
            "input_names": self.input_names,
            "specialized_inputs": self.specialized_inputs,
            "specializations": [
                {
                    "folder": _folder(i),
                    "values": {n: _to_json(v) for n, v in s.values.items()},
                    "members": list(_members_of(s.model)),
                }
                for i, s in enumerate(self.specializations)
            ],
        }

    @property
    def input_specs(self) -> list[TensorSpec]:
        """Every input, the specialized ones with the first specialization's
        values' shapes (an InputError when none is held)."""
        first = self._first()
        static = {s.name: s for s in first.model.input_specs}
        return [
            static[n]
            if n in static
            else TensorSpec(n, first.values[n].shape, first.values[n].dtype)
            for n in self.input_names
        ]

    def held_values(self) -> list[dict[str, np.ndarray]]:
        """The specialized inputs' values of each specialization held."""
        return [dict(s.values) for s in self.specializations]

    def specialize(self, inputs: Mapping[str, Any]) -> CompiledModel | CudaModel:
        """The native model for these values of the specialized inputs
        (the others may be left out)."""
        values = {n: np.asarray(v) for n, v in inputs.items()}
        missing = [n for n in self.specialized_inputs if n not in values]
        if missing:
            raise InputError(
                f"missing input {missing[0]!r}: it selects the specialization "
                f"(the model takes {', '.join(self.input_names)})"
            )
        for specialization in self.specializations:
            if specialization.matches(values):
                return specialization.model
        return self._compile(values)

    def select(self, inputs: Any) -> tuple[CompiledModel | CudaModel, dict[str, np.ndarray]]:
        """The native model for `inputs` (a dict by name, or a list in
        order) and the inputs it takes."""
        values = self._by_name(inputs)
        model = self.specialize(values)
        return model, {s.name: values[s.name] for s in model.input_specs}

    def run(self, inputs: Any) -> list[np.ndarray]:
        """The outputs for `inputs` (every input, the specialized ones
        included), from the specialization of their values."""
        model, rest = self.select(inputs)
        return model.run(rest)

    def benchmark(
        self, inputs: Any, repeat: int = 5, number: int = 10, warmup: int = 1
    ) -> BenchmarkResult:
        """Times the specialization of `inputs` (CompiledModel.benchmark)."""
        model, rest = self.select(inputs)
        return model.benchmark(rest, repeat, number, warmup)

    def export(self, path: str | Path) -> Path:
        """Writes the specializations compiled so far as one artifact."""
        if not self.specializations:
            raise ArtifactError(
                f"{self.name}: no specialization is compiled yet: run the model on values of "
                f"{', '.join(self.specialized_inputs)} first"
            )
        path = Path(path)
        partial = path.with_name(path.name + ".partial")
        try:
            with partial.open("wb") as f, tarfile.open(fileobj=f, mode="w") as archive:
                _add_bytes(archive, MANIFEST_NAME, json.dumps(self.manifest, indent=2).encode())
                for i, specialization in enumerate(self.specializations):
                    for member in _members_of(specialization.model):
                        source = specialization.model.directory / member
                        archive.add(source, arcname=f"{_folder(i)}/{member}", recursive=False)
            partial.replace(path)
        except OSError as e:
            partial.unlink(missing_ok=True)
            raise ArtifactError(f"cannot write {path}: {e.strerror or e}") from None
        return path

    def _compile(self, values: Mapping[str, np.ndarray]) -> CompiledModel | CudaModel:
        """A loaded artifact cannot compile: it names what it holds."""
        given = " ".join(f"{n}={values[n].tolist()}" for n in self.specialized_inputs)
        held = "; ".join(s.describe() for s in self.specializations) or "none"
        raise InputError(
            f"the model is specialized on the values of {', '.join(self.specialized_inputs)} "
            f"and holds no specialization for {given}: it accepts {held} "
            f"(compile it for these values: xtc compile MODEL.onnx --specialize '{given}')"
        )

    def _first(self) -> Specialization:
        if not self.specializations:
            raise InputError(f"{self.name}: no specialization is compiled yet")
        return self.specializations[0]

    def _by_name(self, inputs: Any) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            missing = [n for n in self.input_names if n not in inputs]
            unknown = [str(n) for n in inputs if n not in self.input_names]
            if missing or unknown:
                parts = [f"missing input {n!r}" for n in missing]
                parts += [f"{n!r} is not an input of the model" for n in unknown]
                raise InputError(
                    f"{'; '.join(parts)} (the model takes {', '.join(self.input_names)})"
                )
            return {n: np.asarray(inputs[n]) for n in self.input_names}
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        values = list(inputs)
        if len(values) != len(self.input_names):
            raise InputError(
                f"the model takes {len(self.input_names)} inputs "
                f"({', '.join(self.input_names)}), got {len(values)}"
            )
        return {n: np.asarray(v) for n, v in zip(self.input_names, values, strict=True)}


def is_specialized(manifest: Mapping[str, Any]) -> bool:
    """Whether an artifact's top manifest is a SpecializedModel's."""
    return "specializations" in manifest


def specialized_members(manifest: Mapping[str, Any]) -> list[str]:
    """The archive members a specialized artifact must hold: each
    specialization's files (its "members", CPU ones when it names none)."""
    from xtc.runtime.cuda_model import CUBIN_NAME, CUDA_MEMBERS

    known = {*MEMBERS, *CUDA_MEMBERS, CUBIN_NAME}
    members: list[str] = []
    for i, entry in enumerate(manifest["specializations"]):
        names = [str(m) for m in entry.get("members", MEMBERS)]
        strange = [m for m in names if m not in known]
        if strange:
            raise ArtifactError(f"malformed manifest: {strange[0]!r} is not an artifact file")
        members += [f"{_folder(i)}/{m}" for m in names]
    return members


def _members_of(model: CompiledModel | CudaModel) -> tuple[str, ...]:
    """The files of one specialization's artifact, by its target."""
    from xtc.runtime.cuda_model import CudaModel, cuda_members

    return cuda_members(model.manifest) if isinstance(model, CudaModel) else tuple(MEMBERS)


OpenModel = Callable[[Path, dict[str, Any]], "CompiledModel | CudaModel"]
"""open_model(directory, manifest): one artifact's files loaded (runtime/artifact.py)."""


def open_specialized(
    directory: Path, manifest: Mapping[str, Any], open_model: OpenModel, owner: Any = None
) -> SpecializedModel:
    """A SpecializedModel over `directory` (the extracted artifact), each
    specialization checked and loaded by `open_model` (runtime/artifact.py's,
    passed in: artifact.py reads this module)."""
    try:
        # the folders are those the archive was checked to hold, by index
        specializations = [
            (_folder(i), {str(n): _from_json(v) for n, v in entry["values"].items()})
            for i, entry in enumerate(manifest["specializations"])
        ]
        name = str(manifest["name"])
        input_names = [str(n) for n in manifest["input_names"]]
        specialized = [str(n) for n in manifest["specialized_inputs"]]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ArtifactError(f"malformed manifest ({type(e).__name__}: {e})") from None
    loaded: list[Specialization] = []
    for folder, values in specializations:
        sub = directory / folder
        try:
            sub_manifest = json.loads((sub / MANIFEST_NAME).read_text())
        except (OSError, ValueError) as e:
            raise ArtifactError(f"{folder}/{MANIFEST_NAME} cannot be read: {e}") from None
        loaded.append(Specialization(values, open_model(sub, sub_manifest)))
    return SpecializedModel(name, input_names, specialized, loaded, owner)


def _folder(index: int) -> str:
    return f"specialization-{index}"


def _to_json(value: np.ndarray) -> dict[str, Any]:
    if value.dtype.kind in "OUS":  # the value of a string input: str objects
        data = [s.decode("utf-8") if isinstance(s, bytes) else str(s) for s in value.ravel()]
        return {"dtype": "object", "shape": list(value.shape), "data": data}
    return {"dtype": value.dtype.name, "shape": list(value.shape), "data": value.ravel().tolist()}


def _from_json(entry: Mapping[str, Any]) -> np.ndarray:
    dtype = np.dtype(str(entry["dtype"]))
    shape = tuple(int(d) for d in entry["shape"])
    return np.array(entry["data"], dtype).reshape(shape)


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))
