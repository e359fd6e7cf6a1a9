"""Test-wide settings: under CI (CI=true) hypothesis runs derandomized, so a
landing is judged on the same examples every time; locally it explores.
Compiles verify the IR at the end of each stage, as a user's compile does
(verifying after every pass, XTC_VERIFY_EACH=1, made the compiling tests a
fifth slower, and the suite past CI's 20 minutes on a 2-core 2.1 GHz Xeon);
the tests of --verify-each and of each pass's output (xtc-opt verifies what
it prints) check passes one by one. The tests' models are tiny,
under the work for which a model runs serial (driver/scheduling.py): their
loops stay parallel as in a large model (XTC_SERIAL_MODEL_ITERATIONS=0),
so that the parallel code is what they test; a test of the serial models
says so. No test touches the user's caches: XDG_CACHE_HOME (xtc's compile
cache, zig's cache) is a folder of the session, and each test gets a
compile cache of its own, so that no test finds what another compiled
(the `xtc conformance` runs share the session's, `session_cache_env`: the
node cases they collect from onnx are the same for all)."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
os.environ.setdefault("XTC_SERIAL_MODEL_ITERATIONS", "0")

_SESSION_CACHE = Path(tempfile.mkdtemp(prefix="xtc-test-cache-"))
os.environ["XDG_CACHE_HOME"] = str(_SESSION_CACHE)
# zig cc builds its compiler-rt once per cache (seconds): once per session here.
os.environ["ZIG_GLOBAL_CACHE_DIR"] = str(_SESSION_CACHE / "zig")


@pytest.fixture(autouse=True)
def compile_cache_of_the_test(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """XDG_CACHE_HOME for this test alone (its compile cache is
    `<it>/xtc`); module and session fixtures share the session's."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    previous = os.environ["XDG_CACHE_HOME"]
    os.environ["XDG_CACHE_HOME"] = str(folder)
    try:
        yield folder
    finally:
        os.environ["XDG_CACHE_HOME"] = previous
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def session_cache_env() -> dict[str, str]:
    """The environment with the session's XDG_CACHE_HOME, for a subprocess
    whose cache entries are the same for every test."""
    return {**os.environ, "XDG_CACHE_HOME": str(_SESSION_CACHE)}


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)
