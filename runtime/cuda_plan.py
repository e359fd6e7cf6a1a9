"""The launch plan of a gpu-level model (after convert-tir-to-gpu): which
device buffers it needs and which kernels it launches, in order, on which
buffers. The CUDA runtime replays it (runtime/cuda_model.py), so a model
runs with no host code compiled.

`build_plan` walks `@main`, inlining the host functions it calls. The host
code may hold only (the contract convert-tir-to-gpu keeps):

- `func.call` of a host function, `func.return`;
- `gpu.launch_func` with constant grid and block sizes and memref operands;
- `memref.alloc` / `memref.alloca` (a temporary) and `memref.dealloc`;
- `memref.get_global` of a `memref.global` (a weight: dense data, a
  dense_resource blob, or zeros);
- `memref.collapse_shape` / `memref.expand_shape` (the same bytes), and
  `memref.reinterpret_cast` / `memref.subview` whose result is contiguous
  with a static offset (the bytes from that offset on);
- `arith.constant`.

Anything else is refused with a `PlanError` naming the op. A temporary's
bytes are reused by a later temporary of the same size once it is
deallocated. The plan is plain data: `to_json` / `from_json`, the weights
one blob (`Plan.weights`, each weight at a 256-byte aligned offset)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable

from xtc.dialects.graph.constant import array_view, numpy_dtype

WEIGHT_ALIGNMENT = 256
"""Bytes: cuMemAlloc's own alignment, kept for each weight in the blob."""
PLAN_VERSION = 1


class PlanError(ValueError):
    """Host code the launch plan cannot take (one line, naming the op)."""


@dataclass(frozen=True)
class Buffer:
    """A device buffer: an `input` or `output` of the model (`index`: its
    position among them), a `weight` (its bytes at `offset` in the weights
    blob), or a `temporary`."""

    kind: str
    nbytes: int
    index: int = 0
    offset: int = 0
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "nbytes": self.nbytes,
            "index": self.index,
            "offset": self.offset,
            "name": self.name,
        }


@dataclass(frozen=True)
class Launch:
    """One kernel launch: grid and block sizes (x, y, z) and each kernel
    parameter as (buffer number, byte offset into that buffer)."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[tuple[int, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "grid": list(self.grid),
            "block": list(self.block),
            "args": [list(a) for a in self.args],
        }


@dataclass
class Plan:
    """The buffers and launches of a model, and its weights blob."""

    buffers: list[Buffer] = field(default_factory=list[Buffer])
    launches: list[Launch] = field(default_factory=list[Launch])
    weights: bytearray = field(default_factory=bytearray)

    def buffers_of(self, kind: str) -> list[int]:
        """The numbers of the buffers of `kind`, by their index."""
        found = [(b.index, i) for i, b in enumerate(self.buffers) if b.kind == kind]
        return [i for _, i in sorted(found)]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": PLAN_VERSION,
            "buffers": [b.to_json() for b in self.buffers],
            "launches": [launch.to_json() for launch in self.launches],
            "weights_bytes": len(self.weights),
        }

    @staticmethod
    def from_json(entry: Mapping[str, Any], weights: bytes) -> Plan:
        """The plan `to_json` wrote, with its weights blob; PlanError if malformed."""
        try:
            if entry["version"] != PLAN_VERSION:
                raise PlanError(f"launch plan version {entry['version']}, expected {PLAN_VERSION}")
            buffers = [
                Buffer(str(b["kind"]), int(b["nbytes"]), int(b["index"]), int(b["offset"]),
                       str(b["name"]))
                for b in entry["buffers"]
            ]  # fmt: skip
            launches = [
                Launch(
                    str(e["kernel"]),
                    _xyz(e["grid"]),
                    _xyz(e["block"]),
                    tuple((int(b), int(o)) for b, o in e["args"]),
                )
                for e in entry["launches"]
            ]
            expected = int(entry["weights_bytes"])
        except (KeyError, TypeError, ValueError) as e:
            raise PlanError(f"malformed launch plan ({type(e).__name__}: {e})") from None
        if len(weights) != expected:
            raise PlanError(f"the weights hold {len(weights)} bytes, the plan {expected}")
        return Plan(buffers, launches, bytearray(weights))


def _xyz(values: Any) -> tuple[int, int, int]:
    x, y, z = (int(v) for v in values)
    return x, y, z


def memref_bytes(t: Attribute) -> int:
    """The bytes of a static memref type's elements."""
    if not isinstance(t, MemRefType):
        raise PlanError(f"expected a memref, got {t}")
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        raise PlanError(f"{t} has a dynamic size")
    return prod(shape) * numpy_dtype(t.get_element_type()).itemsize


def _contiguous_offset(t: MemRefType[Attribute]) -> int | None:
    """The element offset of a contiguous memref type, None if strided or dynamic."""
    layout = t.layout
    if isinstance(layout, NoneAttr):
        return 0
    if not isinstance(layout, StridedLayoutAttr):
        return None
    offset, strides = t.get_offset(), t.get_strides()
    if offset is None or strides is None:
        return None
    if list(strides) != list(t.strides_for_shape(t.get_shape())):
        return None
    return offset


Place = tuple[int, int]
"""(buffer number, byte offset)."""


class _PlanBuilder:
    """Walks the host code (see the module doc)."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.plan = Plan()
        self.weights: dict[str, int] = {}
        self.free: dict[int, list[int]] = {}
        """Deallocated temporaries by size, to reuse."""

    def fail(self, op: Operation, why: str) -> PlanError:
        return PlanError(f"the host code of a CUDA model cannot hold {op.name}: {why}")

    def add(self, buffer: Buffer) -> int:
        self.plan.buffers.append(buffer)
        return len(self.plan.buffers) - 1

    def temporary(self, nbytes: int) -> int:
        reusable = self.free.get(nbytes)
        if reusable:
            return reusable.pop()
        return self.add(Buffer("temporary", nbytes))

    def weight(self, op: memref.GetGlobalOp) -> int:
        name = op.name_.string_value()
        if name in self.weights:
            return self.weights[name]
        symbol = SymbolTable.lookup_symbol(op, op.name_)
        if not isinstance(symbol, memref.GlobalOp):
            raise self.fail(op, f"no memref.global @{name}")
        nbytes = memref_bytes(symbol.type)
        blob = self.plan.weights
        blob.extend(bytes(-len(blob) % WEIGHT_ALIGNMENT))
        offset = len(blob)
        if isinstance(symbol.initial_value, UnitAttr):
            blob.extend(bytes(nbytes))
        else:
            values = np.ascontiguousarray(array_view(symbol.initial_value))
            blob.extend(values.tobytes())
            if len(blob) - offset != nbytes:
                raise self.fail(op, f"@{name} holds {len(blob) - offset} bytes, not {nbytes}")
        number = self.add(Buffer("weight", nbytes, offset=offset, name=name))
        self.weights[name] = number
        return number

    def run_main(self, main: func.FuncOp) -> None:
        places: dict[SSAValue, Place] = {}
        inputs = outputs = 0
        for i, arg in enumerate(main.args):
            attrs = main.arg_attrs.data[i].data if main.arg_attrs else {}
            name = attrs.get("graph.name")
            label = str(getattr(name, "data", f"arg{i}"))
            output = attrs.get("graph.output")
            if isinstance(output, IntegerAttr):
                buffer = Buffer("output", memref_bytes(arg.type), output.value.data, name=label)
                outputs += 1
            else:
                buffer = Buffer("input", memref_bytes(arg.type), inputs, name=label)
                inputs += 1
            places[arg] = (self.add(buffer), 0)
        self.run_function(main, places)

    def run_function(self, function: func.FuncOp, places: dict[SSAValue, Place]) -> None:
        constants: dict[SSAValue, int] = {}
        for op in function.body.block.ops:
            self.run_op(op, places, constants)

    def run_op(
        self, op: Operation, places: dict[SSAValue, Place], constants: dict[SSAValue, int]
    ) -> None:
        if isinstance(op, func.ReturnOp):
            if op.arguments:
                raise self.fail(op, "a host function returns nothing")
        elif isinstance(op, arith.ConstantOp):
            if isinstance(op.value, IntegerAttr):
                constants[op.result] = op.value.value.data
        elif isinstance(op, memref.AllocOp | memref.AllocaOp):
            if op.dynamic_sizes:
                raise self.fail(op, "a temporary of dynamic size")
            places[op.memref] = (self.temporary(memref_bytes(op.memref.type)), 0)
        elif isinstance(op, memref.DeallocOp):
            buffer, _ = places[op.memref]
            if self.plan.buffers[buffer].kind == "temporary":
                self.free.setdefault(self.plan.buffers[buffer].nbytes, []).append(buffer)
        elif isinstance(op, memref.GetGlobalOp):
            places[op.memref] = (self.weight(op), 0)
        elif isinstance(op, memref.CollapseShapeOp | memref.ExpandShapeOp):
            places[op.result] = places[op.src]
        elif isinstance(op, memref.ReinterpretCastOp | memref.SubviewOp):
            self.run_view(op, places)
        elif isinstance(op, func.CallOp):
            self.run_call(op, places)
        elif isinstance(op, gpu.LaunchFuncOp):
            self.run_launch(op, places, constants)
        else:
            raise self.fail(op, "not a launch, call, allocation, weight or view")

    def run_view(
        self, op: memref.ReinterpretCastOp | memref.SubviewOp, places: dict[SSAValue, Place]
    ) -> None:
        result_type = op.result.type
        source_type = op.source.type
        assert isinstance(result_type, MemRefType) and isinstance(source_type, MemRefType)
        offset, base = _contiguous_offset(result_type), _contiguous_offset(source_type)
        if offset is None or base is None:
            raise self.fail(op, f"a strided or dynamic view {result_type}")
        buffer, start = places[op.source]
        itemsize = numpy_dtype(result_type.get_element_type()).itemsize
        # the view's offset counts from the source's base, as the source's does
        places[op.result] = (buffer, start + (offset - base) * itemsize)

    def run_call(self, op: func.CallOp, places: dict[SSAValue, Place]) -> None:
        callee = SymbolTable.lookup_symbol(self.module, op.callee)
        if not isinstance(callee, func.FuncOp) or not callee.body.blocks:
            raise self.fail(op, f"@{op.callee.string_value()} is not a host function here")
        if op.results:
            raise self.fail(op, f"@{op.callee.string_value()} returns values")
        inner: dict[SSAValue, Place] = {
            arg: places[value] for arg, value in zip(callee.args, op.arguments, strict=True)
        }
        self.run_function(callee, inner)

    def run_launch(
        self, op: gpu.LaunchFuncOp, places: dict[SSAValue, Place], constants: dict[SSAValue, int]
    ) -> None:
        extras = (op.asyncToken, op.clusterSizeX, op.dynamicSharedMemorySize)
        if op.asyncDependencies or any(e is not None for e in extras):
            raise self.fail(op, "asynchronous, clustered or dynamic-shared-memory launches")
        sizes = [op.gridSizeX, op.gridSizeY, op.gridSizeZ, op.blockSizeX, op.blockSizeY]
        sizes.append(op.blockSizeZ)
        if any(s not in constants for s in sizes):
            raise self.fail(op, "grid and block sizes must be constants")
        values = [constants[s] for s in sizes]
        args: list[Place] = []
        for operand in op.kernelOperands:
            if operand not in places:
                raise self.fail(op, f"kernel operand of type {operand.type} is not a buffer")
            args.append(places[operand])
        kernel = op.kernel.nested_references.data[-1].data
        launch = Launch(kernel, _xyz(values[:3]), _xyz(values[3:]), tuple(args))
        self.plan.launches.append(launch)


def build_plan(module: ModuleOp) -> Plan:
    """The launch plan of a gpu-level module's `@main` (see the module doc)."""
    from xtc.interp import entry_function

    builder = _PlanBuilder(module)
    builder.run_main(entry_function(module))
    return builder.plan
