"""Tuners, the XGBoost cost model and its features (tune/tuners.py,
tune/cost_model.py, tune/features.py, tune/annealing.py,
tune/evaluate.py), on the spaces of real tasks with synthetic costs:
nothing is built or timed, so every assertion is deterministic."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping
from functools import cache

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

from xtc.driver.records import Record, Target
from xtc.ops.schedules import MicroKernelTemplate
from xtc.ops.space import ConfigError, Knob, KnobValue, Space, config_key
from xtc.tools.model_builders import resnet_like
from xtc.tune.annealing import AnnealingOptions, best_unvisited
from xtc.tune.cost_model import CostModel, Objective, throughputs_of
from xtc.tune.evaluate import average_ranks, ranking_quality, spearman
from xtc.tune.features import LoopTable, TaskFeatures, parse_step
from xtc.tune.measure import ErrorKind, MeasureResult
from xtc.tune.task import Task, extract_tasks
from xtc.tune.tuners import (
    TUNERS,
    GATuner,
    GridTuner,
    RandomTuner,
    Tuner,
    XGBTuner,
    add_history,
    make_tuner,
)

# ------------------------------------------------------------ the tasks


def _matmul_model(shapes: list[tuple[int, int, int]]) -> ModelProto:
    """One MatMul per (m, k, n), each with its own input and weight."""
    nodes, weights, inputs, outputs = [], [], [], []
    for i, (m, k, n) in enumerate(shapes):
        inputs.append(helper.make_tensor_value_info(f"a{i}", TensorProto.FLOAT, [m, k]))
        weights.append(numpy_helper.from_array(np.ones((k, n), np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [f"a{i}", f"w{i}"], [f"y{i}"]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [m, n]))
    graph = helper.make_graph(nodes, "matmuls", inputs, outputs, weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@cache
def matmul_tasks() -> tuple[Task, ...]:
    """Three matmul tasks of kind micro_kernel (630, 630 and 360 points)."""
    tasks = extract_tasks(_matmul_model([(64, 64, 128), (48, 96, 192), (96, 32, 256)]))
    return tuple(sorted(tasks, key=lambda t: t.functions))


@cache
def softmax_task() -> Task:
    """A softmax of three nests (the row maxima a parallel loop, the sums of
    exponentials a micro-kernel, an elementwise nest): 18000 points."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 32, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 32, 64])
    graph = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], "s", [x], [y])
    (task,) = extract_tasks(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    return task


@cache
def resnet_tasks() -> tuple[Task, ...]:
    return tuple(extract_tasks(resnet_like()))


# ------------------------------------------------------- synthetic costs


def _jitter(config: Mapping[str, KnobValue]) -> float:
    """A deterministic number in [0, 1) per config."""
    return int(hashlib.sha256(config_key(config).encode()).hexdigest()[:8], 16) / 2**32


@cache
def _first_of_schedule(task: Task) -> dict[tuple[str, ...], dict[str, KnobValue]]:
    """The first point of each schedule (steps) of the task's space."""
    found: dict[tuple[str, ...], dict[str, KnobValue]] = {}
    for config in task.space():
        found.setdefault(tuple(task.steps(config)), dict(config))
    return found


def synthetic_cost(task: Task, config: Mapping[str, KnobValue]) -> float:
    """Seconds of a matmul config under a toy machine: a register tile is as
    fast as its FMAs per load (until its accumulators spill), narrow vectors
    and row tails cost, a packed panel helps, a grain of 8 is best; 1%
    noise. Written from the knobs' meaning, apart from tune/features.py.
    Configs of one schedule (the same steps) cost the same: the first's."""
    config = _first_of_schedule(task)[tuple(task.steps(config))]
    (template,) = task.schedule().templates
    assert isinstance(template, MicroKernelTemplate)
    split, lanes, vectors = (int(p) for p in str(config["0.columns"]).split(":"))
    rows = int(config["0.rows"])
    accumulators = rows * vectors
    efficiency = min(1.0, 2 * accumulators * lanes / (rows + vectors * lanes) / 14.0)
    efficiency *= math.sqrt(lanes / 16)
    if accumulators + vectors + 1 > 32:
        efficiency *= 0.5
    efficiency *= 1 - template.block.extent % rows / template.block.extent
    efficiency *= 1.15 if config.get("0.pack_panel") else 1.0
    efficiency *= 1 - 0.04 * abs(math.log2(int(config["0.parallel_grain"])) - 3)
    efficiency *= 1 + 0.01 * (_jitter(config) - 0.5)
    return task.flops / (1e11 * efficiency)


def synthetic_result(task: Task, config: Mapping[str, KnobValue]) -> MeasureResult:
    """The synthetic cost, or, for one schedule in ten, a build failure."""
    if _jitter(_first_of_schedule(task)[tuple(task.steps(config))]) > 0.9:
        return MeasureResult(error=ErrorKind.BUILD, message="synthetic failure")
    return MeasureResult((synthetic_cost(task, config),))


def measure(task: Task, configs: list[dict[str, KnobValue]]) -> list[MeasureResult]:
    return [synthetic_result(task, c) for c in configs]


def run_until_optimum(tuner: Tuner, optimum: float, batch: int = 8) -> int:
    """Trials the tuner takes to measure the config of cost `optimum`."""
    while tuner.has_next() and tuner.best_cost > optimum:
        configs = tuner.next_batch(batch)
        tuner.update(configs, [MeasureResult((synthetic_cost(tuner.task, c),)) for c in configs])
    return tuner.trials


# ----------------------------------------------------------- every tuner

ALL_TUNERS = [RandomTuner, GridTuner, GATuner, XGBTuner]


@pytest.mark.parametrize("tuner_class", ALL_TUNERS, ids=lambda c: c.name)
def test_a_tuner_proposes_each_point_once_and_exhausts_the_space(tuner_class: type[Tuner]) -> None:
    task = matmul_tasks()[0]
    space = task.space()
    tuner = tuner_class(task, seed=3)
    seen: set[str] = set()
    while tuner.has_next():
        batch = tuner.next_batch(96)
        assert batch and len(batch) <= 96
        for config in batch:
            space.check(config)
            assert config_key(config) not in seen
            seen.add(config_key(config))
        tuner.update(batch, measure(task, batch))
    assert len(seen) == len(space) == tuner.trials
    assert tuner.next_batch(8) == []
    best = min(synthetic_cost(task, c) for c in space if synthetic_result(task, c).ok)
    assert tuner.best_cost == best
    assert tuner.best_config is not None and synthetic_cost(task, tuner.best_config) == best


@pytest.mark.parametrize("tuner_class", ALL_TUNERS, ids=lambda c: c.name)
def test_a_tuner_is_deterministic_given_its_seed(tuner_class: type[Tuner]) -> None:
    task = matmul_tasks()[1]

    def proposals(seed: int) -> list[str]:
        tuner = tuner_class(task, seed=seed)
        found: list[str] = []
        for _ in range(6):
            batch = tuner.next_batch(12)
            tuner.update(batch, measure(task, batch))
            found += [config_key(c) for c in batch]
        return found

    assert proposals(5) == proposals(5)
    if tuner_class is not GridTuner:
        assert proposals(5) != proposals(6)


@pytest.mark.parametrize("tuner_class", ALL_TUNERS, ids=lambda c: c.name)
def test_load_history_is_no_trial_and_is_never_proposed_again(tuner_class: type[Tuner]) -> None:
    task = matmul_tasks()[2]
    space = task.space()
    history = [space.point(i) for i in random.Random(1).sample(range(len(space)), 200)]
    tuner = tuner_class(task, seed=0)
    tuner.load_history(history, measure(task, history))
    assert tuner.trials == 0 and tuner.trials_since_improvement == 0
    valid = [c for c in history if synthetic_result(task, c).ok]
    assert tuner.best_cost == min(synthetic_cost(task, c) for c in valid)
    loaded = {config_key(c) for c in history}
    proposed: list[str] = []
    while tuner.has_next():
        proposed += [config_key(c) for c in tuner.next_batch(40)]
    assert not loaded & set(proposed)
    assert len(proposed) == len(space) - len(history)


def test_load_history_refuses_a_config_of_another_space() -> None:
    task = matmul_tasks()[2]
    config = {**task.default(), "0.rows": 5}
    with pytest.raises(ConfigError, match="'0.rows' = 5"):
        RandomTuner(task).load_history([config], [MeasureResult((1.0,))])
    with pytest.raises(ValueError, match="1 configs but 2 results"):
        RandomTuner(task).update([task.default()], [MeasureResult((1.0,))] * 2)


def test_failures_are_trials_but_never_the_best() -> None:
    task = matmul_tasks()[2]
    tuner = GridTuner(task)
    assert tuner.best_config is None and tuner.best_cost == math.inf
    first = tuner.next_batch(4)
    failed = MeasureResult(error=ErrorKind.CRASH)
    tuner.update(first, [failed, MeasureResult((2.0,)), failed, MeasureResult((3.0,))])
    assert tuner.trials == 4 and tuner.best_cost == 2.0 and tuner.best_config == first[1]
    assert tuner.trials_since_improvement == 2
    second = tuner.next_batch(3)
    tuner.update(second, [MeasureResult((1.5,)), failed, MeasureResult((0.5, 9.0, 1.0))])
    assert tuner.best_cost == 0.5 and tuner.best_config == second[2]  # its fastest repeat
    assert tuner.trials == 7 and tuner.trials_since_improvement == 0
    assert tuner.measured[task.space().index(first[0])] == math.inf


def test_grid_tuner_follows_the_space_order_skipping_history() -> None:
    task = matmul_tasks()[2]
    space = task.space()
    tuner = GridTuner(task)
    tuner.load_history([space.point(1), space.point(4)], [MeasureResult((1.0,))] * 2)
    batch = tuner.next_batch(5)
    assert [space.index(c) for c in batch] == [0, 2, 3, 5, 6]


def test_tuners_by_name() -> None:
    task = matmul_tasks()[2]
    assert sorted(TUNERS) == ["ga", "grid", "random", "xgb"]
    assert isinstance(make_tuner("ga", task, 1, population=8), GATuner)
    with pytest.raises(ValueError, match="unknown tuner 'sa' \\(known: ga, grid, random, xgb\\)"):
        make_tuner("sa", task)


# --------------------------------------------------------- search quality


def _mean_trials(tuner_class: type[Tuner], task: Task, seeds: range) -> float:
    optimum = min(synthetic_cost(task, c) for c in task.space())
    return float(np.mean([run_until_optimum(tuner_class(task, seed=s), optimum) for s in seeds]))


def test_xgb_finds_the_optimum_in_far_fewer_trials_than_random() -> None:
    """Mean trials to the synthetic optimum of a 630-point space over four
    seeds (random needs ~315 on average)."""
    task = matmul_tasks()[0]
    xgb = _mean_trials(XGBTuner, task, range(4))
    random_ = _mean_trials(RandomTuner, task, range(4))
    assert xgb * 3 < random_, (xgb, random_)


def test_xgb_proposes_no_alias_of_a_schedule_it_proposed() -> None:
    """Most points of a matmul's space are aliases (a parallel grain that
    picks the same loop: 102 schedules in 360 points). The model cannot tell
    aliases apart, so a plan of points re-measures its favourite schedule
    under each alias; with a plan of distinct schedules, every model-made
    pick (epsilon 0, after the first, random batch) is a new schedule."""
    task = matmul_tasks()[0]
    schedules = {tuple(task.steps(c)) for c in task.space()}
    assert len(schedules) * 3 < len(task.space())
    tuner = XGBTuner(task, seed=0, epsilon=0.0)
    first = tuner.next_batch(16)
    tuner.update(first, measure(task, first))
    proposed = {tuple(task.steps(c)) for c in first}
    for _ in range(5):
        batch = tuner.next_batch(8)
        steps = [tuple(task.steps(c)) for c in batch]
        assert len(set(steps)) == len(steps) and not proposed & set(steps)
        proposed |= set(steps)
        tuner.update(batch, measure(task, batch))


def test_ga_finds_the_optimum_in_fewer_trials_than_random() -> None:
    task = matmul_tasks()[0]
    ga = _mean_trials(GATuner, task, range(6))
    random_ = _mean_trials(RandomTuner, task, range(6))
    assert ga < random_, (ga, random_)


# ------------------------------------------------------------ cost model


def _data(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """Every point's features and synthetic cost (inf for a failure)."""
    space = task.space()
    features = TaskFeatures(task).of_indices(range(len(space)))
    results = measure(task, list(space))
    return features, np.array([r.cost for r in results])


@pytest.mark.parametrize("objective", ["rank", "reg"])
def test_the_cost_model_ranks_held_out_configs(objective: Objective) -> None:
    """Trained on 64 random configs (a tenth of them failures, at random),
    it ranks the other ~570 far better than chance (means of three draws)."""
    task = matmul_tasks()[0]
    features, costs = _data(task)
    qualities = []
    for seed in range(3):
        train = np.zeros(len(costs), dtype=bool)
        train[random.Random(seed).sample(range(len(costs)), 64)] = True
        model = CostModel(objective=objective)
        model.add(task.key, task.kind, features[train], throughputs_of(costs[train]))
        assert model.fit() and model.trained
        qualities.append(ranking_quality(model, features[~train], costs[~train]))
    rho = np.mean([q["spearman"] for q in qualities])
    recall = np.mean([q["top_k_recall"] for q in qualities])
    assert rho > 0.4, qualities
    assert recall > 3 * qualities[0]["chance"], qualities


def test_a_model_trained_on_one_task_ranks_another_of_its_kind() -> None:
    """Transfer: trained on matmul A, the model ranks matmul B (another
    shape, the same kind) well; an untrained model ranks it at chance."""
    task_a, task_b, _ = matmul_tasks()
    assert task_a.kind == task_b.kind == "micro_kernel"
    features_a, costs_a = _data(task_a)
    features_b, costs_b = _data(task_b)
    untrained = ranking_quality(CostModel(), features_b, costs_b)
    model = CostModel()
    model.add(task_a.key, task_a.kind, features_a, throughputs_of(costs_a))
    model.fit()
    trained = ranking_quality(model, features_b, costs_b)
    assert untrained["spearman"] == 0.0
    assert untrained["top_k_recall"] <= untrained["chance"]
    # B's failures (a tenth, at random) tie at throughput 0: rho is bounded.
    assert trained["spearman"] > 0.4, trained
    assert trained["top_k_recall"] > 4 * trained["chance"], trained


def test_an_xgb_tuner_with_a_trained_model_starts_from_its_best_guesses() -> None:
    """With a model that learnt task A, task B's first batch is the
    model's plan (not random): far faster configs than a random batch; and
    the model, shared, now holds both tasks' data."""
    task_a, task_b, _ = matmul_tasks()
    model = CostModel()
    tuner_a = XGBTuner(task_a, seed=0, model=model)
    while tuner_a.trials < 128:
        batch = tuner_a.next_batch(16)
        tuner_a.update(batch, measure(task_a, batch))
    tuner_b = XGBTuner(task_b, seed=0, model=model, epsilon=0.0)
    guided = tuner_b.next_batch(16)
    unguided = RandomTuner(task_b, seed=0).next_batch(16)
    optimum = min(synthetic_cost(task_b, c) for c in task_b.space())
    guided_cost = np.mean([synthetic_cost(task_b, c) for c in guided]) / optimum
    random_cost = np.mean([synthetic_cost(task_b, c) for c in unguided]) / optimum
    assert guided_cost < 1.3 < random_cost, (guided_cost, random_cost)
    tuner_b.update(guided, measure(task_b, guided))
    assert set(model.keys) == {task_a.key, task_b.key}
    assert model.samples(task_a.key) == 128 and model.samples(task_b.key) == 16


def test_records_of_an_earlier_task_warm_start_the_next() -> None:
    """add_history (transfer from records, no tuning): task C's first batch,
    chosen by a model that only saw task A's records, is near C's best."""
    task_a, _, task_c = matmul_tasks()
    configs = list(task_a.space())
    model = CostModel()
    add_history(model, task_a, configs, measure(task_a, configs))
    assert model.stale and not model.trained
    tuner = XGBTuner(task_c, seed=1, model=model, epsilon=0.0)
    assert model.trained and tuner.trials == 0
    optimum = min(synthetic_cost(task_c, c) for c in task_c.space())
    guided = tuner.next_batch(8)
    assert max(synthetic_cost(task_c, c) for c in guided) < 1.2 * optimum


def test_a_cost_model_serves_one_kind() -> None:
    matmul = matmul_tasks()[0]
    model = CostModel()
    XGBTuner(matmul, model=model).update([matmul.default()], [MeasureResult((1.0,))])
    other = next(t for t in resnet_tasks() if t.kind != matmul.kind)
    with pytest.raises(ValueError, match="of kind 'micro_kernel' cannot take kind"):
        XGBTuner(other, model=model)
    with pytest.raises(ValueError, match="objective 'lambdamart'"):
        CostModel(objective="lambdamart")  # type: ignore[arg-type]


def test_a_model_without_an_order_to_learn_stays_untrained() -> None:
    task = matmul_tasks()[2]
    features = TaskFeatures(task).of_indices(range(3))
    model = CostModel()
    model.add(task.key, task.kind, features, np.zeros(3))
    assert not model.fit() and not model.trained
    assert np.array_equal(model.predict(features), np.zeros(3))
    model.add(task.key, task.kind, features, np.ones(3))
    assert not model.fit()
    assert not model.informative()
    with pytest.raises(ValueError, match="non-negative"):
        model.add(task.key, task.kind, features, np.array([1.0, -1.0, 2.0]))


def test_xgboost_is_quiet_and_deterministic(capfd: pytest.CaptureFixture[str]) -> None:
    task = matmul_tasks()[0]
    features, costs = _data(task)
    predictions = []
    objectives: tuple[Objective, ...] = ("rank", "rank", "reg")
    for objective in objectives:
        model = CostModel(objective=objective)
        model.add(task.key, task.kind, features[:100], throughputs_of(costs[:100]))
        model.fit()
        predictions.append(model.predict(features))
    assert np.array_equal(predictions[0], predictions[1])
    assert model.options.nthread == 1
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# -------------------------------------------------------------- features


def test_features_have_one_length_per_kind() -> None:
    by_kind: dict[str, set[tuple[str, ...]]] = {}
    for task in (*matmul_tasks(), *resnet_tasks()):
        features = TaskFeatures(task)
        rows = features.of_indices(range(min(len(features.space), 50)))
        assert rows.shape == (min(len(features.space), 50), features.width)
        assert np.all(np.isfinite(rows))
        by_kind.setdefault(task.kind, set()).add(features.names)
    assert len(by_kind) >= 4
    assert all(len(names) == 1 for names in by_kind.values()), by_kind.keys()


def test_features_say_what_a_config_does() -> None:
    """Knob numbers, the tile they make, and what the steps do (the
    parallel loop the grain picks, the packed panel), for matmul 64x64x128
    (vector loop 128 columns, blocked loop 64 rows)."""
    task = matmul_tasks()[0]
    features = TaskFeatures(task)

    def row(**knobs: KnobValue) -> dict[str, float]:
        config = {**task.default(), **{f"0.{k}": v for k, v in knobs.items()}}
        return {
            name.split(".", 2)[-1]: float(v)
            for name, v in zip(features.names, features.of(config), strict=True)
        }

    tile = row(columns="32:16:2", rows=8, pack_panel=1, parallel_grain=8)
    assert (tile["split"], tile["lanes_knob"], tile["vectors"], tile["rows"]) == (32, 16, 2, 8)
    assert tile["accumulators"] == 16 and tile["spilled"] == 0
    assert tile["tile_intensity"] == pytest.approx(2 * 16 * 16 / (8 + 32))
    assert tile["column_blocks"] == 128 / 32 and tile["row_blocks"] == 64 / 8
    assert tile["lanes"] == 16 and tile["unrolled"] == 8 * 2
    assert tile["packed_operands"] == 1 and tile["cache_tile"] == 8 * 32
    # Column blocks (4) come first, then row blocks (8): grain 8 skips to the rows.
    assert tile["parallel_extent"] == 8
    assert row(parallel_grain=4)["parallel_extent"] == 4
    assert row(pack_panel=0)["packed_operands"] == 0
    spilling = row(columns="32:16:2", rows=16)
    assert spilling["accumulators"] == 32 and spilling["spilled"] == 3


def test_the_loop_table_follows_the_steps() -> None:
    assert parse_step("tir-split{func=kernel loop=i1 factor=16}") == (
        "tir-split",
        {"func": "kernel", "loop": "i1", "factor": "16"},
    )
    table = LoopTable([("i", 6), ("j", 64)], {"k": 3})
    for step in (
        "tir-split{func=f loop=j factor=16}",
        "tir-reorder{func=f order=j_o,i,j_i}",
        "tir-cache-write{func=f loop=i}",
        "tir-unroll{func=f loop=k}",
        "tir-vectorize{func=f loop=j_i_init}",
        "tir-parallel{func=f loop=i}",
        "tir-prefetch{func=f loop=k buffer=0 distance=16}",
    ):
        table.apply(step)
    assert table.order == ["j_o", "i", "j_i"]
    assert table.outside("i") == 4 and table.inside("i") == 16
    assert (table.parallel, table.lanes, table.unrolled, table.tile) == ("i", 16, 3, 16)
    assert table.prefetch == 16


def test_a_record_measured_with_other_steps_is_featured_by_them() -> None:
    """A softmax record whose elementwise nest measured another vector width
    than today's recipe of its config makes (a stale record): that nest's
    loop columns are those of the steps it measured, every other column its
    config's; the steps go to the nest whose loops they name."""
    task = softmax_task()
    features = TaskFeatures(task)
    config = task.default()
    other = {**config, "2.vector_width": 8}
    measured = task.steps(other)
    assert [len(s) for s in features.steps_by_nest(measured)] == [9, 10, 3]
    stale = Record(task.key, config, ",".join(measured), Target("znver5", ""), costs=(1e-5,))
    assert list(features.stale_nests(stale)) == [2]
    got, own, theirs = features.of_record(stale), features.of(config), features.of(other)
    loops = [n.startswith("2.") and n.split(".")[-1] in LOOP_COLUMNS for n in features.names]
    for name, is_loop, value, mine, measured_value in zip(
        features.names, loops, got, own, theirs, strict=True
    ):
        assert value == (measured_value if is_loop else mine), name
    assert not np.array_equal(got, own)
    fresh = Record(task.key, config, ",".join(task.steps(config)), Target("znver5", ""))
    assert features.stale_nests(fresh) == {} and np.array_equal(features.of_record(fresh), own)


LOOP_COLUMNS = {"lanes", "unrolled", "unroll_steps", "innermost", "steps", "parallel_extent"}
LOOP_COLUMNS |= {"parallel_forks", "parallel_work", "imbalance_2", "imbalance_8", "cache_tile"}
LOOP_COLUMNS |= {"iterations", "inner_trips", "spatial_loops", "packed_operands", "packed_bytes"}
LOOP_COLUMNS |= {"packs", "prefetch_distance"}


def test_an_xgb_tuner_learns_stale_records_without_visiting_their_configs() -> None:
    """Stale records (each measured another config's steps) join the task's
    data in the model as the vectors of what they measured; their configs
    stay unmeasured, open to propose, and no trial is counted."""
    task = matmul_tasks()[0]
    points = list(task.space())
    pairs = [(a, b) for a, b in zip(points, points[1:]) if task.steps(a) != task.steps(b)][:12]
    target = Target("znver5", "")
    stale = [
        Record(task.key, a, ",".join(task.steps(b)), target, (synthetic_cost(task, b),))
        for a, b in pairs
    ]
    tuner = XGBTuner(task, seed=0, min_train=4)
    tuner.learn_records(stale)
    assert tuner.model.samples(task.key) == len(stale) and tuner.model.trained
    assert tuner.measured == {} and tuner.trials == 0
    proposed = tuner.next_batch(len(points))
    assert all(a in proposed for a, _ in pairs)
    features = TaskFeatures(task)
    assert all(features.stale_nests(r) for r in stale)


# ------------------------------------------------------------- annealing


def test_annealing_finds_the_best_points_of_a_large_space() -> None:
    """10^6 points, the score a bowl around one point: the best unvisited
    points are found scoring a small part of the space."""
    space = Space(tuple(Knob(f"k{i}", tuple(range(10))) for i in range(6)))
    target = (3, 7, 1, 8, 5, 2)
    scored: list[int] = []

    def score(indices: list[int] | range) -> np.ndarray:
        scored.extend(indices)
        points = [space.point(i) for i in indices]
        return np.array(
            [-sum((int(p[f"k{i}"]) - t) ** 2 for i, t in enumerate(target)) for p in points]
        )

    best = space.index({f"k{i}": t for i, t in enumerate(target)})
    options = AnnealingOptions(chains=32, steps=200, patience=200)
    found = best_unvisited(score, space, set(), 8, random.Random(0), options=options)
    assert found[0] == best and len(found) == 8
    assert len(scored) < len(space) / 100
    again = best_unvisited(score, space, {best}, 8, random.Random(0), options=options)
    assert best not in again and len(again) == 8


def test_small_spaces_are_scored_whole() -> None:
    space = Space((Knob("a", (1, 2, 3)), Knob("b", (0, 1))))
    found = best_unvisited(
        lambda idx: np.array([i % 3 for i in idx], dtype=float), space, {2}, 3, random.Random(0)
    )
    assert found == [5, 1, 4]


def test_annealing_walks_a_space_past_two_to_the_63() -> None:
    """2^70 points (a Winograd kernel's five stages multiply their spaces to
    ~10^23): sizes and indices stay Python ints, where len() would overflow."""
    space = Space(tuple(Knob(f"k{i}", (0, 1)) for i in range(70)))
    assert space.size == 2**70
    with pytest.raises(OverflowError):
        len(space)
    top = space.index({f"k{i}": 1 for i in range(70)})
    assert space.point(top) == {f"k{i}": 1 for i in range(70)}

    def score(indices: list[int] | range) -> np.ndarray:
        return np.array([bin(i).count("1") for i in indices], dtype=np.float64)

    options = AnnealingOptions(chains=4, steps=20, patience=20)
    found = best_unvisited(score, space, set(), 4, random.Random(0), options=options)
    assert len(set(found)) == 4 and all(0 <= i < space.size for i in found)


def test_xgb_tuner_anneals_a_large_space() -> None:
    """A softmax kernel's 18000 points: plans come from annealing, and
    proposals stay new and valid."""
    task = softmax_task()
    space = task.space()
    assert len(space) > 10_000
    tuner = XGBTuner(
        task,
        seed=0,
        plan_size=16,
        min_train=8,
        annealing=AnnealingOptions(exhaustive_limit=0, chains=16, steps=20),
    )
    seen: set[int] = set()
    for _ in range(4):
        batch = tuner.next_batch(8)
        indices = {space.index(c) for c in batch}
        assert len(indices) == 8 and not indices & seen
        seen |= indices
        # An order to learn: later points of the space are slower.
        costs = [1.0 + space.index(c) / len(space) + _jitter(c) / 10 for c in batch]
        tuner.update(batch, [MeasureResult((cost,)) for cost in costs])
    assert tuner.model.trained and tuner.trials == 32


# -------------------------------------------------------------- evaluate


class _Fixed:
    """A 'model' that returns given scores."""

    def __init__(self, scores: list[float]) -> None:
        self.scores = np.array(scores)

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.scores


def test_ranking_quality_of_perfect_reversed_and_constant_models() -> None:
    costs = [1.0, 2.0, 4.0, 8.0, math.inf]
    features = np.zeros((5, 1))
    perfect = ranking_quality(_Fixed([5, 4, 3, 2, 1]), features, costs, k=2)
    assert perfect == {"spearman": 1.0, "top_k_recall": 1.0, "k": 2.0, "chance": 0.4}
    reversed_ = ranking_quality(_Fixed([1, 2, 3, 4, 5]), features, costs, k=2)
    assert reversed_["spearman"] == -1.0 and reversed_["top_k_recall"] == 0.0
    constant = ranking_quality(_Fixed([0] * 5), features, costs, k=2)
    assert constant["spearman"] == 0.0 and constant["top_k_recall"] == 0.0
    assert ranking_quality(_Fixed([0] * 5), features, costs)["k"] == 1.0
    with pytest.raises(ValueError, match="4 costs for 5 feature rows"):
        ranking_quality(_Fixed([0] * 5), features, costs[:4])


def test_throughputs_of_failures_are_zero() -> None:
    assert list(throughputs_of([2.0, math.inf, 0.0, 0.25])) == [0.5, 0.0, 0.0, 4.0]


def test_spearman_with_ties() -> None:
    assert list(average_ranks(np.array([3.0, 1.0, 3.0, 2.0]))) == [2.5, 0.0, 2.5, 1.0]
    assert spearman(np.array([1.0, 2.0, 2.0, 3.0]), np.array([1.0, 2.0, 2.0, 3.0])) == 1.0
    assert spearman(np.array([1.0, 1.0]), np.array([1.0, 2.0])) == 0.0
