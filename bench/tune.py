"""Auto-tuning, measured: tuned models against untuned ones and onnxruntime,
and the tuners against each other.

    python bench/tune.py --models resnet50 --time-budget 30m [--records-dir DIR]
                         [--kernels-in-model]
    python bench/tune.py --curves --kernels 3 --trials 200 --seeds 3 --plot tuning.png

Models: each model (bench/models.py's builders, random weights) is tuned
with `xtc.tune` for the time budget (records in DIR/<model>.jsonl; an
existing file is resumed, or with no --time-budget used as it is; `--tasks N`
tunes only its N kernels of most work), then
compiled untuned and tuned, and the two and an onnxruntime session are
timed side by side in one process, blocks of runs alternating, on the
same thread count. The table gives medians and ratios; outputs are checked
against onnxruntime. `--kernels-in-model` then says where the difference
comes from: both models compiled again with `profile`
(runtime/profile.py), profiled alternately, and each kernel's time per run
inside the model, untuned and tuned (medians), in a table per model.

Curves: the `--kernels` heaviest conv kernels of ResNet-50 (or those at
`--kernel-indices` among them, e.g. `--kernel-indices 1`) are tuned on
their own by each tuner (`--tuners`, default xgb and random) for `--trials`
candidates and `--seeds` seeds, from a cold start: neither tuner is given
the default schedule, so the curves show the search alone.

A best-so-far curve is the maximum of noisy timings, so a tuner that times
the top schedules more often (random does, under aliases: configs of equal
steps) gets ahead by noise alone. After the tuners, every distinct schedule
any of them timed within `--retime-window` (10%) of the best is timed again,
`--retime-rounds` rounds (3 by default) in a shuffled order, and its median
is its value in one table (the others keep their median timing); each
curve is then also given as that table's value of the best schedule tried
so far. The summary, for both kinds of curve, says after how
many trials the XGBoost tuner reaches the random tuner's final best (mean
over kernels and seeds, as a fraction of random's trials; within `--reach`
of it, 1% by default, as timings of one schedule vary by about that much).
`--plot` draws the curves, re-timed where they were (matplotlib,
`pip install 'xtc[bench]'`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from models import (  # noqa: E402 - bench/models.py, beside this script
    build_model,
    compare_outputs,
    ort_session,
    positive_int,
    quantization_step,
    random_inputs,
    time_calls,
)

import xtc  # noqa: E402
from xtc.ops.space import Config  # noqa: E402
from xtc.tune.measure import LocalRunner, MeasureInput, MeasureOptions, Runner  # noqa: E402
from xtc.tune.task import Task, extract_tasks  # noqa: E402
from xtc.tune.tuners import make_tuner  # noqa: E402
from xtc.tune.tuning import tune_model  # noqa: E402

SETTLE_S = 0.2


@dataclass
class ModelRow:
    model: str
    tune_s: float = 0.0
    trials: int = 0
    untuned_ms: float = 0.0
    tuned_ms: float = 0.0
    ort_ms: float = 0.0
    tuned_kernels: int = 0
    match: str = "ERROR"
    kernels: list[KernelGain] = field(default_factory=lambda: [])
    """With --kernels-in-model: each kernel's time in the model, both ways."""

    @property
    def speedup(self) -> float:
        return self.untuned_ms / self.tuned_ms if self.tuned_ms else 0.0

    @property
    def ratio(self) -> float:
        return self.tuned_ms / self.ort_ms if self.ort_ms else 0.0


@dataclass
class KernelGain:
    """A kernel's time per run inside the model (ms), untuned and tuned;
    `tuned` when a record gave it its schedule."""

    kernel: str
    tuned: bool
    untuned_ms: float
    tuned_ms: float

    @property
    def gain(self) -> float:
        return self.untuned_ms / self.tuned_ms if self.tuned_ms else 0.0


def kernel_gains(
    model: object, records: Path, inputs: object, threads: int, rounds: int, runs: int
) -> list[KernelGain]:
    """Each kernel's time per run in the model untuned and tuned: both built
    with `profile`, profiled `runs` runs at a time alternately for
    `rounds` rounds, medians; largest untuned time first."""
    sides = {
        "untuned": xtc.compile(model, profile=True),
        "tuned": xtc.compile(model, tuning_records=records, profile=True),
    }
    times: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    for compiled in sides.values():
        compiled.set_num_threads(threads)
    for _ in range(rounds):
        for side, compiled in sides.items():
            time.sleep(SETTLE_S)
            for row in compiled.profile(inputs, runs=runs).rows:
                times[side].setdefault(row.kernel, []).append(row.ms)
    tuned = {k["function"] for k in sides["tuned"].manifest["tuning"]["tuned_kernels"]}
    gains = [
        KernelGain(
            kernel,
            kernel in tuned,
            float(np.median(untuned)),
            float(np.median(times["tuned"].get(kernel, [0.0]))),
        )
        for kernel, untuned in times["untuned"].items()
    ]
    return sorted(gains, key=lambda g: -g.untuned_ms)


def format_gains(name: str, gains: Sequence[KernelGain]) -> str:
    """The --kernels-in-model table of one model."""
    width = max([len("kernel"), *(len(g.kernel) for g in gains)])
    lines = [
        f"{name}: each kernel in the model, ms per run (profiled)",
        f"{'kernel':<{width}} {'tuned':>5} {'untuned_ms':>10} {'tuned_ms':>9} {'gain':>6}",
    ]
    for g in gains:
        lines.append(
            f"{g.kernel:<{width}} {'yes' if g.tuned else 'no':>5} {g.untuned_ms:>10.4f} "
            f"{g.tuned_ms:>9.4f} {g.gain:>5.2f}x"
        )
    return "\n".join(lines)


def bench_model(name: str, args: argparse.Namespace) -> ModelRow:
    row = ModelRow(name)
    model = build_model(name, small=args.small, bert_layers=4)
    records = Path(args.records_dir) / f"{name}.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    if args.time_budget is not None:
        started = time.perf_counter()
        summary = tune_model(
            model,
            records,
            trials=args.max_trials,
            time_budget_s=args.time_budget,
            tuner=args.tuner,
            early_stopping=args.early_stopping,
            options=MeasureOptions(threads=args.threads, flush_cache=args.flush_cache),
            tasks=extract_tasks(model)[: args.tasks] if args.tasks is not None else None,
        )
        row.tune_s = time.perf_counter() - started
        row.trials = summary.trials
        print(summary.table(), file=sys.stderr)
    inputs = random_inputs(model)
    untuned = xtc.compile(model)
    tuned = xtc.compile(model, tuning_records=records)
    row.tuned_kernels = len(tuned.manifest["tuning"]["tuned_kernels"])
    session = ort_session(model, args.threads)
    expected = [np.asarray(o) for o in session.run(None, inputs)]
    # a quantized model's outputs may differ from onnxruntime's by one step
    step = quantization_step(model)
    ok_untuned = compare_outputs(untuned.run(inputs), expected, step)[0]
    ok_tuned = compare_outputs(tuned.run(inputs), expected, step)[0]
    row.match = "ok" if ok_untuned and ok_tuned else "MISMATCH"
    times: dict[str, list[float]] = {"untuned": [], "tuned": [], "ort": []}
    blocks = {
        "untuned": lambda: list(untuned.benchmark(inputs, repeat=args.number, number=1).runs_ms),
        "tuned": lambda: list(tuned.benchmark(inputs, repeat=args.number, number=1).runs_ms),
        "ort": lambda: time_calls(lambda: session.run(None, inputs), args.number, warmup=1),
    }
    for _ in range(args.repeat):
        for side, block in blocks.items():
            time.sleep(SETTLE_S)
            times[side] += block()
    row.untuned_ms = float(np.median(times["untuned"]))
    row.tuned_ms = float(np.median(times["tuned"]))
    row.ort_ms = float(np.median(times["ort"]))
    if args.kernels_in_model:
        row.kernels = kernel_gains(model, records, inputs, args.threads, args.repeat, args.number)
    return row


MODEL_HEADER = (
    f"{'model':<14} {'tune_s':>7} {'trials':>6} {'untuned_ms':>10} {'tuned_ms':>9} "
    f"{'ort_ms':>8} {'speed-up':>8} {'tuned/ort':>9}  match"
)


def format_model(row: ModelRow) -> str:
    return (
        f"{row.model:<14} {row.tune_s:>7.0f} {row.trials:>6} {row.untuned_ms:>10.2f} "
        f"{row.tuned_ms:>9.2f} {row.ort_ms:>8.2f} {row.speedup:>7.2f}x {row.ratio:>9.2f}  "
        f"{row.match}"
    )


# ---------------------------------------------------------------- curves


@dataclass
class Curve:
    """Best-so-far GFLOP/s after each trial, as timed while tuning; and,
    once the kernel's schedules were timed again (`retime`), as that table
    says."""

    task: str
    tuner: str
    seed: int
    gflops: list[float] = field(default_factory=list[float])
    retimed: list[float] = field(default_factory=list[float])


Steps = tuple[str, ...]


@dataclass
class Tried:
    """What one tuner tried, trial by trial: the schedule of each, None for
    a failed one."""

    schedules: list[Steps | None] = field(default_factory=list[Steps | None])
    configs: dict[Steps, Config] = field(default_factory=dict[Steps, Config])
    gflops: dict[Steps, list[float]] = field(default_factory=dict[Steps, list[float]])
    """Each schedule's GFLOP/s as timed while tuning."""


def tuning_curve(
    task: Task, tuner: str, seed: int, trials: int, runner: Runner
) -> tuple[Curve, Tried]:
    """The tuner alone from a cold start (the default schedule is not
    given to it): best-so-far GFLOP/s after each of `trials` candidates,
    and the schedules it tried."""
    curve, tried = Curve(task.name, tuner, seed), Tried()
    search = make_tuner(tuner, task, seed)
    best = 0.0
    while len(curve.gflops) < trials:
        configs = search.next_batch(min(8, trials - len(curve.gflops)))
        if not configs:
            break
        results = runner.measure([MeasureInput(task, c) for c in configs])
        search.update(configs, results)
        for config, result in zip(configs, results, strict=True):
            steps: Steps | None = None
            if result.ok:
                steps = tuple(task.steps(config))
                gflops = task.flops / result.cost / 1e9
                best = max(best, gflops)
                tried.configs.setdefault(steps, config)
                tried.gflops.setdefault(steps, []).append(gflops)
            tried.schedules.append(steps)
            curve.gflops.append(best)
    return curve, tried


def retime(
    task: Task, configs: dict[Steps, Config], runner: Runner, rounds: int, seed: int
) -> dict[Steps, float]:
    """GFLOP/s of each schedule, timed `rounds` times in a shuffled order
    each round, as the median. A tuner's best-so-far takes the maximum of
    noisy timings, so the tuner that times the top schedules more often
    (under aliases: configs of equal steps) wins by noise alone; one table
    for all tuners compares their searches."""
    rng = np.random.default_rng(seed)
    timings: dict[Steps, list[float]] = {steps: [] for steps in configs}
    order = list(configs)
    for _ in range(rounds):
        rng.shuffle(order)  # type: ignore[arg-type]
        for start in range(0, len(order), 8):
            batch = order[start : start + 8]
            results = runner.measure([MeasureInput(task, configs[s]) for s in batch])
            for steps, result in zip(batch, results, strict=True):
                if result.ok:
                    timings[steps].append(task.flops / result.cost / 1e9)
    return {steps: float(np.median(values)) for steps, values in timings.items() if values}


def near_the_top(
    tried: Sequence[Tried], window: float
) -> tuple[dict[Steps, Config], dict[Steps, float]]:
    """The schedules whose best timing while tuning came within `window` of
    the best of all (their configs: to be timed again), and the median
    timing of every other one (a few % of noise cannot make those the
    best, and timing them all again would take longer than the tuning)."""
    timed: dict[Steps, list[float]] = {}
    configs: dict[Steps, Config] = {}
    for one in tried:
        for steps, values in one.gflops.items():
            timed.setdefault(steps, []).extend(values)
            configs.setdefault(steps, one.configs[steps])
    top = max((max(v) for v in timed.values()), default=0.0)
    near = {s: configs[s] for s, v in timed.items() if max(v) >= (1 - window) * top}
    rest = {s: float(np.median(v)) for s, v in timed.items() if s not in near}
    return near, rest


def best_so_far(schedules: Sequence[Steps | None], table: dict[Steps, float]) -> list[float]:
    """The table's GFLOP/s of the best schedule tried so far, trial by trial."""
    curve, best = [], 0.0
    for steps in schedules:
        if steps is not None:
            best = max(best, table.get(steps, 0.0))
        curve.append(best)
    return curve


def trials_to_reach(curve: Sequence[float], target: float) -> int | None:
    """The first trial (counted from 1) whose best-so-far reaches target."""
    for trial, value in enumerate(curve, start=1):
        if value >= target:
            return trial
    return None


def conv_tasks(count: int) -> list[Task]:
    tasks = extract_tasks(build_model("resnet50", small=False, bert_layers=4))
    convs = [
        t for t in tasks if "micro_kernel" in t.kind and t.functions[0].startswith("fused_conv")
    ]
    return convs[:count]


def picked_conv_tasks(count: int, indices: Sequence[int] | None) -> list[Task]:
    """The first `count` heavy conv kernels, or those at `indices` among them."""
    if indices is None:
        return conv_tasks(count)
    convs = conv_tasks(max(indices) + 1)
    if max(indices) >= len(convs) or min(indices) < 0:
        raise SystemExit(f"--kernel-indices {list(indices)}: there are {len(convs)} conv kernels")
    return [convs[i] for i in indices]


def _indices(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


def bench_curves(args: argparse.Namespace) -> dict[str, object]:
    tasks = picked_conv_tasks(args.kernels, args.kernel_indices)
    curves: list[Curve] = []
    runner = LocalRunner(MeasureOptions(threads=args.threads))
    tables: dict[str, list[float]] = {}
    for task in tasks:
        tried = task_curves(task, args, runner)
        if args.retime_rounds:
            tables[task.name] = retime_curves(task, tried, args, runner, seed=len(curves))
        curves += [curve for curve, _ in tried]
    runner.close()
    result: dict[str, object] = {"curves": [asdict(c) for c in curves], "retimed_gflops": tables}
    result["timed"] = compare_curves(curves, tasks, args.seeds, lambda c: c.gflops, args.reach)
    if args.retime_rounds:
        result["retimed"] = compare_curves(
            curves, tasks, args.seeds, lambda c: c.retimed, args.reach
        )
    if args.plot:
        plot(curves, tasks, args.plot)
    return result


def task_curves(
    task: Task, args: argparse.Namespace, runner: Runner
) -> list[tuple[Curve, Tried]]:
    """Each tuner's curve on `task`, for each seed, with the schedules it timed."""
    tried: list[tuple[Curve, Tried]] = []
    for tuner in args.tuners.split(","):
        for seed in range(args.seeds):
            started = time.perf_counter()
            curve, schedules = tuning_curve(task, tuner, seed, args.trials, runner)
            tried.append((curve, schedules))
            print(
                f"{task.name:<44} {tuner:<6} seed {seed}: {curve.gflops[-1]:7.1f} GFLOP/s "
                f"after {len(curve.gflops) - 1} trials ({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
            )
    return tried


def retime_curves(
    task: Task,
    tried: list[tuple[Curve, Tried]],
    args: argparse.Namespace,
    runner: Runner,
    seed: int,
) -> list[float]:
    """Times again the schedules near the top of `tried`, sets each curve's
    `retimed` from that table and returns its GFLOP/s, best first."""
    started = time.perf_counter()
    near, table = near_the_top([t for _, t in tried], args.retime_window)
    table |= retime(task, near, runner, args.retime_rounds, seed=seed)
    print(
        f"{task.name:<44} {len(near)} of {len(table)} schedules timed again, "
        f"{args.retime_rounds} rounds ({time.perf_counter() - started:.0f} s)",
        file=sys.stderr,
    )
    for curve, schedules in tried:
        curve.retimed = best_so_far(schedules.schedules, table)
    return sorted(table.values(), reverse=True)


def compare_curves(
    curves: Sequence[Curve],
    tasks: Sequence[Task],
    seeds: int,
    values: Callable[[Curve], list[float]],
    reach: float,
) -> dict[str, object]:
    """After how many trials xgb's curve reaches random's final best, as a
    fraction of random's trials, per kernel and seed (never: 2.0)."""
    reached: list[float] = []
    lines = []
    for task in tasks:
        for seed in range(seeds):
            pick = {c.tuner: values(c) for c in curves if c.task == task.name and c.seed == seed}
            if "xgb" not in pick or "random" not in pick:
                continue
            goal = pick["random"][-1] * (1 - reach)
            trial = trials_to_reach(pick["xgb"], goal)
            fraction = (trial if trial is not None else 2 * len(pick["xgb"])) / len(
                pick["random"]
            )
            reached.append(fraction)
            lines.append(
                f"{task.name:<44} seed {seed}: random's best {pick['random'][-1]:.1f} "
                f"GFLOP/s, reached at trial {trials_to_reach(pick['random'], goal)}; "
                f"xgb reaches it at trial {trial} of {len(pick['xgb'])}"
            )
    return {
        "xgb_fraction_of_random_trials": float(np.mean(reached)) if reached else None,
        "xgb_fraction_median": float(np.median(reached)) if reached else None,
        "xgb_reached": sum(1 for f in reached if f <= 1.0),
        "pairs": len(reached),
        "lines": lines,
    }


def plot(curves: Sequence[Curve], tasks: Sequence[Task], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(tasks), figsize=(5 * len(tasks), 4), squeeze=False)
    for axis, task in zip(axes[0], tasks, strict=True):
        for tuner in sorted({c.tuner for c in curves}):
            mine = [
                c.retimed or c.gflops for c in curves if c.task == task.name and c.tuner == tuner
            ]
            if not mine:
                continue
            length = min(len(g) for g in mine)
            mean = np.mean([g[:length] for g in mine], axis=0)
            axis.plot(range(1, length + 1), mean, label=f"{tuner} (mean of {len(mine)})")
        axis.set_title(task.name, fontsize=9)
        axis.set_xlabel("trials")
        axis.set_ylabel("best GFLOP/s so far")
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def print_comparison(name: str, result: dict[str, object], reach: float) -> None:
    how = {
        "timed": "as timed while tuning",
        "retimed": "the schedules near the top timed again, one table for all tuners",
    }[name]
    print(f"-- best so far {how}")
    for line in result["lines"]:  # type: ignore[attr-defined]
        print(line)
    mean, median = result["xgb_fraction_of_random_trials"], result["xgb_fraction_median"]
    if mean is not None:
        print(
            f"xgb reaches random's final best (within {reach:.0%}) in "
            f"{result['xgb_reached']} of {result['pairs']} kernel-seed pairs; in "
            f"{mean:.2f} of random's trials on average, {median:.2f} at the median "
            "(a pair it never reaches counts 2.0)"
        )


def _duration(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="resnet50", help="comma-separated bench models")
    parser.add_argument("--time-budget", type=_duration, help="tune each model this long: 30m")
    parser.add_argument("--max-trials", type=int, default=100000)
    parser.add_argument("--tuner", default="xgb")
    parser.add_argument("--early-stopping", type=int)
    parser.add_argument(
        "--tasks",
        type=positive_int,
        help="tune only the N kernels of most work (FLOPs x calls); the others keep "
        "their default schedules",
    )
    parser.add_argument("--flush-cache", action="store_true", help="tune with cold caches")
    parser.add_argument("--records-dir", default="bench/records")
    parser.add_argument("--threads", type=int, default=int(os.environ.get("XTC_NUM_THREADS", 2)))
    parser.add_argument("--repeat", type=int, default=5, help="timed blocks per side")
    parser.add_argument("--number", type=int, default=5, help="runs per block")
    parser.add_argument("--small", action="store_true", help="32x32 images (a smoke test)")
    parser.add_argument(
        "--kernels-in-model",
        action="store_true",
        help="also each kernel's time inside the model, untuned and tuned (profiled)",
    )
    parser.add_argument("--curves", action="store_true", help="the tuners against each other")
    parser.add_argument("--tuners", default="xgb,random")
    parser.add_argument("--kernels", type=int, default=3, help="curves of the first N conv kernels")
    parser.add_argument(
        "--kernel-indices",
        type=_indices,
        help="curves of these conv kernels instead (0-based, comma-separated: 1 or 0,2)",
    )
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--reach", type=float, default=0.01)
    parser.add_argument(
        "--retime-rounds",
        type=int,
        default=3,
        help="time the schedules near the top again, this many rounds (0: don't)",
    )
    parser.add_argument(
        "--retime-window",
        type=float,
        default=0.1,
        help="time again the schedules timed within this fraction of the best (0.1: 10%%)",
    )
    parser.add_argument("--plot", help="write the curves as a PNG")
    parser.add_argument("--json", help="write the results as JSON")
    args = parser.parse_args(argv)
    os.environ["XTC_NUM_THREADS"] = str(args.threads)
    output: dict[str, object] = {}
    if args.curves:
        result = bench_curves(args)
        for name in ("timed", "retimed"):
            if name in result:
                print_comparison(name, result[name], args.reach)  # type: ignore[arg-type]
        output["curves"] = result
    else:
        print(MODEL_HEADER)
        rows = []
        for name in args.models.split(","):
            row = bench_model(name, args)
            rows.append(row)
            print(format_model(row), flush=True)
        for row in rows:
            if row.kernels:
                print(format_gains(row.model, row.kernels))
        output["models"] = [asdict(r) | {"speedup": r.speedup, "ratio": r.ratio} for r in rows]
    if args.json:
        Path(args.json).write_text(json.dumps(output, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
