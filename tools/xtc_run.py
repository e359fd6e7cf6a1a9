"""`xtc-run`: runs a function of a textual IR module and prints its results,
like `mlir-runner`.

    xtc-run [FILE|-] [--entry NAME] [--inputs in.npz] [--fill random|zeros|ones]
            [--seed N] [--native] [--arg-types 2x3xf32,...] [--print-result]
            [--output out.npz] [--precision N] [--print-limit N]

The entry is `@main`, else the module's only function (`--entry` names
another). How it runs depends on the level of the module:

- graph, te and tir functions run in the numpy interpreter (xtc.interp);
- with `--native`, a tir function is lowered with convert-tir-to-llvm and
  JIT-compiled, a te module is first lowered with convert-te-to-tir, and a
  graph module is compiled as `xtc compile` compiles a model (its @main);
- an llvm-level function always runs natively; its arguments are pointers,
  so `--arg-types` gives each one's shape and element type, in order.

Inputs are the function's arguments less its output arguments (those marked
`graph.output`), each named by its `graph.name` attribute, else `arg<i>`
with `i` its position in the signature. `--inputs` reads them from a .npz
file by these names; each must have the argument's shape and dtype exactly.
`--fill` gives the others: zeros, ones, or random draws from `--seed`
(default 0): floats uniform in [-1, 1), signed integers in [-4, 4], unsigned
in [0, 8], booleans.

Each result prints as a header `result <i>: <type>` and then its values,
nested in brackets like numpy, one innermost row per line, the columns right
aligned: floats as `%.<precision>g` (default 6; nan, inf, -inf), integers
exactly, booleans as true/false. The text depends on nothing but the values
(no numpy print options, no terminal width). A result over `--print-limit`
elements (default 10000) prints one line saying so instead of its values.
`--output` writes the results to a .npz file (keys result0, result1, ...) and
prints them only with `--print-result`.

Exit status 0, or 1 with one line `xtc-run: error: ...` on stderr for a bad
file, entry, input or option and for a run-time fault (2: argparse).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, cast

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute
from xdsl.utils.exceptions import ParseError

from xtc.dtypes import is_float_dtype
from xtc.tools.tool_exit import exit_unexpected, fail

FILL_MODES = ("random", "zeros", "ones")


class RunError(Exception):
    """A request xtc-run refuses: printed as one line, exit 1."""


@dataclass(frozen=True)
class Buffer:
    """An input or a result of the entry: its name and its tensor or memref type."""

    name: str
    type: Attribute

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(cast(TensorType[Attribute], self.type).get_shape())

    @property
    def dtype(self) -> np.dtype[Any]:
        from xtc.dialects.graph.constant import numpy_dtype

        return numpy_dtype(cast(TensorType[Attribute], self.type).get_element_type())

    def __str__(self) -> str:
        from xtc.dialects.graph.base import type_str

        return f"{self.name}: {type_str(self.type)}"


@dataclass(frozen=True)
class Entry:
    """The function to run, at its level, with what it takes and returns."""

    name: str
    level: str
    inputs: list[Buffer]
    results: list[Buffer]


# ----------------------------------------------------------------- reading


def read_module(path: str) -> ModuleOp:
    """Parses and verifies the IR in `path` (`-`: stdin)."""
    from xtc.driver.textual_ir import LocatingParser, make_context
    from xtc.tools.xtc_opt import LocatedError, verify_located

    name = "<stdin>" if path == "-" else path
    text = sys.stdin.read() if path == "-" else _read_text(path)
    parser = LocatingParser(make_context(), text, name)
    try:
        module = parser.parse_module()
    except ParseError as e:
        location = e.span.get_location()
        raise RunError(f"{location.file}:{location.line}:{location.col}: {e.msg}") from None
    try:
        verify_located(module, parser)
    except LocatedError as e:
        raise RunError(str(e).replace(": error: ", ": ", 1)) from None
    return module


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise RunError(f"cannot open '{path}': no such file") from None
    except OSError as e:
        raise RunError(f"cannot open '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise RunError(f"'{path}' is not UTF-8 text") from None


def find_entry(module: ModuleOp, name: str | None, arg_types: str | None) -> Entry:
    """The function to run (`name`, else @main, else the only one) and its level."""
    if any(isinstance(op, llvm.FuncOp) for op in module.ops):
        return _llvm_entry(module, name, arg_types)
    from xtc import interp

    func = interp.entry_function(module, name)
    level = _func_level(module, func)
    if arg_types is not None:
        raise RunError(f"--arg-types is for llvm-level functions; @{func.sym_name.data} is {level}")
    return Entry(func.sym_name.data, level, _func_inputs(func), _func_results(func))


def _func_level(module: ModuleOp, func: FuncOp) -> str:
    from xtc.interp.tir import output_arguments

    types = [*func.function_type.inputs.data, *func.function_type.outputs.data]
    if output_arguments(func) or any(isinstance(t, MemRefType) for t in types):
        return "tir"
    return "te" if any(op.name.startswith("te.") for op in module.walk()) else "graph"


def _func_inputs(func: FuncOp) -> list[Buffer]:
    from xtc import interp
    from xtc.interp.tir import output_arguments

    outputs = output_arguments(func)
    types = [t for i, t in enumerate(func.function_type.inputs.data) if i not in outputs]
    names = interp.input_names(func)
    return [_buffer(func.sym_name.data, n, t) for n, t in zip(names, types, strict=True)]


def _func_results(func: FuncOp) -> list[Buffer]:
    from xtc.interp.tir import output_arguments

    args = func.function_type.inputs.data
    types = [args[i] for i in output_arguments(func)] or list(func.function_type.outputs.data)
    return [_buffer(func.sym_name.data, f"result{i}", t) for i, t in enumerate(types)]


def _buffer(function: str, name: str, t: Attribute) -> Buffer:
    if not isinstance(t, TensorType | MemRefType):
        raise RunError(f"@{function}: '{name}' is {t}; xtc-run passes only tensors and memrefs")
    if any(d < 0 for d in cast(TensorType[Attribute], t).get_shape()):
        raise RunError(f"@{function}: '{name}' has a dynamic shape ({t}); xtc-run needs static")
    return Buffer(name, t)


def _llvm_entry(module: ModuleOp, name: str | None, arg_types: str | None) -> Entry:
    func = _llvm_function(module, name)
    fname = func.sym_name.data
    inputs = func.function_type.inputs.data
    if not all(isinstance(t, llvm.LLVMPointerType) for t in inputs) or not isinstance(
        func.function_type.output, llvm.LLVMVoidType
    ):
        raise RunError(f"@{fname}: xtc-run calls llvm functions of pointers that return nothing")
    args = _llvm_args(func)
    if arg_types is None:
        takes = ", ".join(_pointer_text(*arg) for arg in args) or "nothing"
        raise RunError(
            f"@{fname} is an llvm-level function of pointers ({takes}): give each one's "
            "shape and element type with --arg-types, e.g. --arg-types 2x3xf32,2x3xf32"
        )
    types = parse_arg_types(arg_types)
    if len(types) != len(args):
        raise RunError(f"--arg-types gives {len(types)} types, @{fname} takes {len(args)} pointers")
    buffers: list[Buffer] = []
    for (arg_name, needed, _), t in zip(args, types, strict=True):
        buffer = _buffer(fname, arg_name, t)
        size = int(np.prod(buffer.shape)) * buffer.dtype.itemsize
        if needed is not None and size < needed:
            raise RunError(f"--arg-types: '{arg_name}' is {needed} bytes, {t} holds {size}")
        buffers.append(buffer)
    marked = sorted((index, position) for position, (_, _, index) in enumerate(args) if index >= 0)
    if not marked:  # nothing marked: the call changes its arguments in place
        return Entry(fname, "llvm", buffers, buffers)
    out = {position for _, position in marked}
    inputs_ = [b for i, b in enumerate(buffers) if i not in out]
    results = [Buffer(f"result{i}", buffers[p].type) for i, (_, p) in enumerate(marked)]
    return Entry(fname, "llvm", inputs_, results)


def _llvm_function(module: ModuleOp, name: str | None) -> llvm.FuncOp:
    from xtc.interp import pick_entry

    defined = [op for op in module.ops if isinstance(op, llvm.FuncOp) and op.body.blocks]
    try:
        return pick_entry(defined, name)
    except LookupError as e:
        raise RunError(str(e)) from None


def _llvm_args(func: llvm.FuncOp) -> list[tuple[str, int | None, int]]:
    """Each pointer argument's name (`graph.name`, else `arg<i>`), the bytes
    it must hold (`llvm.dereferenceable`) and its result index (-1: input)."""
    count = len(func.function_type.inputs.data)
    attrs = [a.data for a in func.arg_attrs.data] if func.arg_attrs else [{}] * count
    args: list[tuple[str, int | None, int]] = []
    for position, entries in enumerate(attrs):
        name = entries.get("graph.name")
        size = entries.get("llvm.dereferenceable")
        index = entries.get("graph.output")
        args.append(
            (
                str(getattr(name, "data", f"arg{position}")),
                cast(IntegerAttr[Any], size).value.data if isinstance(size, IntegerAttr) else None,
                cast(IntegerAttr[Any], index).value.data if isinstance(index, IntegerAttr) else -1,
            )
        )
    return args


def _pointer_text(name: str, size: int | None, index: int) -> str:
    notes = ([f"{size} bytes"] if size is not None else []) + (
        [f"output {index}"] if index >= 0 else []
    )
    return f"{name} ({', '.join(notes)})" if notes else name


def parse_arg_types(text: str) -> list[Attribute]:
    """`2x3xf32,memref<4xi64>` as memref types (the prefix is optional)."""
    from xdsl.parser import Parser

    from xtc.driver.textual_ir import make_context

    types: list[Attribute] = []
    for item in (part.strip() for part in text.split(",")):
        spelled = item if "<" in item else f"memref<{item}>"
        try:
            parsed = Parser(make_context(), spelled).parse_type()
        except ParseError:
            parsed = None
        if not isinstance(parsed, MemRefType | TensorType):
            raise RunError(f"--arg-types: '{item}' is not a type like 2x3xf32")
        types.append(parsed)
    return types


# ------------------------------------------------------------------ inputs


def load_inputs(entry: Entry, npz: str | None, fill: str | None, seed: int) -> list[np.ndarray]:
    """The entry's inputs, in order: from `npz` by name, the others filled."""
    given = _read_npz(npz) if npz else {}
    names = [b.name for b in entry.inputs]
    unknown = [k for k in given if k not in names]
    if unknown:
        raise RunError(
            f"{npz}: {', '.join(map(repr, unknown))} is not an input of @{entry.name} "
            f"(it takes {_takes(entry)})"
        )
    missing = [b for b in entry.inputs if b.name not in given]
    if missing and fill is None:
        raise RunError(
            f"@{entry.name} takes {_takes(entry)}; missing {', '.join(b.name for b in missing)}: "
            "give them with --inputs FILE.npz (keys are these names) or --fill random|zeros|ones"
        )
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for buffer in entry.inputs:
        if buffer.name in given:
            arrays.append(_checked(buffer, given[buffer.name]))
        else:
            arrays.append(filled(buffer.shape, buffer.dtype, fill or "random", rng))
    return arrays


def _read_npz(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise RunError(f"cannot open '{path}': no such file") from None
    except (OSError, ValueError, EOFError, AttributeError):
        raise RunError(f"{path}: not a numpy .npz file of arrays") from None


def _takes(entry: Entry) -> str:
    return ", ".join(map(str, entry.inputs)) or "no inputs"


def _checked(buffer: Buffer, array: np.ndarray) -> np.ndarray:
    if array.shape != buffer.shape or array.dtype != buffer.dtype:
        raise RunError(
            f"input '{buffer.name}' is {_array_type(array)}, expected {str(buffer).split(': ')[1]}"
        )
    return array


def _array_type(array: np.ndarray) -> str:
    from xtc.dialects.graph.base import ShapeError
    from xtc.dialects.graph.constant import element_type_of

    dims = "".join(f"{d}x" for d in array.shape)
    try:
        element = str(element_type_of(array.dtype))
    except ShapeError:  # a dtype with no IR element type (strings, objects): numpy's name
        element = str(array.dtype)
    return f"{dims}{element}"


def filled(
    shape: tuple[int, ...], dtype: np.dtype[Any], mode: str, rng: np.random.Generator
) -> np.ndarray:
    """zeros, ones, or a deterministic random draw from `rng` for the dtype."""
    if mode == "zeros":
        return np.zeros(shape, dtype)
    if mode == "ones":
        return np.ones(shape, dtype)
    if is_float_dtype(dtype):
        return rng.uniform(-1.0, 1.0, shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    low = 0 if dtype.kind == "u" else -4
    return rng.integers(low, low + 9, shape).astype(dtype)


# --------------------------------------------------------------- executing


def execute(module: ModuleOp, entry: Entry, inputs: list[np.ndarray], native: bool) -> list[Any]:
    """Runs the entry on the inputs, in the interpreter or natively; returns its results."""
    if entry.level == "llvm":
        return _run_llvm(module, entry, inputs)
    if not native:
        from xtc import interp

        return interp.run(module, inputs, function=entry.name)
    if entry.level == "graph":
        return _run_compiled_graph(module, entry, inputs)
    from xtc.driver.native import run_native
    from xtc.driver.pipelines import apply_pipeline

    if entry.level == "te":
        module = apply_pipeline(module.clone(), "convert-te-to-tir")
    return run_native(module, inputs, function=entry.name)


def _run_compiled_graph(module: ModuleOp, entry: Entry, inputs: list[np.ndarray]) -> list[Any]:
    from xtc import interp
    from xtc.driver.compiler import compile_graph

    model_entry = interp.entry_function(module).sym_name.data
    if entry.name != model_entry:
        raise RunError(
            f"--native compiles a graph module as a model, from @{model_entry}; "
            f"run @{entry.name} without --native"
        )
    return compile_graph(module).run(inputs)


def _run_llvm(module: ModuleOp, entry: Entry, inputs: list[np.ndarray]) -> list[Any]:
    from xtc.runtime.llvm_jit import aligned_copy, aligned_empty, compile_module

    copy = module.clone()
    func = _llvm_function(copy, entry.name)
    func.linkage = llvm.LinkageAttr("external")  # an internal function is not callable
    outputs = {p: index for p, (_, _, index) in enumerate(_llvm_args(func)) if index >= 0}
    given = iter(aligned_copy(a) for a in inputs)
    arrays = [
        aligned_empty(entry.results[outputs[p]].shape, entry.results[outputs[p]].dtype)
        if p in outputs
        else next(given)
        for p in range(len(func.function_type.inputs.data))
    ]
    compile_module(copy).call(entry.name, arrays)
    if not outputs:
        return arrays
    return [arrays[p] for p in sorted(outputs, key=outputs.__getitem__)]


# ---------------------------------------------------------------- printing


def format_result(index: int, buffer: Buffer, value: Any, precision: int, limit: int) -> str:
    """`result <index>: <type>` and the values (see the module doc)."""
    from xtc.dialects.graph.base import type_str

    array = np.asarray(value)
    head = f"result {index}: {type_str(buffer.type)}"
    if array.size > limit:
        return (
            f"{head}\n<{array.size} elements, over --print-limit {limit}: "
            "raise it, or save them with --output>"
        )
    return f"{head}\n{format_values(array, precision)}"


def format_values(array: np.ndarray, precision: int = 6) -> str:
    """The array nested in brackets, one innermost row per line, columns
    right aligned; independent of numpy's print options."""
    cells = [_element_text(v, array.dtype, precision) for v in array.ravel().tolist()]
    if array.ndim == 0:
        return cells[0]
    width = max((len(c) for c in cells), default=0)
    return _nested(iter(c.rjust(width) for c in cells), array.shape, 0)


def _element_text(value: Any, dtype: np.dtype[Any], precision: int) -> str:
    if dtype.kind == "b":
        return "true" if value else "false"
    if dtype.kind in "iu":
        return str(int(value))
    return f"{float(value):.{precision}g}"


def _nested(cells: Iterator[str], shape: tuple[int, ...], depth: int) -> str:
    if len(shape) == 1:
        return "[" + ", ".join(next(cells) for _ in range(shape[0])) + "]"
    rows = [_nested(cells, shape[1:], depth + 1) for _ in range(shape[0])]
    return "[" + ("," + "\n" + " " * (depth + 1)).join(rows) + "]"


# ------------------------------------------------------------ command line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xtc-run",
        description="run a function of a graph, te, tir or llvm module and print its results",
    )
    parser.add_argument("file", nargs="?", default="-", help="the IR file (default: stdin)")
    parser.add_argument("--entry", metavar="NAME", help="the function (default: @main)")
    parser.add_argument(
        "--inputs", metavar="NPZ", help="input arrays by argument name (numpy .npz)"
    )
    parser.add_argument("--fill", choices=FILL_MODES, help="fill the inputs --inputs does not give")
    parser.add_argument("--seed", type=int, default=0, help="seed of --fill random (default 0)")
    parser.add_argument(
        "--native",
        action="store_true",
        help="JIT-compile the function instead of interpreting it (llvm level: always)",
    )
    parser.add_argument(
        "--arg-types",
        metavar="TYPES",
        help="llvm level: each pointer argument's type, e.g. 2x3xf32,3xi64",
    )
    parser.add_argument(
        "--print-result", action="store_true", help="print the results also with --output"
    )
    parser.add_argument(
        "--output", metavar="NPZ", help="write the results to a .npz (result0, result1, ...)"
    )
    parser.add_argument(
        "--precision", type=_at_least(1), default=6, help="significant digits of floats"
    )
    parser.add_argument(
        "--print-limit",
        type=_at_least(0),
        default=10000,
        metavar="N",
        help="print the values of results of at most N elements (default 10000)",
    )
    return parser


def _at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {value}")
        return value

    return parse


def run(args: argparse.Namespace) -> None:
    module = read_module(args.file)
    entry = find_entry(module, args.entry, args.arg_types)
    inputs = load_inputs(entry, args.inputs, args.fill, args.seed)
    results = execute(module, entry, inputs, args.native)
    if args.output:
        saved: dict[str, Any] = {f"result{i}": np.asarray(r) for i, r in enumerate(results)}
        np.savez(args.output, **saved)
    if args.print_result or not args.output:
        for i, (buffer, value) in enumerate(zip(entry.results, results, strict=True)):
            print(format_result(i, buffer, value, args.precision, args.print_limit))


def _user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "this run is refused or faulted", each with its message."""
    from xdsl.utils.exceptions import DiagnosticException, VerifyException

    from xtc.driver.compiler import CompileError
    from xtc.interp import InterpreterError, RunTimeFault
    from xtc.runtime.llvm_jit import UnresolvedSymbolError
    from xtc.runtime.model import InputError
    from xtc.runtime.native_abi import ThreadCountError

    return (
        RunError,
        InterpreterError,
        RunTimeFault,
        InputError,
        CompileError,
        ThreadCountError,
        UnresolvedSymbolError,
        DiagnosticException,
        VerifyException,
    )


def _fail(message: str) -> NoReturn:
    fail("xtc-run", message)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.split("\n")[0] if text else type(e).__name__


def main(argv: Sequence[str] | None = None) -> None:
    from xtc.plugin_warnings import report_plugin_warnings_as

    report_plugin_warnings_as("xtc-run")
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except _user_errors() as e:
        _fail(_first_line(e))
    except OSError as e:
        _fail(f"{e.filename}: {e.strerror}" if e.filename else _first_line(e))
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - a message, not a traceback
        exit_unexpected("xtc-run", e)


if __name__ == "__main__":
    main()
