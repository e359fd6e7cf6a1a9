"""runtime/compile_cache.py: entries written whole and atomically, checked
on every read; a corrupt one is removed and reported missing, never read."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from xtc.runtime.compile_cache import (
    HEADER_BYTES,
    CacheError,
    CompileCache,
    default_cache_root,
)


def test_the_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_root() == tmp_path / "xtc"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_root() == tmp_path / "home" / ".cache" / "xtc"


def test_an_entry_is_read_back_and_a_missing_one_is_none(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path)
    assert cache.get("kernels", "k") is None
    assert cache.put("kernels", "k", b"object bytes")
    assert cache.get("kernels", "k") == b"object bytes"
    assert cache.get("kernels", "other key") is None
    assert cache.get("models", "k") is None


def _corrupt_truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-3])


def _corrupt_flipped_byte(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[HEADER_BYTES + 2] ^= 0xFF
    path.write_bytes(bytes(raw))


def _corrupt_header(path: Path) -> None:
    path.write_bytes(b"garbage\n" + path.read_bytes()[HEADER_BYTES:])


def _corrupt_empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    "corrupt", [_corrupt_truncated, _corrupt_flipped_byte, _corrupt_header, _corrupt_empty]
)
def test_a_corrupt_entry_is_missing_removed_and_rebuilt(
    tmp_path: Path, corrupt: Callable[[Path], None]
) -> None:
    cache = CompileCache(tmp_path)
    cache.put("kernels", "k", b"0123456789" * 100)
    path = cache.path_of("kernels", "k")
    corrupt(path)
    assert cache.get("kernels", "k") is None
    assert not path.exists()
    assert cache.put("kernels", "k", b"rebuilt")
    assert cache.get("kernels", "k") == b"rebuilt"


def test_an_unreadable_entry_is_missing(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path)
    path = cache.path_of("kernels", "k")
    path.mkdir(parents=True)  # a folder where the entry should be: it cannot be read
    assert cache.get("kernels", "k") is None


def test_a_streamed_entry_is_checked_like_any(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path)
    assert cache.put_written("models", "m", lambda f: [f.write(b"ab") for _ in range(1000)])
    entry = cache.open("models", "m")
    assert entry is not None
    with entry:
        assert entry.read() == b"ab" * 1000


_WRITE_MANY = """
import sys
from pathlib import Path
from xtc.runtime.compile_cache import CompileCache
cache, worker = CompileCache(Path(sys.argv[1])), int(sys.argv[2])
for i in range(30):
    cache.put("kernels", "shared", bytes([worker]) * (50_000 + i))
    found = cache.get("kernels", "shared")
    assert found is not None and len(set(found)) == 1, "a read saw a mixed entry"
"""


def test_writers_at_once_leave_a_whole_entry(tmp_path: Path) -> None:
    """Two processes writing and reading one key: every read is some
    writer's whole entry, and no temporary file is left."""
    workers = [
        subprocess.Popen([sys.executable, "-c", _WRITE_MANY, str(tmp_path), str(w)]) for w in (1, 2)
    ]
    assert [w.wait(120) for w in workers] == [0, 0]
    cache = CompileCache(tmp_path)
    payload = cache.get("kernels", "shared")
    assert payload is not None and len(set(payload)) == 1 and payload[0] in (1, 2)
    assert os.listdir(tmp_path / "kernels") == [cache.path_of("kernels", "shared").name]


def test_info_and_clear(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path / "xtc")
    assert cache.info().entries == 0 and cache.clear() == 0
    cache.put("kernels", "a", b"x" * 10)
    cache.put("kernels", "b", b"x" * 20)
    cache.put("models", "m", b"x" * 30)
    info = cache.info()
    assert info.entries == 3
    assert info.kinds["kernels"] == (2, 2 * HEADER_BYTES + 30)
    assert info.size_bytes == 3 * HEADER_BYTES + 60
    assert cache.clear() == 3
    assert cache.info().entries == 0 and cache.get("models", "m") is None


def test_a_cache_that_cannot_be_written_only_misses(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    cache = CompileCache(tmp_path / "file" / "xtc")
    assert not cache.put("kernels", "k", b"data")
    assert cache.get("kernels", "k") is None
    blocked = CompileCache(tmp_path / "file")
    with pytest.raises(CacheError, match="is a file, not a folder"):
        blocked.info()
