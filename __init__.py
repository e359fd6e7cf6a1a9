"""xtc: a deep-learning compiler built as MLIR-style dialects on xDSL."""

from __future__ import annotations

__version__ = "0.1.0"

import importlib
from typing import TYPE_CHECKING

from xtc import plugin_hooks

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping, Sequence
    from types import ModuleType

    import onnx

    from xtc.plugins import OpPlugin
    from xtc.runtime.cuda_model import CudaModel
    from xtc.runtime.model import CompiledModel
    from xtc.runtime.specialized_model import SpecializedModel
    from xtc.tune.tuning import TuningSummary


plugin_hooks.set_provider(lambda: importlib.import_module("xtc.plugins"))


def compile(  # noqa: A001 - the API is xtc.compile, like tvm's relay.build
    model: onnx.ModelProto | str | os.PathLike[str],
    target: str = "llvm",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    opt_level: int = 3,
    tuning_records: str | os.PathLike[str] | None = None,
    cache: bool = True,
    profile: bool = False,
) -> CompiledModel | CudaModel | SpecializedModel:
    """Compiles an ONNX model (a ModelProto or a path) to native code for
    `target` ("llvm": this CPU; "cuda": an NVIDIA GPU, run through the CUDA
    driver) and loads it: `.run(inputs)`, `.benchmark(inputs)`,
    `.export("model.tar")`. `input_shapes` fixes symbolic input dimensions
    ({"data": [1, 3, 224, 224]}); `opt_level` 0 to 3 (0: no graph passes).
    A model compiled for the CPU before with the same request comes from
    the compile cache ($XDG_CACHE_HOME/xtc); `cache=False` compiles and
    stores nothing. A model whose shapes depend on the values of some
    inputs (Reshape's `shape` a graph input) keeps them as inputs: the
    SpecializedModel returned compiles the model for each new value of them
    it runs on (`.specialized_inputs`, `.specializations`), for either
    target. With `profile` (CPU only), the model times each of its kernel
    calls: `.profile(inputs)` gives the time of each kernel in the model."""
    from xtc.driver.compiler import CompileError, compile_model

    if target == "cuda":
        from xtc.driver.cuda import compile_cuda_model

        if tuning_records is not None:
            raise CompileError("tuning_records is not supported for target 'cuda' yet")
        if profile:
            raise CompileError("profile is for the CPU (target 'llvm'), not for 'cuda' yet")
        return compile_cuda_model(model, input_shapes, opt_level)
    return compile_model(
        model, target, input_shapes, opt_level, tuning_records, cache=cache, profile=profile
    )


def tune(
    model: onnx.ModelProto | str | os.PathLike[str],
    records: str | os.PathLike[str],
    trials: int = 1000,
    tuner: str = "xgb",
    time_budget_s: float | None = None,
    early_stopping: int | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    threads: int | None = None,
) -> TuningSummary:
    """Tunes the model's kernels (`tuner`: xgb, ga, random or grid) for up
    to `trials` measured candidates or `time_budget_s` seconds, appending
    every measurement to `records` (resumed when it exists); compile with
    `xtc.compile(model, tuning_records=records)`."""
    from xtc.tune.measure import MeasureOptions
    from xtc.tune.tuning import tune_model

    return tune_model(
        model,
        records,
        trials=trials,
        tuner=tuner,
        time_budget_s=time_budget_s,
        early_stopping=early_stopping,
        input_shapes=input_shapes,
        options=MeasureOptions(threads=threads),
    )


def load(path: str | os.PathLike[str]) -> CompiledModel | CudaModel | SpecializedModel:
    """The compiled model in an artifact written by `.export` or `xtc compile`
    (a SpecializedModel runs only the specializations it holds)."""
    from xtc.runtime.artifact import load_artifact

    return load_artifact(path)


def register_ops(module: ModuleType | Sequence[ModuleType]) -> OpPlugin:
    """Registers an op plugin module (its dialect, ONNX converters, numpy
    references, compute rules) in this process, as the `xtc.ops` entry point
    does for an installed package; see `xtc.plugins`."""
    from xtc.plugins import register_ops as register

    return register(module)


__all__ = [
    "BenchmarkResult",
    "CompiledModel",
    "InputError",
    "TensorSpec",
    "__version__",
    "compile",
    "load",
    "register_ops",
    "tune",
]


def __getattr__(name: str) -> object:
    """`xtc.CompiledModel`, `xtc.TensorSpec`, `xtc.BenchmarkResult`, imported
    on first use (so that `import xtc` stays light)."""
    if name in ("CompiledModel", "TensorSpec", "BenchmarkResult", "InputError"):
        from xtc.runtime import model

        return getattr(model, name)
    raise AttributeError(f"module 'xtc' has no attribute {name!r}")
