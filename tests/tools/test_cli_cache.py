"""The whole-model level of the compile cache, through `xtc.compile` and
the `xtc` command line: a hit behaves as the compile it replaces, a corrupt
entry is rebuilt, `--no-cache` leaves the cache alone, `xtc cache` shows and
clears it, and compiles at once into one cache all succeed. (tests/conftest.py
gives each test a cache of its own under XDG_CACHE_HOME.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import xtc
from xtc.driver.compiler import MODELS, compile_model, model_cache_key
from xtc.runtime.compile_cache import HEADER_BYTES, CompileCache
from xtc.runtime.timing import Timer
from xtc.tools.cli import main
from xtc.tools.model_builders import resnet_like


def small_model(seed: int = 0) -> onnx.ModelProto:
    return resnet_like(widths=(4, 8), image=16, seed=seed)


def model_entries() -> list[Path]:
    folder = CompileCache.default().root / MODELS
    return sorted(folder.iterdir()) if folder.is_dir() else []


def xtc_cli(*argv: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return int(stop.value.code or 0), out, err


def test_a_hit_runs_as_the_compile_it_replaces(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(small_model(), path)
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    first = xtc.compile(path)
    assert "compile_cache" not in first.manifest and len(model_entries()) == 1
    timer = Timer()
    second = compile_model(path, timer=timer)
    assert second.manifest["compile_cache"] == "hit"
    assert "compile cache lookup" in timer.report() and "import" not in timer.report()
    assert second.manifest["library_sha256"] == first.manifest["library_sha256"]
    np.testing.assert_array_equal(second.run({"data": x})[0], first.run({"data": x})[0])
    # A hit is exported and loaded like any compile.
    reloaded = xtc.load(second.export(tmp_path / "hit.tar"))
    np.testing.assert_array_equal(reloaded.run({"data": x})[0], first.run({"data": x})[0])


LIGHT_HIT = """
import sys

import numpy as np

import xtc
from xtc.tools.cli import main

try:
    main(["compile", sys.argv[1], "-o", sys.argv[2]])
except SystemExit as stop:
    assert not stop.code, stop.code
xtc.load(sys.argv[2]).run({"data": np.ones((1, 3, 16, 16), np.float32)})
try:
    main(["run", sys.argv[2], "--fill-mode", "random"])
except SystemExit as stop:
    assert not stop.code, stop.code
print(sorted(m for m in sys.modules if m.split(".")[0] in ("xdsl", "onnx")))
rooms = ("xtc.frontend", "xtc.dialects", "xtc.passes")
print(sorted(m for m in sys.modules if m.startswith(rooms)))
"""


def test_a_hit_imports_no_compiler(tmp_path: Path) -> None:
    """`xtc compile` answered from the cache, the model loaded and run, and
    `xtc run` on its artifact import neither xDSL nor ONNX nor a dialect or
    a pass of xtc: what a warm compile costs is the model's hash and its
    artifact's bytes."""
    path = tmp_path / "m.onnx"
    onnx.save(small_model(), path)
    # compiled first in a process of its own too: state that other tests left
    # in this one (a registered op plugin) would be part of this compile's key
    subprocess.run(
        [sys.executable, "-m", "xtc.tools.cli", "compile", str(path), "-o", str(tmp_path / "m.tar")],
        cwd=tmp_path,
        check=True,
    )
    done = subprocess.run(
        [sys.executable, "-c", LIGHT_HIT, str(path), str(tmp_path / "m.tar")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "(from the compile cache)" in done.stderr
    assert done.stdout.splitlines()[-2:] == ["[]", "[]"]


def test_the_key_names_every_input_of_the_compile(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(small_model(), path)
    records = tmp_path / "records.jsonl"
    records.write_text("")
    base = model_cache_key(path, None, "llvm", 3, None)
    assert base is not None and base == model_cache_key(small_model(), None, "llvm", 3, None)
    others = [
        model_cache_key(small_model(seed=1), None, "llvm", 3, None),
        model_cache_key(path, None, "llvm", 2, None),
        model_cache_key(path, {"data": [1, 3, 16, 16]}, "llvm", 3, None),
        model_cache_key(path, None, "llvm", 3, records),
    ]
    assert len({base, *others}) == 5
    assert model_cache_key(tmp_path / "missing.onnx", None, "llvm", 3, None) is None


def test_a_corrupt_entry_is_rebuilt_not_loaded(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(small_model(), path)
    first = xtc.compile(path)
    (entry,) = model_entries()
    raw = bytearray(entry.read_bytes())
    raw[HEADER_BYTES + len(raw) // 2] ^= 0xFF
    entry.write_bytes(bytes(raw))
    rebuilt = xtc.compile(path)
    assert "compile_cache" not in rebuilt.manifest
    assert entry.read_bytes() != bytes(raw)
    assert xtc.compile(path).manifest["compile_cache"] == "hit"
    x = np.ones((1, 3, 16, 16), np.float32)
    np.testing.assert_array_equal(rebuilt.run({"data": x})[0], first.run({"data": x})[0])


def test_no_cache_neither_reads_nor_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(small_model(), path)
    status, _, err = xtc_cli("compile", path, "--no-cache", "-o", tmp_path / "a.tar", capsys=capsys)
    assert status == 0 and "from the compile cache" not in err
    assert model_entries() == []
    assert "compile_cache" not in xtc.compile(path, cache=False).manifest
    assert model_entries() == []
    xtc.compile(path)
    status, _, err = xtc_cli("compile", path, "--no-cache", "-o", tmp_path / "b.tar", capsys=capsys)
    assert status == 0 and "from the compile cache" not in err
    status, _, err = xtc_cli("compile", path, "-o", tmp_path / "c.tar", capsys=capsys)
    assert status == 0 and "(from the compile cache)" in err
    assert xtc.load(tmp_path / "c.tar").manifest["compile_cache"] == "hit"


def test_cache_info_dir_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = CompileCache.default().root
    status, out, _ = xtc_cli("cache", "dir", capsys=capsys)
    assert status == 0 and out.strip() == str(root)
    status, out, _ = xtc_cli("cache", "info", capsys=capsys)
    assert status == 0 and re.search(r"^entries  0$", out, re.MULTILINE)
    onnx.save(small_model(), tmp_path / "m.onnx")
    kernels = xtc.compile(tmp_path / "m.onnx").manifest["kernel_units"]["units"]
    status, out, _ = xtc_cli("cache", "info", capsys=capsys)
    assert status == 0 and re.search(rf"^entries  {kernels + 1}$", out, re.MULTILINE)
    assert re.search(r"^  models +1 \(\d+\.\d KiB\)$", out, re.MULTILINE), out
    assert re.search(rf"^  kernels +{kernels} \(", out, re.MULTILINE), out
    CompileCache.default().put("onnx-node-cases", "a key", b"cases")  # a kind past 8 letters
    status, out, _ = xtc_cli("cache", "info", capsys=capsys)
    assert re.search(r"^  onnx-node-cases +1 \(\d+ B\)$", out, re.MULTILINE), out
    assert re.search(rf"^  kernels +{kernels} \(", out, re.MULTILINE), out
    status, out, _ = xtc_cli("cache", "clear", capsys=capsys)
    assert status == 0 and f"removed {kernels + 2} entries" in out
    assert model_entries() == [] and CompileCache.default().info().entries == 0
    status, out, _ = xtc_cli("cache", "info", capsys=capsys)
    assert re.search(r"^entries  0$", out, re.MULTILINE)


def test_cache_on_a_file_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "xtc").write_text("a file where the cache folder goes")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    status, _, err = xtc_cli("cache", "info", capsys=capsys)
    assert status == 1 and err.startswith("xtc: error:") and "is a file" in err
    assert len(err.strip().splitlines()) == 1
    onnx.save(small_model(), tmp_path / "m.onnx")
    assert xtc.compile(tmp_path / "m.onnx").manifest["outputs"]  # compiles all the same


def test_compiles_at_once_into_one_cache_all_succeed(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(small_model(), path)
    environment = dict(os.environ, XTC_VERIFY_EACH="0")
    compiles = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "xtc.tools.cli",
                "compile",
                str(path),
                "-o",
                str(tmp_path / f"{i}.tar"),
            ],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    results = [c.communicate(timeout=300) for c in compiles]
    assert [c.returncode for c in compiles] == [0, 0], results
    (entry,) = model_entries()
    assert not [f for f in entry.parent.iterdir() if f.name.startswith(".partial")]
    x = np.ones((1, 3, 16, 16), np.float32)
    a, b = (xtc.load(tmp_path / f"{i}.tar").run({"data": x})[0] for i in range(2))
    np.testing.assert_array_equal(a, b)
    # a third compile, in a fresh process like the two (this process may
    # have registered op plugins, which are part of the key), is a hit
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "xtc.tools.cli",
            "compile",
            str(path),
            "-o",
            str(tmp_path / "2.tar"),
        ],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert "from the compile cache" in again.stderr


def test_the_key_hashes_the_model_file_and_its_external_data(tmp_path: Path) -> None:
    """The model's file is hashed as mapped (an empty one too), and the
    files its tensors' external data name with it."""
    (tmp_path / "empty.onnx").write_bytes(b"")
    assert model_cache_key(tmp_path / "empty.onnx", None, "llvm", 3, None) is not None
    path = tmp_path / "outside.onnx"
    onnx.save(small_model(), path, save_as_external_data=True, location="w.bin", size_threshold=0)
    base = model_cache_key(path, None, "llvm", 3, None)
    data = bytearray((tmp_path / "w.bin").read_bytes())
    data[0] ^= 1
    (tmp_path / "w.bin").write_bytes(bytes(data))
    changed = model_cache_key(path, None, "llvm", 3, None)
    (tmp_path / "w.bin").unlink()
    missing = model_cache_key(path, None, "llvm", 3, None)
    assert len({base, changed, missing}) == 3
