"""Kernels compiled apart (driver/kernel_units.py): in worker processes,
their objects cached; the library behaves as the one-module compile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from xtc.driver.compiler import CompileError, compile_model
from xtc.driver.kernel_units import JOBS_VARIABLE, KERNELS, compile_jobs
from xtc.runtime.compile_cache import HEADER_BYTES, CompileCache
from xtc.tools.model_builders import resnet_like


def small_model(seed: int = 0) -> onnx.ModelProto:
    return resnet_like(widths=(4, 8), image=16, seed=seed)


INPUT = {"data": np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)}


def kernel_entries() -> list[Path]:
    folder = CompileCache.default().root / KERNELS
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_kernels_in_workers_compute_what_one_module_computes() -> None:
    whole = compile_model(small_model(), cache=False, jobs=1)
    assert "kernel_units" not in whole.manifest  # one module, as before
    apart = compile_model(small_model(), cache=False, jobs=2)
    units = apart.manifest["kernel_units"]
    assert units["units"] >= 5 and units["from_cache"] == 0 and units["jobs"] == 2
    np.testing.assert_allclose(apart.run(INPUT)[0], whole.run(INPUT)[0], rtol=1e-6, atol=1e-6)
    assert kernel_entries() == []  # cache=False: nothing stored


def test_kernel_objects_are_cached_across_models_with_the_same_kernels() -> None:
    first = compile_model(small_model(seed=0), jobs=1)
    assert first.manifest["kernel_units"]["from_cache"] == 0
    stored = kernel_entries()
    assert len(stored) == first.manifest["kernel_units"]["units"]
    # Other weights, the same kernels: the model misses, every kernel hits.
    other = compile_model(small_model(seed=1), jobs=2)
    assert "compile_cache" not in other.manifest
    assert other.manifest["kernel_units"]["from_cache"] == len(stored)
    expected = compile_model(small_model(seed=1), cache=False, jobs=1).run(INPUT)[0]
    np.testing.assert_allclose(other.run(INPUT)[0], expected, rtol=1e-6, atol=1e-6)
    assert other.manifest["remarks"] == first.manifest["remarks"]


def test_corrupt_kernel_entries_are_rebuilt() -> None:
    first = compile_model(small_model(seed=0), jobs=1)
    for entry in kernel_entries():
        raw = bytearray(entry.read_bytes())
        raw[HEADER_BYTES + 40] ^= 0xFF
        entry.write_bytes(bytes(raw))
    rebuilt = compile_model(small_model(seed=2), jobs=1)
    assert rebuilt.manifest["kernel_units"]["from_cache"] == 0
    assert len(kernel_entries()) == first.manifest["kernel_units"]["units"]
    expected = compile_model(small_model(seed=2), cache=False, jobs=1).run(INPUT)[0]
    np.testing.assert_allclose(rebuilt.run(INPUT)[0], expected, rtol=1e-6, atol=1e-6)
    again = compile_model(small_model(seed=3), jobs=1)
    assert again.manifest["kernel_units"]["from_cache"] == len(kernel_entries())


def test_compile_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(JOBS_VARIABLE, raising=False)
    assert compile_jobs() >= 1 and compile_jobs(3) == 3
    monkeypatch.setenv(JOBS_VARIABLE, "5")
    assert compile_jobs() == 5 and compile_jobs(1) == 1
    monkeypatch.setenv(JOBS_VARIABLE, "many")
    with pytest.raises(CompileError, match="XTC_COMPILE_JOBS must be a positive integer"):
        compile_model(small_model())
    with pytest.raises(CompileError, match="positive integer, got 0"):
        compile_model(small_model(), jobs=0)
