"""symbols_indexed: while a module is verified, its calls' callees are found
in a dict made once, not by a scan of the module per call; what is found,
and what the verification says, stay the same."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr, f32
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Region
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from xtc.driver.compiler import _verify_stage
from xtc.driver.indexed_symbols import module_symbols, symbols_indexed


def calling_module(kernels: int, arg_type: object = f32) -> tuple[ModuleOp, list[CallOp]]:
    """`kernels` declarations @k0.. of (f32) -> (), and @main(f32) calling each."""
    declarations = [FuncOp.external(f"k{i}", [f32], []) for i in range(kernels)]
    block = Block(arg_types=[arg_type])
    calls = [CallOp(f"k{i}", [block.args[0]], []) for i in range(kernels)]
    block.add_ops([*calls, ReturnOp()])
    main = FuncOp("main", ([arg_type], []), Region(block))  # type: ignore[arg-type]
    return ModuleOp([*declarations, main]), calls


def test_lookups_find_what_a_scan_finds() -> None:
    module, calls = calling_module(5)
    scanned = [SymbolTable.lookup_symbol(c, c.callee) for c in calls]
    with symbols_indexed(module):
        assert [SymbolTable.lookup_symbol(c, c.callee) for c in calls] == scanned
        assert SymbolTable.lookup_symbol(calls[0], "k3") is scanned[3]
        assert SymbolTable.lookup_symbol(calls[0], StringAttr("k4")) is scanned[4]
        assert SymbolTable.lookup_symbol(calls[0], "missing") is None
        nested = SymbolRefAttr("k1", ["inner"])
        assert SymbolTable.lookup_symbol(calls[0], nested) is None  # scanned: k1 holds no table


def test_the_scan_is_back_after_the_block_even_after_an_error() -> None:
    original = SymbolTable.__dict__["lookup_symbol"]
    module, _ = calling_module(2)
    with pytest.raises(RuntimeError), symbols_indexed(module):
        assert SymbolTable.__dict__["lookup_symbol"] is not original
        raise RuntimeError
    assert SymbolTable.__dict__["lookup_symbol"] is original


def test_a_lookup_in_another_module_scans_it() -> None:
    module, _ = calling_module(2)
    other, other_calls = calling_module(3)
    with symbols_indexed(module):
        found = SymbolTable.lookup_symbol(other_calls[2], other_calls[2].callee)
    assert found is not None and found.parent_op() is other


def test_a_call_of_a_missing_kernel_still_fails_verification() -> None:
    module, calls = calling_module(3)
    calls[1].callee = SymbolRefAttr("gone")
    with pytest.raises(VerifyException, match="'@gone' could not be found"):
        _verify_stage(module, "tir")


def test_a_call_with_wrong_operand_types_still_fails_verification() -> None:
    from xdsl.dialects.builtin import i32

    module, _ = calling_module(3, arg_type=i32)
    with pytest.raises(VerifyException, match="operand type mismatch"):
        _verify_stage(module, "tir")


def test_a_malformed_symbol_leaves_lookups_to_the_scan() -> None:
    module, _ = calling_module(2)
    first = next(iter(module.ops))
    del first.properties["sym_name"]
    assert module_symbols(module) is None
    with pytest.raises(VerifyException):
        _verify_stage(module, "tir")


def test_verifying_n_calls_reads_each_symbol_a_few_times_not_n_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kernels = 200
    module, _ = calling_module(kernels)
    original = SymbolOpInterface.get_sym_attr_name
    reads = 0

    def counted(self: SymbolOpInterface, op: object) -> StringAttr | None:
        nonlocal reads
        reads += 1
        return original(self, op)  # type: ignore[arg-type]

    monkeypatch.setattr(SymbolOpInterface, "get_sym_attr_name", counted)
    _verify_stage(module, "tir")
    # a scan per call reads ~kernels**2 / 2 = 20000 names
    assert reads < 5 * kernels
