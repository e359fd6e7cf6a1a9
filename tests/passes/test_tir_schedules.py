"""Any composition of the tir schedule primitives (tir-split, tir-reorder, tir-
fuse, tir-unroll, tir-vectorize, tir-cache-write) with random options either
computes the same numbers or is refused with a ScheduleError naming the
pass; options read bare or quoted. Each primitive has its own test file."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xtc import interp
from xtc.driver.pipelines import apply_pipeline, parse_pipeline
from xtc.passes.tir_loops import ScheduleError
from xtc.passes.tir_reorder import TirReorder
from xtc.passes.tir_split import TirSplit
from xtc.testing.graph_op import random_inputs
from xtc.testing.schedules import (
    conv2d,
    lower,
)

LOOP_NAMES = ["i0", "i1", "i2", "i3", "i1_1", "i2_1", "i3_1", "r0", "r1", "r2", "i9", "i1_o"]


def random_pass(data: st.DataObject, func: str) -> str:
    name = st.sampled_from(LOOP_NAMES)
    builders: dict[str, Callable[[], str]] = {
        "tir-split": lambda: f"loop={data.draw(name)} factor={data.draw(st.integers(0, 9))}",
        "tir-reorder": lambda: (
            "order=" + ",".join(data.draw(st.lists(name, min_size=1, max_size=4)))
        ),
        "tir-fuse": lambda: f"outer={data.draw(name)} inner={data.draw(name)}",
        "tir-unroll": lambda: f"loop={data.draw(name)}",
        "tir-vectorize": lambda: f"loop={data.draw(name)}",
        "tir-cache-write": lambda: f"loop={data.draw(name)}",
    }
    pass_name = data.draw(st.sampled_from(sorted(builders)))
    target = data.draw(st.sampled_from([func, "", "nowhere"]))
    options = builders[pass_name]()
    return f"{pass_name}{{func={target} {options}}}" if target else f"{pass_name}{{{options}}}"


CONV = lower(conv2d(2, 5, 2, 3, 2, 1))
CONV_INPUTS = random_inputs(CONV.graph, seed=2)
CONV_OUTPUTS = interp.run(CONV.tir, CONV_INPUTS)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_any_schedule_computes_the_same_or_is_refused(data: st.DataObject) -> None:
    module = CONV.tir.clone()
    for _ in range(data.draw(st.integers(1, 3))):
        spec = random_pass(data, CONV.name)
        try:
            apply_pipeline(module, spec)
        except ScheduleError as e:
            assert str(e).startswith(spec.split("{")[0] + ": "), str(e)
            return
        for e, g in zip(CONV_OUTPUTS, interp.run(module, CONV_INPUTS), strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Option spelling.


def test_options_read_bare_or_quoted_and_print_back() -> None:
    bare = parse_pipeline("tir-reorder{func=matmul_0 order=i0_o,i1_o,i0_i}").passes[0]
    quoted = parse_pipeline('tir-reorder{func="matmul_0" order="i0_o","i1_o","i0_i"}').passes[0]
    assert bare == quoted == TirReorder(func="matmul_0", order=("i0_o", "i1_o", "i0_i"))
    single = parse_pipeline("tir-reorder{order=i0}").passes[0]
    assert single == TirReorder(order=("i0",))
    split = TirSplit(func="matmul_0", loop="i.0", factor=4)
    assert parse_pipeline(str(split)).passes[0] == split
    with pytest.raises(ValueError, match="requires argument"):
        parse_pipeline("tir-split{loop=i0}")
