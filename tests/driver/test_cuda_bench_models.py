"""Every bench model (bench/models.py, smoke-test size) compiles for CUDA at
-O3: its host code keeps to the host contract
(xtc.lowering.convert_tir_to_gpu), ptxas accepts every kernel (skipped
without ptxas), and the gpu level, run by the interpreter one thread after
another, computes what the CPU build does.

The default run compiles the quick models (about 10 s in all); the others
(resnet50, vgg16/19, inception_v1: 5 to 10 s each) run with
XTC_CUDA_ALL_MODELS=1. The interpreter check runs BERT by default
(about 10 s); resnet18 and mobilenet_v2 (minutes each in the
interpreter) run with XTC_CUDA_ALL_MODELS=1."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from xdsl.dialects import func, gpu

import xtc
from xtc import interp
from xtc.driver.cuda import compile_graph_to_gpu
from xtc.frontend.onnx import import_model
from xtc.lowering.convert_tir_to_gpu import HOST_OPS
from xtc.runtime.ptx import ptx

BENCH_PATH = Path(__file__).resolve().parents[2] / "bench" / "models.py"
ALL_MODELS = os.environ.get("XTC_CUDA_ALL_MODELS") == "1"
SLOW_TO_COMPILE = {"resnet50", "vgg16", "vgg19", "inception_v1"}


def _bench() -> ModuleType:
    """bench/models.py imported by path (bench/ is a folder of scripts)."""
    spec = importlib.util.spec_from_file_location("bench_models_cuda", BENCH_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


BENCH = _bench()


def _models(names: list[str], quick: set[str]) -> list[object]:
    """`names` as test parameters, those not `quick` skipped unless
    XTC_CUDA_ALL_MODELS=1."""
    slow = pytest.mark.skipif(not ALL_MODELS, reason="slow: set XTC_CUDA_ALL_MODELS=1")
    return [pytest.param(n, marks=[] if n in quick else [slow]) for n in names]


@pytest.mark.parametrize(
    "name", _models(list(BENCH.MODEL_NAMES), set(BENCH.MODEL_NAMES) - SLOW_TO_COMPILE)
)
def test_the_model_compiles_for_cuda_and_ptxas_accepts_it(name: str, tmp_path: Path) -> None:
    model = BENCH.build_model(name, small=True, bert_layers=1)
    module = compile_graph_to_gpu(import_model(model), 3)
    launches = [op for op in module.walk() if isinstance(op, gpu.LaunchFuncOp)]
    kernels = [op for op in module.walk() if isinstance(op, gpu.FuncOp)]
    assert launches and len(launches) == len(kernels)
    for host in (op for op in module.ops if isinstance(op, func.FuncOp)):
        assert all(isinstance(op, HOST_OPS) for op in host.body.ops), host.sym_name.data
    for kernel in kernels:
        assert not any(op.name == "memref.alloc" for op in kernel.walk()), kernel.sym_name.data
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("CUDA's ptxas is not on PATH")
    text = ptx(module, "sm_90")
    assert text.count(".entry") == len(kernels)
    (tmp_path / "model.ptx").write_text(text)
    result = subprocess.run(
        [ptxas, "-arch=sm_90", str(tmp_path / "model.ptx"), "-o", str(tmp_path / "model.cubin")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", _models(["bert", "resnet18", "mobilenet_v2"], {"bert"}))
def test_the_gpu_level_computes_what_the_cpu_build_does(name: str) -> None:
    model = BENCH.build_model(name, small=True, bert_layers=1)
    inputs = BENCH.random_inputs(model, seed=5)
    expected = xtc.compile(model, target="llvm", opt_level=3).run(inputs)
    got = interp.run(compile_graph_to_gpu(import_model(model), 3), inputs)
    assert len(got) == len(expected)
    for e, g in zip(expected, got, strict=True):
        e = np.asarray(e)
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * float(np.abs(e).max()))
