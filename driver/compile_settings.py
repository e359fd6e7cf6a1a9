"""The compile's settings from the environment, read without importing the
compiler (no xDSL): a compile-cache hit reads them to check its request
and to key the model, and imports nothing else of the compile.

    compile_jobs(None)          # XTC_COMPILE_JOBS, else the CPU count
    serial_model_iterations()   # XTC_SERIAL_MODEL_ITERATIONS, else SERIAL_MODEL_ITERATIONS
"""

from __future__ import annotations

import os

from xtc.driver.errors import CompileError

JOBS_VARIABLE = "XTC_COMPILE_JOBS"

SERIAL_MODEL_ITERATIONS = 1 << 25
"""A model whose kernels run fewer innermost iterations than this in all
(about 0.2 ms of vector work) runs every loop serial: its kernels are too
small for a fork and join each (1-2 µs), and its few large ones come so
far apart that the pool's threads have gone to sleep (a wake-up on a busy
host takes milliseconds). Measured on the LSTM bench model (1.5e7
iterations, 2 cores): 0.33 ms serial, 1.2 ms with its parallel loops,
0.5 ms with only its two input projections parallel but 16-44 ms in one
run of three; every other bench model has over 1e8. The environment's
XTC_SERIAL_MODEL_ITERATIONS replaces it (0: no model runs serial)."""
SERIAL_VARIABLE = "XTC_SERIAL_MODEL_ITERATIONS"
SERIAL_CALL_ITERATIONS = 1 << 16
"""...and whose kernel calls run fewer than this each, on average: a
model of one or a few larger kernels (a single op: a 400k-element swish,
a 2048x1000 GEMV) keeps its threads, which halve its time (bench/ops.py's
one-node models ran 1.7-2.5x onnxruntime serial). The LSTM averages about
4e4 per call."""


class JobsError(ValueError):
    """A bad XTC_COMPILE_JOBS or --jobs."""


def compile_jobs(asked: int | None = None) -> int:
    """How many worker processes compile kernels: `asked`, else
    XTC_COMPILE_JOBS, else the CPU count."""
    if asked is None:
        text = os.environ.get(JOBS_VARIABLE, "").strip()
        if not text:
            return os.cpu_count() or 1
        try:
            asked = int(text)
        except ValueError:
            raise JobsError(f"{JOBS_VARIABLE} must be a positive integer, got {text!r}") from None
    if asked < 1:
        raise JobsError(f"compile jobs must be a positive integer, got {asked}")
    return asked


def serial_model_iterations() -> int:
    """The bound under which a model runs serial: XTC_SERIAL_MODEL_ITERATIONS,
    else SERIAL_MODEL_ITERATIONS."""
    text = os.environ.get(SERIAL_VARIABLE, "").strip()
    if not text:
        return SERIAL_MODEL_ITERATIONS
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise CompileError(f"{SERIAL_VARIABLE} must be a count of iterations, got {text!r}")
    return value
