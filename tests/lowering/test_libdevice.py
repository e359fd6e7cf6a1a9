"""Where CUDA's libdevice is looked for: $XTC_LIBDEVICE first (a missing
file is an error, not a silent fallback), then $CUDA_HOME / $CUDA_PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtc.lowering.libdevice import LIBDEVICE_FILE, LibdeviceError, find_libdevice


def fake_toolkit(root: Path) -> Path:
    library = root / "nvvm" / "libdevice" / LIBDEVICE_FILE
    library.parent.mkdir(parents=True)
    library.write_bytes(b"BC")
    return library


def test_cuda_home_is_searched_before_the_usual_places(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("XTC_LIBDEVICE", raising=False)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    library = fake_toolkit(tmp_path)
    assert find_libdevice() == library


def test_xtc_libdevice_wins_and_must_name_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    chosen = tmp_path / "mine.bc"
    chosen.write_bytes(b"BC")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    fake_toolkit(tmp_path / "toolkit")
    monkeypatch.setenv("XTC_LIBDEVICE", str(chosen))
    assert find_libdevice() == chosen
    monkeypatch.setenv("XTC_LIBDEVICE", str(tmp_path / "missing.bc"))
    with pytest.raises(LibdeviceError, match="missing.bc is not a file"):
        find_libdevice()
