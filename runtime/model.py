"""A compiled model in this process: its native library, loaded with ctypes,
and what it takes and gives (`TensorSpec`s).

    m.run({"data": x})            # or m.run([x]): outputs, in the model's order
    m.benchmark([x], repeat=5, number=10)
    m.profile([x])                # compiled with profile=True: time per kernel
    m.export("model.tar")

`xtc.compile` builds one (driver/compiler.py), `xtc.load` reads one back
(runtime/artifact.py). Inputs are checked (names, count, shapes, dtypes)
before native code runs; each run returns new arrays. A run that faults (an
index out of range, an integer division by zero) raises `InputError` with
the library's message (`xtc_last_error()`), naming the node and the value.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes  # noqa: F401 - names bfloat16, float8_*, int4, ... for np.dtype
import numpy as np

from xtc.runtime.archive import write_archive
from xtc.runtime.errors import InputError
from xtc.runtime.native_abi import (
    aligned_copy,
    aligned_empty,
    is_aligned,
    num_threads_from_environment,
)
from xtc.runtime.profile import ProfileResult, profile_runs
from xtc.runtime.toolchain import open_library


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def __str__(self) -> str:
        return f"{self.name}: {self.dtype.name}[{','.join(map(str, self.shape))}]"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype.name}

    @staticmethod
    def from_json(entry: Mapping[str, Any]) -> TensorSpec:
        return TensorSpec(
            str(entry["name"]), tuple(int(d) for d in entry["shape"]), np.dtype(str(entry["dtype"]))
        )


def _addresses(arrays: Sequence[np.ndarray]) -> ctypes.Array[ctypes.c_void_p]:
    """The arrays' data pointers as a C array (`void *[]`, never empty)."""
    return (ctypes.c_void_p * max(1, len(arrays)))(*[a.ctypes.data for a in arrays])


def _takes(specs: Sequence[TensorSpec]) -> str:
    return ", ".join(map(str, specs))


def check_inputs(specs: Sequence[TensorSpec], inputs: Any) -> list[np.ndarray]:
    """The inputs as arrays in the model's order, or InputError naming what
    is wrong: a missing, unknown or misnamed input, a wrong count, shape or
    dtype. A mapping is by name; a sequence is in the model's order."""
    arrays: list[np.ndarray] = []
    for spec, value in zip(specs, ordered_inputs(specs, inputs), strict=True):
        try:
            array = np.asarray(value)
        except Exception as e:  # noqa: BLE001 - any conversion failure is the user's input
            raise InputError(f"input {spec.name!r} is not an array: {e}") from None
        check_tensor(spec, array.shape, array.dtype)
        arrays.append(array)
    return arrays


def ordered_inputs(specs: Sequence[TensorSpec], inputs: Any) -> list[Any]:
    """The input values, unconverted, in the model's order (a mapping by
    name, a sequence in order, or one array); InputError for a missing,
    unknown or misnamed input or a wrong count."""
    if isinstance(inputs, np.ndarray):
        inputs = [inputs]
    # dict, list and tuple first: the ABC checks below cost a microsecond.
    if isinstance(inputs, dict | Mapping):
        names = [s.name for s in specs]
        missing = [n for n in names if n not in inputs]
        unknown = [str(n) for n in inputs if n not in names]
        if missing or unknown:
            parts = [f"missing input {n!r}" for n in missing]
            parts += [f"{n!r} is not an input of the model" for n in unknown]
            raise InputError(f"{'; '.join(parts)} (the model takes {_takes(specs)})")
        return [inputs[n] for n in names]
    if isinstance(inputs, list | tuple) or (
        isinstance(inputs, Sequence) and not isinstance(inputs, str | bytes)
    ):
        values = list(inputs)
        if len(values) != len(specs):
            raise InputError(
                f"the model takes {len(specs)} inputs ({_takes(specs)}), got {len(values)}"
            )
        return values
    raise InputError(
        f"inputs must be a dict of arrays by name or a list in order, not "
        f"{type(inputs).__name__} (the model takes {_takes(specs)})"
    )


def _dtype_module(dtype: np.dtype[Any]) -> str:
    """`np`, or `ml_dtypes` for the types numpy lacks (bfloat16, int4, ...)."""
    return "ml_dtypes" if dtype.kind == "V" else "np"


def check_tensor(spec: TensorSpec, shape: Sequence[int], dtype: np.dtype[Any] | str) -> None:
    """InputError unless a tensor of `shape` and `dtype` (a numpy dtype, or
    the name of one numpy lacks) is what input `spec` takes."""
    if not isinstance(dtype, np.dtype) or dtype != spec.dtype:
        name = dtype.name if isinstance(dtype, np.dtype) else dtype
        wanted = f"{_dtype_module(spec.dtype)}.{spec.dtype.name}"
        raise InputError(
            f"input {spec.name!r} has dtype {name}, the model takes "
            f"{spec.dtype.name} (convert with .astype({wanted}))"
        )
    if tuple(shape) != spec.shape:
        raise InputError(
            f"input {spec.name!r} has shape {list(shape)}, the model takes {list(spec.shape)}"
        )


@dataclass(frozen=True)
class BenchmarkResult:
    """Milliseconds per run: each of `runs_ms` is the mean of `number`
    consecutive runs (like TVM's time_evaluator), statistics over them."""

    runs_ms: tuple[float, ...]
    number: int

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.runs_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.runs_ms)

    @property
    def max_ms(self) -> float:
        return max(self.runs_ms)

    @property
    def min_ms(self) -> float:
        return min(self.runs_ms)

    @property
    def std_ms(self) -> float:
        return statistics.pstdev(self.runs_ms)

    def table(self) -> str:
        """The summary `xtc run --print-time` prints (tvmc's layout)."""
        heads = ["mean (ms)", "median (ms)", "max (ms)", "min (ms)", "std (ms)"]
        values = [self.mean_ms, self.median_ms, self.max_ms, self.min_ms, self.std_ms]
        return (
            "Execution time summary:\n"
            + " ".join(f"{h:>12}" for h in heads)
            + "\n"
            + " ".join(f"{v:>12.4f}" for v in values)
            + "\n"
        )


@dataclass
class CompiledModel:
    """A model's native library loaded in this process (see module doc).
    `directory` holds model.so, manifest.json and model.h; it lives as long
    as this object (`owner` removes it)."""

    directory: Path
    manifest: dict[str, Any]
    input_specs: list[TensorSpec]
    output_specs: list[TensorSpec]
    owner: Any = None
    _library: ctypes.CDLL | None = field(default=None, repr=False)

    @property
    def library(self) -> ctypes.CDLL:
        """The loaded library; on loading, its parallel loops are set to
        XTC_NUM_THREADS threads when that is set (ValueError unless it is a
        positive integer)."""
        if self._library is None:
            threads = num_threads_from_environment()
            openmp = (self.manifest.get("toolchain") or {}).get("openmp") or {}
            library = open_library(self.directory / self.manifest["library"], openmp.get("library"))
            library.xtc_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            library.xtc_run.restype = ctypes.c_int32
            last_error = getattr(library, "xtc_last_error", None)
            if last_error is not None:  # a library of ABI 1 has none (and is refused)
                last_error.argtypes = []
                last_error.restype = ctypes.c_char_p
            self._library = library
            if threads is not None:
                self.set_num_threads(threads)
        return self._library

    def set_num_threads(self, count: int) -> int:
        """Makes the model's parallel loops use `count` threads (0: libgomp's
        default, all cores or OMP_NUM_THREADS); returns the previous count.
        A library built before xtc_set_num_threads existed ignores it."""
        if count < 0:
            raise ValueError(f"a thread count is at least 0, got {count}")
        setter = getattr(self.library, "xtc_set_num_threads", None)
        if setter is None:
            return 0
        setter.argtypes = [ctypes.c_int32]
        setter.restype = ctypes.c_int32
        return int(setter(count))

    def run(self, inputs: Any) -> list[np.ndarray]:
        """The outputs for `inputs` (a dict by name, or a list in the
        model's input order), as new arrays in the model's output order."""
        arrays = [
            a if is_aligned(a) else aligned_copy(a) for a in check_inputs(self.input_specs, inputs)
        ]
        outputs = [aligned_empty(s.shape, s.dtype) for s in self.output_specs]
        self._call(arrays, outputs)
        return outputs

    def benchmark(
        self, inputs: Any, repeat: int = 5, number: int = 10, warmup: int = 1
    ) -> BenchmarkResult:
        """Times `repeat` blocks of `number` runs after `warmup` runs."""
        if repeat < 1 or number < 1 or warmup < 0:
            raise ValueError("repeat and number must be at least 1, warmup at least 0")
        run, _buffers = self._warmed_up(inputs, warmup)
        runs: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                run()
            runs.append((time.perf_counter() - start) * 1000.0 / number)
        return BenchmarkResult(tuple(runs), number)

    def profile(self, inputs: Any, runs: int = 10, warmup: int = 1) -> ProfileResult:
        """Each kernel's time inside the model over `runs` runs after
        `warmup` (runtime/profile.py); NotProfiledError unless the model was
        compiled with `profile`."""
        if warmup < 0:
            raise ValueError(f"warmup must be at least 0, got {warmup}")
        run, _buffers = self._warmed_up(inputs, warmup)
        return profile_runs(self.library, self.manifest, run, runs)

    def export(self, path: str | Path) -> Path:
        """Writes the artifact (model.tar: library, manifest, header)."""
        return write_archive(self.directory, Path(path))

    def _call(self, arrays: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        self._check_status(self.library.xtc_run(_addresses(arrays), _addresses(outputs)))

    def _warmed_up(
        self, inputs: Any, warmup: int
    ) -> tuple[Callable[[], None], tuple[list[np.ndarray], list[np.ndarray]]]:
        """The native call on aligned copies of `inputs` and new outputs, run
        `warmup` times, and those buffers (the caller keeps them alive)."""
        arrays = [aligned_copy(a) for a in check_inputs(self.input_specs, inputs)]
        outputs = [aligned_empty(s.shape, s.dtype) for s in self.output_specs]
        run = self._caller(arrays, outputs)
        for _ in range(warmup):
            run()
        return run, (arrays, outputs)

    def _caller(
        self, arrays: Sequence[np.ndarray], outputs: Sequence[np.ndarray]
    ) -> Callable[[], None]:
        """The native call on these buffers, ready to repeat. It holds their
        addresses only: the caller keeps the arrays alive."""
        function = self.library.xtc_run
        ins, outs = _addresses(arrays), _addresses(outputs)

        def run() -> None:
            self._check_status(function(ins, outs))

        return run

    def _check_status(self, status: int) -> None:
        if status != 0:
            raise InputError(self._last_error(status))

    def _last_error(self, status: int) -> str:
        """The message of this thread's failed run (`xtc_last_error()`)."""
        last_error = getattr(self.library, "xtc_last_error", None)
        message = last_error() if last_error is not None else None
        if not message:
            return f"the model failed with status {status}"
        return bytes(message).decode("utf-8", errors="replace")
