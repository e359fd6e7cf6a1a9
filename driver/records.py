"""Tuning records: one JSON line per measured candidate.

    {"key": "4b021220...", "task": "fused_conv2d_bias_add_relu_0", "kind": "loops+micro_kernel",
     "target": {"cpu": "znver5", "features": "+avx512f,..."}, "config": {"1.rows": 7, ...},
     "steps": "tir-split{func=kernel loop=i1 factor=32},...", "costs": [0.00045, ...],
     "error": null, "message": "", "flops": 231211008, "xtc_version": "0.1.0",
     "timestamp": 1795691234.5}

`steps` replays the schedule with `xtc-opt -p` on the task's kernel (its
function named `kernel`). A compile applies the steps of `config` for each
kernel that has the key; where today's recipe of the config differs from the
recorded steps (the template changed since it was measured: the record is
stale), it replays the recorded steps, what was measured, and says so.
Records are appended and flushed one by one, so an interrupted tuning keeps
every finished measurement.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from xtc import __version__
from xtc.ops.space import Config, config_key


class ErrorKind(StrEnum):
    """Why a candidate has no cost."""

    INVALID = "invalid"
    """A schedule primitive refused one of its steps."""
    BUILD = "build"
    """Lowering or compiling failed."""
    RUN = "run"
    """The kernel reported an error or its inputs could not be made."""
    CRASH = "crash"
    """The worker died (a segfault, an abort)."""
    TIMEOUT = "timeout"
    """Building or running took longer than its timeout."""
    WRONG = "wrong"
    """Its outputs differ from the default schedule's."""


def ran(costs: tuple[float, ...], error: object) -> bool:
    """Whether a measurement (or its record) ran: no error, some costs."""
    return error is None and bool(costs)


def best_cost(costs: tuple[float, ...], error: object) -> float:
    """The fastest repeat's seconds per call (interference on a shared
    machine only ever slows a repeat down); infinity for a failure."""
    return min(costs) if ran(costs, error) else float("inf")


@dataclass(frozen=True)
class MeasureResult:
    """Seconds per call of each repeat, or the error that stopped it."""

    costs: tuple[float, ...] = ()
    error: ErrorKind | None = None
    message: str = ""
    build_s: float = 0.0
    timestamp: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return ran(self.costs, self.error)

    @property
    def cost(self) -> float:
        return best_cost(self.costs, self.error)


class MeasuredTask(Protocol):
    """What a record keeps of the task it measured (tune/task.py's Task)."""

    key: str
    functions: Sequence[str]
    kind: str
    flops: int

    def steps(self, config: Config) -> list[str]: ...


class RecordsError(Exception):
    """A records file that cannot be read, or whose records cannot apply."""


@dataclass(frozen=True)
class Target:
    """The CPU that records were measured on, as LLVM names it."""

    cpu: str
    features: str

    @staticmethod
    def host() -> Target:
        from xtc.runtime.llvm_jit import host_cpu, host_features

        return Target(host_cpu(), host_features())

    def to_json(self) -> dict[str, str]:
        return {"cpu": self.cpu, "features": self.features}


@dataclass(frozen=True)
class Record:
    """One measured candidate of one task."""

    key: str
    config: Config
    steps: str
    target: Target
    costs: tuple[float, ...] = ()
    error: str | None = None
    message: str = ""
    task: str = ""
    kind: str = ""
    flops: int = 0
    build_s: float = 0.0
    xtc_version: str = __version__
    timestamp: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return ran(self.costs, self.error)

    @property
    def cost(self) -> float:
        return best_cost(self.costs, self.error)

    @staticmethod
    def of(task: MeasuredTask, config: Config, result: MeasureResult, target: Target) -> Record:
        return Record(
            key=task.key,
            config=dict(config),
            steps=",".join(task.steps(config)),
            target=target,
            costs=result.costs,
            error=None if result.error is None else result.error.value,
            message=result.message,
            task=task.functions[0] if task.functions else "",
            kind=task.kind,
            flops=task.flops,
            build_s=round(result.build_s, 4),
            timestamp=result.timestamp,
        )

    def measured_steps(self) -> list[str]:
        """The steps the record measured, one pass each (none when the
        record did not keep them)."""
        from xtc.driver.pipelines import pipeline_steps

        return pipeline_steps(self.steps)

    def is_stale(self, today: Sequence[str]) -> bool:
        """Whether the record measured other steps than `today` (today's
        recipe of its config, its kernel named `kernel`): its template
        changed since. A record that kept no steps is taken as today's."""
        return bool(self.steps) and self.measured_steps() != list(today)

    def result(self) -> MeasureResult:
        error = None if self.error is None else ErrorKind(self.error)
        return MeasureResult(self.costs, error, self.message, self.build_s, self.timestamp)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "task": self.task,
            "kind": self.kind,
            "target": self.target.to_json(),
            "config": self.config,
            "steps": self.steps,
            "costs": list(self.costs),
            "error": self.error,
            "message": self.message,
            "flops": self.flops,
            "build_s": self.build_s,
            "xtc_version": self.xtc_version,
            "timestamp": self.timestamp,
        }

    @staticmethod
    def from_json(entry: Mapping[str, Any]) -> Record:
        target = entry["target"]
        error = entry.get("error")
        if error is not None and error not in {k.value for k in ErrorKind}:
            raise ValueError(f"unknown error kind {error!r}")
        config = entry["config"]
        if not isinstance(config, dict) or not all(
            isinstance(v, int | str) for v in config.values()
        ):
            raise ValueError("config must map knob names to integers or strings")
        return Record(
            key=str(entry["key"]),
            config=dict(config),
            steps=str(entry.get("steps", "")),
            target=Target(str(target["cpu"]), str(target["features"])),
            costs=tuple(float(c) for c in entry.get("costs", ())),
            error=error,
            message=str(entry.get("message", "")),
            task=str(entry.get("task", "")),
            kind=str(entry.get("kind", "")),
            flops=int(entry.get("flops", 0)),
            build_s=float(entry.get("build_s", 0.0)),
            xtc_version=str(entry.get("xtc_version", "")),
            timestamp=float(entry.get("timestamp", 0.0)),
        )


def load_records(path: str | os.PathLike[str]) -> list[Record]:
    """Every record of a records file; RecordsError naming the file and the
    line when it cannot be read (a missing file has no records)."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise RecordsError(f"tuning records {path}: cannot be read ({e})") from None
    records: list[Record] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(Record.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as e:
            raise RecordsError(
                f"tuning records {path}, line {number}: not an xtc tuning record ({e})"
            ) from None
    return records


class RecordWriter:
    """Appends records to a file, each flushed to disk as it is written."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self._file = self.path.open("a")
        except OSError as e:
            raise RecordsError(f"tuning records {self.path}: cannot be written ({e})") from None

    def write(self, records: Iterable[Record]) -> None:
        for record in records:
            self._file.write(json.dumps(record.to_json(), separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def best_records(records: Sequence[Record]) -> dict[str, Record]:
    """The record of each workload key's fastest valid config: the time of a
    measurement is its fastest repeat, and a config measured several times
    (the best few are measured again when tuning ends) keeps its fastest,
    since interference on a shared machine only ever slows a run down."""
    best: dict[str, Record] = {}
    for record in records:
        if record.ok and (record.key not in best or record.cost < best[record.key].cost):
            best[record.key] = record
    return best


def measured_configs(records: Sequence[Record], key: str) -> set[str]:
    """The configs of a key already measured (config_key texts)."""
    return {config_key(r.config) for r in records if r.key == key}


def for_target(records: Sequence[Record], target: Target) -> list[Record]:
    return [r for r in records if r.target == target]


class TuningRecords:
    """The records a compile applies: for each workload key, the fastest
    valid record measured on this CPU (`target`)."""

    def __init__(self, records: Sequence[Record], target: Target, source: str = "") -> None:
        self.source = source
        self.target = target
        self._best = best_records(for_target(records, target))
        self._foreign = {r.key: r.target for r in records if r.target != target}

    @staticmethod
    def load(path: str | os.PathLike[str], target: Target | None = None) -> TuningRecords:
        """The records of a file; RecordsError when it is missing, unreadable
        or empty."""
        path = Path(path)
        if not path.is_file():
            raise RecordsError(f"tuning records {path}: no such file")
        records = load_records(path)
        if not records:
            raise RecordsError(f"tuning records {path}: the file holds no record")
        return TuningRecords(records, target or Target.host(), str(path))

    def best(self, key: str, kernel: str = "") -> Record | None:
        """The record to apply to the kernel of `key`; None when it has none.
        RecordsError when its only records were measured on another CPU."""
        if key in self._best:
            return self._best[key]
        other = self._foreign.get(key)
        if other is not None:
            what = f"kernel {kernel} ({key})" if kernel else f"workload {key}"
            same_cpu = other.cpu == self.target.cpu
            raise RecordsError(
                f"tuning records {self.source}: {what} was tuned on "
                + (
                    f"a {other.cpu} with other CPU features"
                    if same_cpu
                    else f"another CPU ({other.cpu})"
                )
                + f", not this one ({self.target.cpu}): tune the model again on this machine"
            )
        return None
