"""The random compute rules (ops/random.py): graph.random_uniform lowered by
convert-graph-to-te gives, in the te interpreter, the graph interpreter's
values bit for bit (the hash is integer arithmetic) for every float type,
with and without entropy; graph.fresh_seed gives a new value each run."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, ModuleOp, f16, f32, f64
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph.base import int_attr, ints_attr
from xtc.dialects.graph.random import SEED_TYPE, FreshSeedOp, RandomUniformOp, mix64
from xtc.driver.textual_ir import make_context
from xtc.interp.graph.random import mix64_array
from xtc.lowering.convert_graph_to_te import ConvertGraphToTe
from xtc.testing.graph_op import single_op_module


def lower(graph: ModuleOp) -> ModuleOp:
    lowered = graph.clone()
    ConvertGraphToTe().apply(make_context(), lowered)
    lowered.verify()
    return lowered


def uniform_props(dtype: Attribute, shape: list[int]) -> dict[str, Attribute]:
    return {"shape": ints_attr(shape), "dtype": dtype, "seed": int_attr(-3), "stream": int_attr(2)}


@pytest.mark.parametrize("dtype", [f16, BFloat16Type(), f32, f64], ids=str)
def test_random_uniform_lowers_to_the_same_bits(dtype: Attribute) -> None:
    graph = single_op_module(RandomUniformOp, [], uniform_props(dtype, [3, 1, 17]))
    (expected,) = interp.run(graph, [])
    (actual,) = interp.run(lower(graph), [])
    assert actual.dtype == expected.dtype and actual.shape == (3, 1, 17)
    assert actual.tobytes() == expected.tobytes()
    assert expected.min() >= 0 and expected.max() < 1
    assert len(np.unique(expected)) > 40  # not a constant nor a short cycle


def test_entropy_changes_every_value_the_same_way_on_both_levels() -> None:
    graph = single_op_module(RandomUniformOp, [SEED_TYPE], uniform_props(f32, [64]))
    draws = {}
    for entropy in (0, 1, -(2**63)):
        seed = np.array(entropy, np.int64)
        (expected,) = interp.run(graph, [seed])
        (actual,) = interp.run(lower(graph), [seed])
        assert actual.tobytes() == expected.tobytes()
        draws[entropy] = expected
    assert (draws[0] != draws[1]).mean() > 0.9
    assert (draws[1] != draws[-(2**63)]).mean() > 0.9


def test_fresh_seed_differs_on_each_run() -> None:
    graph = single_op_module(FreshSeedOp, [])
    for module in (graph, lower(graph)):
        runs = [interp.run(module, [])[0] for _ in range(3)]
        assert all(r.dtype == np.int64 and r.shape == () for r in runs)
        assert len({int(r) for r in runs}) == 3


def test_the_array_hash_is_the_scalar_one() -> None:
    values = [0, 1, 2**63, 2**64 - 1, 0x0123456789ABCDEF]
    with np.errstate(over="ignore"):
        mixed = mix64_array(np.array(values, np.uint64))
    assert [int(m) for m in mixed] == [mix64(v) for v in values]
