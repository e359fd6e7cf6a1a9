"""The random ONNX ops (frontend/converters/random.py): the statistics of
their values, the same values for a seed on every run and in native code
as in the interpreter (uniforms bit for bit: the generator is integer
arithmetic; normals within an ulp or so of log and cos),
fresh values on each run without a seed, and Dropout at ratio 0 exact."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
import pytest

import xtc
from xtc import interp
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.testing.onnx_models import one_node_model

SIGMAS = 5.0
N = 20000


def run_interp(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    return interp.run(import_model(model), dict(inputs))


def run_native(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    return xtc.compile(model, cache=False).run(dict(inputs))


def assert_mean_var(values: np.ndarray, mean: float, var: float) -> None:
    """Sample mean and variance within SIGMAS standard errors (the
    variance's error taken for a normal law: 2 var^2 / n, times 2 to cover
    the uniform's lighter tails as well)."""
    n = values.size
    x = values.astype(np.float64)
    assert abs(x.mean() - mean) < SIGMAS * np.sqrt(var / n), x.mean()
    assert abs(x.var() - var) < SIGMAS * np.sqrt(4 * var**2 / n), x.var()


def assert_frequency(hits: np.ndarray, p: float) -> None:
    n = hits.size
    assert abs(hits.mean() - p) < SIGMAS * np.sqrt(p * (1 - p) / n) + 1e-12, (hits.mean(), p)


def generator(op: str, **attributes: Any) -> onnx.ModelProto:
    return one_node_model(op, {}, opset=22, **attributes)


def test_random_uniform_is_uniform_on_low_high_of_its_dtype_and_shape() -> None:
    model = generator("RandomUniform", shape=[4, N // 4], low=-1.0, high=3.0, seed=2.0)
    (y,) = run_interp(model, {})
    assert y.shape == (4, N // 4) and y.dtype == np.float32
    assert y.min() >= -1.0 and y.max() < 3.0
    assert_mean_var(y, 1.0, 16 / 12)
    (d,) = run_interp(generator("RandomUniform", shape=[7], dtype=onnx.TensorProto.DOUBLE), {})
    assert d.dtype == np.float64 and d.shape == (7,)


@pytest.mark.parametrize("op", ["RandomUniform", "RandomNormal"])
def test_a_seed_gives_the_same_values_every_run_and_natively(op: str) -> None:
    model = generator(op, shape=[3, 257], seed=7.0)
    first, second = run_interp(model, {})[0], run_interp(model, {})[0]
    np.testing.assert_array_equal(first, second)
    compiled = xtc.compile(model, cache=False)
    native = [compiled.run({})[0] for _ in range(2)]
    np.testing.assert_array_equal(native[0], native[1])
    if op == "RandomUniform":
        np.testing.assert_array_equal(native[0], first)
    else:  # the uniforms agree bit for bit; log and cos within an ulp or so
        np.testing.assert_allclose(native[0], first, rtol=1e-6, atol=1e-6)
    other = run_interp(generator(op, shape=[3, 257], seed=8.0), {})[0]
    assert (other != first).mean() > 0.99


@pytest.mark.parametrize("op", ["RandomUniform", "RandomNormal"])
def test_without_a_seed_each_run_differs(op: str) -> None:
    model = generator(op, shape=[1000])
    runs = [run_interp(model, {})[0] for _ in range(2)]
    assert (runs[0] != runs[1]).mean() > 0.99
    compiled = xtc.compile(model, cache=False)
    native = [compiled.run({})[0] for _ in range(2)]
    assert (native[0] != native[1]).mean() > 0.99
    assert_mean_var(native[0], 0.5 if op == "RandomUniform" else 0.0,
                    1 / 12 if op == "RandomUniform" else 1.0)  # fmt: skip


def test_random_normal_has_its_mean_and_scale() -> None:
    model = generator("RandomNormal", shape=[N], mean=2.0, scale=0.5, seed=1.0)
    (y,) = run_native(model, {})
    assert y.dtype == np.float32 and np.isfinite(y).all()
    assert_mean_var(y, 2.0, 0.25)
    # Box-Muller's tails: about 0.27% of a normal law lies beyond 3 sigma.
    assert 0.0015 < (abs(y - 2.0) > 1.5).mean() < 0.004


def test_like_ops_take_the_shape_and_the_dtype_of_their_input() -> None:
    x = np.zeros((5, 6), np.float64)
    (u,) = run_interp(one_node_model("RandomUniformLike", {"x": x}, opset=22, seed=0.0), {"x": x})
    assert u.shape == (5, 6) and u.dtype == np.float64
    model = one_node_model(
        "RandomNormalLike", {"x": x}, opset=22, seed=0.0, dtype=onnx.TensorProto.FLOAT16
    )
    (n,) = run_interp(model, {"x": x})
    assert n.shape == (5, 6) and n.dtype == np.float16


def test_bernoulli_hits_with_the_given_probabilities() -> None:
    p = np.repeat(np.array([0.0, 0.1, 0.5, 0.9, 1.0], np.float32), N // 5)
    model = one_node_model("Bernoulli", {"p": p}, opset=22, seed=3.0)
    (y,) = run_native(model, {"p": p})
    assert y.dtype == np.float32 and set(np.unique(y)) <= {0.0, 1.0}
    for i, probability in enumerate([0.0, 0.1, 0.5, 0.9, 1.0]):
        assert_frequency(y[i * (N // 5) : (i + 1) * (N // 5)], probability)
    np.testing.assert_array_equal(y, run_interp(model, {"p": p})[0])
    typed = one_node_model("Bernoulli", {"p": p}, opset=22, dtype=onnx.TensorProto.INT64)
    assert run_interp(typed, {"p": p})[0].dtype == np.int64


def test_multinomial_samples_classes_by_their_probabilities() -> None:
    probabilities = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    logits = np.log(np.maximum(probabilities, 1e-30)).astype(np.float32)
    model = one_node_model(
        "Multinomial", {"x": logits}, opset=22, sample_size=N // 2, seed=4.0,
        dtype=onnx.TensorProto.INT64,
    )  # fmt: skip
    (y,) = run_native(model, {"x": logits})
    assert y.shape == (2, N // 2) and y.dtype == np.int64
    for row, p in zip(y, probabilities, strict=True):
        for cls, q in enumerate(p):
            assert_frequency(row == cls, q)
    np.testing.assert_array_equal(y, run_interp(model, {"x": logits})[0])


def dropout(x: np.ndarray, ratio: float, **attributes: Any) -> onnx.ModelProto:
    constants = {"r": np.array(ratio, np.float32), "t": np.array(True)}
    return one_node_model("Dropout", {"x": x}, constants, opset=22, outputs=2, **attributes)


def test_training_dropout_keeps_a_scaled_fraction_and_says_where() -> None:
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    y, mask = run_native(dropout(x, 0.3, seed=5), {"x": x})
    assert mask.dtype == np.bool_
    assert_frequency(mask, 0.7)
    np.testing.assert_allclose(y[mask], x[mask] / np.float32(0.7), rtol=1e-6)
    assert (y[~mask] == 0).all()
    again = run_interp(dropout(x, 0.3, seed=5), {"x": x})
    np.testing.assert_array_equal(again[1], mask)
    unseeded = [run_interp(dropout(x, 0.3), {"x": x})[1] for _ in range(2)]
    assert (unseeded[0] != unseeded[1]).any()


def test_training_dropout_at_ratio_zero_is_the_identity() -> None:
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    for run in (run_interp, run_native):
        y, mask = run(dropout(x, 0.0), {"x": x})
        np.testing.assert_array_equal(y, x)
        assert mask.all()


def test_bad_attributes_are_refused_with_the_node_named() -> None:
    with pytest.raises(OnnxImportError, match="dtype INT32 is not a float type"):
        import_model(generator("RandomUniform", shape=[2], dtype=onnx.TensorProto.INT32))
    with pytest.raises(OnnxImportError, match="'shape' attribute is required"):
        import_model(generator("RandomNormal"))
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(OnnxImportError, match=r"must be \[batch_size, class_size\]"):
        import_model(one_node_model("Multinomial", {"x": x}, opset=22))


def random_loop_model(accumulate: bool) -> onnx.ModelProto:
    """A Loop whose trip count is an input and whose body draws a seeded
    RandomUniformLike each iteration: added to the carried value
    (`accumulate`), else stacked as a scan output."""
    from onnx import TensorProto, helper

    carry = helper.make_node("Add" if accumulate else "Identity",
                             ["x_in", "draw"] if accumulate else ["x_in"], ["x_out"])  # fmt: skip
    body = helper.make_graph(
        [
            helper.make_node("RandomUniformLike", ["x_in"], ["draw"], seed=5.0),
            carry,
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [8]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [8]),
            *(
                []
                if accumulate
                else [helper.make_tensor_value_info("draw", TensorProto.FLOAT, [8])]
            ),
        ],
    )
    outputs = ["x_final"] if accumulate else ["x_final", "draws"]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], outputs, body=body)],
        "random_loop",
        [
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [8]),
        ],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


@pytest.mark.parametrize("path", ["interp", "native"])
def test_each_iteration_of_a_loop_draws_its_own_values(path: str) -> None:
    """A body converted once (a graph.loop) would draw the same values in
    every iteration: such a loop is unrolled on its trip count instead."""
    from xtc.driver.onnx_backend import specializing_model

    x = np.zeros(8, np.float32)
    _, draws = specializing_model(random_loop_model(False), path).run([np.array(3, np.int64), x])
    assert draws.shape == (3, 8)
    assert len({row.tobytes() for row in draws}) == 3
    summing = specializing_model(random_loop_model(True), path)
    (once,) = summing.run([np.array(1, np.int64), x])
    (twice,) = summing.run([np.array(2, np.int64), x])
    assert not np.allclose(twice - once, once)
