"""How the rooms below `plugins.py` reach the op plugins without importing
it: the op plugin API stands above the frontend, the interpreter, the
compute rules and the driver (it checks a plugin against all of them), yet
each of these needs the plugins' parts when it runs. The package's
`__init__` hands this module the plugins module as a provider, imported on
first use; the rooms call the three functions here. Without a provider
(nothing set it) there are no plugins."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xdsl.interpreter import InterpreterFunctions
    from xdsl.ir import Dialect

_provider: Callable[[], Any] | None = None


def set_provider(provider: Callable[[], Any]) -> None:
    """`provider()` returns the object (the `xtc.plugins` module) whose
    `load_op_plugins`, `plugin_dialects` and `plugin_interpreter_functions`
    the functions below call."""
    global _provider
    _provider = provider


def load_op_plugins() -> None:
    """Registers the entry points' op plugins (once per process)."""
    if _provider is not None:
        _provider().load_op_plugins()


def plugin_dialects() -> list[Dialect]:
    """The dialects of the registered op plugins, entry points loaded."""
    return [] if _provider is None else list(_provider().plugin_dialects())


def plugin_interpreter_functions() -> list[type[InterpreterFunctions]]:
    """The interpreter implementations of the registered op plugins."""
    return [] if _provider is None else list(_provider().plugin_interpreter_functions())
