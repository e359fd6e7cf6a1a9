"""tir-parallel and its lowering through libgomp: kernels with parallel outer
loops (elementwise, matmul split with a tail, conv2d with padding) give the
serial answer in the JIT and in a model library, with 1, 2 and more threads
than iterations; thread numbers stored by the body show that the team has
the size asked for and that each thread runs its own chunk; XTC_NUM_THREADS
is checked; the tir interpreter runs parallel loops serially."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr

from xtc import interp
from xtc.driver.compiler import tensor_specs
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_loops import ScheduleError, loops_in
from xtc.runtime import llvm_jit, toolchain
from xtc.runtime.archive import c_header
from xtc.runtime.library import build_library
from xtc.runtime.llvm_jit import aligned_copy, aligned_empty, compile_module, uses_libgomp
from xtc.runtime.model import CompiledModel
from xtc.testing.graph_op import random_inputs

ELEMENTWISE = """
func.func @main(%x: tensor<5x7xf32>, %y: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %s = graph.add %x, %y : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %r = graph.relu %s : (tensor<5x7xf32>) -> tensor<5x7xf32>
  func.return %r : tensor<5x7xf32>
}"""
MATMUL = """
func.func @main(%a: tensor<7x5xf32>, %b: tensor<5x6xf32>) -> tensor<7x6xf32> {
  %c = graph.matmul %a, %b : (tensor<7x5xf32>, tensor<5x6xf32>) -> tensor<7x6xf32>
  func.return %c : tensor<7x6xf32>
}"""
CONV = """
func.func @main(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}
    : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = graph.relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}"""
SCHEDULES = {
    # every kernel's outer loop
    "elementwise": (ELEMENTWISE, "tir-parallel{loop=i0}"),
    # i0 split by 3: 2 parallel iterations of 3 rows, then a serial tail row
    "matmul": (MATMUL, "tir-split{loop=i0 factor=3},tir-parallel{loop=i0_o}"),
    # the channel loops of the padding nest (i1, 3 channels) and of the
    # convolution's (i1_1, 4), and the relu's
    "conv2d": (
        CONV,
        "tir-parallel{func=conv2d_0 loop=i1},tir-parallel{func=conv2d_0 loop=i1_1},"
        "tir-parallel{func=relu_0 loop=i1}",
    ),
    # the convolution's batch, channel and row loops fused (1 x 4 x 6, the
    # inner pair first), as ops/schedules.py fuses loops started too often
    "fused": (
        CONV,
        "tir-fuse{func=conv2d_0 outer=i1_1 inner=i2_1},"
        "tir-fuse{func=conv2d_0 outer=i0_1 inner=i1_1_i2_1},"
        "tir-parallel{func=conv2d_0 loop=i0_1_i1_1_i2_1}",
    ),
}

# Each iteration stores the number of the thread running it and the team's
# size: the runtime's own account of who ran what.
WHO_RAN = """
func.func private @omp_get_thread_num() -> i32
func.func private @omp_get_num_threads() -> i32
func.func @main(%thread: memref<{n}xi32> {{graph.output = 0 : i64}},
                %team: memref<{n}xi32> {{graph.output = 1 : i64}}) {{
  tir.for %i = {lower} to {n} step {step} {{name = "i0", kind = "parallel"}} {{
    %t = func.call @omp_get_thread_num() : () -> i32
    %s = func.call @omp_get_num_threads() : () -> i32
    memref.store %t, %thread[%i] : memref<{n}xi32>
    memref.store %s, %team[%i] : memref<{n}xi32>
  }}
  func.return
}}
"""


def tir_module(graph_text: str) -> ModuleOp:
    return apply_pipeline(parse_module(graph_text), "convert-graph-to-te,convert-te-to-tir")


def parallel_kinds(module: ModuleOp) -> list[str]:
    return [loop.loop_name.data for loop in loops_in(module) if loop.kind.data == "parallel"]


def lowered(module: ModuleOp) -> ModuleOp:
    return apply_pipeline(module, "tir-plan-memory,convert-tir-to-llvm")


def graph_inputs(graph_text: str) -> list[np.ndarray]:
    return random_inputs(parse_module(graph_text), seed=11)


def run_jit(module: ModuleOp, inputs: list[np.ndarray], output_shape: tuple[int, ...]):  # noqa: ANN201
    out = aligned_empty(output_shape, np.float32)
    compile_module(module).call("main", [*map(aligned_copy, inputs), out])
    return out


@pytest.mark.parametrize("kernel", sorted(SCHEDULES))
def test_the_pass_marks_only_the_loops_named(kernel: str) -> None:
    graph_text, schedule = SCHEDULES[kernel]
    module = apply_pipeline(tir_module(graph_text), schedule)
    expected = {
        "elementwise": ["i0", "i0"],
        "matmul": ["i0_o"],
        "conv2d": ["i1", "i1_1", "i1"],
        "fused": ["i0_1_i1_1_i2_1"],
    }
    assert parallel_kinds(module) == expected[kernel]
    # The interpreter runs parallel loops serially: the graph's answer.
    inputs = graph_inputs(graph_text)
    (want,) = interp.run(parse_module(graph_text), inputs)
    (got,) = interp.run(module, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2, 5])
@pytest.mark.parametrize("kernel", sorted(SCHEDULES))
def test_parallel_kernels_in_the_jit_give_the_serial_answer(
    kernel: str, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XTC_NUM_THREADS", str(threads))
    graph_text, schedule = SCHEDULES[kernel]
    inputs = graph_inputs(graph_text)
    (want,) = interp.run(parse_module(graph_text), inputs)
    parallel = lowered(apply_pipeline(tir_module(graph_text), schedule))
    assert uses_libgomp(parallel)
    serial = lowered(tir_module(graph_text))
    assert not uses_libgomp(serial)
    got = run_jit(parallel, inputs, want.shape)
    np.testing.assert_array_equal(got, run_jit(serial, inputs, want.shape))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each kernel's model library, its loops parallel as SCHEDULES says."""
    built: dict[str, Path] = {}
    for kernel, (graph_text, schedule) in SCHEDULES.items():
        module = lowered(apply_pipeline(tir_module(graph_text), schedule))
        directory = tmp_path_factory.mktemp(kernel)
        build_library(module, directory)
        built[kernel] = directory
    return built


def load(directory: Path, graph_text: str) -> CompiledModel:
    inputs, outputs = tensor_specs(parse_module(graph_text))
    return CompiledModel(directory, {"library": "model.so"}, inputs, outputs)


@pytest.mark.parametrize("threads", [1, 2, 5])
@pytest.mark.parametrize("kernel", sorted(SCHEDULES))
def test_parallel_kernels_in_a_library_give_the_serial_answer(
    kernel: str, threads: int, libraries: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XTC_NUM_THREADS", str(threads))
    graph_text, _ = SCHEDULES[kernel]
    inputs = graph_inputs(graph_text)
    (want,) = interp.run(parse_module(graph_text), inputs)
    model = load(libraries[kernel], graph_text)
    (got,) = model.run(inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Loading set the library's team size from XTC_NUM_THREADS.
    assert model.set_num_threads(0) == threads


def test_a_parallel_library_links_libgomp(libraries: dict[str, Path]) -> None:
    needed = subprocess.run(
        ["readelf", "-d", str(libraries["matmul"] / "model.so")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "libgomp" in needed


def who_ran(n: int, lower: int = 0, step: int = 1) -> ModuleOp:
    text = WHO_RAN.format(n=n, lower=lower, step=step)
    return apply_pipeline(parse_module(text), "convert-tir-to-llvm")


def run_who(module: ModuleOp, n: int, threads: int) -> tuple[list[int], list[int]]:
    jit = compile_module(module)
    jit.set_num_threads(threads)
    thread, team = aligned_empty(n, np.int32), aligned_empty(n, np.int32)
    thread[:] = team[:] = -1
    jit.call("main", [thread, team])
    return thread.tolist(), team.tolist()


@pytest.mark.parametrize(
    "n, threads, expected",
    [
        (4, 1, [0, 0, 0, 0]),
        (4, 2, [0, 0, 1, 1]),
        # ceil(5 / 2) = 3 iterations for thread 0, the 2 others for thread 1
        (5, 2, [0, 0, 0, 1, 1]),
        # more threads than iterations: thread 3 gets an empty chunk
        (3, 4, [0, 1, 2]),
    ],
)
def test_each_thread_runs_its_own_chunk(n: int, threads: int, expected: list[int]) -> None:
    thread, team = run_who(who_ran(n), n, threads)
    assert_chunks_run(thread, expected)
    assert team == [threads] * n


def assert_chunks_run(thread: list[int], owners: list[int]) -> None:
    """Every iteration ran; each thread ran a first part of its own chunk
    (the iterations `owners` gives it), in practice all of it, and any rest
    was run by threads that had finished theirs (runtime/work_sharing.py)."""
    assert -1 not in [t for t, o in zip(thread, owners, strict=True) if o != -1]
    for owner in set(owners) - {-1}:
        ran = [t for t, o in zip(thread, owners, strict=True) if o == owner]
        own = len(ran) - len([t for t in ran if t != owner])
        assert ran[:own] == [owner] * own and owner not in ran[own:], (owner, ran)


def test_chunks_follow_the_lower_bound_and_the_step() -> None:
    # Iterations 1, 4, 7 on 2 threads: chunks of 2, then 1.
    thread, team = run_who(who_ran(9, lower=1, step=3), 9, 2)
    assert_chunks_run(thread, [-1, 0, -1, -1, 0, -1, -1, 1, -1])
    assert thread[0::3] == thread[2::3] == [-1] * 3
    assert team == [-1, 2, -1, -1, 2, -1, -1, 2, -1]


def test_xtc_num_threads_sets_the_jit_team(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XTC_NUM_THREADS", "3")
    jit = compile_module(who_ran(6))
    thread, team = aligned_empty(6, np.int32), aligned_empty(6, np.int32)
    jit.call("main", [thread, team])
    assert_chunks_run(thread.tolist(), [0, 0, 1, 1, 2, 2])
    assert team.tolist() == [3] * 6
    assert jit.set_num_threads(1) == 3


def test_a_forked_process_runs_parallel_code_on_one_thread() -> None:
    # libgomp's pool does not survive a fork: a child asking for 2 threads
    # would wait forever for threads that were not copied. On one thread it
    # runs (what a tuner measuring in forked processes relies on).
    jit = compile_module(who_ran(4))
    jit.set_num_threads(2)
    thread, team = aligned_empty(4, np.int32), aligned_empty(4, np.int32)
    jit.call("main", [thread, team])  # the pool is running now
    assert team.tolist() == [2] * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            jit.set_num_threads(1)
            jit.call("main", [thread, team])
            code = 0 if team.tolist() == [1] * 4 else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while (waited := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked process hung in parallel code")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(waited[1]) == 0


def test_a_library_sets_its_team_with_xtc_set_num_threads(tmp_path: Path) -> None:
    build_library(who_ran(4), tmp_path)
    library = ctypes.CDLL(str(tmp_path / "model.so"))
    library.xtc_set_num_threads.argtypes = [ctypes.c_int32]
    library.xtc_set_num_threads.restype = ctypes.c_int32
    assert library.xtc_set_num_threads(2) == 0  # libgomp's default until set
    thread, team = aligned_empty(4, np.int32), aligned_empty(4, np.int32)
    outputs = (ctypes.c_void_p * 2)(thread.ctypes.data, team.ctypes.data)
    assert library.xtc_run(None, outputs) == 0
    assert thread.tolist() == [0, 0, 1, 1] and team.tolist() == [2] * 4
    assert library.xtc_set_num_threads(-3) == 2
    assert library.xtc_set_num_threads(1) == 0  # a negative count is the default


def test_a_serial_library_has_the_setter_and_no_libgomp(tmp_path: Path) -> None:
    serial = lowered(tir_module(MATMUL))
    assert compile_module(serial).set_num_threads(3) == 0  # no team size to set
    build_library(serial, tmp_path)
    library = ctypes.CDLL(str(tmp_path / "model.so"))
    assert library.xtc_set_num_threads(4) == 0
    assert library.xtc_set_num_threads(0) == 4
    needed = subprocess.run(
        ["readelf", "-d", str(tmp_path / "model.so")], capture_output=True, text=True, check=True
    ).stdout
    assert "libgomp" not in needed


def test_nested_parallel_loops_run_the_inner_one_in_a_team_of_one() -> None:
    text = """
    func.func private @omp_get_num_threads() -> i32
    func.func @main(%team: memref<3x4xi32> {graph.output = 0 : i64}) {
      tir.for %i = 0 to 3 step 1 {name = "i0", kind = "parallel"} {
        tir.for %j = 0 to 4 step 1 {name = "i1", kind = "parallel"} {
          %s = func.call @omp_get_num_threads() : () -> i32
          memref.store %s, %team[%i, %j] : memref<3x4xi32>
        }
      }
      func.return
    }"""
    module = apply_pipeline(parse_module(text), "convert-tir-to-llvm")
    names = [op.sym_name.data for op in module.ops if hasattr(op, "sym_name")]
    assert "main_parallel_0" in names and "main_parallel_0_parallel_0" in names
    jit = compile_module(module)
    jit.set_num_threads(2)
    team = aligned_empty((3, 4), np.int32)
    jit.call("main", [team])
    assert team.tolist() == [[1] * 4] * 3


def test_constants_and_globals_are_copied_into_the_outlined_function() -> None:
    text = """
    func.func @main(%x: memref<6xf32>, %y: memref<6xf32> {graph.output = 0 : i64}) {
      %table = memref.get_global @table : memref<6xf32>
      %half = arith.constant 5.000000e-01 : f32
      tir.for %i = 0 to 6 step 1 {name = "i0", kind = "parallel"} {
        %a = memref.load %x[%i] : memref<6xf32>
        %b = memref.load %table[%i] : memref<6xf32>
        %p = arith.mulf %a, %b : f32
        %q = arith.mulf %p, %half : f32
        memref.store %q, %y[%i] : memref<6xf32>
      }
      func.return
    }
    "memref.global"() <{sym_name = "table", type = memref<6xf32>,
      initial_value = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>,
      sym_visibility = "private", constant}> : () -> ()
    """
    module = apply_pipeline(parse_module(text), "convert-tir-to-llvm")
    jit = compile_module(module)
    jit.set_num_threads(2)
    x = aligned_copy(np.arange(6, dtype=np.float32))
    y = aligned_empty(6, np.float32)
    jit.call("main", [x, y])
    np.testing.assert_array_equal(y, x * np.arange(1, 7, dtype=np.float32) * 0.5)
    # Only %x, %y and the work-sharing slots go through the context: three slots.
    outlined = next(
        op for op in module.ops if getattr(op, "sym_name", None) == StringAttr("main_parallel_0")
    )
    assert "llvm.dereferenceable = 24" in str(outlined)


COUNT_RUNS = """
func.func @main(%count: memref<{n}xi32>, %work: memref<{n}xf32>) {{
  tir.for %i = 0 to {n} step 1 {{name = "i0", kind = "parallel"}} {{
    %c = memref.load %count[%i] : memref<{n}xi32>
    %one = arith.constant 1 : i32
    %d = arith.addi %c, %one : i32
    memref.store %d, %count[%i] : memref<{n}xi32>
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %work[%i] : memref<{n}xf32>
    tir.for %j = 0 to 64 step 1 {{name = "i1", kind = "serial"}} {{
      %w = memref.load %work[%i] : memref<{n}xf32>
      %s = arith.constant 1.5 : f32
      %m = arith.mulf %w, %s : f32
      %a = arith.addf %m, %s : f32
      memref.store %a, %work[%i] : memref<{n}xf32>
    }}
  }}
  func.return
}}
"""


def test_a_team_larger_than_the_cores_runs_every_iteration_once() -> None:
    # 7 threads on this machine's cores are preempted at random points, so
    # threads finish at different times and take iterations from others'
    # chunks: each iteration still counts one run per call.
    n, calls = 997, 60
    module = apply_pipeline(parse_module(COUNT_RUNS.format(n=n)), "convert-tir-to-llvm")
    jit = compile_module(module)
    jit.set_num_threads(7)
    count, work = aligned_empty(n, np.int32), aligned_empty(n, np.float32)
    count[:] = 0
    for _ in range(calls):
        jit.call("main", [count, work])
    assert count.tolist() == [calls] * n


@pytest.mark.parametrize("value", ["0", "-1", "two", "", "1.5"])
def test_a_bad_xtc_num_threads_is_refused(
    value: str, monkeypatch: pytest.MonkeyPatch, libraries: dict[str, Path]
) -> None:
    monkeypatch.setenv("XTC_NUM_THREADS", value)
    with pytest.raises(ValueError, match="XTC_NUM_THREADS must be a positive integer"):
        compile_module(who_ran(2))
    with pytest.raises(ValueError, match="XTC_NUM_THREADS must be a positive integer"):
        load(libraries["matmul"], MATMUL).run(graph_inputs(MATMUL))


def test_a_missing_libgomp_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    module = who_ran(2)
    monkeypatch.setattr(llvm_jit.llvm_binding, "address_of_symbol", lambda name: 0)
    monkeypatch.setattr(llvm_jit.ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(toolchain, "PIP_OPENMP_RUNTIMES", ())
    with pytest.raises(RuntimeError, match="parallel loops, which need an OpenMP runtime: no sys"):
        compile_module(module)


def test_the_header_declares_the_thread_count_setter() -> None:
    manifest = {
        "name": "m",
        "xtc_version": "0",
        "target": {"triple": "x86_64", "cpu": "generic"},
        "inputs": [],
        "outputs": [],
    }
    assert "int32_t xtc_set_num_threads(int32_t n);" in c_header(manifest)


def test_a_refusal_names_the_pass_the_function_and_the_loop() -> None:
    module = tir_module(MATMUL)
    with pytest.raises(ScheduleError, match=r"tir-parallel: loop 'r0' in @matmul_0 may let two"):
        apply_pipeline(module, "tir-parallel{loop=r0}")
