"""Tuning a whole model: `xtc.tune` and `xtc tune`.

    summary = tune_model("resnet50.onnx", "records.jsonl", trials=2000, tuner="xgb")
    xtc.compile("resnet50.onnx", tuning_records="records.jsonl")

Each distinct kernel is a task (tune/task.py). Every task's default schedule
is measured first (the baseline, and the reference its candidates' outputs
are checked against); then rounds of `batch_size` candidates go to the task
that the task scheduler expects to gain most (tune/scheduler.py), each
proposed by that task's tuner (tune/tuners.py) and measured in worker
processes (tune/measure.py). Every measurement is appended to the records
file as it completes, so Ctrl-C keeps all of them; tuning into an existing
file resumes: measured configs are skipped and the tuners warm-start from
them. A record whose steps differ from today's recipe of its config (xtc
changed the template since) is stale: its config counts as unmeasured, and
the cost model learns the steps it measured; one whose config today's space
no longer has (a knob added or dropped since) is left out, and counted. At
the end the default and the best few configs of each task are measured
again, so that a time taken while the machine was busy does not decide.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xtc.driver.records import Record, RecordsError, RecordWriter, Target, load_records
from xtc.ops.space import Config, config_key
from xtc.tune.measure import LocalRunner, MeasureInput, MeasureOptions, MeasureResult, Runner
from xtc.tune.scheduler import TaskScheduler
from xtc.tune.task import Task, extract_tasks
from xtc.tune.tuners import TUNERS

if TYPE_CHECKING:
    import onnx

    from xtc.tune.tuners import Tuner

REMEASURED = 3
"""Configs of each task measured again at the end (the best ones)."""


class TuneError(Exception):
    """A tuning request xtc refuses (bad option, unusable records file)."""


@dataclass
class TaskSummary:
    """One task's measurements: every valid config's times (seconds), its
    default's, the trials this tuning made and how many failed. A config's
    time is the fastest of its measurements (what a compile applies)."""

    task: Task
    costs: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    configs: dict[str, Config] = field(default_factory=dict[str, Config])
    trials: int = 0
    errors: int = 0
    stale: int = 0
    """Records of the file it resumed from measured with since-changed steps."""
    outside: int = 0
    """Records of the file it resumed from whose configs today's space no
    longer has (a knob added or dropped since): left out of the tuning."""

    def add(self, config: Config, result: MeasureResult) -> None:
        if result.ok:
            key = config_key(config)
            self.configs[key] = dict(config)
            self.costs.setdefault(key, []).append(result.cost)

    def cost_of(self, config: Config) -> float:
        costs = self.costs.get(config_key(config))
        return min(costs) if costs else float("inf")

    @property
    def default_cost(self) -> float:
        return self.cost_of(self.task.default())

    def ranked(self) -> list[Config]:
        """The valid configs, fastest first."""
        return sorted(self.configs.values(), key=self.cost_of)

    @property
    def best_config(self) -> Config | None:
        ranked = self.ranked()
        return ranked[0] if ranked else None

    @property
    def best_cost(self) -> float:
        best = self.best_config
        return self.cost_of(best) if best is not None else float("inf")

    @property
    def speedup(self) -> float:
        if self.best_cost in (0.0, float("inf")) or self.default_cost == float("inf"):
            return 1.0
        return self.default_cost / self.best_cost

    @property
    def best_gflops(self) -> float:
        return self.task.flops / self.best_cost / 1e9 if self.best_cost < float("inf") else 0.0


@dataclass
class TuningSummary:
    """The outcome of `tune_model`."""

    tasks: list[TaskSummary]
    trials: int
    seconds: float
    interrupted: bool = False
    records: str = ""
    history: list[tuple[int, float]] = field(default_factory=list[tuple[int, float]])
    """(trials so far, the model's estimated kernel time) after each round."""

    def estimated_time(self, tuned: bool = True) -> float:
        """The kernels' time per inference (seconds), default or tuned."""
        total = 0.0
        for t in self.tasks:
            cost = t.best_cost if tuned else t.default_cost
            if cost < float("inf"):
                total += t.task.occurrences * cost
        return total

    @property
    def stale_records(self) -> int:
        return sum(t.stale for t in self.tasks)

    @property
    def outside_records(self) -> int:
        return sum(t.outside for t in self.tasks)

    @property
    def speedup(self) -> float:
        tuned = self.estimated_time(True)
        return self.estimated_time(False) / tuned if tuned else 1.0

    def table(self) -> str:
        """One line per task and a total: what `xtc tune` prints at the end."""
        lines = [
            f"{'kernel':<44} {'calls':>5} {'trials':>6} {'default ms':>11} {'tuned ms':>9} "
            f"{'GFLOP/s':>8} {'speed-up':>8}"
        ]
        for t in sorted(self.tasks, key=lambda t: -t.task.occurrences * t.default_cost):
            lines.append(
                f"{t.task.name[:44]:<44} {t.task.occurrences:>5} {t.trials:>6} "
                f"{t.default_cost * 1e3:>11.4f} {t.best_cost * 1e3:>9.4f} "
                f"{t.best_gflops:>8.1f} {t.speedup:>7.2f}x"
            )
        lines.append(
            f"{'model (kernels, estimated)':<44} {'':>5} {self.trials:>6} "
            f"{self.estimated_time(False) * 1e3:>11.4f} {self.estimated_time(True) * 1e3:>9.4f} "
            f"{'':>8} {self.speedup:>7.2f}x"
        )
        return "\n".join(lines)


Progress = Callable[[str, int, int, float, float], None]
"""progress(task name, trials done, trials in all, the task's best GFLOP/s,
the model's estimated speed-up)."""


def make_tuners(name: str, tasks: Sequence[Task], seed: int) -> list[Tuner]:
    """A tuner per task; XGBoost tuners of tasks of one kind share their cost
    model, so that what earlier kernels taught carries over (transfer)."""
    from xtc.tune.cost_model import CostModel
    from xtc.tune.tuners import make_tuner

    models: dict[str, CostModel] = {}
    tuners: list[Tuner] = []
    for i, task in enumerate(tasks):
        if name == "xgb":
            model = models.setdefault(task.kind, CostModel(seed=seed))
            tuners.append(make_tuner(name, task, seed + i, model=model))
        else:
            tuners.append(make_tuner(name, task, seed + i))
    return tuners


def tune_model(
    model: onnx.ModelProto | str | os.PathLike[str],
    records: str | os.PathLike[str],
    *,
    trials: int = 1000,
    time_budget_s: float | None = None,
    tuner: str = "xgb",
    early_stopping: int | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    batch_size: int = 8,
    seed: int = 0,
    options: MeasureOptions | None = None,
    runner: Runner | None = None,
    workers: int = 1,
    progress: Progress | None = None,
    tasks: Sequence[Task] | None = None,
) -> TuningSummary:
    """Tunes the kernels of `model`, appending every measurement to
    `records` (see the module doc); returns what was found. `tasks`
    restricts tuning to some of the model's tasks (bench/tune.py)."""
    _check_options(trials, time_budget_s, tuner, early_stopping, batch_size)
    started = time.monotonic()
    found = list(tasks) if tasks is not None else extract_tasks(model, input_shapes)
    todo = [t for t in found if t.space().size > 1 and t.flops > 0]
    target = Target.host()
    existing = _existing_records(records, todo, target)
    own = runner is None
    runner = runner or LocalRunner(options or MeasureOptions(), workers)
    summaries = [TaskSummary(t) for t in todo]
    tuners = make_tuners(tuner, todo, seed)
    scheduler = TaskScheduler([t.occurrences for t in todo], seed=seed)
    summary = TuningSummary(summaries, 0, 0.0, records=os.fspath(records))
    report = progress or (lambda name, done, total, gflops, speedup: None)
    try:
        with RecordWriter(records) as writer:
            _warm_start(tuners, summaries, existing)
            _measure_defaults(todo, summaries, tuners, runner, writer, target)
            for i, s in enumerate(summaries):
                scheduler.record(i, s.trials, s.best_cost)
            report("defaults", 0, trials, 0.0, summary.speedup)
            while summary.trials < trials:
                if time_budget_s is not None and time.monotonic() - started >= time_budget_s:
                    break
                index = scheduler.next_task()
                if index is None:
                    break
                size = min(batch_size, trials - summary.trials)
                configs = tuners[index].next_batch(size)
                if not configs:
                    scheduler.finish(index)
                    continue
                results = _measure(todo[index], configs, runner, writer, target)
                tuners[index].update(configs, results)
                _note(summaries[index], configs, results)
                summary.trials += len(configs)
                scheduler.record(index, summaries[index].trials, summaries[index].best_cost)
                if (
                    early_stopping is not None
                    and tuners[index].trials_since_improvement >= early_stopping
                ):
                    scheduler.finish(index)
                summary.history.append((summary.trials, summary.estimated_time()))
                best = summaries[index].best_gflops
                report(todo[index].name, summary.trials, trials, best, summary.speedup)
            _remeasure_best(todo, summaries, runner, writer, target)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        if own:
            runner.close()
    summary.seconds = time.monotonic() - started
    return summary


def _check_options(
    trials: int,
    time_budget_s: float | None,
    tuner: str,
    early_stopping: int | None,
    batch_size: int,
) -> None:
    if tuner not in TUNERS:
        raise TuneError(f"unknown tuner {tuner!r}: choose among {', '.join(sorted(TUNERS))}")
    if trials < 0:
        raise TuneError(f"trials must be at least 0, got {trials}")
    if time_budget_s is not None and time_budget_s <= 0:
        raise TuneError(f"the time budget must be positive, got {time_budget_s} s")
    if early_stopping is not None and early_stopping < 1:
        raise TuneError(f"early stopping must be at least 1 trial, got {early_stopping}")
    if batch_size < 1:
        raise TuneError(f"the batch size must be at least 1, got {batch_size}")


def _existing_records(
    path: str | os.PathLike[str], tasks: Sequence[Task], target: Target
) -> list[Record]:
    """The file's records of these tasks on this CPU; TuneError for a file
    that cannot be read, holds another model's records only, or records of
    these tasks from another CPU."""
    try:
        records = load_records(path)
    except RecordsError as e:
        raise TuneError(str(e)) from None
    if not records:
        return []
    keys = {t.key for t in tasks}
    mine = [r for r in records if r.key in keys]
    if not mine:
        raise TuneError(
            f"tuning records {os.fspath(path)}: none of its records is of a kernel of this model "
            "(records of another model?): write to another file"
        )
    foreign = sorted({r.target.cpu for r in mine if r.target != target})
    if foreign:
        raise TuneError(
            f"tuning records {os.fspath(path)}: it holds records of this model measured on "
            f"another CPU ({', '.join(foreign)}); this is {target.cpu}: write to another file"
        )
    return mine


def _warm_start(
    tuners: Sequence[Tuner], summaries: Sequence[TaskSummary], existing: Sequence[Record]
) -> None:
    for tuner, summary in zip(tuners, summaries, strict=True):
        key = summary.task.key
        mine = [r for r in existing if r.key == key]
        space = summary.task.space()
        fits = [r for r in mine if r.config in space]
        summary.outside = len(mine) - len(fits)
        mine = fits
        if not mine:
            continue
        flags = [r.is_stale(summary.task.steps(r.config)) for r in mine]
        stale = [r for r, flag in zip(mine, flags, strict=True) if flag]
        fresh = [r for r, flag in zip(mine, flags, strict=True) if not flag]
        configs = [r.config for r in fresh]
        results = [r.result() for r in fresh]
        tuner.load_history(configs, results)
        # a stale record's time is not its config's as the recipe stands
        tuner.learn_records(stale)
        _note(summary, configs, results, count=False)
        summary.stale = len(stale)


def _measure_defaults(
    tasks: Sequence[Task],
    summaries: Sequence[TaskSummary],
    tuners: Sequence[Tuner],
    runner: Runner,
    writer: RecordWriter,
    target: Target,
) -> None:
    """Measures each task's default schedule (unless a record has it)."""
    missing = [i for i, s in enumerate(summaries) if s.default_cost == float("inf")]
    if not missing:
        return
    inputs = [MeasureInput(tasks[i], tasks[i].default()) for i in missing]
    results = runner.measure(inputs)
    writer.write(
        Record.of(x.task, x.config, r, target) for x, r in zip(inputs, results, strict=True)
    )
    for i, item, result in zip(missing, inputs, results, strict=True):
        tuners[i].load_history([item.config], [result])
        _note(summaries[i], [item.config], [result], count=False)


def _measure(
    task: Task, configs: Sequence[Config], runner: Runner, writer: RecordWriter, target: Target
) -> list[MeasureResult]:
    results = runner.measure([MeasureInput(task, c) for c in configs])
    writer.write(Record.of(task, c, r, target) for c, r in zip(configs, results, strict=True))
    return results


def _note(
    summary: TaskSummary,
    configs: Sequence[Config],
    results: Sequence[MeasureResult],
    count: bool = True,
) -> None:
    for config, result in zip(configs, results, strict=True):
        summary.add(config, result)
        if count:
            summary.trials += 1
            summary.errors += not result.ok


def _remeasure_best(
    tasks: Sequence[Task],
    summaries: Sequence[TaskSummary],
    runner: Runner,
    writer: RecordWriter,
    target: Target,
) -> None:
    """Measures the default and the REMEASURED fastest configs of each task
    again, so that a time measured while the machine was busy does not
    decide (a config's time is the fastest of its measurements)."""
    for task, summary in zip(tasks, summaries, strict=True):
        configs = [task.default()]
        configs += [c for c in summary.ranked()[:REMEASURED] if c != configs[0]]
        if len(configs) < 2:
            continue
        results = _measure(task, configs, runner, writer, target)
        _note(summary, configs, results, count=False)
