"""Sharing a tuning budget among a model's tasks, as Ansor's task scheduler.

The model's time is estimated as sum_i w_i * g_i, with g_i the best time
found so far for task i and w_i how often its kernel runs per inference.
After a warm-up round for every task, each round goes to the task whose
next trials are expected to cut that sum most: w_i times the slope of its
best time over its recent trials (how fast it is still improving), mixed
with an optimistic bound (it could still get as fast again as the trials so
far made it); with probability epsilon, to a random task instead, so that
none starves. Finished tasks (early-stopped or exhausted) get no more.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class TaskProgress:
    """One task's best time (seconds) after each round of trials."""

    weight: float
    trials: list[int] = field(default_factory=list[int])
    best: list[float] = field(default_factory=list[float])
    finished: bool = False

    def record(self, trials: int, best: float) -> None:
        self.trials.append(trials)
        self.best.append(best)

    @property
    def current(self) -> float:
        return self.best[-1] if self.best else float("inf")


class TaskScheduler:
    """Picks the task of each round (see the module doc)."""

    def __init__(
        self,
        weights: Sequence[float],
        seed: int = 0,
        epsilon: float = 0.05,
        window: int = 3,
        alpha: float = 0.2,
    ) -> None:
        self.tasks = [TaskProgress(w) for w in weights]
        self.rng = random.Random(seed)
        self.epsilon = epsilon
        self.window = window
        self.alpha = alpha

    def record(self, task: int, trials: int, best: float) -> None:
        """Task `task` now has `trials` trials and best time `best`."""
        self.tasks[task].record(trials, best)

    def finish(self, task: int) -> None:
        self.tasks[task].finished = True

    def active(self) -> list[int]:
        return [i for i, t in enumerate(self.tasks) if not t.finished]

    def next_task(self) -> int | None:
        """The task of the next round; None when every task is finished."""
        active = self.active()
        if not active:
            return None
        warming = [i for i in active if len(self.tasks[i].best) < 2]
        if warming:
            return warming[0]
        if self.rng.random() < self.epsilon:
            return self.rng.choice(active)
        return max(active, key=self.expected_gain)

    def expected_gain(self, index: int) -> float:
        """w * (how much the best time falls per trial), estimated from the
        last `window` rounds and an optimistic bound; larger is better."""
        task = self.tasks[index]
        if task.current == float("inf"):
            return float("inf")
        first = max(0, len(task.best) - 1 - self.window)
        spent = max(1, task.trials[-1] - task.trials[first])
        backward = (task.best[first] - task.current) / spent
        optimistic = task.current / max(1, task.trials[-1])
        return task.weight * (self.alpha * backward + (1 - self.alpha) * optimistic)

    def estimated_time(self) -> float:
        """sum_i w_i * g_i over the tasks with a valid time."""
        return sum(t.weight * t.current for t in self.tasks if t.current != float("inf"))
