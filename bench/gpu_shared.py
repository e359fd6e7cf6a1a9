"""Shared memory on an NVIDIA GPU: one matmul, three schedules, checked
against numpy and timed (CUDA events around CUDA-graph replays).

    python bench/gpu_shared.py [--m 2048 --k 256 --n 2048] [--tile 16]
                               [--repeat 20] [--device cuda|interp]

- `default`: cuda-default-schedule (one thread per output, fused loops);
- `blocks`: tiles of tile x tile outputs per block (blockIdx.y x .x),
  one thread each (threadIdx.y x .x), every operand read from global memory;
- `shared`: `blocks` with A's tile x K rows and B's K x tile columns
  copied into shared memory by the block's threads (tir-cache-read
  scope=shared), a barrier, then the compute from shared memory.

The whole K panel is cached (no reduction tiling yet), so
(2 x tile x K x 4 bytes) must fit the block's 48 KiB. `--device interp`
runs the kernels in the interpreter (small sizes: a check without a GPU).
Each result is one line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from unittest import mock

import numpy as np

KERNEL = "matmul_0"
LOWER = "convert-graph-to-te,convert-te-to-tir"


def block_schedule(tile: int, shared: bool) -> str:
    steps = [
        f"tir-split{{func={KERNEL} loop=i0 factor={tile}}}",
        f"tir-split{{func={KERNEL} loop=i1 factor={tile}}}",
        f"tir-reorder{{func={KERNEL} order=i0_o,i1_o,i0_i,i1_i}}",
        f'tir-bind{{func={KERNEL} loop=i0_o axis="blockIdx.y"}}',
        f'tir-bind{{func={KERNEL} loop=i1_o axis="blockIdx.x"}}',
        f'tir-bind{{func={KERNEL} loop=i0_i axis="threadIdx.y"}}',
        f'tir-bind{{func={KERNEL} loop=i1_i axis="threadIdx.x"}}',
    ]
    if shared:
        steps += [
            f"tir-cache-read{{func={KERNEL} loop=i1_o buffer={b} scope=shared}}"
            for b in ("in0", "in1")
        ]
    return ",".join(steps)


PIPELINES = {
    "default": f"{LOWER},cuda-default-schedule,convert-tir-to-gpu",
    "blocks": "{lower},{blocks},convert-tir-to-gpu",
    "shared": "{lower},{shared},convert-tir-to-gpu",
}


def pipeline(name: str, tile: int) -> str:
    return PIPELINES[name].format(
        lower=LOWER, blocks=block_schedule(tile, False), shared=block_schedule(tile, True)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--m", type=int, default=2048)
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--tile", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--device", choices=("cuda", "interp"), default="cuda")
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args(argv)
    if args.m % args.tile or args.n % args.tile:
        print(f"--tile {args.tile} must divide --m and --n", file=sys.stderr)
        return 1

    from xtc.driver import cuda
    from xtc.driver.textual_ir import parse_module
    from xtc.testing.graph_op import matmul_text

    graph = parse_module(matmul_text(args.m, args.k, args.n))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.m, args.k), dtype=np.float32)
    b = rng.standard_normal((args.k, args.n), dtype=np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    for name in PIPELINES:
        started = time.perf_counter()
        # the CUDA driver compiles with its own pipeline: this script's instead
        chosen = pipeline(name, args.tile)
        with mock.patch.object(cuda, "cuda_pipeline", return_value=chosen):
            try:
                model = cuda.compile_cuda_model(graph, arch=args.arch, device=args.device)
            except Exception as e:  # noqa: BLE001 - one line per schedule, never the end
                print(f"{name}: compile failed: {str(e).splitlines()[0]}", flush=True)
                continue
        seconds = time.perf_counter() - started
        (got,) = model.run([a, b])
        error = float(np.max(np.abs(got - expected)) / max(1.0, float(np.max(np.abs(expected)))))
        timing = model.benchmark([a, b], repeat=args.repeat, number=10)
        print(
            f"{name}: {args.m}x{args.k}x{args.n} tile {args.tile}: rel err {error:.2e}, "
            f"median {timing.median_ms:.4f} ms, best {min(timing.runs_ms):.4f} ms, "
            f"compile {seconds:.1f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
