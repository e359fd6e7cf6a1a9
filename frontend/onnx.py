"""ONNX -> graph: `import_model(model, input_shapes=None)` returns one module
whose `@main` is the model.

Initializers become `graph.constant`s (blobs named after them); graph inputs
and outputs keep their ONNX names as the `graph.name` argument and result
attributes; each op carries its node's name as its location. Nodes whose
inputs are all constants are evaluated at import, so shape computations
(Shape -> Gather -> Concat -> Reshape, ...) become static.

A model older than opset 7 is upgraded first with onnx.version_converter
(a remark says so), after its second operands are reshaped where the old
broadcast rules meant something the converter does not carry over.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region, SSAValue

from xtc.dialects.graph.constant import element_type_of
from xtc.frontend.converters import (
    CONVERTERS,
    ONNX_DOMAINS,
    AbsentValue,
    Importer,
    NeedsConstantError,
    OnnxImportError,
    SequenceValue,
    StringValue,
    Value,
    convert_node,
    load_builtin_converters,
    op_key,
    op_label,
    ssa_name,
)
from xtc.frontend.structured import (
    Layout,
    fits,
    is_tensor_type,
    set_output_layouts,
    tensor_element,
    type_kind,
)

__all__ = ["OnnxImportError", "import_model", "supported_ops", "parse_input_shapes"]

MIN_OPSET = 7
UPGRADE_TARGET = MIN_OPSET
"""Models older than MIN_OPSET are upgraded to this opset on import: the
lowest that xtc converts, so that the converter changes as little as it can."""
OPSET_UPGRADED = "opset-upgraded"
"""The remark category of a model upgraded by onnx.version_converter."""


def _load_converters() -> None:
    """xtc's converters and those of the op plugins (xtc/plugins.py)."""
    from xtc.plugin_hooks import load_op_plugins

    load_builtin_converters()
    load_op_plugins()


def supported_ops() -> list[str]:
    """`Relu`, ... and the plugins' ops as `com.example.MyOp`."""
    _load_converters()
    return sorted(op_label(*key) for key in CONVERTERS)


def load_model(model: onnx.ModelProto | str | os.PathLike[str]) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    path = Path(model)
    if not path.is_file():
        raise OnnxImportError(f"cannot open '{path}': no such file")
    try:
        return onnx.load(str(path))
    except Exception as e:  # onnx raises DecodeError and others for non-ONNX files
        raise OnnxImportError(f"'{path}' is not an ONNX model ({type(e).__name__})") from e


def declared_opset(model: onnx.ModelProto) -> int:
    """The version of the ONNX operator set the model imports. A model whose
    nodes are all in other domains (ai.onnx.ml, ai.onnx.preview.training, a
    plugin's) may import none: it gets the newest, which only the converters
    that build such ops from ONNX ops use."""
    versions = [o.version for o in model.opset_import if o.domain in ONNX_DOMAINS]
    if versions:
        return versions[0]
    for index, node in enumerate(model.graph.node):
        if node.domain in ONNX_DOMAINS:
            raise OnnxImportError(
                f"{node.op_type} node '{node.name or f'{node.op_type}_{index}'}' is an ONNX op, "
                "but the model imports no version of the ONNX operator set"
            )
    return onnx.defs.onnx_opset_version()


def model_opset(model: onnx.ModelProto) -> int:
    opset = declared_opset(model)
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= newest:
        raise OnnxImportError(
            f"the model uses opset {opset}; xtc imports opsets {MIN_OPSET} to {newest}"
        )
    return opset


def upgrade_old_opset(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` itself when its opset is one xtc imports; a model older than
    MIN_OPSET is upgraded to UPGRADE_TARGET with onnx.version_converter, and
    a remark says so. Fails naming the node the converter cannot upgrade."""
    from onnx import version_converter

    from xtc.remarks import Remark, report

    opset = declared_opset(model)
    if opset >= MIN_OPSET:
        return model
    try:
        upgraded = version_converter.convert_version(_keep_old_broadcasts(model), UPGRADE_TARGET)
    except Exception as e:  # the converter raises RuntimeError and others, naming no node
        raise OnnxImportError(
            f"the model uses opset {opset}, which xtc upgrades to {UPGRADE_TARGET} with "
            f"onnx.version_converter; it failed{_first_unconvertible(model, opset)}: "
            + (str(e).strip().splitlines() or [type(e).__name__])[0]
        ) from None
    report(
        Remark(
            "applied",
            OPSET_UPGRADED,
            "onnx-import",
            f"the model's opset {opset} was upgraded to {UPGRADE_TARGET} by onnx.version_converter",
        )
    )
    return upgraded


def _keep_old_broadcasts(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of an opset-6 model whose second operands are unsqueezed where
    the old broadcast and the new one differ, and the version converter does
    not adapt it: a PRelu slope of shape [C] applied per channel (axis 1),
    not along the last axis; `broadcast=1, axis=k` aligned B at axis k, where
    the converter pads B as if k were 0."""
    from onnx import helper, shape_inference

    try:
        ranks = _value_ranks(shape_inference.infer_shapes(model))
    except Exception:  # noqa: BLE001 - without inferred shapes, the declared ones
        ranks = _value_ranks(model)
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    nodes: list[onnx.NodeProto] = []
    for node in fixed.graph.node:
        axes = _old_broadcast_axes(node, ranks)
        if axes:
            aligned = f"{node.input[1]}__aligned_{len(nodes)}"
            nodes.append(helper.make_node("Unsqueeze", [node.input[1]], [aligned], axes=axes))
            node.input[1] = aligned
        nodes.append(node)
    del fixed.graph.node[:]
    fixed.graph.node.extend(nodes)
    return fixed


def _old_broadcast_axes(node: onnx.NodeProto, ranks: Mapping[str, int]) -> list[int]:
    """The axes to unsqueeze the node's second input at, so that numpy
    broadcasting gives what opset 6 meant; [] when none need adding."""
    if node.domain not in ONNX_DOMAINS or len(node.input) != 2:
        return []
    a_rank, b_rank = ranks.get(node.input[0]), ranks.get(node.input[1])
    if a_rank is None or b_rank is None:
        return []
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "PRelu":
        axis = 1 if b_rank == 1 and a_rank > 2 else a_rank - b_rank
    elif node.op_type != "Gemm" and attrs.get("broadcast") == 1 and "axis" in attrs:
        axis = int(attrs["axis"]) % a_rank if a_rank else 0
    else:
        return []
    return list(range(b_rank, a_rank - axis))


def _value_ranks(model: onnx.ModelProto) -> dict[str, int]:
    """The rank of every value whose rank shape inference knows."""
    graph = model.graph
    ranks = {t.name: len(t.dims) for t in graph.initializer}
    for info in [*graph.input, *graph.value_info, *graph.output]:
        tensor_type = info.type.tensor_type
        if info.type.HasField("tensor_type") and tensor_type.HasField("shape"):
            ranks[info.name] = len(tensor_type.shape.dim)
    return ranks


def _first_unconvertible(model: onnx.ModelProto, opset: int) -> str:
    """` at node 'name' (Op)` for the first node that fails to upgrade alone,
    its inputs declared with the types shape inference gives them."""
    from onnx import helper, shape_inference, version_converter

    try:
        inferred = shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 - without types, inputs are declared as float
        inferred = model.graph
    declared = {
        t.name: helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
        for t in model.graph.initializer
    }
    declared.update({i.name: i for i in [*inferred.input, *inferred.value_info]})
    for index, node in enumerate(model.graph.node):
        if node.domain not in ONNX_DOMAINS:
            continue
        inputs = [
            declared.get(name) or helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
            for name in dict.fromkeys(n for n in node.input if n)
        ]
        single = helper.make_model(
            helper.make_graph([node], "node", inputs, []),
            opset_imports=[helper.make_opsetid("", opset)],
        )
        try:
            version_converter.convert_version(single, UPGRADE_TARGET)
        except Exception:  # noqa: BLE001 - this node is the one that fails
            return f" at node '{node.name or f'{node.op_type}_{index}'}' ({node.op_type})"
    return ""


def parse_input_shapes(text: str) -> dict[str, list[int]]:
    """`"data:[1,3,224,224] mask:[1,128]"` (as tvmc) -> {"data": [...], ...}."""
    import re

    item = re.compile(r"\s*,?\s*([^\s:,][^\s:]*)\s*:\s*\[([^\]]*)\]")
    shapes: dict[str, list[int]] = {}
    position = 0
    while position < len(text.rstrip()):
        match = item.match(text, position)
        if match is None:
            raise OnnxImportError(
                f"--input-shapes: cannot read '{text[position:].strip()}', "
                "expected name:[d0,d1,...]"
            )
        name, dims = match.group(1), match.group(2)
        try:
            shapes[name] = [int(d) for d in dims.split(",") if d.strip()]
        except ValueError:
            raise OnnxImportError(
                f"--input-shapes: '{name}:[{dims}]' has a dimension that is not an integer"
            ) from None
        position = match.end()
    return shapes


def _check_supported(model: onnx.ModelProto, opset: int) -> None:
    unsupported: list[str] = []
    unknown_domains: set[str] = set()
    known_domains = {domain for domain, _ in CONVERTERS}
    for index, node in enumerate(model.graph.node):
        key = op_key(node.domain, node.op_type)
        if key in CONVERTERS:
            continue
        if key[0] not in known_domains:
            unknown_domains.add(key[0])
        name = node.name or f"{node.op_type}_{index}"
        unsupported.append(f"{op_label(*key)} (node '{name}')")
    if unsupported:
        count = len(unsupported)
        raise OnnxImportError(
            f"the model (opset {opset}) uses {count} unsupported node"
            + ("s" if count > 1 else "")
            + ": "
            + ", ".join(unsupported)
            + _plugin_hint(sorted(unknown_domains))
        )
    _check_domains_imported(model)


def _plugin_hint(domains: list[str]) -> str:
    if not domains:
        return ""
    quoted = ", ".join(f"'{d}'" for d in domains)
    return (
        f"; no xtc op plugin defines domain {quoted}: install the package that "
        "does (entry point group 'xtc.ops') or call xtc.register_ops(module)"
    )


def _check_domains_imported(model: onnx.ModelProto) -> None:
    """Every custom domain a node uses is in the model's opset_import."""
    imported = {op_key(o.domain, "")[0] for o in model.opset_import}
    for index, node in enumerate(model.graph.node):
        domain = op_key(node.domain, node.op_type)[0]
        if domain and domain not in imported:
            label = op_label(domain, node.op_type)
            raise OnnxImportError(
                f"{label} node '{node.name or f'{node.op_type}_{index}'}' uses domain "
                f"'{domain}', which the model's opset_import does not declare"
            )


def _domain_versions(model: onnx.ModelProto) -> dict[str, int]:
    return {op_key(o.domain, "")[0]: o.version for o in model.opset_import}


def _element_type(onnx_type: int, what: str) -> Attribute:
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(onnx_type)
        return element_type_of(dtype)
    except Exception:
        name = onnx.TensorProto.DataType.Name(onnx_type) if onnx_type else "undefined"
        raise OnnxImportError(
            f"{what} has element type {name}, which xtc does not support"
        ) from None


def _structured_args(
    value_info: onnx.ValueInfoProto, layouts: Mapping[str, Layout]
) -> list[tuple[str, TensorType[Attribute]]]:
    """The tensor arguments of a sequence or optional input, by the layout
    it is given in (frontend/structured.py)."""
    name, kind = value_info.name, type_kind(value_info.type)
    if kind not in ("sequence", "optional"):
        raise OnnxImportError(f"input '{name}' is a {kind}, which xtc does not support")
    layout = layouts.get(name)
    if layout is None:
        what = "length" if kind == "sequence" else "presence"
        raise OnnxImportError(
            f"input '{name}' is a {kind}: xtc compiles models that take tensors "
            f"(a SpecializingModel, as `xtc conformance` runs, takes it, specialized on its {what})"
        )
    if not fits(value_info.type, layout):
        raise OnnxImportError(f"input '{name}' is a {kind}, given a {layout.kind}")
    element = _element_type(tensor_element(value_info.type), f"input '{name}'")
    if layout.kind == "tensor":
        return [(name, TensorType(element, layout.shapes[0]))]
    return [(f"{name}[{i}]", TensorType(element, s)) for i, s in enumerate(layout.shapes)]


def _bind_inputs(
    importer: Importer,
    inputs: Sequence[onnx.ValueInfoProto],
    args: Sequence[SSAValue],
    layouts: Mapping[str, Layout],
) -> None:
    """Binds each graph input's name to its value: its argument, or for a
    sequence or optional input the value its arguments make."""
    remaining = iter(args)
    for value_info in inputs:
        name = value_info.name
        layout = Layout("tensor") if is_tensor_type(value_info.type) else layouts[name]
        value: Value
        if layout.kind == "tensor":
            value = next(remaining)
            value.name_hint = ssa_name(name)
        elif layout.kind == "sequence":
            items = tuple(next(remaining) for _ in layout.shapes)
            for i, item in enumerate(items):
                item.name_hint = ssa_name(f"{name}_{i}")
            element = _element_type(tensor_element(value_info.type), f"input '{name}'")
            value = SequenceValue(items, element)
        else:
            value = AbsentValue(value_info.type)
        importer.values[name] = value


def _input_types(
    model: onnx.ModelProto,
    constant_names: set[str],
    input_shapes: Mapping[str, Sequence[int]],
    layouts: Mapping[str, Layout],
) -> list[tuple[str, TensorType[Attribute]]]:
    inputs = [i for i in model.graph.input if i.name not in constant_names]
    known = {i.name for i in inputs}
    unknown = sorted(set(input_shapes) - known)
    if unknown:
        raise OnnxImportError(
            f"--input-shapes names {unknown}, which the model does not take "
            f"(its inputs: {sorted(known)})"
        )
    symbolic: list[str] = []
    result: list[tuple[str, TensorType[Attribute]]] = []
    for value_info in inputs:
        tensor_type = value_info.type.tensor_type
        if not is_tensor_type(value_info.type):
            result += _structured_args(value_info, layouts)
            continue
        if tensor_type.elem_type == onnx.TensorProto.STRING:
            raise NeedsConstantError(
                f"input '{value_info.name}' holds strings, which xtc computes at import: "
                "its value must be given (xtc.compile and `xtc conformance` specialize on it)",
                value_info.name,
            )
        element = _element_type(tensor_type.elem_type, f"input '{value_info.name}'")
        if value_info.name in input_shapes:
            shape = [int(d) for d in input_shapes[value_info.name]]
            if any(d < 0 for d in shape):
                raise OnnxImportError(f"input '{value_info.name}': negative dimension in {shape}")
        else:
            dims = tensor_type.shape.dim if tensor_type.HasField("shape") else None
            if dims is None or any(not d.HasField("dim_value") for d in dims):
                text = (
                    "unknown rank"
                    if dims is None
                    else "["
                    + ", ".join(
                        d.dim_param or "?" if not d.HasField("dim_value") else str(d.dim_value)
                        for d in dims
                    )
                    + "]"
                )
                symbolic.append(f"{value_info.name} {text}")
                continue
            shape = [d.dim_value for d in dims]
        result.append((value_info.name, TensorType(element, shape)))
    if symbolic:
        raise OnnxImportError(
            "inputs with symbolic dimensions need static shapes, e.g. "
            "input_shapes={'name': [1, 3, 224, 224]} (CLI: --input-shapes "
            '"name:[1,3,224,224]"): ' + "; ".join(symbolic)
        )
    return result


def import_model(
    model: onnx.ModelProto | str | os.PathLike[str],
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    freeze: Mapping[str, Any] | None = None,
    layouts: Mapping[str, Layout] | None = None,
    control_regions: bool = True,
) -> ModuleOp:
    """Imports an ONNX model (a ModelProto or a path) into a graph module.

    `input_shapes` fixes symbolic input dimensions. `freeze` gives values for
    some inputs, which become constants (for inputs that carry shapes, axes or
    sizes, which xtc needs at compile time). `layouts` gives the layout of
    each sequence or optional input; such inputs and outputs are flattened
    to tensors (frontend/structured.py). Without `control_regions`, an If's
    condition and a Loop's trip count and condition must be known at import
    (for a target that compiles no graph.if nor graph.loop: cuda)."""
    from xtc.interp import make_op_interpreter

    _load_converters()
    proto = upgrade_old_opset(load_model(model))
    opset = model_opset(proto)
    graph = proto.graph
    _check_supported(proto, opset)

    initializers = {t.name: t for t in graph.initializer}
    frozen = frozen_inputs(proto, freeze or {}, set(initializers))
    initializers.update(frozen)
    layouts = layouts or {}
    inputs = _input_types(proto, set(initializers), input_shapes or {}, layouts)
    block = Block(arg_types=[t for _, t in inputs])
    importer = Importer(
        block, opset, make_op_interpreter(), _domain_versions(proto), control_regions
    )
    runtime_inputs = [i for i in graph.input if i.name not in initializers]
    _bind_inputs(importer, runtime_inputs, block.args, layouts)
    for name, tensor in initializers.items():
        try:
            array = numpy_helper.to_array(tensor)
        except Exception as e:
            raise OnnxImportError(f"initializer '{name}' cannot be read: {e}") from None
        if tensor.data_type == onnx.TensorProto.STRING:
            importer.values[name] = StringValue(array)
            continue
        _element_type(tensor.data_type, f"initializer '{name}'")
        importer.values[name] = importer.add_constant(array, name, name)

    for index, node_proto in enumerate(graph.node):
        convert_node(importer, node_proto, index)

    results: list[SSAValue] = []
    result_names: list[str] = []
    output_layouts: list[Layout] = []
    for output in graph.output:
        if output.name not in importer.values:
            raise OnnxImportError(f"graph output '{output.name}' is not produced by any node")
        value = importer.values[output.name]
        if isinstance(value, SequenceValue):
            results += value.items
            result_names += [f"{output.name}[{i}]" for i in range(len(value.items))]
            output_layouts.append(Layout("sequence", tuple(() for _ in value.items)))
        elif isinstance(value, AbsentValue):
            output_layouts.append(Layout("absent"))
        elif isinstance(value, StringValue):
            output_layouts.append(Layout.of_strings(value.array))
        else:
            results.append(value)
            result_names.append(output.name)
            output_layouts.append(Layout("tensor"))
    block.add_op(ReturnOp(*results))

    func = FuncOp(
        "main",
        ([t for _, t in inputs], [r.type for r in results]),
        Region(block),
        arg_attrs=_name_attrs([n for n, _ in inputs]),
        res_attrs=_name_attrs(result_names),
    )
    set_output_layouts(func, output_layouts)
    module = ModuleOp([func])
    _drop_unused_constants(block)
    module.verify()
    return module


def frozen_inputs(
    model: onnx.ModelProto, freeze: Mapping[str, Any], initializers: set[str]
) -> dict[str, onnx.TensorProto]:
    """The frozen inputs as initializers, checked against their declarations."""
    declared = {i.name: i for i in model.graph.input if i.name not in initializers}
    unknown = sorted(set(freeze) - set(declared))
    if unknown:
        raise OnnxImportError(f"cannot freeze {unknown}: the model's inputs are {sorted(declared)}")
    tensors: dict[str, onnx.TensorProto] = {}
    for name, value in freeze.items():
        elem_type = declared[name].type.tensor_type.elem_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
        array = np.asarray(value)
        if elem_type == onnx.TensorProto.STRING:
            array = _string_array(name, array)
        if array.dtype != dtype:
            raise OnnxImportError(
                f"frozen input '{name}' has dtype {array.dtype}, the model declares {dtype}"
            )
        tensors[name] = numpy_helper.from_array(array, name)
    return tensors


def _string_array(name: str, array: np.ndarray) -> np.ndarray:
    """A value given for a string input as str objects: numpy str arrays
    and UTF-8 bytes are taken too."""
    if array.dtype.kind not in "OUS":
        raise OnnxImportError(
            f"frozen input '{name}' has dtype {array.dtype}, the model declares strings"
        )
    strings = np.empty(array.shape, dtype=object)
    for at, item in np.ndenumerate(array):
        if isinstance(item, bytes):
            try:
                item = item.decode("utf-8")
            except UnicodeDecodeError:
                raise OnnxImportError(
                    f"frozen input '{name}' holds bytes that are not UTF-8"
                ) from None
        if not isinstance(item, str):
            raise OnnxImportError(
                f"frozen input '{name}' holds a {type(item).__name__}, where strings are declared"
            )
        strings[at] = item
    return strings


def _name_attrs(names: Sequence[str]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({"graph.name": StringAttr(n)}) for n in names])


def _drop_unused_constants(block: Block) -> None:
    from xtc.dialects.graph.constant import ConstantOp

    for op in list(block.ops)[::-1]:
        if isinstance(op, ConstantOp) and not op.output.uses:
            op.detach()
            op.erase()


def to_onnx_inputs(module: ModuleOp, inputs: Mapping[str, Any]) -> list[np.ndarray]:
    """The inputs in `@main`'s argument order, by ONNX name."""
    from xtc.interp import entry_function, input_names

    names = input_names(entry_function(module))
    return [np.asarray(inputs[n]) for n in names]
