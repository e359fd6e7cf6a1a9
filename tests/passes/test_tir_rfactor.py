"""tir-rfactor: each combiner (sum, product, max, min) gives the serial
result in the interpreter and natively, vectorized or not (the pairwise
steps too), under a split and under a parallel loop; the accumulator's
initial value and epilogue are kept; the refusals; the default schedule
rfactors row reductions (softmax, layer norm, global pooling) and the
compiled models match onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

import xtc
from xtc import interp
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_loops import ScheduleError
from xtc.runtime.llvm_jit import aligned_copy, aligned_empty, compile_module

COMBINERS = {
    "addf": (np.sum, 0.5),
    "mulf": (np.prod, 1.0),
    "maximumf": (np.max, -2.0),
    "minimumf": (np.min, 2.0),
}
"""Each combiner, with numpy's reduction and the accumulator's initial value."""


def rows(combiner: str, init: float, m: int, n: int, first: str = "s") -> str:
    """y[i] = 3 * (init combined with x[i, 0..n)), the accumulator the
    combiner's `first` operand (`s` or `v`)."""
    second = "v" if first == "s" else "s"
    return f"""
func.func @rows(%x: memref<{m}x{n}xf32>, %y: memref<{m}xf32> {{graph.output = 0 : i64}}) {{
  tir.for %i = 0 to {m} step 1 {{name = "i", kind = "serial"}} {{
    %acc = memref.alloca() : memref<f32>
    %init = arith.constant {init:e} : f32
    memref.store %init, %acc[] : memref<f32>
    tir.for %r = 0 to {n} step 1 {{name = "r", kind = "serial"}} {{
      %v = memref.load %x[%i, %r] : memref<{m}x{n}xf32>
      %s = memref.load %acc[] : memref<f32>
      %t = arith.{combiner} %{first}, %{second} : f32
      memref.store %t, %acc[] : memref<f32>
    }}
    %total = memref.load %acc[] : memref<f32>
    %three = arith.constant 3.0 : f32
    %out = arith.mulf %total, %three : f32
    memref.store %out, %y[%i] : memref<{m}xf32>
  }}
  func.return
}}
"""


def run_native(module: ModuleOp, x: np.ndarray) -> np.ndarray:
    jit = compile_module(apply_pipeline(module.clone(), "convert-tir-to-llvm"))
    out = aligned_empty((x.shape[0],), np.dtype(np.float32))
    jit.call("rows", [aligned_copy(x), out])
    return out


def inputs(combiner: str, m: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(len(combiner) + n)
    if combiner == "mulf":  # products of factors near 1 stay finite
        return (1.0 + 0.1 * (rng.random((m, n)) - 0.5)).astype(np.float32)
    return (rng.random((m, n)) - 0.5).astype(np.float32)


@pytest.mark.parametrize("combiner", sorted(COMBINERS))
@pytest.mark.parametrize("first", ["s", "v"])
@pytest.mark.parametrize(
    "pipeline",
    [
        "tir-rfactor{loop=r}",
        "tir-rfactor{loop=r},tir-vectorize{loop=r},tir-vectorize{loop=r_init}",
        "tir-split{loop=r factor=16},tir-rfactor{loop=r_i},tir-vectorize{loop=r_i},"
        "tir-vectorize{loop=r_i_init},tir-vectorize{loop=r_i_wb8},tir-vectorize{loop=r_i_wb4},"
        "tir-vectorize{loop=r_i_wb2},tir-parallel{loop=i}",
    ],
)
def test_each_combiner_gives_the_serial_result(combiner: str, first: str, pipeline: str) -> None:
    reduce, init = COMBINERS[combiner]
    text = rows(combiner, init, 6, 48, first)
    x = inputs(combiner, 6, 48)
    expected = 3 * reduce(np.concatenate([np.full((6, 1), init, np.float32), x], 1), axis=1)
    module = apply_pipeline(parse_module(text), pipeline)
    np.testing.assert_allclose(interp.run(module, [x])[0], expected, rtol=1e-5)
    np.testing.assert_allclose(run_native(module, x), expected, rtol=1e-5)


def test_max_and_min_stay_exact_and_a_nan_still_propagates() -> None:
    x = inputs("maximumf", 4, 32)
    x[2, 17] = np.nan
    vectorized = "tir-rfactor{loop=r},tir-vectorize{loop=r},tir-vectorize{loop=r_init}"
    module = apply_pipeline(parse_module(rows("maximumf", -2.0, 4, 32)), vectorized)
    got = run_native(module, x)
    assert np.isnan(got[2])
    assert np.array_equal(np.delete(got, 2), np.delete(3 * np.max(x, axis=1), 2))


def test_the_partials_sit_before_the_reduction_and_combine_after_it() -> None:
    module = apply_pipeline(
        parse_module(rows("addf", 0.5, 2, 32)), "tir-split{loop=r factor=8},tir-rfactor{loop=r_i}"
    )
    text = str(module)
    part = text.index("memref.alloca() {alignment = 64 : i64} : memref<8xf32>")
    assert part < text.index('name = "r_i_init"') < text.index('name = "r_o"')
    steps = [text.index(f'name = "r_i_wb{n}"') for n in ("4", "2", "1", "")]
    assert text.index('name = "r_o"') < steps[0] and steps == sorted(steps)
    assert "arith.constant -0.000000e+00 : f32" in text


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("tir-rfactor{loop=i}", "loop 'i' in @rows holds another loop"),
        ("tir-rfactor{loop=r},tir-rfactor{loop=r}", "stores into 0 rank-0 local accumulators"),
        ("tir-rfactor{loop=r9}", "no function has a loop named 'r9'"),
    ],
)
def test_refusals_name_the_pass_and_the_problem(pipeline: str, message: str) -> None:
    with pytest.raises(ScheduleError, match="tir-rfactor") as error:
        apply_pipeline(parse_module(rows("addf", 0.0, 2, 8)), pipeline)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("arith.addf %s, %v", "arith.subf %s, %v", "accumulates with arith.subf"),
        ('name = "r", kind = "serial"', 'name = "r", kind = "parallel"', "is parallel"),
    ],
)
def test_a_combiner_or_a_loop_it_cannot_split_is_refused(old: str, new: str, message: str) -> None:
    text = rows("addf", 0.0, 2, 8)
    assert old in text
    with pytest.raises(ScheduleError, match=message):
        apply_pipeline(parse_module(text.replace(old, new)), "tir-rfactor{loop=r}")


def one_node(op: str, shape: list[int], **attrs: object) -> tuple[object, list[np.ndarray]]:
    """A one-node model of `op` over one input of `shape` (LayerNormalization
    also gets a scale and a bias), and a random input."""
    rng = np.random.default_rng(7)
    inits, names = [], ["x"]
    if op == "LayerNormalization":
        for name in ("gamma", "beta"):
            inits.append(numpy_helper.from_array(rng.random(shape[-1:], dtype=np.float32), name))
            names.append(name)
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return model, [(4 * rng.random(shape, dtype=np.float32) - 2).astype(np.float32)]


@pytest.mark.parametrize(
    ("op", "shape", "attrs"),
    [
        ("Softmax", [2, 3, 40, 48], {"axis": -1}),
        ("Softmax", [1, 1000], {"axis": -1}),
        ("LayerNormalization", [24, 96], {"axis": -1}),
        ("GlobalAveragePool", [1, 24, 13, 13], {}),
        ("GlobalMaxPool", [1, 20, 7, 7], {}),
    ],
)
def test_the_default_schedule_rfactors_row_reductions_and_matches_onnxruntime(
    op: str, shape: list[int], attrs: dict[str, object]
) -> None:
    ort = pytest.importorskip("onnxruntime")
    model, feeds = one_node(op, shape, **attrs)
    compiled = xtc.compile(model)
    assert "tir-rfactor{" in compiled.manifest["pipeline"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": feeds[0]})[0]
    got = compiled.run({"x": feeds[0]})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
