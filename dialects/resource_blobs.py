"""The builtin dialect's `dense_resource` blobs, held as bytes.

xDSL 0.74 keeps each blob as the hex text of MLIR's blob format (a
little-endian u32 alignment, then the data), twice the data's size, for as
long as the process lives. `BlobStorage` takes its place in the builtin
dialect (`blob_storage()` installs it): a blob is one immutable `bytes`
object, shared by reference with whatever reads it (numpy views, the inline
`dense<>` globals that lowering makes of it), written as hex only when a
module is printed and read from hex once when one is parsed.

Blobs live in one table per process. A compile that makes weights it will
replace (a pass that re-lays out every weight) frees the old ones through a
`BlobScope`: the keys stored while it is open are its own, and
`release_unreferenced(module)` drops those the module no longer uses.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from contextlib import contextmanager

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr
from xdsl.ir import Operation

HEADER_BYTES = 4
"""MLIR's blob format starts with the data's alignment as a little-endian u32."""


class BlobStorage(OpAsmDialectInterface):
    """xDSL's resource interface for the builtin dialect, storing each blob
    as (alignment, bytes) instead of hex text."""

    def __init__(self) -> None:
        super().__init__()
        self._data: dict[str, bytes | None] = {}
        """The key's data; None while it is declared without any."""
        self._alignments: dict[str, int] = {}
        self._scopes: list[BlobScope] = []

    # xDSL's interface (parser and printer), in hex text

    def declare_resource(self, key: str) -> str:
        if key in self._data:
            counter = 0
            while f"{key}_{counter}" in self._data:
                counter += 1
            key = f"{key}_{counter}"
        self._data[key] = None
        return key

    def parse_resource(self, key: str, val: str) -> None:
        if not val.startswith("0x"):
            raise ValueError(f"Blob must be a hex string, got: {val[:40]}")
        if key not in self._data:
            raise KeyError(f"Resource with key {key} wasn't declared")
        try:
            raw = bytes.fromhex(val[2:])
        except ValueError:
            raise ValueError(f"blob '{key}' is not hexadecimal") from None
        if len(raw) < HEADER_BYTES:
            raise ValueError(f"blob '{key}' is shorter than its {HEADER_BYTES}-byte alignment")
        self._put(key, raw[HEADER_BYTES:], int.from_bytes(raw[:HEADER_BYTES], "little"))

    def lookup(self, key: str) -> str | None:
        """The blob as hex text ("" when declared without data, None when
        unknown), as xDSL's interface gives it; `data(key)` does not copy."""
        if key not in self._data:
            return None
        return self._hex(key)

    def build_resources(self, keys: Iterable[str]) -> dict[str, str]:
        return {key: self._hex(key) for key in keys if self._data.get(key) is not None}

    # bytes, without copies

    def data(self, key: str) -> bytes | None:
        """The blob's data (no alignment header); None when it has none."""
        return self._data.get(key)

    def store(self, name: str, data: bytes, alignment: int) -> str:
        """Stores `data` under `name`, or under a fresh `name_<n>` when `name`
        holds other data (the same data under the same name keeps its key,
        so building the same module twice in a process prints the same
        text); returns the key."""
        if self._data.get(name) == data and self._alignments.get(name) == alignment:
            return name
        key = self.declare_resource(name)
        self._put(key, data, alignment)
        return key

    def release(self, keys: Iterable[str]) -> None:
        """Forgets the keys and drops the table's reference to their data."""
        for key in keys:
            self._data.pop(key, None)
            self._alignments.pop(key, None)

    def _put(self, key: str, data: bytes, alignment: int) -> None:
        self._data[key] = data
        self._alignments[key] = alignment
        for scope in self._scopes:
            scope.keys.add(key)

    def _hex(self, key: str) -> str:
        data = self._data.get(key)
        if data is None:
            return ""
        header = self._alignments[key].to_bytes(HEADER_BYTES, "little")
        return "0x" + header.hex().upper() + data.hex().upper()

    @contextmanager
    def scope(self) -> Generator[BlobScope]:
        """A scope owning the blobs stored while it is open; at its end they
        are released (the modules that used them must be done with them)."""
        scope = BlobScope(self)
        self._scopes.append(scope)
        try:
            yield scope
        finally:
            self._scopes.remove(scope)
            self.release(scope.keys)
            scope.keys.clear()


class BlobScope:
    """The blobs stored while a `BlobStorage.scope()` is open."""

    def __init__(self, storage: BlobStorage) -> None:
        self.storage = storage
        self.keys: set[str] = set()

    def release_unreferenced(self, root: Operation) -> None:
        """Releases this scope's blobs that no op under `root` refers to."""
        if not self.keys:
            return
        unused = self.keys - referenced_blobs(root)
        self.storage.release(unused)
        self.keys -= unused


def referenced_blobs(root: Operation) -> set[str]:
    """The keys of the `dense_resource`s that ops under `root` hold as a
    property or an attribute."""
    keys: set[str] = set()
    for op in root.walk():
        for attrs in (op.properties, op.attributes):
            for value in attrs.values():
                if isinstance(value, DenseResourceAttr):
                    keys.add(value.resource_handle.data)
    return keys


def blob_storage() -> BlobStorage:
    """The builtin dialect's blob storage, installed in place of xDSL's on
    first use (the blobs already there are carried over)."""
    current = Builtin.get_interface(OpAsmDialectInterface)
    if isinstance(current, BlobStorage):
        return current
    storage = BlobStorage()
    interfaces = Builtin._interfaces  # pyright: ignore[reportPrivateUsage]
    if current is not None:
        for key, text in current._blob_storage.items():  # pyright: ignore[reportPrivateUsage]
            storage.declare_resource(key)
            if text:
                storage.parse_resource(key, text)
        interfaces.remove(current)
    interfaces.append(storage)
    return storage


blob_storage()
