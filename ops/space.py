"""Search spaces of schedule templates: named knobs, each with its candidate
values, and configs (one value per knob).

    space = Space((Knob("rows", (4, 8, 12)), Knob("prefetch", (0, 32))))
    space.size                   # 6 points (len(space) too, below 2^63)
    space.point(4)               # {"rows": 12, "prefetch": 0}
    space.index({"rows": 12, "prefetch": 0})  # 4
    space.sample(rng)            # a random point

A config is a plain dict (JSON in a tuning record); `config_key` is its
canonical text. Values are ints or strings, so records stay readable.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from math import prod

KnobValue = int | str
Config = dict[str, KnobValue]


class ConfigError(ValueError):
    """A config that does not belong to a space (unknown knob, value)."""


@dataclass(frozen=True)
class Knob:
    """One decision of a template and the values it may take."""

    name: str
    values: tuple[KnobValue, ...]
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"knob {self.name!r} has no value")
        if len(set(self.values)) != len(self.values):
            raise ValueError(f"knob {self.name!r} repeats a value: {self.values}")


@dataclass(frozen=True)
class Space:
    """The product of its knobs' values; points are numbered in row-major
    order of the knobs (the last knob varies fastest)."""

    knobs: tuple[Knob, ...] = ()

    def __post_init__(self) -> None:
        names = [k.name for k in self.knobs]
        if len(set(names)) != len(names):
            raise ValueError(f"knob names repeat: {names}")

    @property
    def size(self) -> int:
        """The number of points: a multi-nest kernel's space (Winograd's five
        stages) can pass 2^63, which len() cannot return."""
        return prod(len(k.values) for k in self.knobs)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Config]:
        for index in range(self.size):
            yield self.point(index)

    def knob(self, name: str) -> Knob:
        for knob in self.knobs:
            if knob.name == name:
                return knob
        raise KeyError(name)

    def point(self, index: int) -> Config:
        """The config numbered `index` (0 <= index < self.size)."""
        if not 0 <= index < self.size:
            raise IndexError(f"point {index} of a space of {self.size}")
        config: Config = {}
        for knob in reversed(self.knobs):
            index, position = divmod(index, len(knob.values))
            config[knob.name] = knob.values[position]
        return {k.name: config[k.name] for k in self.knobs}

    def index(self, config: Mapping[str, KnobValue]) -> int:
        """The number of `config` (ConfigError when it is not a point)."""
        self.check(config)
        index = 0
        for knob in self.knobs:
            index = index * len(knob.values) + knob.values.index(config[knob.name])
        return index

    def problem(self, config: Mapping[str, KnobValue]) -> str | None:
        """Why `config` is not a point: the first knob it lacks, adds or sets
        outside its values; None when it is one."""
        names = {k.name for k in self.knobs}
        unknown = sorted(set(config) - names)
        if unknown:
            return f"unknown knob {unknown[0]!r} (the knobs: {', '.join(sorted(names))})"
        for knob in self.knobs:
            if knob.name not in config:
                return f"knob {knob.name!r} has no value"
            if config[knob.name] not in knob.values:
                value = config[knob.name]
                return f"knob {knob.name!r} = {value!r} is not one of {list(knob.values)}"
        return None

    def __contains__(self, config: object) -> bool:
        return isinstance(config, Mapping) and self.problem(config) is None

    def check(self, config: Mapping[str, KnobValue]) -> None:
        """ConfigError saying why `config` is not a point (see `problem`)."""
        problem = self.problem(config)
        if problem is not None:
            raise ConfigError(problem)

    def sample(self, rng: random.Random) -> Config:
        """A point drawn uniformly."""
        return {k.name: rng.choice(k.values) for k in self.knobs}

    def neighbours(self, config: Mapping[str, KnobValue]) -> list[Config]:
        """The points that differ from `config` in one knob."""
        found: list[Config] = []
        for knob in self.knobs:
            for value in knob.values:
                if value != config[knob.name]:
                    found.append({**config, knob.name: value})
        return found


def prefixed(prefix: str, knobs: Sequence[Knob]) -> tuple[Knob, ...]:
    """The knobs renamed `prefix.name` (a kernel's space joins its nests')."""
    return tuple(Knob(f"{prefix}.{k.name}", k.values, k.doc) for k in knobs)


def config_key(config: Mapping[str, KnobValue]) -> str:
    """The canonical text of a config (sorted keys, no spaces)."""
    return json.dumps(dict(config), sort_keys=True, separators=(",", ":"))
