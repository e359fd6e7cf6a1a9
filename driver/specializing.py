"""Models whose shapes depend on input values, run by specializing on them.

Some ONNX models take shape-determining values as ordinary inputs: Reshape's
`shape`, Slice's `starts`/`ends`, ReduceX `axes`, Tile `repeats`, TopK `k`...
xtc compiles static shapes, so the importer needs those as constants. A
`SpecializingModel` keeps them as run-time inputs: on each run it imports the
model with those inputs frozen to the values given, builds it (interpreter or
native code), and keeps the result in `specializations`, keyed by the values,
so the next run with the same values reuses it. Inputs declared with
symbolic dimensions are specialized on their shapes the same way, and
sequence and optional inputs on their layouts (a sequence's length and item
shapes, an optional's presence: frontend/structured.py); such inputs are
given as a list of arrays, or None for an optional without a value, and
such outputs come back the same way.

    m = specializing_model(model, "interp")        # or "native" (driver/onnx_backend.py)
    m.run({"data": x, "shape": np.array([2, 6])})
    m.specialized_inputs                           # ["shape"]

Which inputs are specialized is learnt from the importer: each
`NeedsConstantError` names a value, and the graph inputs it is computed from
are added to `specialized_inputs` (on the first run, or a later one whose
values take the model down another path).

`xtc.compile` of such a model is a `CompilingSpecializedModel`
(`compile_specialized`): each specialization is the model with those inputs
frozen to constants, compiled by compile_model, so through the compile
cache; it keeps the compiled models for `.export` (a
runtime/specialized_model.py SpecializedModel).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from xtc.frontend.converters import NeedsConstantError
from xtc.frontend.structured import (
    Layout,
    flatten,
    is_tensor_type,
    layout_of,
    output_layouts,
    regroup,
)
from xtc.runtime.errors import InputError
from xtc.runtime.specialized_model import Specialization, SpecializedModel

if TYPE_CHECKING:
    from xtc.runtime.cuda_model import CudaModel
    from xtc.runtime.model import CompiledModel

Runner = Callable[[list[np.ndarray]], list[np.ndarray]]
"""A built model: inputs in order (the specialized ones left out) -> outputs."""


class Builder(Protocol):
    """How a SpecializingModel builds a specialization: a Protocol, so that
    a builder of another signature is a type error where it is written, not
    a failure at the first run."""

    def __call__(self, module: ModuleOp, frozen: Mapping[str, np.ndarray], /) -> Runner:
        """`module`: the model imported with the specialized inputs frozen
        to the values `frozen`; returns it built, ready to run."""
        ...


SpecializationKey = tuple[tuple[str, str, tuple[int, ...], bytes], ...]


class SpecializingModel:
    """An ONNX model run with its shape-determining inputs specialized on
    their values (see the module doc). `build` turns an imported module into
    a runner. `input_shapes` fixes symbolic dimensions, as import_model's
    does; the inputs with symbolic dimensions it leaves are specialized on
    their shapes."""

    def __init__(
        self,
        model: onnx.ModelProto,
        build: Builder,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        control_regions: bool = True,
    ) -> None:
        self.model = model
        self.build = build
        self.input_shapes = dict(input_shapes or {})
        self.control_regions = control_regions
        """import_model's: False for a target that compiles no graph.if nor
        graph.loop, whose conditions and trip counts are then specialized on."""
        initializers = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        """The model's run-time inputs, in order, the specialized ones included."""
        self.structured_inputs = [
            i.name
            for i in model.graph.input
            if i.name in self.input_names and not is_tensor_type(i.type)
        ]
        """Sequence and optional inputs: specialized on their layouts."""
        self.symbolic_inputs = [
            i.name
            for i in model.graph.input
            if i.name in self.input_names
            and i.name not in self.input_shapes
            and i.name not in self.structured_inputs
            and not _static(i)
        ]
        """Inputs declared with symbolic dimensions: specialized on their shapes."""
        self.specialized_inputs: list[str] = []
        """Inputs that determine shapes: specialized on their values."""
        self.specializations: dict[SpecializationKey, Runner] = {}

    def run(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        """Runs on every input of the model (a list in order, or by name)."""
        values = self._by_name(inputs)
        runner = self.specializations.get(self._key(values))
        if runner is None:
            runner = self.specialize(values)
        flat: list[np.ndarray] = []
        for name in self.input_names:
            if name in self.structured_inputs:
                flat += flatten(values[name])
            elif name not in self.specialized_inputs:
                flat.append(values[name])
        return runner(flat)

    def _by_name(self, inputs: Sequence[Any] | Mapping[str, Any]) -> dict[str, Any]:
        """The inputs by name: arrays, and for a sequence or optional input
        a list of arrays, an array or None."""
        if isinstance(inputs, Mapping):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise InputError(
                    f"inputs {missing} are missing (the model takes {self.input_names})"
                )
            given = [inputs[n] for n in self.input_names]
        elif len(inputs) != len(self.input_names):
            raise InputError(
                f"{len(inputs)} inputs given; the model takes {len(self.input_names)}: "
                f"{self.input_names}"
            )
        else:
            given = list(inputs)
        return {
            n: _structured(v) if n in self.structured_inputs else np.asarray(v)
            for n, v in zip(self.input_names, given, strict=True)
        }

    def _key(self, values: Mapping[str, np.ndarray]) -> SpecializationKey:
        """The values of the specialized inputs and the shapes of the
        symbolic ones."""
        return (
            tuple(
                (n, values[n].dtype.str, values[n].shape, _value_bytes(values[n]))
                for n in self.specialized_inputs
            )
            + tuple((n, "", values[n].shape, b"") for n in self.symbolic_inputs)
            + tuple(
                (n, str(layout_of(values[n])), layout_of(values[n]).shapes, _dtypes(values[n]))
                for n in self.structured_inputs
            )
        )

    def specialize(self, values: Mapping[str, np.ndarray]) -> Runner:
        """Imports with the specialized inputs frozen to `values`, learning
        more of them from the importer, then builds and keeps the result.
        `values` needs the specialized inputs (and the symbolic ones) only;
        an InputError names one it lacks."""
        from xtc.frontend.onnx import import_model

        while True:
            lacking = [n for n in self.specialized_inputs + self.symbolic_inputs if n not in values]
            if lacking:
                raise InputError(
                    f"input {lacking[0]!r} determines shapes: give its value "
                    f"(the model is specialized on {', '.join(self.specialized_inputs)})"
                )
            freeze = {n: values[n] for n in self.specialized_inputs}
            shapes: dict[str, Sequence[int]] = {
                n: values[n].shape for n in self.symbolic_inputs if n not in freeze
            }
            shapes.update({n: s for n, s in self.input_shapes.items() if n not in freeze})
            layouts = {n: layout_of(values[n]) for n in self.structured_inputs}
            try:
                module = import_model(self.model, shapes, freeze, layouts, self.control_regions)
                break
            except NeedsConstantError as e:
                sources = [
                    n
                    for n in graph_inputs_of(self.model, e.value)
                    if n not in freeze and n not in self.structured_inputs
                ]
                if not sources:
                    raise
                self.specialized_inputs += sources
        runner = self.build(module, freeze)
        returned = output_layouts(module)
        if returned is not None:
            runner = _Regrouping(runner, returned)
        self.specializations[self._key(values)] = runner
        return runner


def _structured(value: Any) -> Any:
    """A sequence or optional input as given: None, a list of arrays, or an
    array."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [np.asarray(item) for item in value]
    return np.asarray(value)


def _value_bytes(array: np.ndarray) -> bytes:
    """An array's value for the key: its bytes, or for strings (objects,
    whose bytes are addresses) their text."""
    if array.dtype.kind == "O":
        return json.dumps([str(s) for s in array.reshape(-1)]).encode()
    return array.tobytes()


def _dtypes(value: Any) -> bytes:
    """The element types of a structured value's tensors, for the key."""
    return " ".join(a.dtype.str for a in flatten(value)).encode()


@dataclass(frozen=True)
class _Regrouping:
    """A runner whose flat results are regrouped into sequences and
    optionals (frontend/structured.py)."""

    runner: Runner
    layouts: list[Layout]

    def __call__(self, inputs: list[np.ndarray]) -> list[Any]:
        return regroup(self.runner(inputs), self.layouts)


def _static(value_info: onnx.ValueInfoProto) -> bool:
    """Whether a graph input declares every dimension as a number."""
    tensor_type = value_info.type.tensor_type
    return tensor_type.HasField("shape") and all(
        d.HasField("dim_value") for d in tensor_type.shape.dim
    )


def graph_inputs_of(model: onnx.ModelProto, value: str) -> list[str]:
    """The graph inputs (not initializers) that `value` is computed from, in
    the model's input order. `value` may be one of a subgraph's (an If
    branch, a Loop body); the outputs of a node with subgraphs are computed
    from its inputs and its subgraphs' outputs."""
    sources = _sources(model.graph)
    seen: set[str] = set()
    todo = [value]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += sources.get(name, [])
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name in seen and i.name not in initializers]


def _sources(graph: onnx.GraphProto) -> dict[str, list[str]]:
    """The values each value of `graph` and its subgraphs is computed from."""
    sources: dict[str, list[str]] = {}
    for node in graph.node:
        inputs = [n for n in node.input if n]
        for attribute in node.attribute:
            subgraphs = [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else []
            subgraphs += list(attribute.graphs)
            for subgraph in subgraphs:
                sources.update(_sources(subgraph))
                inputs += [o.name for o in subgraph.output]
        for out in node.output:
            sources[out] = inputs
    return sources


class CompileFrozen(Protocol):
    """How a CompilingSpecializedModel compiles a specialization."""

    def __call__(self, frozen: onnx.ModelProto, /) -> CompiledModel | CudaModel:
        """`frozen`: the model with the specialized inputs made initializers;
        returns it compiled with the request of the xtc.compile that made
        the CompilingSpecializedModel."""
        ...


@dataclass(frozen=True)
class _Compiled:
    """A runner that keeps the native model it runs, for export."""

    model: CompiledModel | CudaModel

    def __call__(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return self.model.run(inputs)


class CompilingSpecializedModel(SpecializedModel):
    """`xtc.compile` of a model with shape-determining inputs: a
    SpecializedModel that compiles each new value it is run on (see the
    module doc)."""

    def __init__(
        self,
        model: onnx.ModelProto,
        name: str,
        compile_frozen: CompileFrozen,
        specialized_inputs: Sequence[str],
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        control_regions: bool = True,
    ) -> None:
        self.compile_frozen = compile_frozen
        self.reason = ""
        """Why the model is specialized: the importer's message."""
        self.learner = SpecializingModel(model, self._build, input_shapes, control_regions)
        self.learner.specialized_inputs = list(specialized_inputs)
        super().__init__(name, self.learner.input_names, specialized_inputs)

    def value_of(self, name: str, value: Any) -> np.ndarray:
        """`value` as input `name` takes it: its declared dtype, and its
        declared shape when that is static and holds as many elements."""
        declared = {i.name: i for i in self.learner.model.graph.input}
        if name not in self.input_names:
            raise InputError(f"{name!r} is not an input of the model (it takes {self.input_names})")
        if name not in self.specialized_inputs:
            raise InputError(
                f"input {name!r} does not determine shapes: the model is specialized on "
                f"{', '.join(self.specialized_inputs)}"
            )
        tensor_type = declared[name].type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        try:
            array = np.asarray(value, dtype)
        except (TypeError, ValueError) as e:
            raise InputError(
                f"input {name!r}: {value!r} is not an array of {dtype} ({e})"
            ) from None
        if _static(declared[name]):
            shape = tuple(d.dim_value for d in tensor_type.shape.dim)
            if array.size == int(np.prod(shape, dtype=np.int64)):
                array = array.reshape(shape)
        return array

    def _build(self, module: ModuleOp, frozen: Mapping[str, np.ndarray]) -> Runner:
        return _Compiled(self.compile_frozen(frozen_model(self.learner.model, frozen, self.name)))

    def _compile(self, values: Mapping[str, np.ndarray]) -> CompiledModel | CudaModel:
        runner = self.learner.specialize(values)
        if isinstance(runner, _Regrouping):
            runner = runner.runner  # xtc.compile returns a sequence output flattened
        assert isinstance(runner, _Compiled)
        self.specialized_inputs = list(self.learner.specialized_inputs)
        frozen = {n: values[n] for n in self.specialized_inputs}
        self.specializations.append(Specialization(frozen, runner.model))
        return runner.model


def compile_specialized(
    model: onnx.ModelProto | str | os.PathLike[str],
    needs: NeedsConstantError,
    name: str,
    compile_frozen: CompileFrozen,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    control_regions: bool = True,
) -> CompilingSpecializedModel | None:
    """The model that compile_model returns for `model` when its import
    failed with `needs`: specialized on the graph inputs that the value
    named is computed from. None when no graph input determines it (the
    error stands). `control_regions` as import_model takes it."""
    from xtc.driver.errors import CompileError
    from xtc.frontend.onnx import load_model

    proto = load_model(model)
    sources = graph_inputs_of(proto, needs.value)
    if not sources:
        return None
    compiled = CompilingSpecializedModel(
        proto, name, compile_frozen, sources, input_shapes, control_regions
    )
    compiled.reason = str(needs)
    symbolic = compiled.learner.symbolic_inputs
    if symbolic:
        raise CompileError(
            f"input {symbolic[0]!r} has symbolic dimensions: give its shape (input_shapes, "
            f"--input-shapes) to compile a model specialized on {', '.join(sources)}"
        )
    return compiled


def frozen_model(
    model: onnx.ModelProto, frozen: Mapping[str, np.ndarray], name: str | None = None
) -> onnx.ModelProto:
    """A copy of `model` whose inputs in `frozen` are initializers of those
    values (named `name` when given)."""
    from xtc.frontend.onnx import frozen_inputs

    initializers = {t.name for t in model.graph.initializer}
    tensors = frozen_inputs(model, frozen, initializers)
    result = onnx.ModelProto()
    result.CopyFrom(model)
    kept = [i for i in result.graph.input if i.name not in tensors]
    del result.graph.input[:]
    result.graph.input.extend(kept)
    result.graph.initializer.extend(tensors.values())
    if name is not None:
        result.graph.name = name
    return result
