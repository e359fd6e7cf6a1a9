"""The numpy reference interpreter: the oracle every lowering and pass is
tested against. `run(module, inputs)` executes the module's `main` function
(or its only function) with xDSL's interpreter and xtc's op implementations,
at every level: graph and te functions return their results; a tir function
writes them into its output arguments (interp/tir.py), which `run` allocates
and returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute

from xtc.dialects.graph.base import type_str
from xtc.dialects.graph.constant import numpy_dtype


class InterpreterError(ValueError):
    """Inputs that do not fit the function, or an op with no implementation."""


class RunTimeFault(ValueError):
    """A run-time fault of the program on these inputs, as native code
    reports it (same message): an index out of range, an integer division
    by zero; a failed `tir.assert` at the te and tir levels."""


def make_interpreter(module: ModuleOp) -> Interpreter:
    """An interpreter of the module's functions: every level's ops, `func`
    calls and returns, `scf`."""
    from xdsl.interpreters.func import FuncFunctions
    from xdsl.interpreters.scf import ScfFunctions

    interpreter = make_op_interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(ScfFunctions())
    return interpreter


def make_op_interpreter(module: ModuleOp | None = None) -> Interpreter:
    """An interpreter of single ops of every level (graph, te, tir, scalar,
    gpu, plugins): what constant folding runs. Not of functions: without
    xDSL's `func` and `scf` implementations, whose import (the package
    xdsl.interpreters, every dialect's) takes 0.2 s of each compile."""
    from xtc.interp.gpu import GpuFunctions
    from xtc.interp.graph import GRAPH_FUNCTIONS
    from xtc.interp.scalar import ScalarFunctions
    from xtc.interp.te import TeFunctions
    from xtc.interp.tir import TirFunctions
    from xtc.plugin_hooks import load_op_plugins, plugin_interpreter_functions

    load_op_plugins()
    interpreter = Interpreter(module if module is not None else ModuleOp([]))
    for functions in (*GRAPH_FUNCTIONS, *plugin_interpreter_functions()):
        interpreter.register_implementations(functions())
    for functions in (ScalarFunctions, TeFunctions, TirFunctions, GpuFunctions):
        interpreter.register_implementations(functions())
    return interpreter


class _Function(Protocol):
    @property
    def sym_name(self) -> StringAttr: ...


_F = TypeVar("_F", bound=_Function)


def pick_entry(funcs: Sequence[_F], name: str | None) -> _F:
    """The function named `name`; without a name, `@main`, else the only
    function. Raises LookupError naming the functions there are."""
    if name is not None:
        chosen = [f for f in funcs if f.sym_name.data == name]
    else:
        chosen = [f for f in funcs if f.sym_name.data == "main"] or (
            list(funcs) if len(funcs) == 1 else []
        )
    if not chosen:
        names = ", ".join(f"@{f.sym_name.data}" for f in funcs) or "none"
        raise LookupError(f"no function @{name or 'main'} to run (functions: {names})")
    return chosen[0]


def entry_function(module: ModuleOp, name: str | None = None) -> FuncOp:
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    try:
        return pick_entry(funcs, name)
    except LookupError as e:
        raise InterpreterError(str(e)) from None


def run(
    module: ModuleOp,
    inputs: Sequence[Any] | Mapping[str, Any],
    function: str | None = None,
) -> list[np.ndarray]:
    """Runs the module's entry function on numpy inputs; returns its results."""
    from xtc.interp.stack_room import with_stack_room
    from xtc.interp.tir import buffer_for, output_arguments

    func = entry_function(module, function)
    outputs = output_arguments(func)
    arg_types = [t for i, t in enumerate(func.function_type.inputs.data) if i not in outputs]
    arrays = check_inputs(func, arg_types, inputs)
    interpreter = make_interpreter(module)
    if outputs:
        buffers = {i: buffer_for(func.function_type.inputs.data[i]) for i in outputs}
        given = iter(arrays)
        positions = range(len(arg_types) + len(outputs))
        args = [buffers[i] if i in buffers else next(given) for i in positions]
        with np.errstate(all="ignore"):
            with_stack_room(lambda: interpreter.call_op(func, tuple(args)))
        return [buffers[i] for i in outputs]
    results = with_stack_room(lambda: interpreter.call_op(func, tuple(arrays)))
    out_types = func.function_type.outputs.data
    return [
        np.asarray(r, dtype=numpy_dtype(cast(TensorType[Attribute], t).get_element_type()))
        for r, t in zip(results, out_types, strict=True)
    ]


def input_names(func: FuncOp) -> list[str]:
    """Each input argument's `graph.name` attribute, else `arg<i>` (output
    arguments of a tir function are left out)."""
    from xtc.interp.tir import output_arguments

    outputs = output_arguments(func)
    names: list[str] = []
    for i in range(len(func.function_type.inputs.data)):
        if i in outputs:
            continue
        attrs = func.arg_attrs.data[i].data if func.arg_attrs else {}
        name = attrs.get("graph.name")
        names.append(str(getattr(name, "data", f"arg{i}")))
    return names


def check_inputs(
    func: FuncOp, arg_types: list[Attribute], inputs: Sequence[Any] | Mapping[str, Any]
) -> list[np.ndarray]:
    names = input_names(func)
    if isinstance(inputs, Mapping):
        missing = [n for n in names if n not in inputs]
        extra = [n for n in inputs if n not in names]
        if missing or extra:
            raise InterpreterError(
                f"inputs do not match @{func.sym_name.data}: "
                + (f"missing {missing} " if missing else "")
                + (f"unexpected {extra} " if extra else "")
                + f"(expected {names})"
            )
        values = [inputs[n] for n in names]
    else:
        values = list(inputs)
        if len(values) != len(arg_types):
            raise InterpreterError(
                f"@{func.sym_name.data} takes {len(arg_types)} inputs, got {len(values)}"
            )
    arrays: list[np.ndarray] = []
    for name, value, t in zip(names, values, arg_types, strict=True):
        tt = cast(TensorType[Attribute], t)
        dtype = numpy_dtype(tt.get_element_type())
        array = np.asarray(value)
        if tuple(array.shape) != tuple(tt.get_shape()):
            raise InterpreterError(
                f"input '{name}' has shape {list(array.shape)}, expected {type_str(t)}"
            )
        if array.dtype != dtype and not np.can_cast(array.dtype, dtype, "same_kind"):
            raise InterpreterError(
                f"input '{name}' has dtype {array.dtype}, expected {type_str(t)}"
            )
        arrays.append(array.astype(dtype, copy=False))
    return arrays
