"""The undefined symbols of an ELF object file: the functions and data it
expects the loader (MCJIT, the linker) to find elsewhere.

    undefined_symbols(machine.emit_object(ref)) -> ["erff", "GOMP_parallel"]
"""

from __future__ import annotations

import struct

import llvmlite.binding as llvm_binding

_SYMBOL = struct.Struct("<IBBHQQ")
"""Elf64_Sym: st_name, st_info, st_other, st_shndx, st_value, st_size."""
_UNDEFINED_SECTION = 0
_LOCAL_BINDING = 0
_WEAK_BINDING = 2


def undefined_symbols(object_file: bytes) -> list[str]:
    """The names of the global symbols `object_file` (little-endian ELF64)
    uses but does not define, in table order; weak ones may stay unresolved
    and are left out."""
    sections = {
        section.name(): section.data()
        for section in llvm_binding.ObjectFileRef.from_data(object_file).sections()
    }
    table, names = sections.get(b".symtab", b""), sections.get(b".strtab", b"")
    found: list[str] = []
    for name_offset, info, _other, section, _value, _size in _SYMBOL.iter_unpack(table):
        binding = info >> 4
        if section != _UNDEFINED_SECTION or binding in (_LOCAL_BINDING, _WEAK_BINDING):
            continue
        end = names.index(b"\0", name_offset)
        found.append(names[name_offset:end].decode())
    return found
