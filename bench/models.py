"""xtc against onnxruntime on whole models, side by side in one process.

    python bench/models.py [--models resnet18,resnet18_int8,resnet50,mobilenet_v2,squeezenet,
                                     bert,alexnet,vgg16,vgg19,inception_v1,densenet121,
                                     shufflenet,lstm]
                           [--threads N] [--repeat R] [--number K] [--bert-layers L]
                           [--matmul] [--small] [--json out.json]

Each model is built by `xtc.tools.model_builders` with random weights (224x224
images and 1000 classes; BERT-base widths at sequence 128; VGG-19 holds 548 MiB
of weights, AlexNet 233 MiB; two stacked LSTMs, hidden 128, over 64 steps;
`resnet18_int8` is ResNet-18 quantized by onnxruntime's `quantize_static`, QDQ,
u8 activations and per-channel i8 weights, calibrated on random images),
compiled with
`xtc.compile`, and timed beside an onnxruntime session given the same number of
threads. Blocks of K runs alternate (xtc, then onnxruntime) R times, so that
neither runtime's thread pool spins on the cores while the other one runs; the
table gives the medians of the per-run times, and `match` says whether the
outputs agree (max abs difference <= 1e-3 x max abs of onnxruntime's output;
for a quantized model, one quantization step of its output).
`--matmul` adds an fp32 1024^3 matmul, xtc against numpy, in GFLOP/s.

Rows print as each model completes. The exit status is non-zero when any
output mismatches or any model fails to build, compile or run."""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, TextIO

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import xtc
from xtc.tools.model_builders import (
    alexnet,
    bert_encoder,
    densenet,
    inception_v1,
    lstm_classifier,
    mobilenet_v2,
    resnet,
    resnet_int8,
    shufflenet,
    squeezenet,
    vgg,
)

if TYPE_CHECKING:
    from xtc.runtime.model import CompiledModel

MODEL_NAMES = (
    "resnet18",
    "resnet18_int8",
    "resnet50",
    "mobilenet_v2",
    "squeezenet",
    "bert",
    "alexnet",
    "vgg16",
    "vgg19",
    "inception_v1",
    "densenet121",
    "shufflenet",
    "lstm",
)
MATCH_RTOL = 1e-3
STEP_SLACK = 1e-5
"""Relative slack on one quantization step: two f32 values one step apart
differ by the step give or take a rounding of each."""
MATMUL_SIZE = 1024
SMALL_MATMUL_SIZE = 128
# BERT's attention mask keeps every position but the last MASKED_POSITIONS.
MASKED_POSITIONS = 16

Inputs = dict[str, np.ndarray]


@dataclass(frozen=True)
class Config:
    """What to build and how to time it."""

    models: tuple[str, ...]
    threads: int
    repeat: int
    number: int
    bert_layers: int
    small: bool
    matmul: bool


@dataclass
class Row:
    """One line of the table: xtc against a baseline (onnxruntime or numpy)."""

    model: str
    baseline: str
    compile_s: float | None = None
    xtc_ms: float | None = None
    baseline_ms: float | None = None
    ratio: float | None = None
    match: str = "ERROR"
    max_abs_diff: float | None = None
    tolerance: float | None = None
    xtc_gflops: float | None = None
    baseline_gflops: float | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.match != "ok"


Builder = Callable[[], onnx.ModelProto]

CNN_BUILDERS: dict[str, tuple[Builder, Builder]] = {
    "resnet18": (lambda: resnet(18), lambda: resnet(18, image=32, classes=10)),
    "resnet18_int8": (resnet_int8, lambda: resnet_int8(18, image=32, classes=10)),
    "resnet50": (lambda: resnet(50), lambda: resnet(50, image=32, classes=10)),
    "mobilenet_v2": (mobilenet_v2, lambda: mobilenet_v2(image=32, classes=10)),
    "squeezenet": (squeezenet, lambda: squeezenet(image=32, classes=10)),
    "alexnet": (alexnet, lambda: alexnet(image=64, classes=10, hidden=64)),
    "vgg16": (lambda: vgg(16), lambda: vgg(16, image=32, classes=10, width=0.125, hidden=64)),
    "vgg19": (lambda: vgg(19), lambda: vgg(19, image=32, classes=10, width=0.125, hidden=64)),
    "inception_v1": (inception_v1, lambda: inception_v1(image=64, classes=10, width=0.25)),
    "densenet121": (
        densenet,
        lambda: densenet(blocks=(2, 2, 2, 2), growth=8, stem=16, image=32, classes=10),
    ),
    "shufflenet": (
        shufflenet,
        lambda: shufflenet(stages=(48, 96, 192), repeats=(1, 2, 1), image=32, classes=10),
    ),
}
"""Each image model at benchmark size (224x224, 1000 classes) and at
smoke-test size (small images, 10 classes, narrower layers where they are
wide)."""


def build_model(name: str, small: bool, bert_layers: int) -> onnx.ModelProto:
    """The named model at benchmark size, or at smoke-test size when `small`."""
    if name == "bert":
        if small:
            return bert_encoder(layers=1, seq=16, hidden=32, heads=4, ffn=64)
        return bert_encoder(layers=bert_layers, seq=128, hidden=768, heads=12, ffn=3072)
    if name == "lstm":
        if small:
            return lstm_classifier(seq=8, features=8, hidden=16)
        return lstm_classifier()
    if name in CNN_BUILDERS:
        full, tiny = CNN_BUILDERS[name]
        return tiny() if small else full()
    raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")


def matmul_model(n: int) -> onnx.ModelProto:
    """A one-node ONNX model: y = a @ b on float32 n x n matrices."""
    inputs = [helper.make_tensor_value_info(v, TensorProto.FLOAT, [n, n]) for v in ("a", "b")]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")
    graph = helper.make_graph([node], f"matmul{n}", inputs, [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def static_shape(info: onnx.ValueInfoProto) -> tuple[int, ...]:
    """The input's dimensions; refuses symbolic ones (the builders give none)."""
    dims = info.type.tensor_type.shape.dim
    if any(not d.HasField("dim_value") for d in dims):
        raise ValueError(f"input {info.name!r} has a symbolic dimension; give it a size")
    return tuple(d.dim_value for d in dims)


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> Inputs:
    """Fixed-seed inputs for every graph input: standard normal floats; for
    integer (mask) inputs, ones with the last positions of the last axis 0."""
    rng = np.random.default_rng(seed)
    weights = {init.name for init in model.graph.initializer}
    inputs: Inputs = {}
    for info in model.graph.input:
        if info.name in weights:
            continue
        shape = static_shape(info)
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type))
        if np.issubdtype(dtype, np.floating):
            inputs[info.name] = rng.standard_normal(shape).astype(dtype)
        else:
            mask = np.ones(shape, dtype)
            if shape:
                mask[..., shape[-1] - min(MASKED_POSITIONS, shape[-1] // 4) :] = 0
            inputs[info.name] = mask
    return inputs


def ort_session(model: onnx.ModelProto, threads: int) -> ort.InferenceSession:
    """An onnxruntime CPU session on `threads` intra-op threads, graph
    optimizations on."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # warnings about shape merging are noise here
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def time_calls(call: Callable[[], object], number: int, warmup: int = 0) -> list[float]:
    """Milliseconds of each of `number` calls, after `warmup` untimed ones."""
    for _ in range(warmup):
        call()
    times: list[float] = []
    for _ in range(number):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return times


SETTLE_S = 0.2
"""Seconds between blocks: libgomp and onnxruntime spin-wait a while after a run."""


def interleaved_medians(
    xtc_block: Callable[[], list[float]],
    baseline_block: Callable[[], list[float]],
    repeat: int,
) -> tuple[float, float]:
    """Median per-run ms of each side, alternating their blocks `repeat` times.
    Before each block the other side's thread pool is given time to stop
    spinning (SETTLE_S), so neither times the other's idle spinning."""
    xtc_ms: list[float] = []
    baseline_ms: list[float] = []
    for _ in range(repeat):
        time.sleep(SETTLE_S)
        xtc_ms += xtc_block()
        time.sleep(SETTLE_S)
        baseline_ms += baseline_block()
    return float(np.median(xtc_ms)), float(np.median(baseline_ms))


def quantization_step(model: onnx.ModelProto) -> float:
    """The largest scale of a DequantizeLinear that writes a graph output
    (with a constant scale): one step of a quantized model's output; 0.0
    for a float model."""
    outputs = {o.name for o in model.graph.output}
    constants = {t.name: t for t in model.graph.initializer}
    steps = [
        float(np.max(onnx.numpy_helper.to_array(constants[node.input[1]])))
        for node in model.graph.node
        if node.op_type == "DequantizeLinear"
        and node.output[0] in outputs
        and node.input[1] in constants
    ]
    return max(steps, default=0.0)


def compare_outputs(
    got: Sequence[np.ndarray], expected: Sequence[np.ndarray], step: float = 0.0
) -> tuple[bool, float, float]:
    """(match, max abs difference, tolerance) over all outputs; the tolerance
    is MATCH_RTOL times the largest magnitude among the expected outputs, or
    `step` (one quantization step of a quantized output) when that is more."""
    scale = max((float(np.abs(e).max()) for e in expected if e.size), default=0.0)
    tolerance = max(MATCH_RTOL * scale, step * (1 + STEP_SLACK))
    if len(got) != len(expected):
        return False, math.inf, tolerance
    worst = 0.0
    for g, e in zip(got, expected, strict=True):
        if np.shape(g) != np.shape(e):
            return False, math.inf, tolerance
        if e.size:
            diff = float(np.abs(np.asarray(g, np.float64) - np.asarray(e, np.float64)).max())
            # A NaN anywhere makes the difference NaN, which must not hide in max().
            worst = diff if math.isnan(diff) or diff > worst else worst
    return worst <= tolerance, worst, tolerance  # NaN <= x is false: a mismatch


def compile_timed(model: onnx.ModelProto) -> tuple[CompiledModel, float]:
    """The xtc-compiled model and the seconds its compile took."""
    start = time.perf_counter()
    compiled = xtc.compile(model, target="llvm", input_shapes=None, opt_level=3)
    return compiled, time.perf_counter() - start


def xtc_block(compiled: CompiledModel, inputs: Inputs, number: int) -> Callable[[], list[float]]:
    """A block of `number` xtc runs, timed by the compiled model itself (no
    warm-up run per block: the first output check warmed it up)."""
    return lambda: list(compiled.benchmark(inputs, repeat=number, number=1, warmup=1).runs_ms)


def bench_model(name: str, config: Config) -> Row:
    """Build, compile, check and time one model against onnxruntime."""
    row = Row(model=name, baseline="onnxruntime")
    model = build_model(name, config.small, config.bert_layers)
    inputs = random_inputs(model)
    compiled, row.compile_s = compile_timed(model)
    session = ort_session(model, config.threads)
    # The first runs warm both up and give the outputs to compare.
    got = compiled.run(inputs)
    expected = [np.asarray(o) for o in session.run(None, inputs)]
    step = quantization_step(model)
    ok, row.max_abs_diff, row.tolerance = compare_outputs(got, expected, step)
    row.match = "ok" if ok else "MISMATCH"
    row.xtc_ms, row.baseline_ms = interleaved_medians(
        xtc_block(compiled, inputs, config.number),
        lambda: time_calls(lambda: session.run(None, inputs), config.number, warmup=1),
        config.repeat,
    )
    row.ratio = row.xtc_ms / row.baseline_ms
    return row


def bench_matmul(n: int, config: Config) -> Row:
    """An fp32 n^3 matmul: xtc against numpy's BLAS, in ms and GFLOP/s."""
    row = Row(model=f"matmul{n}", baseline="numpy")
    model = matmul_model(n)
    inputs = random_inputs(model)
    a, b = inputs["a"], inputs["b"]
    compiled, row.compile_s = compile_timed(model)
    got = compiled.run(inputs)
    expected = [np.matmul(a, b)]
    ok, row.max_abs_diff, row.tolerance = compare_outputs(got, expected)
    row.match = "ok" if ok else "MISMATCH"
    row.xtc_ms, row.baseline_ms = interleaved_medians(
        xtc_block(compiled, inputs, config.number),
        lambda: time_calls(lambda: np.matmul(a, b), config.number, warmup=1),
        config.repeat,
    )
    row.ratio = row.xtc_ms / row.baseline_ms
    gflop = 2 * n**3 / 1e9
    row.xtc_gflops = gflop / (row.xtc_ms / 1e3)
    row.baseline_gflops = gflop / (row.baseline_ms / 1e3)
    return row


def guarded(name: str, baseline: str, bench: Callable[[], Row]) -> Row:
    """The row `bench` gives, or an ERROR row naming what went wrong, so one
    failing model does not stop the others."""
    try:
        return bench()
    except Exception as error:  # a benchmark reports failures, it does not crash on them
        return Row(model=name, baseline=baseline, error=f"{type(error).__name__}: {error}")


def limit_blas_threads(threads: int) -> bool:
    """Caps the OpenBLAS that numpy loaded at `threads` threads, so numpy gets
    the cores xtc and onnxruntime get. False where no OpenBLAS is found."""
    libraries: set[str] = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "openblas" in os.path.basename(path).lower():
                    libraries.add(path)
    except OSError:
        return False
    setters = (
        "scipy_openblas_set_num_threads64_",
        "openblas_set_num_threads64_",
        "scipy_openblas_set_num_threads",
        "openblas_set_num_threads",
    )
    limited = False
    for path in libraries:
        library = ctypes.CDLL(path)
        for setter in setters:
            if hasattr(library, setter):
                getattr(library, setter)(ctypes.c_int(threads))
                limited = True
                break
    return limited


TABLE_HEADER = f"{'model':<14} {'compile_s':>9} {'xtc_ms':>10} {'ort_ms':>10} {'ratio':>7}  match"
MATMUL_HEADER = (
    f"{'matmul fp32':<14} {'compile_s':>9} {'xtc_ms':>10} {'numpy_ms':>10} {'ratio':>7}  match"
    f"  {'xtc_GFLOP/s':>11} {'numpy_GFLOP/s':>13}"
)


def format_row(row: Row) -> str:
    """The table line for a row; a failed row shows its error instead of times."""
    if row.error is not None:
        return f"{row.model:<14} ERROR  {row.error}"
    line = (
        f"{row.model:<14} {row.compile_s:>9.2f} {row.xtc_ms:>10.2f} {row.baseline_ms:>10.2f} "
        f"{row.ratio:>7.2f}  {row.match}"
    )
    if row.xtc_gflops is not None and row.baseline_gflops is not None:
        line += f"  {row.xtc_gflops:>11.1f} {row.baseline_gflops:>13.1f}"
    if row.match == "MISMATCH":
        line += f"  (max abs diff {row.max_abs_diff:.3g} > {row.tolerance:.3g})"
    return line


def geometric_mean(values: Sequence[float]) -> float:
    """The n-th root of the product: the mean that suits speed ratios."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def emit(line: str, out: TextIO) -> None:
    """Prints a line at once, so a long run shows each row as it completes."""
    print(line, file=out, flush=True)


def comma_list(text: str) -> tuple[str, ...]:
    """The --models value: known model names, comma-separated."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in MODEL_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown model(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {','.join(MODEL_NAMES)}"
        )
    return names


def positive_int(text: str) -> int:
    """An argument that must be an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def parse_args(argv: Sequence[str] | None) -> tuple[Config, str | None]:
    """The configuration and the --json path; argparse exits 2 on bad arguments."""
    parser = argparse.ArgumentParser(
        prog="bench/models.py", description="xtc against onnxruntime on whole models."
    )
    parser.add_argument(
        "--models",
        type=comma_list,
        default=MODEL_NAMES,
        help=f"comma-separated, from {','.join(MODEL_NAMES)} (default: all)",
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="threads for onnxruntime, xtc (XTC_NUM_THREADS) and numpy",
    )
    parser.add_argument(
        "--repeat", type=positive_int, default=5, help="alternating blocks per side (default 5)"
    )
    parser.add_argument("--number", type=positive_int, default=3, help="runs per block (default 3)")
    parser.add_argument(
        "--bert-layers",
        type=positive_int,
        default=4,
        help="encoder layers of the BERT model (default 4)",
    )
    parser.add_argument(
        "--matmul",
        action="store_true",
        help=f"add an fp32 {MATMUL_SIZE}^3 matmul, xtc against numpy",
    )
    parser.add_argument(
        "--small",
        action="store_true",
        help="tiny models (32x32 images, 10 classes, a 1-layer hidden-32 "
        f"BERT at seq 16, a {SMALL_MATMUL_SIZE}^3 matmul): a smoke test",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    config = Config(
        models=tuple(args.models),
        threads=args.threads,
        repeat=args.repeat,
        number=args.number,
        bert_layers=args.bert_layers,
        small=args.small,
        matmul=args.matmul,
    )
    return config, args.json


def write_json(path: str, config: Config, rows: Sequence[Row], geomean: float | None) -> None:
    """Writes the configuration, versions, rows and geometric mean to `path`."""
    report: Mapping[str, object] = {
        "config": asdict(config),
        "xtc_version": xtc.__version__,
        "onnxruntime_version": ort.__version__,
        "rows": [asdict(row) for row in rows],
        "geomean_ratio_vs_onnxruntime": geomean,
    }
    with open(path, "w") as file:
        json.dump(report, file, indent=2)
        file.write("\n")


def model_rows(config: Config, out: TextIO) -> list[Row]:
    """One row per model against onnxruntime, printed as each completes."""
    emit(TABLE_HEADER, out)
    rows: list[Row] = []
    for name in config.models:
        row = guarded(name, "onnxruntime", lambda name=name: bench_model(name, config))
        rows.append(row)
        emit(format_row(row), out)
    return rows


def matmul_row(config: Config, out: TextIO) -> Row:
    """The matmul row against numpy, under its own header."""
    if not limit_blas_threads(config.threads):
        emit(f"note: numpy's BLAS threads could not be limited to {config.threads}", out)
    n = SMALL_MATMUL_SIZE if config.small else MATMUL_SIZE
    row = guarded(f"matmul{n}", "numpy", lambda: bench_matmul(n, config))
    emit(MATMUL_HEADER, out)
    emit(format_row(row), out)
    return row


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Runs the benchmark; 0 when every output matched, 1 otherwise."""
    stream = sys.stdout if out is None else out
    config, json_path = parse_args(argv)
    os.environ["XTC_NUM_THREADS"] = str(config.threads)
    emit(f"threads={config.threads} repeat={config.repeat} number={config.number}", stream)
    rows = model_rows(config, stream)
    ratios = [row.ratio for row in rows if row.ratio is not None]
    geomean = geometric_mean(ratios) if ratios else None
    shown = f"{geomean:.2f}" if geomean is not None else "n/a"
    emit(f"geomean ratio (xtc/ort): {shown} over {len(ratios)} model(s)", stream)
    if config.matmul:
        rows.append(matmul_row(config, stream))
    if json_path:
        write_json(json_path, config, rows, geomean)
    failed = [row.model for row in rows if row.failed]
    if failed:
        emit(f"FAILED: {', '.join(failed)}", stream)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
