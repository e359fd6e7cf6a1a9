"""The cost of one call on tiny models: what `CompiledModel.run` adds to the
native code, beside onnxruntime's `InferenceSession.run`.

    python bench/call_overhead.py [--threads 2] [--calls 2000] [--repeat 7] [--json out.json]

Each one-node model (a 16-element Relu, where nearly all of a call is
overhead, and a 1x1000 Softmax) is compiled with `xtc.compile` and run on
the same input by: `run` with a dict of inputs, `run` with a list, the
native `xtc_run` alone on prepared buffers, and an onnxruntime session with
the same thread count. Each figure is the best of `--repeat` blocks of
`--calls` calls, in microseconds per call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import xtc
from xtc.runtime.llvm_jit import aligned_copy, aligned_empty

CASES: dict[str, tuple[str, list[int], dict[str, int]]] = {
    "relu_16": ("Relu", [1, 16], {}),
    "softmax_1000": ("Softmax", [1, 1000], {"axis": 1}),
}


@dataclass
class Row:
    case: str
    run_dict_us: float
    run_list_us: float
    native_us: float
    ort_us: float


def one_node(op: str, shape: list[int], attrs: dict[str, int]) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], op, [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def best_us(call: Callable[[], object], calls: int, repeat: int) -> float:
    """The best of `repeat` blocks of `calls` calls, in µs per call."""
    blocks: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        blocks.append((time.perf_counter() - start) / calls * 1e6)
    return min(blocks)


def bench_case(name: str, threads: int, calls: int, repeat: int) -> Row:
    op, shape, attrs = CASES[name]
    model = one_node(op, shape, attrs)
    compiled = xtc.compile(model)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    # The caller holds the buffers' addresses only: keep the buffers alive.
    buffers = ([aligned_copy(x)], [aligned_empty(shape, np.float32)])
    native = compiled._caller(*buffers)  # pyright: ignore[reportPrivateUsage]
    np.testing.assert_allclose(
        compiled.run([x])[0], session.run(None, {"x": x})[0], rtol=1e-5, atol=1e-6
    )
    return Row(
        name,
        best_us(lambda: compiled.run({"x": x}), calls, repeat),
        best_us(lambda: compiled.run([x]), calls, repeat),
        best_us(native, calls, repeat),
        best_us(lambda: session.run(None, {"x": x}), calls, repeat),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", help="write the rows as JSON")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.calls < 1 or args.repeat < 1:
        parser.error("--threads, --calls and --repeat are at least 1")
    os.environ["XTC_NUM_THREADS"] = str(args.threads)
    print(f"{'case':<14} {'run(dict)':>10} {'run(list)':>10} {'native':>8} {'ORT':>8}   µs/call")
    rows: list[Row] = []
    for name in CASES:
        row = bench_case(name, args.threads, args.calls, args.repeat)
        rows.append(row)
        print(
            f"{row.case:<14} {row.run_dict_us:10.2f} {row.run_list_us:10.2f} "
            f"{row.native_us:8.2f} {row.ort_us:8.2f}",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
