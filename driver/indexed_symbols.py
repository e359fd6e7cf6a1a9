"""A module's symbols found by name, in one dict, while it is verified.

xDSL's `SymbolTable.lookup_symbol` finds a symbol by scanning the ops of
the symbol table, once per lookup; verifying a call (`func.call`,
`llvm.call`) looks its callee up. A model's module holds its weights (a
global each) and its kernels (a declaration each, after the split) beside
the model function, which calls each kernel: verifying it scans some 400
ops per call (DenseNet-121: 189 calls, 440 ops), which is 80% of the
verification of its tir and llvm stages. `symbols_indexed` answers those
lookups from a dict made once; the verification is the same (the module
is not changed while it is verified, so the dict holds what a scan finds:
the first op that defines the name).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException


def module_symbols(module: ModuleOp) -> dict[str, Operation] | None:
    """Each symbol of the module's top level, by name (the first op that
    defines it); None when an op's symbol is malformed (a scan raises
    there: lookups then scan, so that verification says so as it would)."""
    symbols: dict[str, Operation] = {}
    for op in module.ops:
        interface = op.get_trait(SymbolOpInterface)
        if interface is None:
            continue
        try:
            name = interface.get_sym_attr_name(op)
        except VerifyException:
            return None
        if name is not None:
            symbols.setdefault(name.data, op)
    return symbols


@contextmanager
def symbols_indexed(module: ModuleOp) -> Iterator[None]:
    """Within the block, a lookup of a flat symbol in `module` (the symbol
    table of the ops it holds) is a dict lookup; any other lookup scans, as
    xDSL does. The module must not change within the block."""
    symbols = module_symbols(module)
    if symbols is None:
        yield
        return
    original = SymbolTable.__dict__["lookup_symbol"]
    scan = SymbolTable.lookup_symbol

    def lookup(op: Operation, name: str | StringAttr | SymbolRefAttr) -> Operation | None:
        if isinstance(name, SymbolRefAttr) and name.nested_references.data:
            return scan(op, name)
        anchor: Operation | None = op
        while anchor is not None and not anchor.has_trait(SymbolTable):
            anchor = anchor.parent_op()
        if anchor is not module:
            return scan(op, name)
        if isinstance(name, SymbolRefAttr):
            return symbols.get(name.root_reference.data)
        return symbols.get(name.data if isinstance(name, StringAttr) else name)

    SymbolTable.lookup_symbol = staticmethod(lookup)  # type: ignore[method-assign]
    try:
        yield
    finally:
        SymbolTable.lookup_symbol = original
