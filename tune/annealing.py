"""Finding the configs a cost model scores best, among those not measured:
every point of a small space is scored; a large one is searched by
simulated annealing (AutoTVM's model optimizer).

    plan = best_unvisited(score, space, visited, count=64, rng=rng)

`score` maps point indices of `space` to model scores (higher: better).
Annealing runs `chains` walks at once. Each step moves every walk to a
random neighbour (one knob changed), kept when it scores higher, or else
with probability exp(gain / temperature). The temperature falls linearly
to 0, in units of the spread of the starting scores, since a ranking
model's scores have no scale of their own. The best unvisited points seen
on the way are the answer. The search stops early when that set has not
changed for `patience` steps.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

import numpy as np

from xtc.ops.space import Space

Scorer = Callable[[Sequence[int]], np.ndarray]


@dataclass(frozen=True)
class AnnealingOptions:
    """How large spaces are searched (see the module doc)."""

    exhaustive_limit: int = 2048
    """Spaces up to this many points are scored whole."""
    chains: int = 64
    steps: int = 80
    patience: int = 20
    temperature: float = 1.0


def best_unvisited(
    score: Scorer,
    space: Space,
    visited: Container[int],
    count: int,
    rng: random.Random,
    starts: Sequence[int] = (),
    options: AnnealingOptions | None = None,
) -> list[int]:
    """Up to `count` point indices not in `visited`, best scored first (ties
    by index). `starts` seed the annealing walks (the best measured points)."""
    options = options or AnnealingOptions()
    if space.size <= options.exhaustive_limit:
        candidates = [i for i in range(space.size) if i not in visited]
        if not candidates:
            return []
        scores = score(candidates)
        order = sorted(range(len(candidates)), key=lambda r: (-scores[r], candidates[r]))
        return [candidates[r] for r in order[:count]]
    return _anneal(score, space, visited, count, rng, starts, options)


def _anneal(
    score: Scorer,
    space: Space,
    visited: Container[int],
    count: int,
    rng: random.Random,
    starts: Sequence[int],
    options: AnnealingOptions,
) -> list[int]:
    radices = [len(knob.values) for knob in space.knobs]
    strides = [math.prod(radices[k + 1 :]) for k in range(len(radices))]
    movable = [k for k, radix in enumerate(radices) if radix > 1]
    size = space.size
    points = list(starts[: options.chains])
    points += [rng.randrange(size) for _ in range(options.chains - len(points))]
    current = np.asarray(score(points), dtype=np.float64)
    spread = float(np.std(current)) or 1.0

    best: list[tuple[float, int]] = []  # a min-heap of (score, -index)
    kept: set[int] = set()

    def offer(index: int, value: float) -> bool:
        if index in kept or index in visited:
            return False
        entry = (value, -index)
        if len(best) < count:
            heapq.heappush(best, entry)
        elif entry > best[0]:
            kept.discard(-heapq.heapreplace(best, entry)[1])
        else:
            return False
        kept.add(index)
        return True

    for index, value in zip(points, current, strict=True):
        offer(index, float(value))
    quiet = 0
    for step in range(options.steps):
        if not movable:
            break
        temperature = options.temperature * spread * (1.0 - step / options.steps)
        moved = [_neighbour(p, radices, strides, movable, rng) for p in points]
        scores = np.asarray(score(moved), dtype=np.float64)
        changed = False
        for chain, (index, value) in enumerate(zip(moved, scores, strict=True)):
            changed |= offer(index, float(value))
            gain = float(value - current[chain])
            if gain >= 0 or (temperature > 0 and rng.random() < math.exp(gain / temperature)):
                points[chain], current[chain] = index, value
        quiet = 0 if changed else quiet + 1
        if quiet >= options.patience:
            break
    return [-negated for _, negated in sorted(best, key=lambda e: (-e[0], -e[1]))]


def _neighbour(
    index: int,
    radices: Sequence[int],
    strides: Sequence[int],
    movable: Sequence[int],
    rng: random.Random,
) -> int:
    """`index` with one knob (of more than one value) moved to another value."""
    knob = rng.choice(movable)
    position = index // strides[knob] % radices[knob]
    other = rng.randrange(radices[knob] - 1)
    other += other >= position
    return index + (other - position) * strides[knob]
