"""Where a model's time goes: each distinct kernel of a bench model, timed alone.

    python bench/kernels.py MODEL [--threads 2] [--repeat 5] [--small]
                           [--flush-cache] [--in-model] [--top N] [--json out.json]

MODEL is one of bench/models.py's MODEL_NAMES. The model is built (random
weights), taken to the tir level as a compile does, and split into its
tuning tasks (one per distinct kernel, tune/task.py). Each task's kernel is
scheduled with its default schedule, compiled alone and timed the way the
tuner measures candidates (tune/measure.py: calls repeated until a block
lasts a few milliseconds, the median of `--repeat` blocks; with
`--flush-cache`, each call after the caches were evicted, as cold as in a
whole model). A row gives the kernel's template, how many calls of the model
run it, its time per call, its time per model run (calls x time) and that
time's share of the sum, and its GFLOP/s. Rows are sorted by time per model
run, largest first.

The sum is not the model's run time: a whole model's kernels run warm or
cold depending on their neighbours, and the model adds its own calls. It
tells which kernels to look at, not what the model takes. `--in-model` adds
what each kernel takes inside the model, beside: the model compiled with
`profile` (runtime/profile.py) and profiled over 10 x `--repeat` runs, its
time per call and its ratio to the time alone."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).parent))

from models import (  # noqa: E402 - beside this script
    MODEL_NAMES,
    build_model,
    positive_int,
    random_inputs,
)

from xtc.tune.measure import (  # noqa: E402
    MeasureOptions,
    build_kernel,
    kernel_buffers,
    time_kernel,
)
import xtc  # noqa: E402
from xtc.tune.task import KERNEL_NAME, Task, extract_tasks  # noqa: E402


@dataclass
class KernelRow:
    """One distinct kernel of the model and its default schedule's time."""

    function: str
    kind: str
    calls: int
    ms_per_call: float
    ms_per_run: float
    share: float
    gflops: float
    in_model_ms_per_call: float | None = None
    """The kernel's time per call inside the model (--in-model)."""

    @property
    def in_model_ratio(self) -> float | None:
        if self.in_model_ms_per_call is None or self.ms_per_call <= 0:
            return None
        return self.in_model_ms_per_call / self.ms_per_call


def time_task(task: Task, options: MeasureOptions) -> float:
    """Seconds per call of the task's kernel under its default schedule."""
    jit = build_kernel(task.kernel_text, task.steps(task.default()))
    if options.threads is not None:
        jit.set_num_threads(options.threads)
    buffers, _ = kernel_buffers(task.kernel_text, task.key)
    run = jit.caller(KERNEL_NAME, buffers)
    return statistics.median(time_kernel(run, options))


def kernel_rows(tasks: Sequence[Task], options: MeasureOptions) -> list[KernelRow]:
    """A row per task, largest time per model run first."""
    timed = [(task, time_task(task, options)) for task in tasks]
    total = sum(seconds * task.occurrences for task, seconds in timed) or 1.0
    rows = [
        KernelRow(
            function=task.functions[0] if task.functions else KERNEL_NAME,
            kind=task.kind,
            calls=task.occurrences,
            ms_per_call=seconds * 1e3,
            ms_per_run=seconds * task.occurrences * 1e3,
            share=seconds * task.occurrences / total,
            gflops=task.flops / seconds / 1e9 if seconds > 0 else 0.0,
        )
        for task, seconds in timed
    ]
    return sorted(rows, key=lambda r: -r.ms_per_run)


def add_in_model_times(
    rows: Sequence[KernelRow],
    tasks: Sequence[Task],
    model: onnx.ModelProto,
    threads: int,
    runs: int,
) -> float:
    """Each row's time per call inside `model` compiled with `profile` (the
    calls of every function of its task); the model's time per run."""
    compiled = xtc.compile(model, profile=True)
    compiled.set_num_threads(threads)
    profile = compiled.profile(random_inputs(model), runs=runs)
    by_function = {r.kernel: r for r in profile.rows}
    names = {task.functions[0]: task.functions for task in tasks if task.functions}
    for row in rows:
        found = [by_function[f] for f in names.get(row.function, ()) if f in by_function]
        calls = sum(r.calls for r in found)
        if calls:
            row.in_model_ms_per_call = sum(r.ms for r in found) / calls
    return profile.run_ms


def print_table(rows: Sequence[KernelRow], top: int | None) -> None:
    in_model = any(r.in_model_ms_per_call is not None for r in rows)
    extra = f" {'in-model':>9} {'ratio':>6}" if in_model else ""
    print(f"{'kernel':<44} {'template':<14} {'calls':>5} {'ms/call':>9} {'ms/run':>9} "
          f"{'share':>6} {'GFLOP/s':>8}{extra}")
    for row in rows[:top]:
        extra = ""
        if in_model:
            ratio = row.in_model_ratio
            extra = f" {row.in_model_ms_per_call or 0.0:>9.4f} {ratio or 0.0:>6.2f}"
        print(
            f"{row.function[:44]:<44} {row.kind[:14]:<14} {row.calls:>5} "
            f"{row.ms_per_call:>9.4f} {row.ms_per_run:>9.4f} {row.share:>6.1%} {row.gflops:>8.1f}"
            f"{extra}"
        )
    print(f"sum of kernels: {sum(r.ms_per_run for r in rows):.3f} ms per run, "
          f"{len(rows)} distinct kernels, {sum(r.calls for r in rows)} calls")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=MODEL_NAMES)
    parser.add_argument("--threads", type=positive_int, default=2)
    parser.add_argument("--repeat", type=positive_int, default=5)
    parser.add_argument("--small", action="store_true", help="the smoke-test size of the model")
    parser.add_argument("--flush-cache", action="store_true", help="time each call cold")
    parser.add_argument(
        "--in-model", action="store_true", help="also each kernel's time inside the model"
    )
    parser.add_argument("--top", type=positive_int, help="print only the N largest rows")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    model = build_model(args.model, args.small, bert_layers=1 if args.small else 4)
    options = MeasureOptions(threads=args.threads, repeat=args.repeat, flush_cache=args.flush_cache)
    tasks = extract_tasks(model)
    rows = kernel_rows(tasks, options)
    run_ms = None
    if args.in_model:
        run_ms = add_in_model_times(rows, tasks, model, args.threads, 10 * args.repeat)
    print_table(rows, args.top)
    if run_ms is not None:
        print(f"in the model: {run_ms:.3f} ms per run (profiled)")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
