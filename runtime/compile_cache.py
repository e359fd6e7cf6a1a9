"""The on-disk compile cache: what a compile built, found again by its key.

    cache = CompileCache.default()          # $XDG_CACHE_HOME/xtc, else ~/.cache/xtc
    data = cache.get("models", key)         # the bytes stored under `key`, or None
    cache.put("models", key, data)
    cache.info(); cache.clear()             # `xtc cache info`, `xtc cache clear`

A key is any string that names everything the entry depends on (the
compiler builds it: driver/compiler.py's `model_cache_key`); an entry is a
file `<root>/<kind>/<sha256 of the key>`. Its first line,

    xtc-cache 1 <sha256 of the payload> <payload bytes, 16 digits>

is checked on every read: an entry that is truncated, whose checksum does
not match, or that cannot be read is removed and reported missing, so the
caller builds it again; it is never loaded. A writer writes a temporary
file in the entry's folder and renames it over the entry (`os.replace`,
atomic on one file system), so two compiles writing one entry at once each
leave a whole entry and a reader sees the old one or the new one, never a
mix. A cache that cannot be written (read-only, full) only makes compiles
slower: `put` reports it and the compile goes on.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

CACHE_FOLDER = "xtc"
MAGIC = b"xtc-cache"
FORMAT_VERSION = 1
_TEMPORARY_PREFIX = ".partial-"
HEADER_BYTES = len(MAGIC) + 3 + 64 + 1 + 16 + 1
"""`xtc-cache 1 <sha256 hex> <length, 16 digits>\n`: fixed, so a writer
streams the payload first and fills the header in after."""
_CHUNK = 1 << 20


class CacheError(Exception):
    """The cache folder cannot be used as asked (a file in its place)."""


def default_cache_root() -> Path:
    """`$XDG_CACHE_HOME/xtc`, or `~/.cache/xtc` where it is unset or empty
    (the XDG base directory rule)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(base or Path.home() / ".cache") / CACHE_FOLDER


@dataclass(frozen=True)
class CacheInfo:
    """What `xtc cache info` prints: the folder, and per kind of entry its
    count and bytes."""

    root: Path
    kinds: dict[str, tuple[int, int]]

    @property
    def entries(self) -> int:
        return sum(count for count, _ in self.kinds.values())

    @property
    def size_bytes(self) -> int:
        return sum(size for _, size in self.kinds.values())


@dataclass(frozen=True)
class CompileCache:
    """Entries by (kind, key) under `root` (see the module doc)."""

    root: Path

    @staticmethod
    def default() -> CompileCache:
        return CompileCache(default_cache_root())

    def path_of(self, kind: str, key: str) -> Path:
        """The entry file of `key` (which may not exist)."""
        return self.root / kind / hashlib.sha256(key.encode()).hexdigest()

    def get(self, kind: str, key: str) -> bytes | None:
        """The payload stored under `key`, or None when there is none or it
        is corrupt (the corrupt entry is removed)."""
        entry = self.open(kind, key)
        if entry is None:
            return None
        with entry:
            return entry.read()

    def open(self, kind: str, key: str) -> BinaryIO | None:
        """The entry of `key` opened at its payload, once its checksum checks
        out; None when there is none or it is corrupt (then removed)."""
        path = self.path_of(kind, key)
        try:
            entry = path.open("rb")
        except FileNotFoundError:
            return None
        except OSError:
            _remove(path)
            return None
        try:
            if _payload_checks_out(entry):
                entry.seek(HEADER_BYTES)
                return entry
        except OSError:
            pass
        entry.close()
        _remove(path)
        return None

    def put(self, kind: str, key: str, payload: bytes) -> bool:
        """Stores `payload` under `key` (atomically, see the module doc);
        False when the cache cannot be written."""
        return self.put_written(kind, key, lambda f: f.write(payload))

    def put_written(self, kind: str, key: str, write: Callable[[BinaryIO], object]) -> bool:
        """Stores under `key` what `write(file)` writes (the payload is
        streamed, never held whole); False when the cache cannot be written."""
        path = self.path_of(kind, key)
        partial: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, partial = tempfile.mkstemp(prefix=_TEMPORARY_PREFIX, dir=path.parent)
            with os.fdopen(handle, "w+b") as f:
                f.write(bytes(HEADER_BYTES))
                write(f)
                digest, size = _digest_from(f, HEADER_BYTES)
                f.seek(0)
                f.write(_header(digest, size))
            os.replace(partial, path)
        except OSError:
            if partial is not None:
                _remove(Path(partial))
            return False
        return True

    def info(self) -> CacheInfo:
        """The entries per kind (temporary files of running writers left out)."""
        kinds: dict[str, tuple[int, int]] = {}
        for folder in self._kind_folders():
            files = [f for f in folder.iterdir() if f.is_file()]
            entries = [f for f in files if not f.name.startswith(_TEMPORARY_PREFIX)]
            kinds[folder.name] = (len(entries), sum(_size(f) for f in entries))
        return CacheInfo(self.root, kinds)

    def clear(self) -> int:
        """Removes every entry (and stray temporary file); the count removed."""
        removed = 0
        for folder in self._kind_folders():
            for entry in folder.iterdir():
                if entry.is_file():
                    removed += _remove(entry) and not entry.name.startswith(_TEMPORARY_PREFIX)
        return removed

    def _kind_folders(self) -> list[Path]:
        if not self.root.exists():
            return []
        if not self.root.is_dir():
            raise CacheError(f"the compile cache {self.root} is a file, not a folder")
        return sorted(f for f in self.root.iterdir() if f.is_dir())


def _header(digest: str, size: int) -> bytes:
    header = b"%s %d %s %016d\n" % (MAGIC, FORMAT_VERSION, digest.encode(), size)
    assert len(header) == HEADER_BYTES
    return header


def _digest_from(f: BinaryIO, offset: int) -> tuple[str, int]:
    """The sha256 and length of what `f` holds from `offset` on."""
    f.seek(offset)
    digest = hashlib.sha256()
    size = 0
    while chunk := f.read(_CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def _payload_checks_out(entry: BinaryIO) -> bool:
    """Whether an entry's header is ours and its payload has the length and
    sha256 the header says."""
    header = entry.read(HEADER_BYTES)
    fields = header.rstrip(b"\n").split(b" ")
    if len(header) != HEADER_BYTES or len(fields) != 4:
        return False
    if fields[0] != MAGIC or fields[1] != b"%d" % FORMAT_VERSION:
        return False
    digest, size = _digest_from(entry, HEADER_BYTES)
    return fields[2] == digest.encode() and fields[3] == b"%016d" % size


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except OSError:
        return False
    return True


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_SOURCE_FOLDERS_SKIPPED = frozenset({"tests", "bench", "docs", "examples", "filecheck"})


def xtc_source_digest() -> str:
    """The sha256 of xtc's own Python sources: part of every key, so that
    an entry built by other code (a development tree, an upgrade that kept
    the version number) is never found."""
    return _source_digest(Path(__file__).resolve().parent.parent)


_DIGESTS: dict[Path, str] = {}


def _source_digest(package: Path) -> str:
    found = _DIGESTS.get(package)
    if found is not None:
        return found
    files = [f for f in package.glob("*.py")]
    for folder in sorted(package.iterdir()):
        if folder.name in _SOURCE_FOLDERS_SKIPPED or not (folder / "__init__.py").is_file():
            continue
        files += folder.rglob("*.py")
    digest = hashlib.sha256()
    for file in sorted(files):
        digest.update(str(file.relative_to(package)).encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    _DIGESTS[package] = found = digest.hexdigest()
    return found


def file_digest(path: Path) -> str:
    """The sha256 of a file's bytes, read in chunks."""
    with path.open("rb") as f:
        return _digest_from(f, 0)[0]
