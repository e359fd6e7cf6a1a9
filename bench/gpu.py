"""xtc on an NVIDIA GPU: the bench models checked against onnxruntime (CPU),
and ResNet-50 timed against PyTorch, in one run of a few minutes.

    python bench/gpu.py [--models resnet18,...] [--full resnet18,resnet50,...]
                         [--workers N] [--repeat R] [--json out.json]
                         [--outputs-per-thread K] [--no-shared-tiling]
                         [--no-cross-thread]
    python bench/gpu.py --check-dlpack     # __dlpack__ in, outputs="device" out (PyTorch)

Compiles run in `--workers` processes (spawned) while the GPU runs what is
compiled. For each bench model (bench/models.py), at smoke-test size and,
for those named by `--full`, at full size: compile for CUDA (the GPU's
architecture, so ptxas's cubin is used when ptxas is here), run on the GPU,
compare with onnxruntime's CPU provider (max abs diff <= 1e-3 x max abs of
onnxruntime's output, as bench/models.py). A model that fails to compile or
run is a row with the reason, never the end of the run. Then ResNet-50
(224x224) at batch 1 and 8: xtc's median latency (CUDA events around
CUDA-graph replays, `--repeat` runs after warm-up) against PyTorch fp32
(TF32 off), eager and captured in a CUDA graph, same process, same GPU.
(The script is not named cuda.py: run as a script, its folder comes first
on sys.path, and a module named `cuda` would hide the `cuda` package that
CuPy imports.) PyTorch is imported only here; torchvision's resnet50 is used when
installed, else the same network written below. Each result is one line,
flushed; `--json` writes them all."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import MODEL_NAMES, build_model, compare_outputs, ort_session, random_inputs  # noqa: E402

DEFAULT_FULL = ("resnet18", "mobilenet_v2", "squeezenet", "bert")
"""Full size; ResNet-50 at full size is the resnet50/b1 job, checked like these."""
RESNET50_BATCHES = (1, 8)
ORT_MAX_IR_VERSION = 10
"""The newest ONNX IR version that onnxruntime 1.20 and later all read (a
newer onnx package writes 14; onnxruntime 1.30 reads up to 13)."""
WARMUP = 10


def say(line: str) -> None:
    print(line, flush=True)


def one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:400]


def build(job: str) -> Any:
    """The ONNX model of a job: NAME/small, NAME/full, resnet50/bN."""
    from xtc.tools.model_builders import resnet

    name, size = job.split("/")
    if size.startswith("b"):
        model = resnet(50, batch=int(size[1:]))
    else:
        model = build_model(name, small=size == "small", bert_layers=2)
    model.ir_version = min(model.ir_version, ORT_MAX_IR_VERSION)
    return model


def compile_job(
    job: str,
    arch: str,
    directory: str,
    outputs_per_thread: int = 1,
    shared_tiling: bool = True,
    cross_thread: bool = True,
) -> tuple[str, float]:
    """In a worker: the job's model compiled for CUDA, exported; (tar, seconds)."""
    from xtc.driver.cuda import compile_cuda_model

    started = time.perf_counter()
    model = compile_cuda_model(
        build(job),
        arch=arch,
        outputs_per_thread=outputs_per_thread,
        shared_tiling=shared_tiling,
        cross_thread=cross_thread,
    )
    path = Path(directory) / (job.replace("/", "-") + ".tar")
    model.export(path)
    return str(path), time.perf_counter() - started


def device_arch() -> tuple[str, str]:
    """(sm_XY, GPU name) of device 0."""
    from xtc.runtime.cuda_driver import CudaDriver

    driver = CudaDriver()
    major, minor = driver.compute_capability()
    return f"sm_{major}{minor}", driver.name()


def check_job(job: str, path: str, seconds: float, rows: list[dict[str, Any]]) -> Any:
    """Runs the compiled job on the GPU against onnxruntime; returns the model."""
    import xtc

    model = xtc.load(path)
    onnx_model = build(job)
    inputs = random_inputs(onnx_model)
    got = model.run(inputs)
    expected = ort_session(onnx_model, os.cpu_count() or 1).run(None, inputs)
    ok, diff, tolerance = compare_outputs(got, expected)
    row = {
        "job": job,
        "compile_s": round(seconds, 1),
        "match": "ok" if ok else "MISMATCH",
        "max_abs_diff": diff,
        "tolerance": tolerance,
        "loaded": getattr(model.open_device(), "loaded", "?"),
        "launches": model.manifest["launches"],
    }
    rows.append(row)
    say(
        f"{job:<24} compile {seconds:7.1f} s  {row['match']:<8} max abs diff {diff:.3g} "
        f"(tol {tolerance:.3g}), {row['launches']} launches, {row['loaded']}"
    )
    return model


def zero_copy_check(model: Any, job: str, rows: list[dict[str, Any]]) -> None:
    """The same inputs as CuPy arrays (__cuda_array_interface__) give the same outputs."""
    import cupy  # type: ignore[import-not-found]

    inputs = random_inputs(build(job))
    host = model.run(inputs)
    device = model.run({k: cupy.asarray(v) for k, v in inputs.items()})
    same = all(np.array_equal(a, b) for a, b in zip(host, device, strict=True))
    rows.append({"job": f"{job} zero-copy", "match": "ok" if same else "MISMATCH"})
    say(f"{job + ' zero-copy':<24} {'ok' if same else 'MISMATCH'} (cupy inputs vs numpy inputs)")


class DLPackOnly:
    """A GPU tensor seen through __dlpack__ alone (no __cuda_array_interface__),
    so that xtc reads its DLPack capsule."""

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.tensor.__dlpack_device__()


def device_arrays_check(model: Any, job: str, rows: list[dict[str, Any]]) -> bool:
    """PyTorch CUDA tensors given through __dlpack__ only, and outputs kept on
    the GPU (outputs="device") read back by torch.from_dlpack, by
    __cuda_array_interface__ (torch.as_tensor) and by .numpy(), all equal to
    the numpy run; a float64 tensor is refused in one line; every capsule's
    deleter ran. One row; True when it all holds."""
    import torch  # type: ignore[import-not-found]

    from xtc.runtime import dlpack
    from xtc.runtime.errors import InputError

    inputs = random_inputs(build(job))
    host = model.run(inputs)
    tensors = {k: torch.from_numpy(v).cuda() for k, v in inputs.items()}
    torch.cuda.synchronize()
    capsules = dlpack.live_capsules()
    checks: dict[str, bool] = {}
    got = model.run({k: DLPackOnly(t) for k, t in tensors.items()})
    checks["dlpack inputs"] = all(np.array_equal(a, b) for a, b in zip(host, got, strict=True))
    outputs = model.run(tensors, outputs="device")
    checks["from_dlpack"] = all(
        np.array_equal(torch.from_dlpack(o).cpu().numpy(), h)
        for o, h in zip(outputs, host, strict=True)
    )
    checks["cuda_array_interface"] = all(
        np.array_equal(torch.as_tensor(o, device="cuda").cpu().numpy(), h)
        for o, h in zip(outputs, host, strict=True)
    )
    checks[".numpy()"] = all(
        np.array_equal(o.numpy(), h) for o, h in zip(outputs, host, strict=True)
    )
    del outputs
    try:
        model.run({k: DLPackOnly(t.double()) for k, t in tensors.items()})
        checks["float64 refused"] = False
    except InputError as error:
        checks["float64 refused"] = "\n" not in str(error) and "dtype float64" in str(error)
    checks["capsules released"] = dlpack.live_capsules() == capsules
    ok = all(checks.values())
    failed = [name for name, passed in checks.items() if not passed]
    rows.append(
        {"job": f"{job} device arrays", "match": "ok" if ok else "MISMATCH", "failed": failed}
    )
    say(f"{job + ' device arrays':<24} {'ok' if ok else 'MISMATCH ' + ', '.join(failed)} "
        f"({', '.join(checks)})")  # fmt: skip
    return ok


def check_dlpack_only(arch: str) -> int:
    """`--check-dlpack`: compiles resnet18 (smoke size) and runs
    device_arrays_check on it, in about a minute."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="xtc-bench-dlpack-") as directory:
        job = "resnet18/small"
        path, seconds = compile_job(job, arch, directory, 1)
        model = check_job(job, path, seconds, rows)
        try:
            ok = device_arrays_check(model, job, rows)
        except Exception as error:  # noqa: BLE001 - the check's failure is its report
            say(f"{job + ' device arrays':<24} ERROR {one_line(error)}")
            ok = False
    return 0 if ok and rows[0]["match"] == "ok" else 1


def xtc_latency(model: Any, inputs: Any, repeat: int) -> float:
    return model.benchmark(inputs, repeat=repeat, number=1, warmup=WARMUP).median_ms


def torch_resnet50(torch: Any) -> Any:
    """torchvision's resnet50 when installed, else the same network."""
    try:
        import torchvision  # type: ignore[import-not-found]

        return torchvision.models.resnet50()
    except ImportError:
        pass
    nn = torch.nn

    class Bottleneck(nn.Module):  # type: ignore[misc]
        def __init__(self, c_in: int, width: int, stride: int) -> None:
            super().__init__()
            out = width * 4
            self.body = nn.Sequential(
                nn.Conv2d(c_in, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(True),
                nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
                nn.ReLU(True), nn.Conv2d(width, out, 1, bias=False), nn.BatchNorm2d(out),
            )  # fmt: skip
            self.down = (
                nn.Sequential(nn.Conv2d(c_in, out, 1, stride, bias=False), nn.BatchNorm2d(out))
                if stride != 1 or c_in != out
                else nn.Identity()
            )

        def forward(self, x: Any) -> Any:
            return torch.relu(self.body(x) + self.down(x))

    layers: list[Any] = [
        nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
        nn.MaxPool2d(3, 2, 1),
    ]  # fmt: skip
    c = 64
    for stage, blocks in enumerate((3, 4, 6, 3)):
        for i in range(blocks):
            layers.append(Bottleneck(c, 64 << stage, 2 if stage and not i else 1))
            c = (64 << stage) * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 1000)]
    return nn.Sequential(*layers)


def torch_latencies(batch: int, repeat: int) -> tuple[float, float]:
    """PyTorch fp32 ResNet-50 median ms: eager, and replayed as a CUDA graph."""
    import torch  # type: ignore[import-not-found]

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    net = torch_resnet50(torch).cuda().eval()
    x = torch.randn(batch, 3, 224, 224, device="cuda")

    def timed(call: Callable[[], Any]) -> float:
        for _ in range(WARMUP):
            call()
        times = []
        for _ in range(repeat):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return float(np.median(times))

    with torch.no_grad():
        eager = timed(lambda: net(x))
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                net(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            net(x)
        graphed = timed(graph.replay)
    return eager, graphed


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODEL_NAMES), help="smoke-test-size models")
    parser.add_argument("--full", default=",".join(DEFAULT_FULL), help="full-size models")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    parser.add_argument("--repeat", type=int, default=50, help="timed runs (default 50)")
    parser.add_argument("--no-resnet50", action="store_true", help="skip the ResNet-50 timing")
    parser.add_argument("--json", metavar="PATH", help="write every row here")
    parser.add_argument(
        "--check-dlpack",
        action="store_true",
        help="only check __dlpack__ inputs and outputs='device' (PyTorch) on resnet18, then stop",
    )
    parser.add_argument(
        "--outputs-per-thread",
        type=int,
        default=1,
        metavar="K",
        help="register tiling: outputs of a conv/matmul per thread (default 1: off)",
    )
    parser.add_argument(
        "--no-shared-tiling",
        action="store_true",
        help="no conv/matmul output tiles per block through shared memory",
    )
    parser.add_argument(
        "--no-cross-thread",
        action="store_true",
        help="one thread per output even for few outputs with long reductions (no warp per output)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from xtc.runtime.cuda_driver import CudaError

    args = parse_args(argv)
    try:
        arch, gpu = device_arch()
    except CudaError as e:
        print(f"bench/gpu.py: error: {e}: this benchmark needs an NVIDIA GPU", file=sys.stderr)
        return 1
    if args.check_dlpack:
        say(f"device: {gpu} ({arch}); __dlpack__ inputs and device outputs")
        return check_dlpack_only(arch)
    say(
        f"device: {gpu} ({arch}); compiling with {args.workers} workers, "
        f"outputs_per_thread={args.outputs_per_thread}, shared_tiling={not args.no_shared_tiling}, "
        f"cross_thread={not args.no_cross_thread}"
    )
    jobs = [f"resnet50/b{b}" for b in ([] if args.no_resnet50 else RESNET50_BATCHES)]
    jobs += [f"{n}/small" for n in args.models.split(",") if n]
    jobs += [f"{n}/full" for n in args.full.split(",") if n]
    rows: list[dict[str, Any]] = []
    compiled: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="xtc-bench-cuda-") as directory:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.workers, mp_context=context) as pool:
            futures: dict[Future[tuple[str, float]], str] = {
                pool.submit(
                    compile_job,
                    job,
                    arch,
                    directory,
                    args.outputs_per_thread,
                    not args.no_shared_tiling,
                    not args.no_cross_thread,
                ): job
                for job in jobs
            }
            for future in as_completed(futures):
                job = futures[future]
                try:
                    path, seconds = future.result()
                    compiled[job] = check_job(job, path, seconds, rows)
                except Exception as error:  # one failing model is a row, not the end
                    rows.append({"job": job, "match": "ERROR", "error": one_line(error)})
                    say(f"{job:<24} ERROR {one_line(error)}")
        for job in ("resnet18/small", "mobilenet_v2/small"):
            if job in compiled:
                try:
                    zero_copy_check(compiled[job], job, rows)
                except Exception as error:  # noqa: BLE001
                    say(f"{job + ' zero-copy':<24} ERROR {one_line(error)}")
        if "resnet18/small" in compiled:
            try:
                device_arrays_check(compiled["resnet18/small"], "resnet18/small", rows)
            except Exception as error:  # noqa: BLE001
                rows.append({"job": "resnet18/small device arrays", "match": "ERROR"})
                say(f"{'resnet18/small device arrays':<24} ERROR {one_line(error)}")
        timing = resnet50_table(compiled, args.repeat) if not args.no_resnet50 else []
    if args.json:
        report = {
            "device": gpu,
            "arch": arch,
            "outputs_per_thread": args.outputs_per_thread,
            "shared_tiling": not args.no_shared_tiling,
            "cross_thread": not args.no_cross_thread,
            "rows": rows,
            "resnet50": timing,
        }
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        say(f"wrote {args.json}")
    bad = [r["job"] for r in rows if r.get("match") != "ok"]
    say(f"FAILED: {', '.join(bad)}" if bad else "all outputs match")
    return 1 if bad else 0


def resnet50_table(compiled: dict[str, Any], repeat: int) -> list[dict[str, Any]]:
    """ResNet-50 batch 1 and 8: xtc against PyTorch eager and CUDA graphs."""
    say(f"ResNet-50 fp32 224x224, median of {repeat} runs (ms)")
    say(f"{'batch':>5} {'xtc-cuda':>10} {'torch':>10} {'torch-graph':>12} {'xtc/graph':>10}")
    table: list[dict[str, Any]] = []
    for batch in RESNET50_BATCHES:
        entry: dict[str, Any] = {"batch": batch}
        try:
            model = compiled.get(f"resnet50/b{batch}")
            if model is None:
                entry["xtc_error"] = "not compiled (see its row above)"
            else:
                inputs = random_inputs(build(f"resnet50/b{batch}"))
                entry["xtc_ms"] = xtc_latency(model, inputs, repeat)
        except Exception as error:  # noqa: BLE001
            entry["xtc_error"] = one_line(error)
        try:
            entry["torch_ms"], entry["torch_graph_ms"] = torch_latencies(batch, repeat)
        except Exception as error:  # noqa: BLE001
            entry["torch_error"] = one_line(error)
            traceback.print_exc()
        table.append(entry)
        cells = [entry.get(k) for k in ("xtc_ms", "torch_ms", "torch_graph_ms")]
        ratio = cells[0] / cells[2] if cells[0] and cells[2] else None
        shown = [f"{c:.3f}" if c is not None else "n/a" for c in cells]
        say(
            f"{batch:>5} {shown[0]:>10} {shown[1]:>10} {shown[2]:>12} "
            f"{f'{ratio:.2f}' if ratio else 'n/a':>10}"
            + "".join(f"  {k}: {v}" for k, v in entry.items() if k.endswith("error"))
        )
    return table


if __name__ == "__main__":
    sys.exit(main())
