"""xtc as an ONNX backend (`onnx.backend.base.Backend`), so ONNX's own
backend test runner can drive it:

    import xtc.onnx_backend as backend
    outputs = backend.run_model(model, [x])

Models run on the numpy interpreter (the oracle), not on compiled code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, namedtupledict
from xdsl.dialects.builtin import ModuleOp

from xtc import interp
from xtc.frontend.onnx import import_model


class XtcBackendRep(BackendRep):
    """A model imported once, run many times."""

    def __init__(self, module: ModuleOp, output_names: Sequence[str]) -> None:
        self.module = module
        self.output_names = list(output_names)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        arrays: Sequence[Any] | Mapping[str, Any] = (
            dict(inputs) if isinstance(inputs, Mapping) else list(inputs)
        )
        outputs = interp.run(self.module, arrays)
        return namedtupledict("Outputs", self.output_names)(*outputs)


class XtcBackend(Backend):
    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> XtcBackendRep:
        if not cls.supports_device(device):
            raise ValueError(f"xtc runs on the CPU, not on '{device}'")
        module = import_model(model, kwargs.get("input_shapes"))
        return XtcBackendRep(module, [o.name for o in model.graph.output])

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
        return device.upper().startswith("CPU")


prepare = XtcBackend.prepare
run_model = XtcBackend.run_model
run_node = XtcBackend.run_node
supports_device = XtcBackend.supports_device
