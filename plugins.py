"""Ops from outside xtc, each declared in one Python module (an op plugin).

A plugin module defines, with nothing to change in xtc:

- its ops: subclasses of `xtc.dialects.graph.base.GraphOp` (type inference
  in `infer_types`, which the verifier runs too), with their fusion kind as
  the class attribute `FUSION_KIND: ClassVar[OpPattern]` (required:
  `OpPattern.OPAQUE` for an op never fused), gathered in an
  xDSL `Dialect` of the plugin's own name (ops named `<dialect>.<op>`);
- `@converts("MyOp", domain="com.example")`: the ONNX converter;
- `@reference(MyOp)`: the numpy reference, `fn(*inputs, **properties)`
  returning an array (or a tuple, one per result): the interpreter's
  implementation and the oracle of the tests;
- `@compute_rule(MyOp)`: the te compute rule, as in `xtc.ops`.

It registers through an entry point in group `xtc.ops` (its value a module,
or a callable returning one or a list of them), loaded once per process
wherever ops are needed, or with `xtc.register_ops(module)` in a script.
Only what the module defines itself counts, not what it imports. A plugin
that fails to load or takes a name already taken is skipped with a
`PluginWarning` naming it; xtc goes on without it.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any, TypeVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i1,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Attribute, Dialect, Operation

from xtc.dialects.graph.base import GraphOp, OpPattern, elem, missing_fusion_kind, op_props
from xtc.dialects.graph.constant import numpy_dtype
from xtc.frontend.converters import Converter, OpKey, op_key, op_label
from xtc.ops import ComputeRule

__all__ = [
    "ENTRY_POINT_GROUP",
    "OpPattern",
    "OpPlugin",
    "PluginError",
    "compute_rule",
    "converts",
    "load_op_plugins",
    "reference",
    "register_ops",
]

ENTRY_POINT_GROUP = "xtc.ops"

Reference = Callable[..., Any]
"""A numpy implementation: `fn(*inputs, **properties) -> array | tuple`."""

_F = TypeVar("_F", bound=Callable[..., Any])
_ROLES = "__xtc_plugin_roles__"


class PluginError(ValueError):
    """An op plugin xtc cannot take, with a message naming it."""


def _mark(function: _F, role: str, keys: Sequence[object]) -> _F:
    roles: list[tuple[str, object]] = list(getattr(function, _ROLES, []))
    roles.extend((role, key) for key in keys)
    setattr(function, _ROLES, roles)
    return function


def converts(*op_types: str, domain: str) -> Callable[[_F], _F]:
    """Marks the function as the ONNX converter of `domain`'s `op_types`
    (a `(node: xtc.frontend.converters.Node) -> [values]` function)."""
    return lambda function: _mark(function, "converts", [op_key(domain, t) for t in op_types])


def reference(*op_classes: type[GraphOp]) -> Callable[[_F], _F]:
    """Marks the function as the numpy implementation of these ops: called
    with the input arrays and the op's properties as keyword arguments
    (ints, floats, bools, strings, tuples for arrays)."""
    return lambda function: _mark(function, "reference", op_classes)


def compute_rule(*op_classes: type[GraphOp]) -> Callable[[_F], _F]:
    """Marks the function as the te compute rule of these ops (the signature
    of `xtc.ops.ComputeRule`)."""
    return lambda function: _mark(function, "compute_rule", op_classes)


@dataclass(frozen=True, eq=False)
class OpPlugin:
    """What one plugin declares, checked and registered as a whole."""

    name: str
    modules: tuple[str, ...]
    dialects: tuple[Dialect, ...]
    converters: Mapping[OpKey, Converter]
    references: Mapping[type[GraphOp], Reference]
    compute_rules: Mapping[type[GraphOp], ComputeRule]

    def interpreter_functions(self) -> type[InterpreterFunctions]:
        """The references as xDSL interpreter implementations."""
        methods = {
            f"run_{i}": impl(op_class)(_reference_impl(function))
            for i, (op_class, function) in enumerate(self.references.items())
        }
        return register_impls(type("PluginFunctions", (InterpreterFunctions,), methods))


_REGISTERED: list[OpPlugin] = []


def registered_plugins() -> tuple[OpPlugin, ...]:
    """The op plugins registered so far (entry points load on first use)."""
    return tuple(_REGISTERED)


def plugin_dialects() -> list[Dialect]:
    """The dialects of the registered op plugins, entry points loaded."""
    load_op_plugins()
    return [dialect for plugin in _REGISTERED for dialect in plugin.dialects]


@functools.cache
def _interpreter_functions(plugin: OpPlugin) -> type[InterpreterFunctions]:
    return plugin.interpreter_functions()


def plugin_interpreter_functions() -> list[type[InterpreterFunctions]]:
    """The interpreter implementations of the registered op plugins."""
    load_op_plugins()
    return [_interpreter_functions(plugin) for plugin in _REGISTERED]


def register_ops(module: ModuleType | Iterable[ModuleType], name: str | None = None) -> OpPlugin:
    """Registers the ops, converters, references and compute rules that the
    module(s) define (see the module doc); raises PluginError, registering
    nothing, when one is malformed or its name is taken. Registering the
    same modules again returns the plugin already registered."""
    load_op_plugins()
    return _register(name, module)


@functools.cache
def load_op_plugins() -> tuple[OpPlugin, ...]:
    """Registers the `xtc.ops` entry points' plugins, once per process; one
    that fails is skipped with a PluginWarning naming it."""
    for plugin in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            _register(plugin.name, _load_entry_point(plugin))
        except Exception as e:  # noqa: BLE001 - any failure of a foreign package is skipped
            why = str(e) if isinstance(e, PluginError) else f"{type(e).__name__}: {e}"
            _skip(plugin, why)
    return registered_plugins()


def _skip(plugin: EntryPoint, why: str) -> None:
    from xtc.plugin_warnings import PluginWarning

    warnings.warn(
        f"{ENTRY_POINT_GROUP} plugin {plugin.name!r} ({plugin.value}) is skipped: {why}",
        PluginWarning,
        stacklevel=3,
    )


def _load_entry_point(plugin: EntryPoint) -> list[ModuleType]:
    """The module(s) the entry point names, or that the callable it names returns."""
    loaded: object = plugin.load()
    if callable(loaded) and not isinstance(loaded, ModuleType):
        loaded = loaded()
    if isinstance(loaded, ModuleType):
        return [loaded]
    items = list(cast(Iterable[object], loaded)) if isinstance(loaded, list | tuple) else [loaded]
    modules = [m for m in items if isinstance(m, ModuleType)]
    if len(modules) != len(items) or not modules:
        raise PluginError("it gives neither a module nor a list of modules")
    return modules


def _register(name: str | None, given: ModuleType | Iterable[ModuleType]) -> OpPlugin:
    modules = [given] if isinstance(given, ModuleType) else list(given)
    module_names = tuple(m.__name__ for m in modules)
    for plugin in _REGISTERED:
        if plugin.modules == module_names:
            return plugin
    plugin = _collect(name or ", ".join(module_names), modules)
    _check_names_free(plugin)
    from xtc.frontend.converters import CONVERTERS
    from xtc.ops import COMPUTE_RULES

    CONVERTERS.update(plugin.converters)
    COMPUTE_RULES.update(plugin.compute_rules)
    _REGISTERED.append(plugin)
    return plugin


def _collect(name: str, modules: Sequence[ModuleType]) -> OpPlugin:
    dialects: list[Dialect] = []
    marks: list[tuple[str, object, Callable[..., Any]]] = []
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, Dialect) and _defined_in(value, module):
                dialects.append(value)
            elif callable(value) and getattr(value, "__module__", None) == module.__name__:
                marks.extend((role, key, value) for role, key in getattr(value, _ROLES, []))
    if not dialects and not marks:
        raise PluginError(
            f"op plugin {name!r} defines no dialect, converter, reference or compute rule"
        )
    own_ops = {op for dialect in dialects for op in _dialect_ops(name, dialect)}
    tables: dict[str, dict[Any, Callable[..., Any]]] = {
        "converts": {},
        "reference": {},
        "compute_rule": {},
    }
    for role, key, function in marks:
        if role != "converts" and key not in own_ops:
            op_name = getattr(key, "name", key)
            raise PluginError(
                f"op plugin {name!r}: @{role}({op_name}) names an op none of its dialects holds"
            )
        if key in tables[role]:
            raise PluginError(f"op plugin {name!r} has two @{role} for {_key_name(key)}")
        tables[role][key] = function
    return OpPlugin(
        name=name,
        modules=tuple(m.__name__ for m in modules),
        dialects=tuple(dialects),
        converters=cast(dict[OpKey, Converter], tables["converts"]),
        references=tables["reference"],
        compute_rules=cast(dict[type[GraphOp], ComputeRule], tables["compute_rule"]),
    )


def _defined_in(dialect: Dialect, module: ModuleType) -> bool:
    """Whether the module defines the dialect's ops (an imported dialect is
    another package's)."""
    ops = list(dialect.operations)
    return bool(ops) and all(op.__module__ == module.__name__ for op in ops)


def _dialect_ops(plugin: str, dialect: Dialect) -> list[type[Operation]]:
    ops = list(dialect.operations)
    for op in ops:
        if not issubclass(op, GraphOp):
            raise PluginError(
                f"op plugin {plugin!r}: {op.name} is not a graph op "
                "(derive it from xtc.dialects.graph.base.GraphOp)"
            )
        if (why := missing_fusion_kind(op)) is not None:
            raise PluginError(f"op plugin {plugin!r}: {why}")
        if not op.name.startswith(f"{dialect.name}."):
            raise PluginError(
                f"op plugin {plugin!r}: {op.name} is not named '{dialect.name}.<op>' "
                f"as its dialect '{dialect.name}' requires"
            )
    return ops


def _key_name(key: object) -> str:
    if isinstance(key, tuple):
        domain, op_type = cast(OpKey, key)
        return op_label(domain, op_type)
    return str(getattr(key, "name", key))


def _check_names_free(plugin: OpPlugin) -> None:
    from xdsl.universe import XDSL_UNIVERSE

    from xtc.frontend.converters import CONVERTERS, load_builtin_converters
    from xtc.ops import load_builtin_compute_rules
    from xtc.driver.universe import XTC_UNIVERSE

    load_builtin_converters()
    load_builtin_compute_rules()
    dialects = {*XDSL_UNIVERSE.all_dialects, *XTC_UNIVERSE.all_dialects}
    dialects.update(d.name for p in _REGISTERED for d in p.dialects)
    taken = [f"dialect '{d.name}'" for d in plugin.dialects if d.name in dialects]
    taken += [f"converter {op_label(*key)}" for key in plugin.converters if key in CONVERTERS]
    if taken:
        raise PluginError(f"op plugin {plugin.name!r} redefines {', '.join(taken)}")


def _reference_impl(
    function: Reference,
) -> Callable[[InterpreterFunctions, Interpreter, Operation, tuple[Any, ...]], tuple[Any, ...]]:
    def run(
        _functions: InterpreterFunctions,
        _interpreter: Interpreter,
        op: Operation,
        args: tuple[Any, ...],
    ) -> tuple[Any, ...]:
        produced = function(*args, **python_properties(op))
        values = produced if isinstance(produced, tuple | list) else (produced,)
        return tuple(
            np.asarray(value).astype(numpy_dtype(elem(result.type)), copy=False)
            for value, result in zip(values, op.results, strict=True)
        )

    return run


def python_properties(op: Operation) -> dict[str, Any]:
    """The op's properties as Python values: ints, floats, bools (i1),
    strings, tuples (dense arrays); other attributes as they are."""
    return {name: _python_value(attr) for name, attr in op_props(op).items()}


def _python_value(attr: Attribute) -> Any:
    if isinstance(attr, IntegerAttr):
        value = cast(IntegerAttr[IntegerType], attr).value.data
        return bool(value) if attr.type == i1 else value
    if isinstance(attr, FloatAttr):
        return float(cast(FloatAttr, attr).value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(cast(DenseArrayBase[Any], attr).get_values())
    return attr
