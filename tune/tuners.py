"""Tuners: which configs of one task to measure next (AutoTVM's tuners).

    tuner = XGBTuner(task, seed=0)            # or RandomTuner, GridTuner, GATuner
    tuner.load_history(configs, results)      # records from an earlier run
    tuner.learn_records(stale)                # records of since-changed recipes
    while tuner.has_next() and tuner.trials < 200:
        batch = tuner.next_batch(8)
        tuner.update(batch, runner.measure([MeasureInput(task, c) for c in batch]))
        if tuner.trials_since_improvement >= 64:
            break                             # early stopping is the caller's
    tuner.best_config, tuner.best_cost

Every tuner proposes each point of the task's space at most once, counting
loaded history as proposed, so a batch is always new configs; it is
shorter only when the space runs out. A failed result counts as a trial
and is remembered (the cost model learns it as throughput 0) but is never
the best. Everything random comes from the seed, so two tuners with one
seed, fed the same results, propose the same configs.

- `RandomTuner`: uniform without replacement.
- `GridTuner`: the space's order.
- `GATuner`: a genetic search. Children of two parents, drawn from the
  best configs so far in proportion to their throughput, take each knob
  from either parent and mutate some knobs. The elites each parent a child.
  A child is a new schedule: not an alias (below) of a proposed point.
- `XGBTuner`: a cost model (tune/cost_model.py) on features of the configs
  (tune/features.py) ranks the unmeasured configs. The top `plan_size`
  form a plan, and batches are taken from it, with ε-greedy random picks.
  The plan holds distinct schedules, none an alias of a proposed point.
  The model is refit after each update, and the plan remade. Until the
  model has learnt something (enough measured configs of this task, or
  data of earlier tasks of its kind in a shared model), picks are random.

Many points of a space are aliases, one schedule: their steps are equal
(a parallel grain that picks the same loop as another, a knob of a nest
that has no such choice). The model cannot tell aliases apart, so a plan
of points would re-measure its favourite schedule under each alias, and
children bred from the best would too: the model-guided and the genetic
search skip them. The random and grid tuners, baselines, keep to points.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from xtc.driver.records import Record
from xtc.ops.space import Config, KnobValue
from xtc.tune.annealing import AnnealingOptions, best_unvisited
from xtc.tune.cost_model import CostModel, Objective, throughputs_of
from xtc.tune.features import TaskFeatures
from xtc.tune.measure import MeasureResult
from xtc.tune.task import Task

RANDOM_SCAN_LIMIT = 2
"""Random picks list the unvisited points once fewer than 1 / this of the
space is left (rejection sampling would retry too often)."""


def throughput(result: MeasureResult) -> float:
    """Calls per second of a result; 0 for a failure."""
    cost = result.cost
    return 1.0 / cost if result.ok and 0.0 < cost < math.inf else 0.0


class Tuner:
    """Proposes configs of one task and learns from their results (see the
    module doc). Subclasses choose points in `_propose` and may learn in
    `_observe`."""

    name: ClassVar[str] = "base"

    def __init__(self, task: Task, seed: int = 0) -> None:
        self.task = task
        self.seed = seed
        self.space = task.space()
        self.rng = random.Random(seed)
        self.best_config: Config | None = None
        self.best_cost = math.inf
        self.trials = 0
        self.trials_since_improvement = 0
        self._visited: set[int] = set()
        self._costs: dict[int, float] = {}
        self._steps: dict[int, tuple[str, ...]] = {}

    # ---------------------------------------------------------- the API

    def has_next(self) -> bool:
        """Whether some point of the space has not been proposed."""
        return len(self._visited) < self.space.size

    def next_batch(self, size: int) -> list[Config]:
        """Up to `size` configs never proposed nor loaded before (fewer only
        when the space runs out)."""
        if size < 0:
            raise ValueError(f"batch size {size} < 0")
        wanted = min(size, self.space.size - len(self._visited))
        indices = self._propose(wanted) if wanted else []
        if len(indices) != wanted or len(set(indices)) != wanted or self._visited & set(indices):
            raise AssertionError(f"{type(self).__name__} proposed {indices} ({wanted} wanted)")
        self._visited.update(indices)
        return [self.space.point(index) for index in indices]

    def update(
        self, configs: Sequence[Mapping[str, KnobValue]], results: Sequence[MeasureResult]
    ) -> None:
        """Learns the results of measured configs; each counts as a trial."""
        self._record(configs, results, trials=True)

    def load_history(
        self, configs: Sequence[Mapping[str, KnobValue]], results: Sequence[MeasureResult]
    ) -> None:
        """Learns earlier results (records of this task) without counting
        them as trials; they are never proposed again. A config outside the
        space raises ConfigError: records that no longer apply are refused."""
        self._record(configs, results, trials=False)

    def learn_records(self, records: Sequence[Record]) -> None:
        """Learns stale records of this task: measured with other steps than
        today's recipe of their config (`Record.is_stale`). They are no
        history: as the recipe stands their configs are unmeasured, and may
        be proposed. Only a model-based tuner learns from them (the steps
        they measured); the others leave them."""

    @property
    def measured(self) -> Mapping[int, float]:
        """Seconds of each measured point by index (inf for a failure)."""
        return self._costs

    # ------------------------------------------------------------ hooks

    def _propose(self, count: int) -> list[int]:
        """`count` distinct unvisited point indices."""
        raise NotImplementedError

    def _observe(self, indices: Sequence[int], results: Sequence[MeasureResult]) -> None:
        """Learns new results (after `measured` and the best are updated)."""

    # ---------------------------------------------------------- helpers

    def steps_of(self, index: int) -> tuple[str, ...]:
        """The schedule steps of point `index` (cached): points of equal
        steps are one schedule, aliases."""
        steps = self._steps.get(index)
        if steps is None:
            steps = self._steps[index] = tuple(self.task.steps(self.space.point(index)))
        return steps

    def _record(
        self,
        configs: Sequence[Mapping[str, KnobValue]],
        results: Sequence[MeasureResult],
        trials: bool,
    ) -> None:
        if len(configs) != len(results):
            raise ValueError(f"{len(configs)} configs but {len(results)} results")
        indices = [self.space.index(config) for config in configs]
        for index, result in zip(indices, results, strict=True):
            self._visited.add(index)
            cost = result.cost if throughput(result) > 0 else math.inf
            self._costs[index] = cost
            improved = cost < self.best_cost
            if improved:
                self.best_cost = cost
                self.best_config = self.space.point(index)
            if trials:
                self.trials += 1
                self.trials_since_improvement = 0 if improved else self.trials_since_improvement + 1
        self._observe(indices, results)

    def _random_unvisited(self, count: int, taken: set[int] | None = None) -> list[int]:
        """Up to `count` distinct points drawn uniformly from those neither
        visited nor `taken`."""
        taken = taken if taken is not None else set()
        size = self.space.size
        left = size - len(self._visited | taken)
        count = min(count, left)
        if count <= 0:
            return []
        if left * RANDOM_SCAN_LIMIT < size:
            free = [i for i in range(size) if i not in self._visited and i not in taken]
            return self.rng.sample(free, count)
        found: list[int] = []
        chosen = set(taken)
        while len(found) < count:
            index = self.rng.randrange(size)
            if index not in self._visited and index not in chosen:
                chosen.add(index)
                found.append(index)
        return found


class RandomTuner(Tuner):
    """Uniform random points, each at most once."""

    name = "random"

    def _propose(self, count: int) -> list[int]:
        return self._random_unvisited(count)


class GridTuner(Tuner):
    """The points in the space's order (the last knob varies fastest)."""

    name = "grid"

    def __init__(self, task: Task, seed: int = 0) -> None:
        super().__init__(task, seed)
        self._next = 0

    def _propose(self, count: int) -> list[int]:
        found: list[int] = []
        while len(found) < count:
            if self._next not in self._visited:
                found.append(self._next)
            self._next += 1
        return found


class GATuner(Tuner):
    """A genetic search (see the module doc). Each generation is up to
    `population` children of parents drawn from the `population` best
    configs measured so far (a (mu + lambda) scheme: the best are never
    lost), in proportion to their throughput; the `elites` best each parent
    one child. A child takes each knob from either parent, then each knob
    mutates with probability `mutation`. A child that was seen before is
    mutated again, a few times; where breeding finds nothing new, or fewer
    than two configs have run, random points fill in."""

    name = "ga"

    RETRIES = 8
    """Extra mutations tried on a child that was already seen."""

    def __init__(
        self,
        task: Task,
        seed: int = 0,
        population: int = 32,
        elites: int = 3,
        mutation: float = 0.1,
    ) -> None:
        super().__init__(task, seed)
        if population < 2 or not 0 <= elites <= population or not 0.0 <= mutation <= 1.0:
            raise ValueError(f"population {population}, elites {elites}, mutation {mutation}")
        self.population = population
        self.elites = elites
        self.mutation = mutation
        self._radices = [len(knob.values) for knob in self.space.knobs]
        self._pending: list[int] = []

    def _propose(self, count: int) -> list[int]:
        found: list[int] = []
        bred = False
        while len(found) < count:
            if not self._pending:
                if bred:
                    break
                self._pending, bred = self._breed(), True
                continue
            index = self._pending.pop(0)
            if index not in self._visited and index not in found:
                found.append(index)
        return found + self._random_unvisited(count - len(found), set(found))

    def _breed(self) -> list[int]:
        """The next generation's new children (empty before two configs ran)."""
        ranked = sorted(
            ((1.0 / cost, index) for index, cost in self._costs.items() if cost < math.inf),
            key=lambda entry: (-entry[0], entry[1]),
        )[: self.population]
        if len(ranked) < 2:
            return []
        parents = [self._genes(index) for _, index in ranked]
        weights = [fitness for fitness, _ in ranked]
        children: list[int] = []
        seen = {self.steps_of(index) for index in self._visited}
        for number in range(self.population):
            first = parents[number] if number < self.elites else self._select(parents, weights)
            second = self._select(parents, weights)
            genes = [
                a if self.rng.random() < 0.5 else b for a, b in zip(first, second, strict=True)
            ]
            self._mutate(genes, self.mutation)
            index = self._index(genes)
            for _ in range(self.RETRIES):
                if self.steps_of(index) not in seen:
                    break
                self._mutate(genes, 1.0 / len(genes))
                index = self._index(genes)
            if self.steps_of(index) not in seen:
                seen.add(self.steps_of(index))
                children.append(index)
        return children

    def _select(self, parents: list[list[int]], weights: list[float]) -> list[int]:
        return self.rng.choices(parents, weights=weights)[0]

    def _mutate(self, genes: list[int], probability: float) -> None:
        for knob, radix in enumerate(self._radices):
            if radix > 1 and self.rng.random() < probability:
                genes[knob] = self.rng.randrange(radix)

    def _genes(self, index: int) -> list[int]:
        genes: list[int] = []
        for radix in reversed(self._radices):
            index, position = divmod(index, radix)
            genes.append(position)
        return genes[::-1]

    def _index(self, genes: Sequence[int]) -> int:
        index = 0
        for position, radix in zip(genes, self._radices, strict=True):
            index = index * radix + position
        return index


class XGBTuner(Tuner):
    """Model-based search (see the module doc): `model` may be shared by
    the tuners of every task of one kind (transfer); a new one is made
    with `objective` and the tuner's seed otherwise. The model is used once
    it holds a learnable order: `min_train` measured configs of this task
    (a batch's worth, by default plan_size / 4), or earlier tasks' data."""

    name = "xgb"

    def __init__(
        self,
        task: Task,
        seed: int = 0,
        model: CostModel | None = None,
        plan_size: int = 64,
        epsilon: float = 0.05,
        min_train: int | None = None,
        objective: Objective = "rank",
        annealing: AnnealingOptions | None = None,
    ) -> None:
        super().__init__(task, seed)
        if plan_size < 1 or not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"plan_size {plan_size}, epsilon {epsilon}")
        self.features = TaskFeatures(task)
        self.model = model if model is not None else CostModel(objective=objective, seed=seed)
        self.model.check(task.kind, self.features.width)
        self.plan_size = plan_size
        self.epsilon = epsilon
        self.min_train = min_train if min_train is not None else max(2, plan_size // 4)
        self.annealing = annealing
        self._plan: list[int] = []
        self._recorded: list[tuple[np.ndarray, float]] = []
        """Stale records' features (of the steps they measured) and seconds."""
        if self.model.stale and self.model.informative():
            self.model.fit()

    def _model_ready(self) -> bool:
        """Whether the model has been trained on something worth ranking by."""
        if not self.model.trained:
            return False
        own = len(self._costs) + len(self._recorded) >= self.min_train
        return own or self.model.informative(exclude=self.task.key)

    def _propose(self, count: int) -> list[int]:
        found: list[int] = []
        taken: set[int] = set()
        use_model = self._model_ready()
        for _ in range(count):
            index = None
            if use_model and self.rng.random() >= self.epsilon:
                index = self._next_planned(taken)
            if index is None:
                index = self._random_unvisited(1, taken)[0]
            found.append(index)
            taken.add(index)
        return found

    def _next_planned(self, taken: set[int]) -> int | None:
        """The best point of the plan not visited nor `taken` (the plan is
        remade once it runs out)."""
        for attempt in range(2):
            while self._plan:
                index = self._plan.pop(0)
                if index not in self._visited and index not in taken:
                    return index
            if attempt == 0:
                self._plan = self._make_plan(taken)
        return None

    def _make_plan(self, taken: set[int] | None = None) -> list[int]:
        """The best scored points of distinct schedules, none of them the
        schedule of a visited or `taken` point."""
        proposed = self._visited | (taken or set())
        excluded = _SameSchedule(proposed, {self.steps_of(i) for i in proposed}, self.steps_of)
        best_measured = sorted(self._costs, key=lambda i: (self._costs[i], i))
        found = best_unvisited(
            self._score,
            self.space,
            excluded,
            self.plan_size,
            self.rng,
            starts=best_measured[: self.plan_size // 4],
            options=self.annealing,
        )
        planned: set[tuple[str, ...]] = set()
        plan: list[int] = []
        for index in found:
            if self.steps_of(index) not in planned:
                planned.add(self.steps_of(index))
                plan.append(index)
        return plan

    def _score(self, indices: Sequence[int]) -> np.ndarray:
        return self.model.predict(self.features.of_indices(indices))

    def learn_records(self, records: Sequence[Record]) -> None:
        """The stale records join the task's data in the model, each the
        vector of the steps it measured (TaskFeatures.of_record)."""
        if not records:
            return
        self._recorded += [(self.features.of_record(r), r.cost) for r in records]
        self._observe([], [])

    def _observe(self, indices: Sequence[int], results: Sequence[MeasureResult]) -> None:
        measured = sorted(self._costs)
        add_task_data(
            self.model, self.features, measured, [self._costs[i] for i in measured], self._recorded
        )
        data = len(measured) + len(self._recorded)
        if data >= self.min_train or self.model.informative(exclude=self.task.key):
            self.model.fit()
        self._plan = self._make_plan() if self._model_ready() else []


class _SameSchedule(Container[int]):
    """The points `proposed`, and every point whose steps are one of
    `schedules` (theirs): an alias of a proposed schedule."""

    def __init__(
        self,
        proposed: set[int],
        schedules: set[tuple[str, ...]],
        steps_of: Callable[[int], tuple[str, ...]],
    ) -> None:
        self.proposed = proposed
        self.schedules = schedules
        self.steps_of = steps_of

    def __contains__(self, index: object) -> bool:
        if not isinstance(index, int):
            return False
        return index in self.proposed or self.steps_of(index) in self.schedules


def add_task_data(
    model: CostModel,
    features: TaskFeatures,
    indices: Sequence[int],
    costs: Sequence[float],
    recorded: Sequence[tuple[np.ndarray, float]] = (),
) -> None:
    """Sets a task's data in `model`: the points `indices` of its space and
    their seconds (inf for a failure), and `recorded` vectors with theirs."""
    rows = [features.of_indices(indices), *(vector[None, :] for vector, _ in recorded)]
    throughputs = throughputs_of([*costs, *(cost for _, cost in recorded)])
    model.add(features.task.key, features.kind, np.concatenate(rows), throughputs)


def add_history(
    model: CostModel,
    task: Task,
    configs: Sequence[Mapping[str, KnobValue]],
    results: Sequence[MeasureResult],
) -> None:
    """Adds an earlier task's results (its records) to a cost model shared
    by the tasks of its kind, without tuning it: AutoTVM's transfer from
    records. An XGBTuner given the model then starts from what it learnt."""
    if len(configs) != len(results):
        raise ValueError(f"{len(configs)} configs but {len(results)} results")
    features = TaskFeatures(task)
    latest = {features.space.index(c): r.cost for c, r in zip(configs, results, strict=True)}
    indices = sorted(latest)
    add_task_data(model, features, indices, [latest[i] for i in indices])


TUNERS: dict[str, type[Tuner]] = {
    tuner.name: tuner for tuner in (RandomTuner, GridTuner, GATuner, XGBTuner)
}
"""The tuners by name (`xtc tune --tuner NAME`)."""


def make_tuner(name: str, task: Task, seed: int = 0, **options: Any) -> Tuner:
    """A tuner by name; ValueError naming the known ones for another."""
    if name not in TUNERS:
        raise ValueError(f"unknown tuner {name!r} (known: {', '.join(sorted(TUNERS))})")
    return TUNERS[name](task, seed, **options)
