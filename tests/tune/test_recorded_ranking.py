"""The XGBoost cost model on real measurements: 120 random configs of each
of three ResNet-50 conv kernels, timed on a 2-core AMD EPYC (Zen 5) with 2
threads and shipped in tests/tune/data (the kernels' text beside them).
Trained on a part of a kernel's records, the model ranks the held-out part
well above chance; trained on the other kernels alone (transfer), it still
does. Deterministic: a ranking metric, never a timing.

Each record keeps the steps it measured (the recipes of 6cec4ac); the
features of a record are of those steps (`TaskFeatures.of_record`), so a
recipe that changes later (kh innermost for a spilling window) leaves the
data meaning what was measured."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from xtc.driver.records import Record, load_records
from xtc.tune.cost_model import CostModel, throughputs_of
from xtc.tune.evaluate import ranking_quality
from xtc.tune.features import TaskFeatures
from xtc.tune.task import Task

DATA = Path(__file__).parent / "data"


@cache
def dataset() -> list[tuple[Task, list[Record]]]:
    records = load_records(DATA / "resnet50_convs.jsonl")
    found = []
    for entry in json.loads((DATA / "resnet50_convs.json").read_text()):
        task = Task(
            entry["key"],
            (DATA / f"{entry['key']}.mlir").read_text(),
            entry["kind"],
            entry["flops"],
            functions=(entry["function"],),
        )
        found.append((task, [r for r in records if r.key == task.key]))
    return found


def rows(task: Task, records: list[Record]) -> tuple[np.ndarray, np.ndarray]:
    features = TaskFeatures(task)
    matrix = np.stack([features.of_record(r) for r in records])
    return matrix, np.array([r.cost for r in records])


def test_the_dataset_is_what_the_test_expects() -> None:
    for task, records in dataset():
        assert len(records) == 120 and all(r.ok for r in records)
        assert task.space().index(records[0].config) >= 0
        costs = [r.cost for r in records]
        assert max(costs) / min(costs) > 2  # configs differ: there is an order to learn
        assert all(r.steps for r in records)  # what was measured, whatever today's recipes


def test_a_record_is_featured_by_its_own_steps() -> None:
    """A record whose steps are today's recipe gets its config's vector; one
    whose register tile was measured without a step today's recipe has
    differs in the tile nest's step count only, as the steps it measured."""
    task, records = dataset()[0]
    features = TaskFeatures(task)
    record = records[0]
    today = task.steps(record.config)
    fresh = replace(record, steps=",".join(today))
    np.testing.assert_array_equal(features.of_record(fresh), features.of(record.config))
    unroll = next(s for s in today if s.startswith("tir-unroll"))
    older = replace(record, steps=",".join(s for s in today if s != unroll))
    assert list(features.stale_nests(older)) == [1]
    changed = features.of_record(older) != features.of(record.config)
    names = [n for n, c in zip(features.names, changed, strict=True) if c]
    assert names == [f"1.micro_kernel.{n}" for n in ("unrolled", "unroll_steps", "steps")]


@pytest.mark.parametrize("index", range(3))
def test_held_out_trials_are_ranked_well_above_chance(index: int) -> None:
    task, records = dataset()[index]
    order = np.random.default_rng(index).permutation(len(records))
    train = [records[i] for i in order[:60]]
    held_out = [records[i] for i in order[60:]]
    model = CostModel(seed=0)
    features, costs = rows(task, train)
    model.add(task.key, task.kind, features, throughputs_of(costs))
    assert model.fit()
    quality = ranking_quality(model, *rows(task, held_out), k=6)
    assert quality["spearman"] > 0.5, quality
    assert quality["top_k_recall"] >= 3 * quality["chance"], quality


def test_a_model_of_other_kernels_ranks_a_new_one_above_chance() -> None:
    """Trained on the two 1x1 convs' records only, it ranks the third
    kernel (the same kind of nest) better than chance."""
    (task, records), *others = [d for d in dataset() if d[0].kind == "micro_kernel"] + [
        d for d in dataset() if d[0].kind != "micro_kernel"
    ]
    model = CostModel(seed=0)
    for other, other_records in others:
        if other.kind == task.kind:
            model.add(other.key, other.kind, *_throughput_rows(other, other_records))
    assert model.fit()
    quality = ranking_quality(model, *rows(task, records), k=12)
    assert quality["spearman"] > 0.3, quality
    assert quality["top_k_recall"] > quality["chance"], quality


def _throughput_rows(task: Task, records: list[Record]) -> tuple[np.ndarray, np.ndarray]:
    features, costs = rows(task, records)
    return features, throughputs_of(costs)
