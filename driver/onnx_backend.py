"""xtc as an ONNX backend (`onnx.backend.base.Backend`), so ONNX's own
backend test runner can drive it:

    import xtc.driver.onnx_backend as backend
    outputs = backend.run_model(model, [x])                    # compiled, native
    outputs = backend.run_model(model, [x], device="INTERP")   # the numpy interpreter

Device "CPU" (the default) compiles the model with `xtc.compile` and runs
the native library; device "INTERP" imports it and runs it on the numpy
interpreter (the oracle). Both take `input_shapes` as a keyword argument
of `prepare`, as `xtc.compile` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, namedtupledict
from xdsl.dialects.builtin import ModuleOp

from xtc import interp
from xtc.driver.compiler import compile_graph, compile_model
from xtc.driver.specializing import Runner, SpecializingModel
from xtc.frontend.onnx import import_model
from xtc.runtime.model import CompiledModel
from xtc.runtime.specialized_model import SpecializedModel

DEVICES = ("CPU", "INTERP")
"""The devices a model can be prepared for: compiled for this CPU, or interpreted."""


class XtcBackendRep(BackendRep):
    """A model prepared once (compiled, or imported for the interpreter),
    run many times."""

    def __init__(
        self, runnable: CompiledModel | SpecializedModel | ModuleOp, output_names: Sequence[str]
    ) -> None:
        self.runnable = runnable
        self.output_names = list(output_names)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        arrays: Sequence[Any] | Mapping[str, Any] = (
            dict(inputs) if isinstance(inputs, Mapping) else list(inputs)
        )
        if isinstance(self.runnable, ModuleOp):
            outputs = interp.run(self.runnable, arrays)
        else:
            outputs = self.runnable.run(arrays)
        return namedtupledict("Outputs", self.output_names)(*outputs)


class XtcBackend(Backend):
    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> XtcBackendRep:
        if not cls.supports_device(device):
            raise ValueError(
                f"xtc has no device '{device}': it runs on {' or '.join(map(repr, DEVICES))}"
            )
        shapes = kwargs.get("input_shapes")
        output_names = [o.name for o in model.graph.output]
        if device.upper() == "INTERP":
            return XtcBackendRep(import_model(model, shapes), output_names)
        return XtcBackendRep(compile_model(model, input_shapes=shapes), output_names)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype[Any], tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        arrays = [np.asarray(a) for a in inputs]
        input_infos = [
            onnx.helper.make_tensor_value_info(
                name, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape
            )
            for name, a in zip(node.input, arrays, strict=False)
        ]
        output_infos = [
            onnx.helper.make_tensor_value_info(name, onnx.TensorProto.UNDEFINED, None)
            for name in node.output
        ]
        graph = onnx.helper.make_graph([node], "node", input_infos, output_infos)
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        return cls.run_model(model, arrays, device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() in DEVICES


prepare = XtcBackend.prepare
run_model = XtcBackend.run_model
run_node = XtcBackend.run_node
supports_device = XtcBackend.supports_device


def specializing_model(model: onnx.ModelProto, path: str = "interp") -> SpecializingModel:
    """A SpecializingModel run by the interpreter (`path` "interp") or
    compiled to native code ("native")."""
    if path == "native":
        return SpecializingModel(model, lambda module, frozen: compile_graph(module).run)
    if path != "interp":
        raise ValueError(f"path '{path}': expected 'interp' or 'native'")

    def interpret(module: ModuleOp, frozen: Mapping[str, np.ndarray]) -> Runner:
        return lambda inputs: interp.run(module, inputs)

    return SpecializingModel(model, interpret)
