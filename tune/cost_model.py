"""A cost model on XGBoost that ranks configs of a task by their predicted
speed, trained on measured ones (AutoTVM's XGBoost cost model).

    model = CostModel()                          # rank:pairwise, one thread
    model.add(task.key, task.kind, features, throughputs)
    model.fit()
    scores = model.predict(candidate_features)   # higher: faster

The model keeps its training data as groups, one per task (workload key):
a task's throughputs (1 / seconds; 0 for a failed config) are only ever
compared within the task, so tasks of different sizes mix. The `rank`
objective learns the order within each group (XGBoost's query groups);
the `reg` objective fits each group's throughput divided by its best.

Transfer: one model serves every task of a kind. Data of the tasks tuned
earlier stays in it, so a new task of that kind starts with a model that
has already learnt what a fast schedule of that kind looks like, and its
own measurements join the earlier ones at each fit. A model refuses
features of another kind (they do not mean the same columns).

XGBoost runs quietly (no log, no warnings) on `nthread` threads (1 by
default: it must not compete with the kernels being measured), and is
deterministic given `seed`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

Objective = Literal["rank", "reg"]


def throughputs_of(costs: np.ndarray | list[float]) -> np.ndarray:
    """Calls per second of each cost in seconds; 0 for a failure (inf) or
    a cost that is not positive."""
    seconds = np.asarray(costs, dtype=np.float64)
    valid = np.isfinite(seconds) & (seconds > 0)
    return np.divide(1.0, seconds, out=np.zeros_like(seconds), where=valid)


@dataclass(frozen=True)
class CostModelOptions:
    """XGBoost's parameters (AutoTVM's, with fewer rounds: the data is
    small and the model is refit after every batch)."""

    objective: Objective = "rank"
    rounds: int = 60
    max_depth: int = 6
    eta: float = 0.3
    gamma: float = 1e-4
    min_child_weight: float = 1.0
    subsample: float = 1.0
    reg_lambda: float = 1.0
    nthread: int = 1
    seed: int = 0

    def xgboost_params(self) -> dict[str, Any]:
        return {
            "objective": "rank:pairwise" if self.objective == "rank" else "reg:squarederror",
            "max_depth": self.max_depth,
            "eta": self.eta,
            "gamma": self.gamma,
            "min_child_weight": self.min_child_weight,
            "subsample": self.subsample,
            "lambda": self.reg_lambda,
            "nthread": self.nthread,
            "seed": self.seed,
            "verbosity": 0,
        }


@dataclass
class _Group:
    """One task's training data: features and raw throughputs."""

    features: np.ndarray
    throughputs: np.ndarray


class CostModel:
    """Ranks the configs of tasks of one kind (see the module doc)."""

    def __init__(self, options: CostModelOptions | None = None, **overrides: Any) -> None:
        base = options if options is not None else CostModelOptions()
        self.options = replace(base, **overrides)
        if self.options.objective not in ("rank", "reg"):
            raise ValueError(f"objective {self.options.objective!r} is not 'rank' or 'reg'")
        self.kind: str | None = None
        self.width: int | None = None
        self._groups: dict[str, _Group] = {}
        self._booster: Any = None
        self.stale = False
        """Whether data was added since the last fit."""

    # ------------------------------------------------------------- data

    def add(self, key: str, kind: str, features: np.ndarray, throughputs: np.ndarray) -> None:
        """Sets the data of task `key` (replacing what it had): one feature
        row per config, its throughput (1 / seconds, 0 for a failure)."""
        features = np.asarray(features, dtype=np.float32)
        throughputs = np.asarray(throughputs, dtype=np.float64)
        if features.ndim != 2 or len(features) != len(throughputs):
            raise ValueError(
                f"{len(throughputs)} throughputs for features of shape {features.shape}"
            )
        self.check(kind, features.shape[1])
        self.kind, self.width = kind, features.shape[1]
        if np.any(~np.isfinite(throughputs)) or np.any(throughputs < 0):
            raise ValueError("throughputs must be finite and non-negative")
        self._groups[key] = _Group(features, throughputs)
        self.stale = True

    def check(self, kind: str, width: int) -> None:
        """ValueError when features of `kind` and `width` cannot join this
        model's data."""
        if self.kind is not None and kind != self.kind:
            raise ValueError(f"a cost model of kind {self.kind!r} cannot take kind {kind!r}")
        if self.width is not None and width != self.width:
            raise ValueError(f"features of {width} columns for a model of {self.width}")

    @property
    def keys(self) -> tuple[str, ...]:
        """The tasks the model has data of."""
        return tuple(self._groups)

    def samples(self, key: str | None = None) -> int:
        """Configs in the data (of one task, or of all)."""
        groups = self._groups.values() if key is None else [self._groups[key]]
        return sum(len(g.throughputs) for g in groups)

    def informative(self, exclude: str | None = None) -> bool:
        """Whether some task's data (but `exclude`'s) can teach an order:
        it has two configs of different throughputs."""
        return any(
            np.ptp(group.throughputs) > 0
            for key, group in self._groups.items()
            if key != exclude and len(group.throughputs) >= 2
        )

    # --------------------------------------------------------- training

    @property
    def trained(self) -> bool:
        return self._booster is not None

    def fit(self) -> bool:
        """Trains on every task's data; False (and untrained) when no task
        has two configs of different throughputs."""
        import xgboost

        self.stale = False
        features, labels, groups = [], [], []
        for group in self._groups.values():
            best = float(group.throughputs.max(initial=0.0))
            if len(group.throughputs) < 2 or best <= 0.0:
                continue
            if self.options.objective == "rank" and np.ptp(group.throughputs) == 0:
                continue
            features.append(group.features)
            labels.append(group.throughputs / best)
            groups.append(np.full(len(group.throughputs), len(groups)))
        if not features:
            self._booster = None
            return False
        options = self.options
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = xgboost.DMatrix(
                np.concatenate(features),
                label=np.concatenate(labels),
                # Query groups: a rank objective orders configs within a task only.
                qid=np.concatenate(groups) if options.objective == "rank" else None,
                nthread=options.nthread,
            )
            self._booster = xgboost.train(
                options.xgboost_params(), data, num_boost_round=options.rounds
            )
        return True

    def predict(self, features: np.ndarray) -> np.ndarray:
        """A score per feature row, higher for faster configs (zeros when
        the model is untrained)."""
        features = np.asarray(features, dtype=np.float32)
        if self._booster is None or len(features) == 0:
            return np.zeros(len(features))
        import xgboost

        if self.width is not None and features.shape[1] != self.width:
            raise ValueError(f"features of {features.shape[1]} columns for a model of {self.width}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = xgboost.DMatrix(features, nthread=self.options.nthread)
            return np.asarray(self._booster.predict(data), dtype=np.float64)
