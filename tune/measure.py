"""Measuring candidate schedules: each one built and timed in a worker
process started with `spawn` (libgomp's thread pool does not survive
`fork`), with build and run timeouts.

    runner = LocalRunner(MeasureOptions(threads=2))
    results = runner.measure([MeasureInput(task, config), ...])
    runner.close()

A worker parses the task's kernel, applies the candidate's steps, lowers
and JIT-compiles it, runs it on random inputs (seeded by the workload key)
and compares its outputs with the default schedule's, then times it as
TVM's time_evaluator does: `number` calls make one repeat, `number` grown
until a repeat takes `min_repeat_ms`, `repeat` repeats. A candidate that a
primitive refuses, that fails to build, crashes the worker, hangs past its
timeout or gives another answer is a result with an error kind, never an
exception: the worker is replaced and measuring goes on.
"""

from __future__ import annotations

import multiprocessing.connection
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from xtc.driver.records import ErrorKind, MeasureResult
from xtc.ops.space import Config
from xtc.tune.task import KERNEL_NAME, Task

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


@dataclass(frozen=True)
class MeasureOptions:
    """How candidates are timed (see the module doc)."""

    threads: int | None = None
    """Threads of the kernels' parallel loops (None: XTC_NUM_THREADS, else all cores)."""
    repeat: int = 3
    min_repeat_ms: float = 10.0
    max_number: int = 1 << 16
    build_timeout_s: float = 60.0
    run_timeout_s: float = 20.0
    cooldown_s: float = 0.0
    """A pause after each candidate (lets a shared machine settle)."""
    check: bool = True
    """Compare each candidate's outputs with the default schedule's."""
    rtol: float = 1e-3
    flush_cache: bool = False
    """Evict the caches before each timed call (TVM's enable_cpu_cache_flush):
    each call then reads its weights and inputs from memory, as a kernel
    in a whole model does. Calls are timed one by one, `repeat` * 4 of them."""


@dataclass(frozen=True)
class MeasureInput:
    """A task and a point of its space; `steps` defaults to the config's
    recipe (tests inject other steps)."""

    task: Task
    config: Config
    steps: tuple[str, ...] | None = None

    def schedule_steps(self) -> tuple[str, ...]:
        return self.steps if self.steps is not None else tuple(self.task.steps(self.config))


class Runner:
    """Measures candidates; implementations: LocalRunner, RayRunner."""

    def measure(self, inputs: Sequence[MeasureInput]) -> list[MeasureResult]:
        raise NotImplementedError

    def close(self) -> None:
        """Stops the workers (the runner cannot measure after)."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------- workers


def candidate_request(item: MeasureInput, options: MeasureOptions) -> dict[str, Any]:
    task = item.task
    return {
        "key": task.key,
        "kernel": task.kernel_text,
        "steps": list(item.schedule_steps()),
        "reference_steps": task.steps(task.default()) if options.check else None,
        "options": options,
    }


class _Worker:
    """One worker: a new Python interpreter running `python -m
    xtc.tune.measure FD` (a spawned process that never re-imports the
    caller's main module), and the parent's end of its socket."""

    def __init__(self) -> None:
        parent, child = socket.socketpair()
        self.log = tempfile.TemporaryFile()
        environment = {
            # Spinning threads: a thread that sleeps between calls lets its
            # virtual CPU halt, and waking it took 4-8 ms at times here.
            "OMP_WAIT_POLICY": "active",
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "xtc.tune.measure", str(child.fileno())],
            pass_fds=[child.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env=environment,
        )
        child.close()
        self.connection = multiprocessing.connection.Connection(parent.detach())

    def alive(self) -> bool:
        return self.process.poll() is None

    def exit_code(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def last_words(self) -> str:
        """The last line the worker wrote to stderr."""
        self.log.seek(0)
        lines = [line for line in self.log.read().decode(errors="replace").splitlines() if line]
        return lines[-1][:300] if lines else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.connection.close()
        self.log.close()


class LocalRunner(Runner):
    """Measures on this machine in `workers` spawned processes (1 by
    default: candidates timed side by side would disturb each other)."""

    def __init__(self, options: MeasureOptions | None = None, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.options = options or MeasureOptions()
        self._workers: list[_Worker | None] = [None] * workers

    def _worker(self, slot: int) -> _Worker:
        worker = self._workers[slot]
        if worker is None or not worker.alive():
            if worker is not None:
                worker.stop()
            worker = _Worker()
            self._workers[slot] = worker
        return worker

    def _replace(self, slot: int) -> None:
        worker = self._workers[slot]
        if worker is not None:
            worker.stop()
        self._workers[slot] = None

    def measure(self, inputs: Sequence[MeasureInput]) -> list[MeasureResult]:
        results: list[MeasureResult | None] = [None] * len(inputs)
        pending = list(range(len(inputs)))
        busy: dict[int, tuple[int, float, str]] = {}  # slot -> (input, deadline, phase)
        options = self.options
        while pending or busy:
            for slot in range(len(self._workers)):
                if slot in busy or not pending:
                    continue
                index = pending.pop(0)
                try:
                    request = candidate_request(inputs[index], options)
                except Exception as e:  # noqa: BLE001 - a recipe that cannot be made is invalid
                    results[index] = MeasureResult(error=ErrorKind.INVALID, message=brief(e))
                    continue
                worker = self._worker(slot)
                worker.connection.send(request)
                busy[slot] = (index, time.monotonic() + options.build_timeout_s, "build")
            if not busy:
                continue
            connections = {self._worker_connection(slot): slot for slot in busy}
            nearest = min(deadline for _, deadline, _ in busy.values())
            ready = multiprocessing.connection.wait(
                list(connections), timeout=max(0.0, nearest - time.monotonic())
            )
            for connection in ready:
                slot = connections[connection]  # type: ignore[index]
                index, _, phase = busy[slot]
                try:
                    message = connection.recv()  # type: ignore[union-attr]
                except (EOFError, OSError):
                    results[index] = self._crash(slot, phase)
                    del busy[slot]
                    continue
                if message[0] == "built":
                    busy[slot] = (index, time.monotonic() + options.run_timeout_s, "run")
                else:
                    results[index] = message[1]
                    del busy[slot]
                    if options.cooldown_s:
                        time.sleep(options.cooldown_s)
            now = time.monotonic()
            for slot, (index, deadline, phase) in list(busy.items()):
                if now >= deadline and results[index] is None:
                    limit = options.build_timeout_s if phase == "build" else options.run_timeout_s
                    self._replace(slot)
                    results[index] = MeasureResult(
                        error=ErrorKind.TIMEOUT, message=f"{phase} took more than {limit:g} s"
                    )
                    del busy[slot]
        return [r if r is not None else MeasureResult(error=ErrorKind.RUN) for r in results]

    def _worker_connection(self, slot: int) -> multiprocessing.connection.Connection:
        worker = self._workers[slot]
        assert worker is not None
        return worker.connection

    def _crash(self, slot: int, phase: str) -> MeasureResult:
        worker = self._workers[slot]
        assert worker is not None
        code = worker.exit_code()
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        words = worker.last_words()
        self._replace(slot)
        doing = {"build": "building", "run": "running"}[phase]
        message = f"the worker died while {doing} ({how})" + (f": {words}" if words else "")
        return MeasureResult(error=ErrorKind.CRASH, message=message)

    def close(self) -> None:
        for slot in range(len(self._workers)):
            self._replace(slot)


def brief(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:500]}"


# ------------------------------------------------------- inside a worker


@dataclass
class Reference:
    """A task's buffers, the positions of its outputs, and the default
    schedule's outputs (None when not checking)."""

    buffers: list[np.ndarray]
    outputs: list[int]
    expected: list[np.ndarray] | None


def _serve(connection: multiprocessing.connection.Connection) -> None:
    """A worker's loop: one request at a time, until the pipe closes."""
    references: dict[str, Reference] = {}
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            result = measure_candidate(request, references, lambda: connection.send(("built",)))
        except Exception as e:  # noqa: BLE001 - the parent gets every failure as a result
            result = MeasureResult(error=ErrorKind.RUN, message=brief(e))
        connection.send(("done", result))


def build_kernel(kernel_text: str, steps: Sequence[str]) -> Any:
    """A task's kernel with `steps` applied, lowered and JIT-compiled: a
    JitModule whose function KERNEL_NAME takes the kernel's buffers.
    Raises _Invalid when a primitive refuses a step."""
    from xtc.runtime.llvm_jit import compile_module

    return compile_module(lowered_kernel(kernel_text, steps))


def lowered_kernel(kernel_text: str, steps: Sequence[str]) -> ModuleOp:
    """A task's kernel with `steps` applied and lowered to LLVM as a compile
    lowers it (SCHEDULED_KERNEL_PASSES, then convert-tir-to-llvm), KERNEL_NAME
    exported. Raises _Invalid when a primitive refuses a step."""
    from xdsl.utils.exceptions import DiagnosticException

    from xtc.driver.compiler import SCHEDULED_KERNEL_PASSES
    from xtc.driver.pipelines import apply_pipeline
    from xtc.driver.textual_ir import parse_module

    module = parse_module(kernel_text)
    try:
        # One pipeline, verified once after its last step, as a compile
        # schedules (verifying after each step took half of a Winograd
        # kernel's build).
        if steps:
            apply_pipeline(module, ",".join(steps))
    except DiagnosticException as e:
        raise _Invalid(brief(e)) from None
    kernel = module.body.block.first_op
    kernel.sym_visibility = None  # type: ignore[union-attr] - exported, callable
    apply_pipeline(module, ",".join((*SCHEDULED_KERNEL_PASSES, "convert-tir-to-llvm")))
    return module


class _Invalid(Exception):
    """A step that a primitive refused."""


def kernel_buffers(kernel_text: str, seed: str) -> tuple[list[np.ndarray], list[int]]:
    """Aligned buffers for each argument of the task's kernel (inputs random,
    seeded by `seed`; outputs zero) and the positions of the outputs."""
    from xdsl.dialects.builtin import MemRefType

    from xtc.dialects.graph.constant import numpy_dtype
    from xtc.interp.tir import output_arguments
    from xtc.runtime.llvm_jit import aligned_copy
    from xtc.tune.task import parse_kernel

    kernel = parse_kernel(kernel_text)
    outputs = output_arguments(kernel)
    rng = np.random.default_rng(int(seed[:8], 16) if seed else 0)
    buffers: list[np.ndarray] = []
    for position, t in enumerate(kernel.function_type.inputs.data):
        assert isinstance(t, MemRefType)
        dtype = numpy_dtype(t.get_element_type())
        shape = tuple(t.get_shape())
        if position in outputs:
            values = np.zeros(shape, dtype)
        elif np.issubdtype(dtype, np.floating):
            values = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            values = rng.integers(0, 2, shape).astype(dtype)
        else:  # indices and integer data: small, so that any index is in range
            values = rng.integers(0, 2, shape).astype(dtype)
        buffers.append(aligned_copy(values))
    return buffers, sorted(outputs)


def measure_candidate(
    request: Mapping[str, Any],
    references: dict[str, Reference],
    built: Callable[[], None],
) -> MeasureResult:
    options: MeasureOptions = request["options"]
    key: str = request["key"]
    started = time.perf_counter()
    try:
        jit = build_kernel(request["kernel"], request["steps"])
    except _Invalid as e:
        return MeasureResult(error=ErrorKind.INVALID, message=str(e))
    except Exception as e:  # noqa: BLE001 - any lowering or LLVM failure
        return MeasureResult(error=ErrorKind.BUILD, message=brief(e))
    build_s = time.perf_counter() - started
    built()
    if options.threads is not None:
        jit.set_num_threads(options.threads)
    if key not in references:
        references[key] = _reference(request, options)
    reference = references[key]
    buffers, outputs, expected = reference.buffers, reference.outputs, reference.expected
    for position in outputs:  # what the candidate leaves unwritten cannot pass
        buffers[position].fill(np.nan if buffers[position].dtype.kind == "f" else 0)
    run = jit.caller(KERNEL_NAME, buffers)
    try:
        run()
    except Exception as e:  # noqa: BLE001 - a run-time fault reported by the kernel
        return MeasureResult(error=ErrorKind.RUN, message=brief(e), build_s=build_s)
    if expected is not None:
        for position, want in zip(outputs, expected, strict=True):
            if not _close(buffers[position], want, options.rtol):
                worst = float(np.max(np.abs(buffers[position].astype(np.float64) - want)))
                return MeasureResult(
                    error=ErrorKind.WRONG,
                    message=f"output {position} differs from the default schedule's by {worst:.3g}",
                    build_s=build_s,
                )
    return MeasureResult(costs=time_kernel(run, options), build_s=build_s)


def _reference(request: Mapping[str, Any], options: MeasureOptions) -> Reference:
    """The task's buffers and the default schedule's outputs on them."""
    buffers, outputs = kernel_buffers(request["kernel"], request["key"])
    if request["reference_steps"] is None:
        return Reference(buffers, outputs, None)
    jit = build_kernel(request["kernel"], request["reference_steps"])
    if options.threads is not None:
        jit.set_num_threads(options.threads)
    jit.caller(KERNEL_NAME, buffers)()
    return Reference(buffers, outputs, [buffers[i].copy() for i in outputs])


def _close(got: np.ndarray, want: np.ndarray, rtol: float) -> bool:
    if not np.issubdtype(want.dtype, np.floating):
        return bool(np.array_equal(got, want))
    scale = float(np.max(np.abs(want), initial=0.0))
    return bool(np.allclose(got, want, rtol=rtol, atol=rtol * max(scale, 1e-30), equal_nan=True))


FLUSH_BYTES = 128 << 20
"""Bytes written to evict the caches: more than any L3 of our hosts."""
_flush_buffer: list[np.ndarray] = []


def time_kernel(run: Callable[[], None], options: MeasureOptions) -> tuple[float, ...]:
    """Seconds of calls of `run`, as `options` asks: cold (flush_cache) or warm."""
    return _time_flushed(run, options) if options.flush_cache else _time(run, options)


def _time_flushed(run: Callable[[], None], options: MeasureOptions) -> tuple[float, ...]:
    """Seconds of single calls, each after the caches were evicted."""
    if not _flush_buffer:
        _flush_buffer.append(np.zeros(FLUSH_BYTES // 8, np.float64))
    costs: list[float] = []
    for _ in range(4 * options.repeat):
        _flush_buffer[0] += 1.0
        started = time.perf_counter()
        run()
        costs.append(time.perf_counter() - started)
    return tuple(costs)


def _time(run: Callable[[], None], options: MeasureOptions) -> tuple[float, ...]:
    """Seconds per call: `number` calls per repeat, grown until a repeat
    takes at least min_repeat_ms, then `repeat` repeats."""
    number = 1
    while True:
        started = time.perf_counter()
        for _ in range(number):
            run()
        elapsed = time.perf_counter() - started
        if elapsed * 1000 >= options.min_repeat_ms or number >= options.max_number:
            break
        number = min(
            options.max_number,
            number * max(2, int(options.min_repeat_ms / max(elapsed * 1000, 1e-3))),
        )
    costs: list[float] = []
    for _ in range(options.repeat):
        started = time.perf_counter()
        for _ in range(number):
            run()
        costs.append((time.perf_counter() - started) / number)
    return tuple(costs)


def main(argv: Sequence[str] | None = None) -> None:
    """A worker's entry point: `python -m xtc.tune.measure FD`, FD one end
    of a socket pair."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    _serve(multiprocessing.connection.Connection(int(arguments[0])))


if __name__ == "__main__":
    # Through the package, so that what it pickles is xtc.tune.measure's.
    from xtc.tune import measure

    measure.main()
