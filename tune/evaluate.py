"""How well a cost model ranks configs it was not trained on: deterministic
measures of a tuner's model, not of a timing.

    quality = ranking_quality(model, features, costs)
    quality["spearman"]      # rank correlation of scores and throughputs
    quality["top_k_recall"]  # share of the true top-k in the predicted top-k
    quality["chance"]        # what a random order gets on average (k / n)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from xtc.tune.cost_model import throughputs_of


class Ranker(Protocol):
    """Anything that scores feature rows, higher for faster (CostModel)."""

    def predict(self, features: np.ndarray) -> np.ndarray: ...


def average_ranks(values: np.ndarray) -> np.ndarray:
    """The rank of each value (0 for the smallest), ties sharing the mean
    of their ranks."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ordered = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or ordered[end] != ordered[start]:
            ranks[order[start:end]] = (start + end - 1) / 2.0
            start = end
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (0 when either side is constant)."""
    ra, rb = average_ranks(a), average_ranks(b)
    da, db = ra - ra.mean(), rb - rb.mean()
    norm = float(np.sqrt((da * da).sum() * (db * db).sum()))
    return float((da * db).sum() / norm) if norm > 0 else 0.0


def top_k_recall(scores: np.ndarray, throughputs: np.ndarray, k: int) -> float:
    """The share of the k fastest configs among the k best scored (ties in
    the scores broken against the model: a constant model earns chance at
    most)."""
    k = min(k, len(scores))
    if k <= 0:
        return 0.0
    truth = set(np.argsort(-throughputs, kind="stable")[:k].tolist())
    # Among equal scores, the slowest configs come first.
    order = np.lexsort((throughputs, -scores))
    return len(truth & set(order[:k].tolist())) / k


def ranking_quality(
    model: Ranker, features: np.ndarray, costs: Sequence[float], k: int | None = None
) -> dict[str, float]:
    """Spearman's rho between the model's scores and the throughputs
    (1 / cost; a failed config, cost inf, has throughput 0) and the recall
    of the true top-k (k defaults to a tenth of the configs, at least 1),
    with `chance`, the recall a random order gets on average."""
    costs_array = np.asarray(costs, dtype=np.float64)
    if len(costs_array) != len(features):
        raise ValueError(f"{len(costs_array)} costs for {len(features)} feature rows")
    throughputs = throughputs_of(costs_array)
    scores = np.asarray(model.predict(np.asarray(features)), dtype=np.float64)
    n = len(costs_array)
    top = k if k is not None else max(1, n // 10)
    top = min(top, n)
    return {
        "spearman": spearman(scores, throughputs),
        "top_k_recall": top_k_recall(scores, throughputs, top),
        "k": float(top),
        "chance": top / n if n else 0.0,
    }
