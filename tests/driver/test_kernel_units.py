"""Kernels compiled apart (driver/kernel_units.py): in worker processes,
their objects cached; the library behaves as the one-module compile."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from xtc.driver.compile_settings import JOBS_VARIABLE, compile_jobs
from xtc.driver.compiler import CompileError, compile_model
from xtc.driver.kernel_units import (
    KERNELS,
    KernelUnit,
    UnitPlan,
    UnitResult,
    split_kernel_units,
    start_units,
)
from xtc.runtime.compile_cache import HEADER_BYTES, CompileCache
from xtc.runtime.timing import Timer
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


def test_units_are_scheduled_apart_as_the_one_module_compile_schedules_them() -> None:
    whole = compile_model(small_model(), cache=False, jobs=1)
    timer = Timer()
    apart = compile_model(small_model(), cache=False, jobs=2, timer=timer)
    # The same schedule steps, in the same place of the replayable pipeline,
    # and the same remarks (the refused steps and the vectorizer's among them).
    assert apart.manifest["pipeline"] == whole.manifest["pipeline"]
    assert apart.manifest["remarks"] == whole.manifest["remarks"]
    # The workers scheduled and lowered the kernels; this process did not.
    summed = ("llvm", "kernel objects")
    assert timer.seconds(*summed, "schedule-kernels (kernels, summed)") > 0
    assert timer.seconds(*summed, "convert-tir-to-llvm (kernels, summed)") > 0
    assert timer.seconds("schedule-kernels", "tir-split") == 0


def test_a_hit_gives_the_steps_its_compile_applied() -> None:
    first = compile_model(small_model(seed=0), jobs=1)
    hit = compile_model(small_model(seed=4), jobs=1)  # other weights: every kernel hits
    assert hit.manifest["kernel_units"]["from_cache"] == hit.manifest["kernel_units"]["units"]
    assert hit.manifest["pipeline"] == first.manifest["pipeline"]


def test_a_script_without_a_main_guard_compiles_once(tmp_path: Path) -> None:
    """The workers (forked by the fork server) do not run the caller's
    script again: a script that compiles at top level, with no
    `if __name__ == "__main__"`, compiles once and ends."""
    import subprocess
    import sys

    onnx.save(small_model(), tmp_path / "m.onnx")
    script = tmp_path / "compile_it.py"
    script.write_text(
        "from xtc.driver.compiler import compile_model\n"
        "print('compiling', flush=True)\n"
        f"model = compile_model({str(tmp_path / 'm.onnx')!r}, jobs=2, cache=False)\n"
        "print(model.manifest['kernel_units']['jobs'], flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["compiling", "2"]


def test_workers_start_while_the_caller_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entering kernel_workers does not wait for the workers' start (the
    fork server's imports, about 0.8 s): a thread starts them."""
    import threading
    from concurrent.futures import ProcessPoolExecutor

    from xtc.driver.kernel_units import kernel_workers

    release = threading.Event()
    submitted: list[str] = []

    def held_submit(pool: ProcessPoolExecutor, fn: object, *args: object) -> None:
        submitted.append(threading.current_thread().name)
        assert release.wait(timeout=10)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", held_submit)
    with kernel_workers(2) as workers:
        assert workers is not None  # entered while the starts are held
        release.set()
    assert submitted == ["xtc-workers", "xtc-workers"]


def test_a_model_is_imported_while_its_workers_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """compile_model starts the kernels' workers before it imports the
    model, so that they are ready when its kernels are."""
    from collections.abc import Iterator
    from concurrent.futures import ProcessPoolExecutor
    from contextlib import contextmanager

    from xtc.driver import kernel_units
    from xtc.frontend import onnx as frontend

    events: list[str] = []
    kernel_workers, import_model = kernel_units.kernel_workers, frontend.import_model

    @contextmanager
    def starting(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
        with kernel_workers(jobs) as workers:
            events.append(f"{jobs} workers")
            yield workers

    def importing(*args: object) -> object:
        events.append("import")
        return import_model(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(kernel_units, "kernel_workers", starting)
    monkeypatch.setattr(frontend, "import_model", importing)
    model = compile_model(small_model(), cache=False, jobs=2)
    assert events == ["2 workers", "import"]  # and no second pool
    assert model.manifest["kernel_units"]["jobs"] == 2
    np.testing.assert_allclose(
        model.run(INPUT)[0], compile_model(small_model(), cache=False, jobs=1).run(INPUT)[0]
    )


def _tir_model() -> tuple[ModuleOp, str]:
    """A small model lowered to tir (convert-te-to-tir), as split_kernel_units
    meets it, and its model function's name."""
    from xtc import interp
    from xtc.driver.compiler import pipeline
    from xtc.driver.pipelines import apply_pipeline
    from xtc.frontend.onnx import import_model

    module = import_model(resnet_like(widths=(4, 8), image=16))
    entry = interp.entry_function(module).sym_name.data
    for name in pipeline(3).split(","):
        apply_pipeline(module, name)
        if name == "convert-te-to-tir":
            return module, entry
    raise AssertionError("no convert-te-to-tir in the pipeline")


def _defined(module: ModuleOp, entry: str) -> int:
    return sum(
        1
        for op in module.ops
        if isinstance(op, FuncOp) and op.body.blocks and op.sym_name.data != entry
    )


def test_each_unit_is_given_as_soon_as_it_is_split() -> None:
    # the workers start on the first unit while the others are printed
    module, entry = _tir_model()
    kernels = _defined(module, entry)
    assert kernels >= 2
    units = split_kernel_units(module, entry)
    first = next(units)
    assert _defined(module, entry) == kernels - 1
    defined = {f.sym_name.data for f in module.ops if isinstance(f, FuncOp) and f.body.blocks}
    assert first.function not in defined
    rest = list(units)
    assert len(rest) == kernels - 1 and _defined(module, entry) == 0


def test_start_units_submits_each_unit_as_it_is_split() -> None:
    module, entry = _tir_model()
    events: list[str] = []

    def split() -> Iterator[KernelUnit]:
        for unit in split_kernel_units(module, entry):
            events.append("split")
            yield unit

    class Workers:
        def submit(self, *args: object) -> Future[UnitResult]:
            events.append("submit")
            return Future()

    pending = start_units(split(), 3, UnitPlan(), Workers(), None)  # type: ignore[arg-type]
    assert events == ["split", "submit"] * len(pending.units)
