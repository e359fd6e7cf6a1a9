"""What a model library is linked with, and what runs its parallel loops:
the system's tools where present, tools that pip installs otherwise.

    linker = find_linker()    # the system `cc`; else `zig cc` (the ziglang package)
    openmp = find_openmp()    # the system libgomp; else one a pip package installed
    link_shared(linker, [model.o, weights.s], model.so, openmp)

The linker is `cc` when it is on PATH, else the zig binary of the `ziglang`
package (a dependency of xtc) as `zig cc`, which carries its own clang, lld,
glibc stubs and compiler-rt. `cc` links with GNU gold (`-fuse-ld=gold`)
where `ld.gold` is on PATH, else with its default linker (GNU ld): a model
library is mostly its weights, which gold copies with less work (ResNet-50's
97 MiB: about 0.15 s of CPU against 0.25 s). The OpenMP runtime (GOMP_parallel,
omp_get_thread_num, omp_get_num_threads) is the system's libgomp when the
dynamic loader knows it (`ctypes.util.find_library("gomp")`), else the first
of `PIP_OPENMP_RUNTIMES` that is installed: GCC's libgomp as the xgboost
wheels bundle it (xgboost-cpu is a dependency of xtc), or Intel's libiomp5
(`pip install intel-openmp`), which exports the same GOMP_* entry points.

A library links its runtime by name (`-l:libgomp.so.1`) when it is the
system's, else by path with the runtime's folder as its run path, so that
the library, and a C program linking it, load it without help.

`XTC_TOOLCHAIN=pip` skips the system's cc and libgomp: a build as on an
image that has neither (python:3.11-slim). Every choice is recorded (the
manifest's "toolchain") and says why it was made.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TOOLCHAIN_VARIABLE = "XTC_TOOLCHAIN"
TOOLCHAIN_CHOICES = ("auto", "pip")
"""auto (the default): the system's tools where present; pip: only pip's."""

PIP_LINKER_PACKAGE = "ziglang"
PIP_OPENMP_RUNTIMES = (
    ("xgboost-cpu", r"libgomp(-[0-9a-f]+)?\.so(\.\d+)*"),
    ("xgboost", r"libgomp(-[0-9a-f]+)?\.so(\.\d+)*"),
    ("intel-openmp", r"libiomp5\.so"),
)
"""(pip distribution, file name pattern) of OpenMP runtimes exporting the
GOMP_* entry points, in order of preference: GCC's libgomp first (the
system's runtime, so the same behaviour and speed), then Intel's."""

OPENMP_SYMBOL = "GOMP_parallel"
NO_OPENMP_HINT = (
    "install one: `pip install intel-openmp` (Intel's libiomp5, which has the GOMP_* entry "
    "points), or the system's libgomp (`apt install libgomp1`)"
)


class ToolchainError(RuntimeError):
    """No linker or no OpenMP runtime, a bad XTC_TOOLCHAIN, or a failed link."""


@dataclass(frozen=True)
class Linker:
    """A C compiler driver that links shared libraries: `command` is its
    argv prefix (`cc`, or `zig cc`)."""

    name: str
    command: tuple[str, ...]
    origin: str
    """Where it comes from: "system (/usr/bin/cc)" or "pip: ziglang 0.17.1"."""
    reason: str = ""
    """Why not the system's, when it is not."""
    link_options: tuple[str, ...] = ()
    """Given when linking only (not when assembling): `-fuse-ld=gold`."""

    def to_json(self) -> dict[str, str]:
        entry = {"name": self.name, "from": self.origin}
        entry |= {"options": " ".join(self.link_options)} if self.link_options else {}
        return entry | ({"why": self.reason} if self.reason else {})


@dataclass(frozen=True)
class OpenMPRuntime:
    """A shared library with libgomp's entry points. `path` is the file of
    a pip-installed runtime; a system one is found by its `soname`."""

    soname: str
    path: Path | None
    origin: str
    """"system" or "pip: <distribution> <version>"."""
    reason: str = ""

    @property
    def load_name(self) -> str:
        """What dlopen takes to load it."""
        return str(self.path) if self.path is not None else self.soname

    def link_arguments(self) -> list[str]:
        if self.path is None:
            return [f"-l:{self.soname}"]
        return [str(self.path), f"-Wl,-rpath,{self.path.parent}"]

    def to_json(self) -> dict[str, str]:
        entry = {"library": self.soname, "from": self.origin}
        return entry | ({"why": self.reason} if self.reason else {})


def toolchain_choice() -> str:
    """XTC_TOOLCHAIN ("auto" when unset); ToolchainError for another value."""
    value = os.environ.get(TOOLCHAIN_VARIABLE, "auto").strip() or "auto"
    if value not in TOOLCHAIN_CHOICES:
        raise ToolchainError(
            f"{TOOLCHAIN_VARIABLE} must be one of {', '.join(TOOLCHAIN_CHOICES)} (pip: link with "
            f"zig cc and a pip-installed OpenMP runtime even where the system has cc and "
            f"libgomp), got {value!r}"
        )
    return value


# ----------------------------------------------------------------- linker


GOLD = "ld.gold"
USE_GOLD = "-fuse-ld=gold"


def find_linker() -> Linker:
    """The system `cc` when it is on PATH (and XTC_TOOLCHAIN is not pip),
    with gold when `ld.gold` is on PATH too, else `zig cc` from the ziglang
    package; ToolchainError naming what to install when neither is there."""
    choice = toolchain_choice()
    if choice == "auto":
        system = shutil.which("cc")
        if system is not None:
            options = (USE_GOLD,) if shutil.which(GOLD) is not None else ()
            return Linker("cc", (system,), f"system ({system})", link_options=options)
        reason = "no `cc` on PATH"
    else:
        reason = f"{TOOLCHAIN_VARIABLE}=pip"
    zig = _zig_binary()
    if zig is None:
        raise ToolchainError(
            f"no C compiler to link the model: {reason}, and the {PIP_LINKER_PACKAGE} "
            f"package (zig cc) is not installed: `pip install {PIP_LINKER_PACKAGE}` "
            "(or install gcc or clang)"
        )
    version = _distribution_version(PIP_LINKER_PACKAGE)
    return Linker("zig cc", (str(zig), "cc"), f"pip: {PIP_LINKER_PACKAGE} {version}", reason)


def _zig_binary() -> Path | None:
    """The `zig` executable inside the ziglang package, found without
    importing it (importing it runs nothing, but its `-m` entry execs zig)."""
    spec = importlib.util.find_spec(PIP_LINKER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        binary = Path(folder) / "zig"
        if binary.is_file() and os.access(binary, os.X_OK):
            return binary
    return None


def _distribution_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


# ----------------------------------------------------------------- OpenMP


def find_openmp() -> OpenMPRuntime:
    """The system's libgomp when the dynamic loader knows it (and
    XTC_TOOLCHAIN is not pip), else the first pip-installed runtime of
    PIP_OPENMP_RUNTIMES; ToolchainError naming what to install otherwise."""
    choice = toolchain_choice()
    if choice == "auto":
        soname = ctypes.util.find_library("gomp")
        if soname is not None:
            return OpenMPRuntime(soname, None, "system")
        reason = "no system libgomp"
    else:
        reason = f"{TOOLCHAIN_VARIABLE}=pip"
    installed = pip_openmp_runtimes(reason)
    if not installed:
        raise ToolchainError(
            f"the model has parallel loops, which need an OpenMP runtime: {reason}, and no "
            f"pip package provides one ({', '.join(d for d, _ in PIP_OPENMP_RUNTIMES)}); "
            f"{NO_OPENMP_HINT}"
        )
    return installed[0]


def pip_openmp_runtimes(reason: str = "") -> list[OpenMPRuntime]:
    """The runtimes of PIP_OPENMP_RUNTIMES installed in this environment, in
    order of preference."""
    found: list[OpenMPRuntime] = []
    for distribution, pattern in PIP_OPENMP_RUNTIMES:
        path = _installed_file(distribution, pattern)
        if path is not None:
            origin = f"pip: {distribution} {_distribution_version(distribution)}"
            found.append(OpenMPRuntime(path.name, path, origin, reason))
    return found


def _installed_file(distribution: str, pattern: str) -> Path | None:
    """The file named like `pattern` that pip installed for `distribution`."""
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if re.fullmatch(pattern, file.name):
            path = Path(str(file.locate())).resolve()
            if path.is_file():
                return path
    return None


def open_library(path: Path, openmp: str | None = None) -> ctypes.CDLL:
    """`path` loaded with ctypes. A library built with a pip runtime finds
    it through its run path; where that path is gone (an artifact built in
    another environment), the pip runtime of the same name (`openmp`, the
    manifest's) installed here is loaded first. OSError when it cannot load."""
    try:
        return ctypes.CDLL(str(path))
    except OSError as e:
        if openmp is None or openmp not in str(e):
            raise
        same = [r for r in pip_openmp_runtimes() if r.soname == openmp and r.path is not None]
        if not same:
            raise
        ctypes.CDLL(str(same[0].path))  # the loader then finds it by name (soname)
        return ctypes.CDLL(str(path))


# ------------------------------------------------------------------- link


def link_shared(
    linker: Linker,
    inputs: Sequence[Path],
    output: Path,
    openmp: OpenMPRuntime | None = None,
) -> None:
    """Links objects and assembly files into the shared library `output`,
    with libm and `openmp` when given. Every symbol must resolve (`-z defs`):
    ToolchainError naming the undefined ones otherwise."""
    command = [*linker.command, *linker.link_options, "-shared", "-o", str(output)]
    command += map(str, inputs)
    if linker.name == "zig cc":
        # -O2: zig cc's default (Debug) also builds its UBSan runtime (10 s);
        # -g0: no line table naming the scratch folder (the same library each build)
        command += ["-O2", "-g0"]
    # --build-id=none: a build ID is a hash of the whole output, weights and
    # all, which gold computes slowly (ResNet-50's 137 MiB: 0.35 s of a 0.4 s
    # link); nothing reads it, and without it the library stays reproducible
    command += ["-Wl,-z,defs", "-Wl,--build-id=none"]
    command += [*(openmp.link_arguments() if openmp else []), "-lm"]
    environment = _zig_environment() if linker.name == "zig cc" else None
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=environment)
    if result.returncode == 0:
        return
    undefined = undefined_symbols(result.stderr)
    if undefined:
        plural = len(undefined) > 1
        raise ToolchainError(
            f"linking the model failed: undefined symbol{'s' if plural else ''} "
            f"{', '.join(undefined)} (no library of the link defines {'them' if plural else 'it'}; "
            f"{' '.join(command)})"
        )
    raise ToolchainError(f"linking the model failed ({' '.join(command)}):\n{result.stderr}")


class Assembly:
    """An assembly file on its way to an object, assembled by a process of
    its own, started when made, so that the caller works meanwhile; `wait`
    for it."""

    def __init__(self, linker: Linker, source: Path, output: Path) -> None:
        self.command = [*linker.command, "-c", "-o", str(output), str(source)]
        environment = _zig_environment() if linker.name == "zig cc" else None
        self.process = subprocess.Popen(
            self.command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )

    def wait(self) -> None:
        """Waits for the object; ToolchainError with the assembler's message
        when it failed."""
        _, errors = self.process.communicate()
        if self.process.returncode != 0:
            raise ToolchainError(f"assembling failed ({' '.join(self.command)}):\n{errors}")

    def abandon(self) -> None:
        """Stops the assembler (the object is not wanted any more)."""
        self.process.kill()
        self.process.communicate()


def undefined_symbols(linker_output: str) -> list[str]:
    """The undefined symbols a link reports (lld's and GNU ld's wording)."""
    names = re.findall(r"undefined (?:symbol: |reference to [`'])([^\s'`]+)", linker_output)
    return list(dict.fromkeys(names))


def _zig_environment() -> dict[str, str]:
    """zig keeps a cache (compiler-rt built once, ~3 s) under
    $XDG_CACHE_HOME or $HOME/.cache; where neither is writable, a folder in
    the temporary directory."""
    environment = dict(os.environ)
    if "ZIG_GLOBAL_CACHE_DIR" in environment:
        return environment
    home = environment.get("HOME")
    cache = environment.get("XDG_CACHE_HOME") or (os.path.join(home, ".cache") if home else None)
    if cache is None or not _creatable(Path(cache)):
        folder = Path(tempfile.gettempdir()) / f"xtc-zig-cache-{os.getuid()}"
        environment["ZIG_GLOBAL_CACHE_DIR"] = str(folder)
    return environment


def _creatable(folder: Path) -> bool:
    """Whether `folder` is, or can be made, a writable folder."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    return False
