"""The linker and the OpenMP runtime (runtime/toolchain.py): the system's
`cc` and libgomp where present; where they are not (a slim image), zig cc
from the ziglang package and an OpenMP runtime that pip installed, for the
main job (compile, run, the same answer as onnxruntime) and for the JIT;
XTC_TOOLCHAIN=pip; clear messages when nothing links; undefined symbols
named at link time.

"Hidden" means: the process runs with PATH holding only an empty folder
(no `cc`, no `gcc`, no `ld`) and no LD_LIBRARY_PATH, and with
`ctypes.util.find_library("gomp")` answering None, as it does on an image
without libgomp. The last is a patch in the child process (HIDING below):
the system's libgomp sits in the loader's cache, which no environment
variable hides, and find_library is how xtc asks for it. Where the machine
allows a private mount namespace (unshare), one more test hides libgomp for
real, patching nothing (NAMESPACE below).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import llvmlite.binding as llvm_binding
import numpy as np
import onnx
import pytest

import xtc
from xtc.runtime import toolchain
from xtc.runtime.library import LibraryError
from xtc.runtime.toolchain import (
    Assembly,
    Linker,
    ToolchainError,
    find_linker,
    find_openmp,
    link_shared,
    pip_openmp_runtimes,
    undefined_symbols,
)
from xtc.tools.model_builders import resnet_like

HIDING = r"""
import atexit, ctypes.util, json, os, sys

_find_library = ctypes.util.find_library
ctypes.util.find_library = lambda name: None if name == "gomp" else _find_library(name)
only = os.environ.get("TEST_PIP_OPENMP_ONLY")
if only:
    import xtc.runtime.toolchain as toolchain
    toolchain.PIP_OPENMP_RUNTIMES = tuple(
        r for r in toolchain.PIP_OPENMP_RUNTIMES if r[0] == only
    )


def _report_openmp():
    # Every OpenMP runtime this process mapped, by file.
    with open("/proc/self/maps") as maps:
        files = {line.split()[-1] for line in maps if line.count("/")}
    found = sorted(f for f in files if os.path.basename(f).startswith(("libgomp", "libiomp5")))
    sys.stderr.write("openmp-mapped: " + json.dumps(found) + "\n")


atexit.register(_report_openmp)
"""

CLI = HIDING + "\nfrom xtc.tools.cli import main\nmain(sys.argv[1:])\n"

JIT = (
    HIDING
    + r"""
import numpy as np
from xtc import interp
from xtc.testing.graph_op import random_inputs
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module

MATMUL = '''
func.func @main(%a: tensor<7x5xf32>, %b: tensor<5x6xf32>) -> tensor<7x6xf32> {
  %c = graph.matmul %a, %b : (tensor<7x5xf32>, tensor<5x6xf32>) -> tensor<7x6xf32>
  func.return %c : tensor<7x6xf32>
}'''
inputs = random_inputs(parse_module(MATMUL), seed=3)
tir = apply_pipeline(
    parse_module(MATMUL),
    "convert-graph-to-te,convert-te-to-tir,tir-split{loop=i0 factor=3},tir-parallel{loop=i0_o}",
)
(got,) = run_native(tir, inputs, "tir-plan-memory,convert-tir-to-llvm")
(want,) = interp.run(parse_module(MATMUL), inputs)
np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
print("jit ok")
"""
)


def hidden_environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This environment less the system's tools: PATH is one empty folder,
    no LD_LIBRARY_PATH, and XTC_NUM_THREADS=2."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    environment = {
        k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "XTC_TOOLCHAIN")
    }
    return environment | {"PATH": str(empty), "XTC_NUM_THREADS": "2"} | extra


def run_hidden(
    script: str, arguments: list[str], tmp_path: Path, **extra: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "hidden.py").write_text(script)
    return subprocess.run(
        [sys.executable, str(tmp_path / "hidden.py"), *arguments],
        cwd=tmp_path,
        env=hidden_environment(tmp_path, **extra),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def mapped_openmp(stderr: str) -> list[str]:
    lines = [line for line in stderr.splitlines() if line.startswith("openmp-mapped: ")]
    assert lines, stderr
    return json.loads(lines[-1].removeprefix("openmp-mapped: "))


def only_pip_runtimes(mapped: list[str]) -> bool:
    """Whether every OpenMP runtime a process mapped is one pip installed
    (none is the system's)."""
    pip_files = {str(r.path) for r in pip_openmp_runtimes()}
    return bool(mapped) and all(str(Path(f).resolve()) in pip_files for f in mapped)


def require_pip_tools(package: str | None = None) -> None:
    if toolchain._zig_binary() is None:
        pytest.skip("the ziglang package is not installed (pip install ziglang)")
    names = [r.origin for r in pip_openmp_runtimes()]
    if not names:
        pytest.skip("no pip OpenMP runtime is installed (xgboost-cpu or intel-openmp)")
    if package is not None and not any(n.startswith(f"pip: {package} ") for n in names):
        pytest.skip(f"the {package} package is not installed (pip install {package})")


def onnxruntime_logits(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    import onnxruntime

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, {"data": x})[0]


def write_main_job(tmp_path: Path) -> tuple[onnx.ModelProto, np.ndarray]:
    """resnet.onnx (a ResNet-style model) and in.npz (its input) in tmp_path."""
    model = resnet_like()
    onnx.save(model, tmp_path / "resnet.onnx")
    x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", data=x)
    return model, x


COMPILE = ["compile", "resnet.onnx", "-o", "resnet.tar"]
RUN = ["run", "resnet.tar", "--inputs", "in.npz", "--output", "out.npz"]


def check_main_job(tmp_path: Path, model: onnx.ModelProto, x: np.ndarray, notes: str) -> dict:
    """out.npz against onnxruntime, and `xtc compile`'s stderr (`notes`)
    naming pip's tools; returns the manifest's toolchain."""
    assert "Traceback" not in notes
    assert "xtc: note: linked with zig cc (pip: ziglang" in notes
    assert "xtc: note: parallel loops run on" in notes
    got = np.load(tmp_path / "out.npz")
    (name,) = got.files
    np.testing.assert_allclose(got[name], onnxruntime_logits(model, x), rtol=1e-4, atol=1e-4)
    with tarfile.open(tmp_path / "resnet.tar") as archive:
        member = archive.extractfile("manifest.json")
        assert member is not None
        return json.load(member)["toolchain"]


def main_job_without_system_tools(tmp_path: Path, pip_openmp: str | None = None) -> dict:
    """`xtc compile` and `xtc run` of a ResNet-style model with the system's
    tools hidden (HIDING); checks the answer against onnxruntime and that
    only pip's OpenMP runtime was mapped. Returns the manifest's toolchain."""
    model, x = write_main_job(tmp_path)
    extra = {"TEST_PIP_OPENMP_ONLY": pip_openmp} if pip_openmp else {}
    compiled = run_hidden(CLI, COMPILE, tmp_path, **extra)
    assert compiled.returncode == 0, compiled.stderr
    ran = run_hidden(CLI, RUN, tmp_path, **extra)
    assert ran.returncode == 0, ran.stderr
    mapped = mapped_openmp(ran.stderr)
    assert only_pip_runtimes(mapped), mapped
    return check_main_job(tmp_path, model, x, compiled.stderr)


def test_the_main_job_runs_without_the_system_cc_and_libgomp(tmp_path: Path) -> None:
    require_pip_tools()
    chosen = main_job_without_system_tools(tmp_path)
    assert chosen["linker"] == {
        "name": "zig cc",
        "from": f"pip: ziglang {toolchain._distribution_version('ziglang')}",
        "why": "no `cc` on PATH",
    }
    assert chosen["openmp"]["from"] == pip_openmp_runtimes()[0].origin
    assert chosen["openmp"]["why"] == "no system libgomp"


C_PROGRAM = r"""
#include <stdio.h>
#include "model.h"

/* Runs the model on zeros and prints output 0, one value a line. */
int main(void) {
    static xtc_input_0_t input[XTC_INPUT_0_COUNT];
    static xtc_output_0_t output[XTC_OUTPUT_0_COUNT];
    const void *inputs[XTC_NUM_INPUTS] = {input};
    void *outputs[XTC_NUM_OUTPUTS] = {output};
    if (xtc_run(inputs, outputs) != 0) return 3;
    for (int i = 0; i < XTC_OUTPUT_0_COUNT; i++) printf("%.9g\n", output[i]);
    return 0;
}
"""


def test_a_c_program_links_a_library_built_without_the_system_tools(tmp_path: Path) -> None:
    """zig cc links the C program too; the library's run path finds pip's
    OpenMP runtime with an empty environment."""
    require_pip_tools()
    model = resnet_like(widths=(4, 8), image=16)
    onnx.save(model, tmp_path / "m.onnx")
    compiled = run_hidden(CLI, ["compile", "m.onnx", "-o", "m.tar"], tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    with tarfile.open(tmp_path / "m.tar") as archive:
        archive.extractall(tmp_path, filter="data")
    (tmp_path / "program.c").write_text(C_PROGRAM)
    zig = str(toolchain._zig_binary())
    flags = ["-O2", "-Wall", "-Werror", "-o", "program", "program.c", "model.so"]
    link = subprocess.run(
        [zig, "cc", *flags, "-Wl,-rpath,$ORIGIN"],
        cwd=tmp_path,
        env=toolchain._zig_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert link.returncode == 0, link.stderr
    ran = subprocess.run(
        [str(tmp_path / "program")], capture_output=True, text=True, check=False, env={}
    )
    assert ran.returncode == 0, ran.stderr
    got = np.array([float(v) for v in ran.stdout.split()], np.float32)
    want = onnxruntime_logits(model, np.zeros((1, 3, 16, 16), np.float32)).ravel()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# In a mount namespace of its own, the system's libgomp files read as empty,
# the loader's cache is rebuilt without them, and PATH is an empty folder:
# the machine as a slim image shows it, with nothing of xtc patched.
NAMESPACE = """\
set -eu
for library in {libraries}; do {mount} --bind /dev/null "$library"; done
{ldconfig} -C "{cache}" 2>/dev/null
{mount} --bind "{cache}" /etc/ld.so.cache
export PATH="{empty}"
unset LD_LIBRARY_PATH
if "{python}" -c "import ctypes; ctypes.CDLL('libgomp.so.1')" 2>/dev/null; then exit 97; fi
"{python}" -m xtc.tools.cli {compile} 2>compile.err
"{python}" -m xtc.tools.cli {run}
"""
LDCONFIG = "/sbin/ldconfig"
"""Where ctypes.util.find_library runs it from."""


def system_libgomp_files() -> list[str]:
    """The files behind every libgomp the loader's cache lists."""
    listing = subprocess.run([LDCONFIG, "-p"], capture_output=True, text=True, check=True).stdout
    paths = [line.split("=>")[-1].strip() for line in listing.splitlines() if "libgomp" in line]
    return sorted({os.path.realpath(p) for p in paths})


def namespace_command(tmp_path: Path) -> list[str]:
    """unshare with a private mount namespace (as root in a user namespace
    when not root); skips when this machine does not allow one."""
    import shutil

    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if unshare is None or mount is None or not Path(LDCONFIG).is_file():
        pytest.skip("needs unshare, mount and /sbin/ldconfig")
    command = [unshare, "--mount", "--propagation", "private"]
    if os.getuid() != 0:
        command.append("--map-root-user")
    (tmp_path / "probe").touch()
    probe = subprocess.run(
        [*command, mount, "--bind", "/dev/null", str(tmp_path / "probe")],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip("this machine allows no private mount namespace (unshare --mount)")
    return command


def test_the_main_job_runs_in_a_namespace_without_cc_and_libgomp(tmp_path: Path) -> None:
    import shlex
    import shutil

    require_pip_tools()
    command = namespace_command(tmp_path)
    model, x = write_main_job(tmp_path)
    (tmp_path / "empty-bin").mkdir()
    script = NAMESPACE.format(
        libraries=" ".join(map(shlex.quote, system_libgomp_files())),
        mount=shutil.which("mount"),
        ldconfig=LDCONFIG,
        cache=tmp_path / "ld.so.cache",
        empty=tmp_path / "empty-bin",
        python=sys.executable,
        compile=" ".join(COMPILE),
        run=" ".join(RUN),
    )
    (tmp_path / "slim.sh").write_text(script)
    environment = {k: v for k, v in os.environ.items() if k != "XTC_TOOLCHAIN"}
    result = subprocess.run(
        [*command, "/bin/bash", "slim.sh"],
        cwd=tmp_path,
        env=environment | {"XTC_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode != 97, "libgomp still loads in the namespace"
    notes = (tmp_path / "compile.err").read_text() if (tmp_path / "compile.err").exists() else ""
    assert result.returncode == 0, result.stderr + notes
    chosen = check_main_job(tmp_path, model, x, notes)
    assert chosen["linker"]["why"] == "no `cc` on PATH"
    assert chosen["openmp"]["why"] == "no system libgomp"


# Builds with pip's runtime as another environment would hold it: a copy in
# ./elsewhere, which the library's run path names.
BUILD_ELSEWHERE = r"""
import os, shutil, sys
from pathlib import Path
import onnx
import xtc
from xtc.runtime import toolchain
from xtc.tools.model_builders import resnet_like

original = toolchain.pip_openmp_runtimes()[0].path
copy = Path("elsewhere") / original.name
copy.parent.mkdir()
shutil.copy(original, copy)
found = toolchain._installed_file
toolchain._installed_file = lambda d, p: copy.resolve() if found(d, p) == original else None
os.environ["XTC_TOOLCHAIN"] = "pip"
xtc.compile(resnet_like(widths=(4, 8), image=16)).export("m.tar")
"""
LOAD = r"""
import numpy as np, xtc
(y,) = xtc.load("m.tar").run([np.zeros((1, 3, 16, 16), np.float32)])
np.save("y.npy", y)
"""


def test_an_artifact_finds_its_pip_runtime_in_another_environment(tmp_path: Path) -> None:
    require_pip_tools()
    for script in (BUILD_ELSEWHERE, "import shutil; shutil.rmtree('elsewhere')", LOAD):
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    # Where this environment lacks that runtime too, the refusal says what to do.
    without = "from xtc.runtime import toolchain; toolchain.PIP_OPENMP_RUNTIMES = ()\n"
    done = subprocess.run(
        [sys.executable, "-c", without + LOAD], cwd=tmp_path, capture_output=True, text=True
    )
    assert "ArtifactError: the library in the artifact cannot be loaded" in done.stderr
    runtime = pip_openmp_runtimes()[0]
    assert (
        f"(its parallel loops need {runtime.soname}, which came from {runtime.origin} where "
        "the model was built: install that here, or recompile the model here)" in done.stderr
    )
    zeros = np.zeros((1, 3, 16, 16), np.float32)
    want = onnxruntime_logits(resnet_like(widths=(4, 8), image=16), zeros)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-4, atol=1e-4)


def test_intel_openmp_runs_the_main_job(tmp_path: Path) -> None:
    require_pip_tools("intel-openmp")
    chosen = main_job_without_system_tools(tmp_path, pip_openmp="intel-openmp")
    assert chosen["openmp"]["library"] == "libiomp5.so"


def test_the_jit_runs_parallel_loops_without_the_system_libgomp(tmp_path: Path) -> None:
    require_pip_tools()
    result = run_hidden(JIT, [], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "jit ok" in result.stdout
    mapped = mapped_openmp(result.stderr)
    assert only_pip_runtimes(mapped), mapped


def test_the_system_tools_are_chosen_where_present(tmp_path: Path) -> None:
    import ctypes.util
    import shutil

    system_cc = shutil.which("cc")
    if system_cc is None or ctypes.util.find_library("gomp") is None:
        pytest.skip("this machine has no system cc or libgomp")
    gold = ("-fuse-ld=gold",) if shutil.which("ld.gold") else ()
    assert find_linker() == Linker("cc", (system_cc,), f"system ({system_cc})", link_options=gold)
    assert find_openmp().origin == "system" and find_openmp().path is None
    chosen = xtc.compile(resnet_like(widths=(4, 8), image=16)).manifest["toolchain"]
    assert chosen == {
        "linker": {"name": "cc", "from": f"system ({system_cc})"}
        | ({"options": "-fuse-ld=gold"} if gold else {}),
        "openmp": {"library": ctypes.util.find_library("gomp"), "from": "system"},
    }


def test_cc_links_with_gold_only_where_ld_gold_is_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    system_cc = shutil.which("cc")
    if system_cc is None:
        pytest.skip("this machine has no system cc")
    # a PATH of cc alone: no ld.gold on it, cc's default linker
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "cc").symlink_to(system_cc)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert find_linker().link_options == ()
    (tmp_path / "bin" / "ld.gold").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "ld.gold").chmod(0o755)
    assert find_linker().link_options == ("-fuse-ld=gold",)
    assert find_linker().to_json()["options"] == "-fuse-ld=gold"


def test_xtc_toolchain_pip_skips_the_system_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    require_pip_tools()
    monkeypatch.setenv("XTC_TOOLCHAIN", "pip")
    linker = find_linker()
    assert linker.name == "zig cc" and linker.reason == "XTC_TOOLCHAIN=pip"
    openmp = find_openmp()
    assert openmp.origin.startswith("pip: ") and openmp.path is not None
    assert openmp.path.is_file() and openmp.reason == "XTC_TOOLCHAIN=pip"


def test_a_bad_xtc_toolchain_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XTC_TOOLCHAIN", "gcc")
    with pytest.raises(ToolchainError, match=r"XTC_TOOLCHAIN must be one of auto, pip .*'gcc'"):
        find_linker()


def test_no_linker_at_all_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(toolchain, "_zig_binary", lambda: None)
    with pytest.raises(ToolchainError) as error:
        find_linker()
    assert str(error.value) == (
        "no C compiler to link the model: no `cc` on PATH, and the ziglang package (zig cc) "
        "is not installed: `pip install ziglang` (or install gcc or clang)"
    )
    # What `xtc compile` says: the same, as a LibraryError.
    with pytest.raises(LibraryError, match=r"no `cc` on PATH.*pip install ziglang"):
        xtc.compile(resnet_like(widths=(4, 8), image=16))


def test_no_openmp_runtime_at_all_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes.util

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(toolchain, "PIP_OPENMP_RUNTIMES", ())
    with pytest.raises(ToolchainError, match=r"no system libgomp.*`pip install intel-openmp`"):
        find_openmp()


def linkers_here() -> list[Linker]:
    import shutil

    found: list[Linker] = []
    if shutil.which("cc"):
        found.append(Linker("cc", (str(shutil.which("cc")),), "system"))
    if shutil.which("cc") and shutil.which("ld.gold"):
        gold = ("-fuse-ld=gold",)
        found.append(Linker("cc+gold", (str(shutil.which("cc")),), "system", link_options=gold))
    zig = toolchain._zig_binary()
    if zig is not None:
        found.append(Linker("zig cc", (str(zig), "cc"), "pip"))
    return found


@pytest.mark.parametrize("linker", linkers_here(), ids=lambda linker: linker.name)
def test_an_undefined_symbol_fails_the_link_naming_it(linker: Linker, tmp_path: Path) -> None:
    llvm_binding.initialize_native_target()
    llvm_binding.initialize_native_asmprinter()
    ir = "declare void @xtc_nowhere()\ndefine void @f() {\n call void @xtc_nowhere()\n ret void\n}"
    target = llvm_binding.Target.from_default_triple()
    machine = target.create_target_machine(reloc="pic", codemodel="default")
    module = llvm_binding.parse_assembly(ir)
    module.triple = machine.triple
    (tmp_path / "f.o").write_bytes(machine.emit_object(module))
    with pytest.raises(ToolchainError, match=r"undefined symbol xtc_nowhere \(no library"):
        link_shared(linker, [tmp_path / "f.o"], tmp_path / "f.so")
    assert not (tmp_path / "f.so").exists()


@pytest.mark.parametrize("linker", linkers_here(), ids=lambda linker: linker.name)
def test_the_weights_assembly_runs_aside_and_reports_its_errors(
    linker: Linker, tmp_path: Path
) -> None:
    """build_library assembles the weights' .incbin while kernels build
    (Assembly): an object comes out, and a failure is a ToolchainError
    with the assembler's message, never a missing object found at link."""
    (tmp_path / "data.bin").write_bytes(bytes(range(256)))
    good = f'\t.section .rodata.w,"a"\n\t.globl w\nw:\n\t.incbin "{tmp_path / "data.bin"}"\n'
    (tmp_path / "good.s").write_text(good)
    Assembly(linker, tmp_path / "good.s", tmp_path / "good.o").wait()
    assert (tmp_path / "good.o").stat().st_size > 256
    (tmp_path / "bad.s").write_text('\t.incbin "no-such-file.bin"\n')
    with pytest.raises(ToolchainError, match=r"(?s)assembling failed .*no-such-file"):
        Assembly(linker, tmp_path / "bad.s", tmp_path / "bad.o").wait()


@pytest.mark.parametrize("linker", linkers_here(), ids=lambda linker: linker.name)
def test_each_linker_links_a_model_computing_what_onnxruntime_does(
    linker: Linker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's library is the same whichever linker links it: cc with
    its default linker (GNU ld), cc with gold, zig cc (lld); none writes a
    build ID (a hash of the whole library, weights and all, that nothing
    reads: gold took 0.35 s of a 0.4 s ResNet-50 link computing it)."""
    import onnxruntime as ort

    from xtc.runtime import library

    monkeypatch.setattr(library, "find_linker", lambda: linker)
    model = resnet_like(widths=(4, 8), image=16)
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    compiled = xtc.compile(model, cache=False)
    assert compiled.manifest["toolchain"]["linker"] == linker.to_json()
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"data": x})[0]
    np.testing.assert_allclose(compiled.run([x])[0], expected, rtol=1e-4, atol=1e-4)
    assert b".note.gnu.build-id" not in (compiled.directory / "model.so").read_bytes()


def test_undefined_symbols_are_read_from_lld_and_gnu_ld() -> None:
    lld = "ld.lld: error: undefined symbol: GOMP_parallel\n>>> referenced by x.o\n"
    gnu = "/usr/bin/ld: m.o: in function `f':\n(.text+0x9): undefined reference to `omp_x'\n"
    assert undefined_symbols(lld + lld) == ["GOMP_parallel"]
    assert undefined_symbols(gnu) == ["omp_x"]


def test_zig_gets_a_cache_folder_without_a_home(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HOME", "XDG_CACHE_HOME", "ZIG_GLOBAL_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    folder = toolchain._zig_environment()["ZIG_GLOBAL_CACHE_DIR"]
    assert Path(folder).name.startswith("xtc-zig-cache-")
    monkeypatch.setenv("ZIG_GLOBAL_CACHE_DIR", "/somewhere")
    assert toolchain._zig_environment()["ZIG_GLOBAL_CACHE_DIR"] == "/somewhere"
