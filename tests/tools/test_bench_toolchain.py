"""bench/toolchain.py, latency per linker and OpenMP runtime: the variants
it finds here, and that each variant compiles with the tools it names and
leaves the environment as it found it."""

import os
from pathlib import Path
from types import ModuleType

import pytest

from xtc.runtime import toolchain
from xtc.testing.scripts import load_script

BENCH_PATH = Path(__file__).resolve().parents[2] / "bench" / "toolchain.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """bench/toolchain.py imported by path (bench/ is a folder of scripts)."""
    return load_script(BENCH_PATH, "bench_toolchain")


def test_each_variant_uses_the_tools_it_names(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XTC_TOOLCHAIN", raising=False)
    variants = bench.variants()
    if not variants:
        pytest.skip("neither cc with libgomp nor zig cc here")
    runtimes_before = toolchain.PIP_OPENMP_RUNTIMES
    for variant in variants:
        with bench.toolchain_of(variant):
            linker, openmp = toolchain.find_linker(), toolchain.find_openmp()
        assert variant.label == f"{linker.name} + {openmp.soname}"
        if variant.pip_openmp is not None:
            assert openmp.origin.startswith(f"pip: {variant.pip_openmp} ")
        assert "XTC_TOOLCHAIN" not in os.environ
        assert toolchain.PIP_OPENMP_RUNTIMES == runtimes_before
