"""bench/gpu_shared.py without a GPU: its three schedules of a matmul
compile for CUDA and compute numpy's numbers on the interpreter device
(the shared one with its barrier: the block's threads at once)."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH_PATH = Path(__file__).resolve().parents[2] / "bench" / "gpu_shared.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_gpu_shared", BENCH_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_every_schedule_computes_the_matmul(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--m", "8", "--k", "3", "--n", "8", "--tile", "4", "--repeat", "1"]
    assert bench.main([*argv, "--device", "interp"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["default", "blocks", "shared"]
    for line in lines:
        error = float(line.split("rel err ")[1].split(",")[0])
        assert error < 1e-6, line


def test_a_tile_that_does_not_divide_is_one_line(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--m", "6", "--tile", "4", "--device", "interp"]) == 1
    assert capsys.readouterr().err == "--tile 4 must divide --m and --n\n"
