"""graph.if and graph.loop at every level: the graph interpreter, the te and
tir interpreters after each lowering (memory planned), and native code at
-O3 agree, on run-time conditions and trip counts."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from xtc import interp
from xtc.driver.compiler import compile_graph
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module

MODEL = """
func.func @main(%m: tensor<i64>, %c: tensor<1xi1>, %x: tensor<5xf32>, %y: tensor<5xf32>)
    -> (tensor<5xf32>, tensor<5xf32>) {
  %two = graph.constant dense<2.0> : tensor<f32>
  %r:2 = graph.loop %m, %c, (%x, %y) : tensor<i64>, tensor<1xi1>, (tensor<5xf32>, tensor<5xf32>)
      -> (tensor<5xf32>, tensor<5xf32>) {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %a: tensor<5xf32>, %b: tensor<5xf32>):
    %s = graph.add %a, %b : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    %t = graph.reduce_sum %s {axes = array<i64: 0>, keepdims = false}
        : (tensor<5xf32>) -> tensor<f32>
    %small = graph.less %t, %two : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %n = graph.if %small : tensor<i1> -> (tensor<5xf32>) {
      %e = graph.exp %s : (tensor<5xf32>) -> tensor<5xf32>
      %h = graph.mul %e, %two : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
      graph.yield %h : tensor<5xf32>
    } else {
      %q = graph.neg %s : (tensor<5xf32>) -> tensor<5xf32>
      graph.yield %q : tensor<5xf32>
    }
    %more = graph.greater %t, %two : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %keep = graph.not %more : (tensor<i1>) -> tensor<i1>
    %k = graph.or %keep, %go : (tensor<i1>, tensor<i1>) -> tensor<i1>
    graph.yield %k, %b, %n : tensor<i1>, tensor<5xf32>, tensor<5xf32>
  }
  func.return %r#0, %r#1 : tensor<5xf32>, tensor<5xf32>
}
"""
"""(a, b) = (b, small ? 2 exp(a + b) : -(a + b)) while the sum stays at
most 2 or the flag holds, for at most m iterations: a loop whose condition
is computed in its body, a nested if, and carried values swapped."""

LEVELS = {
    "te": "graph-fuse-ops,convert-graph-to-te,te-inline",
    "tir": "graph-fuse-ops,convert-graph-to-te,te-inline,convert-te-to-tir,tir-plan-memory",
}
LOWERED = {level: apply_pipeline(parse_module(MODEL), spec) for level, spec in LEVELS.items()}
NATIVE = compile_graph(parse_module(MODEL), opt_level=3)


@settings(max_examples=8, deadline=None)
@given(trips=st.integers(-1, 6), going=st.booleans(), seed=st.integers(0, 1000))
def test_every_level_agrees(trips: int, going: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = (rng.uniform(-1, 1, 5).astype(np.float32) for _ in range(2))
    inputs = [np.array(trips, np.int64), np.array([going]), x, y]
    expected = interp.run(parse_module(MODEL), inputs)
    runs = [interp.run(module, inputs) for module in LOWERED.values()]
    for got in [*runs, NATIVE.run(inputs)]:
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_the_lowered_model_keeps_its_control_flow() -> None:
    text = str(LOWERED["tir"])
    assert "scf.while" in text and "scf.if" in text and "tir.arena_bytes" in text
