"""Models whose shapes depend on input values, run by specializing on them.

Some ONNX models take shape-determining values as ordinary inputs: Reshape's
`shape`, Slice's `starts`/`ends`, ReduceX `axes`, Tile `repeats`, TopK `k`...
xtc compiles static shapes, so the importer needs those as constants. A
`SpecializingModel` keeps them as run-time inputs: on each run it imports the
model with those inputs frozen to the values given, builds it (interpreter or
native code), and keeps the result in `specializations`, keyed by the values,
so the next run with the same values reuses it. Inputs declared with
symbolic dimensions are specialized on their shapes the same way.

    m = specializing_model(model, "interp")        # or "native"
    m.run({"data": x, "shape": np.array([2, 6])})
    m.specialized_inputs                           # ["shape"]

Which inputs are specialized is learnt from the importer: each
`NeedsConstantError` names a value, and the graph inputs it is computed from
are added to `specialized_inputs` (on the first run, or a later one whose
values take the model down another path).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from xtc.frontend.converters import NeedsConstantError

Runner = Callable[[list[np.ndarray]], list[np.ndarray]]
"""A built model: inputs in order (the specialized ones left out) -> outputs."""
Builder = Callable[[ModuleOp], Runner]
SpecializationKey = tuple[tuple[str, str, tuple[int, ...], bytes], ...]


class SpecializingModel:
    """An ONNX model run with its shape-determining inputs specialized on
    their values (see the module doc). `build` turns an imported module into
    a runner."""

    def __init__(self, model: onnx.ModelProto, build: Builder) -> None:
        self.model = model
        self.build = build
        initializers = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        """The model's run-time inputs, in order, the specialized ones included."""
        self.symbolic_inputs = [
            i.name for i in model.graph.input if i.name in self.input_names and not _static(i)
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
            runner = self._specialize(values)
        return runner([values[n] for n in self.input_names if n not in self.specialized_inputs])

    def _by_name(self, inputs: Sequence[Any] | Mapping[str, Any]) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise ValueError(
                    f"inputs {missing} are missing (the model takes {self.input_names})"
                )
            return {n: np.asarray(inputs[n]) for n in self.input_names}
        if len(inputs) != len(self.input_names):
            raise ValueError(
                f"{len(inputs)} inputs given; the model takes {len(self.input_names)}: "
                f"{self.input_names}"
            )
        return {n: np.asarray(v) for n, v in zip(self.input_names, inputs, strict=True)}

    def _key(self, values: Mapping[str, np.ndarray]) -> SpecializationKey:
        """The values of the specialized inputs and the shapes of the
        symbolic ones."""
        return tuple(
            (n, values[n].dtype.str, values[n].shape, values[n].tobytes())
            for n in self.specialized_inputs
        ) + tuple((n, "", values[n].shape, b"") for n in self.symbolic_inputs)

    def _specialize(self, values: Mapping[str, np.ndarray]) -> Runner:
        """Imports with the specialized inputs frozen to `values`, learning
        more of them from the importer, then builds and keeps the result."""
        from xtc.frontend.onnx import import_model

        while True:
            freeze = {n: values[n] for n in self.specialized_inputs}
            shapes = {n: values[n].shape for n in self.symbolic_inputs if n not in freeze}
            try:
                module = import_model(self.model, shapes, freeze)
                break
            except NeedsConstantError as e:
                sources = [n for n in graph_inputs_of(self.model, e.value) if n not in freeze]
                if not sources:
                    raise
                self.specialized_inputs += sources
        runner = self.build(module)
        self.specializations[self._key(values)] = runner
        return runner


def _static(value_info: onnx.ValueInfoProto) -> bool:
    """Whether a graph input declares every dimension as a number."""
    tensor_type = value_info.type.tensor_type
    return tensor_type.HasField("shape") and all(
        d.HasField("dim_value") for d in tensor_type.shape.dim
    )


def graph_inputs_of(model: onnx.ModelProto, value: str) -> list[str]:
    """The graph inputs (not initializers) that `value` is computed from, in
    the model's input order."""
    producers = {out: node for node in model.graph.node for out in node.output}
    seen: set[str] = set()
    todo = [value]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = producers.get(name)
        if node is not None:
            todo += [n for n in node.input if n]
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name in seen and i.name not in initializers]


def specializing_model(model: onnx.ModelProto, path: str = "interp") -> SpecializingModel:
    """A SpecializingModel run by the interpreter (`path` "interp") or
    compiled to native code ("native")."""
    from xtc import interp

    if path == "native":
        from xtc.driver.compiler import compile_graph

        return SpecializingModel(model, lambda module: compile_graph(module).run)
    if path != "interp":
        raise ValueError(f"path '{path}': expected 'interp' or 'native'")

    def interpret(module: ModuleOp) -> Runner:
        return lambda inputs: interp.run(module, inputs)

    return SpecializingModel(model, interpret)
