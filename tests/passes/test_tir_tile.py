"""tir-tile: a tiled matmul computes the same numbers as the untiled one, in
the tir interpreter (bit for bit) and natively, over random shapes and
factors (dividing and not); the result is exactly tir-split on each loop,
innermost first, then tir-reorder; three loops tile as well; the option
spelling; refusals are ScheduleErrors naming tir-tile, also where tir-split
or tir-reorder refuse."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from xtc import interp
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline, parse_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_loops import ScheduleError, loops_by_name
from xtc.passes.tir_tile import TirTile, tiled_order
from xtc.testing.graph_op import matmul_text as matmul
from xtc.testing.graph_op import random_inputs

KERNEL = "matmul_0"
TO_TIR = "convert-graph-to-te,convert-te-to-tir"
TILE_SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def add3(shape: tuple[int, int, int]) -> str:
    """`@main` adding two f32 tensors of rank 3."""
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    return (
        f"func.func @main(%x: {t}, %y: {t}) -> {t} {{\n"
        f"  %z = graph.add %x, %y : ({t}, {t}) -> {t}\n"
        f"  func.return %z : {t}\n}}\n"
    )


def lower(text: str) -> tuple[ModuleOp, ModuleOp]:
    """The graph module and its tir lowering."""
    graph = parse_module(text)
    return graph, apply_pipeline(graph.clone(), TO_TIR)


def kernel_of(module: ModuleOp, name: str = KERNEL) -> FuncOp:
    return next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == name)


def tile(func: str, loops: tuple[str, ...], factors: tuple[int, ...]) -> str:
    return f"tir-tile{{func={func} loops={','.join(loops)} factors={','.join(map(str, factors))}}}"


def by_hand(func: str, loops: tuple[str, ...], factors: tuple[int, ...]) -> str:
    """tir-split on each loop, innermost first, then tir-reorder."""
    splits = [
        f"tir-split{{func={func} loop={name} factor={factor}}}"
        for name, factor in reversed(list(zip(loops, factors, strict=True)))
    ]
    return ",".join([*splits, f"tir-reorder{{func={func} order={','.join(tiled_order(loops))}}}"])


def check_same_numbers(graph: ModuleOp, tir: ModuleOp, scheduled: ModuleOp) -> None:
    """The scheduled module computes what `tir` does: bit for bit in the
    interpreter (tiling keeps each reduction's order), and natively."""
    inputs = random_inputs(graph, seed=5)
    expected = interp.run(tir, inputs)
    for e, g in zip(expected, interp.run(scheduled, inputs), strict=True):
        np.testing.assert_array_equal(g, e)
    for e, g in zip(expected, run_native(scheduled, inputs), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def divisors(extent: int) -> list[int]:
    return [d for d in range(1, extent + 1) if extent % d == 0]


@st.composite
def tiled_matmuls(draw: st.DrawFn, dividing_columns: bool = False) -> tuple[int, ...]:
    """(m, k, n, row factor, column factor), each factor within its extent;
    the column factor one that divides n when `dividing_columns`."""
    m, k, n = (draw(st.integers(1, 9)) for _ in range(3))
    cols = st.sampled_from(divisors(n)) if dividing_columns else st.integers(1, n)
    return m, k, n, draw(st.integers(1, m)), draw(cols)


# ---------------------------------------------------------------------------
# Numbers.


@TILE_SETTINGS
@given(tiled_matmuls(dividing_columns=True))
def test_tile_keeps_the_numbers(case: tuple[int, ...]) -> None:
    m, k, n, rows, cols = case
    graph, tir = lower(matmul(m, k, n))
    scheduled = apply_pipeline(tir.clone(), tile(KERNEL, ("i0", "i1"), (rows, cols)))
    names = loops_by_name(kernel_of(scheduled))
    assert {"i0_o", "i1_o", "i0_i", "i1_i"} <= set(names)
    assert ("i0_tail" in names) == (m % rows != 0)
    check_same_numbers(graph, tir, scheduled)


def test_tile_with_a_remainder_on_the_rows() -> None:
    """8 rows by 3 leave a tail of 2 rows, itself split by the column factor."""
    graph, tir = lower(matmul(8, 5, 6))
    scheduled = apply_pipeline(tir.clone(), tile(KERNEL, ("i0", "i1"), (3, 2)))
    names = loops_by_name(kernel_of(scheduled))
    assert names["i0_tail"][0].extent == 2
    assert names["i1_o_i0_tail"][0].extent == 3
    check_same_numbers(graph, tir, scheduled)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(*(st.integers(1, 5) for _ in range(3))), st.data())
def test_three_loops_tile(shape: tuple[int, int, int], data: st.DataObject) -> None:
    graph, tir = lower(add3(shape))
    kernel = next(f for f in tir.ops if isinstance(f, FuncOp) and f.sym_name.data != "main")
    name = kernel.sym_name.data
    first = data.draw(st.integers(1, shape[0]))
    others = [data.draw(st.sampled_from(divisors(extent))) for extent in shape[1:]]
    loops, factors = ("i0", "i1", "i2"), (first, *others)
    scheduled = apply_pipeline(tir.clone(), tile(name, loops, factors))
    assert str(scheduled) == str(apply_pipeline(tir.clone(), by_hand(name, loops, factors)))
    check_same_numbers(graph, tir, scheduled)


# ---------------------------------------------------------------------------
# The same IR as the primitives it is made of.


@TILE_SETTINGS
@given(tiled_matmuls())
def test_tile_is_split_split_reorder(case: tuple[int, ...]) -> None:
    m, k, n, rows, cols = case
    _, tir = lower(matmul(m, k, n))
    loops, factors = ("i0", "i1"), (rows, cols)
    hand = by_hand(KERNEL, loops, factors)
    if n % cols:
        # tir-split peels the column tail inside the tile: tir-reorder refuses
        # by hand, tir-tile before splitting anything.
        with pytest.raises(ScheduleError, match="not perfectly nested"):
            apply_pipeline(tir.clone(), hand)
        with pytest.raises(ScheduleError, match="^tir-tile: factor .* does not divide"):
            apply_pipeline(tir.clone(), tile(KERNEL, loops, factors))
        return
    tiled = apply_pipeline(tir.clone(), tile(KERNEL, loops, factors))
    assert str(tiled) == str(apply_pipeline(tir.clone(), hand))


# ---------------------------------------------------------------------------
# Options and refusals.


def test_option_spelling() -> None:
    (tile_pass,) = parse_pipeline("tir-tile{func=matmul_0 loops=i0,i1 factors=8,16}").passes
    assert tile_pass == TirTile(func="matmul_0", loops=("i0", "i1"), factors=(8, 16))
    assert str(tile_pass) == 'tir-tile{func="matmul_0" loops="i0","i1" factors=8,16}'
    assert parse_pipeline(str(tile_pass)).passes == (tile_pass,)


REFUSALS = [
    ("loops=i0,i1 factors=2", "2 loops named but 1 factors given; give one factor per loop"),
    ("loops=i0 factors=2", "tile needs two or more loops, loops names 1"),
    ("loops=i0,i1 factors=0,2", "factor 0 for loop 'i0' is not a positive integer"),
    ("loops=i0,i1 factors=2,-1", "factor -1 for loop 'i1' is not a positive integer"),
    ("loops=i0,i9 factors=2,2", "no loop named 'i9' in @matmul_0"),
    (
        "loops=i1,i0 factors=2,2",
        "loops 'i1', 'i0' in @matmul_0 are not named outermost first: they nest as 'i0', 'i1'",
    ),
    ("loops=i0,r0 factors=2,2", "loop 'i1' in @matmul_0 lies between 'i0'"),
    ("loops=i1,r0 factors=2,2", "holds the accumulator of reduction loop 'r0'"),
    ("loops=i0,i1 factors=4,4", "factor 4 does not divide 6, the extent of loop 'i1'"),
    ("loops=i0,i1 factors=9,2", r"factor 9 is not in \[1, 8\], the extent of loop 'i0'"),
    ("loops=i0,i1 factors=2,7", r"factor 7 is not in \[1, 6\], the extent of loop 'i1'"),
    ("loops=i0,i0 factors=2,2", "loop 'i0' is named twice"),
]


@pytest.mark.parametrize(("options", "message"), REFUSALS)
def test_refusals_name_tir_tile(options: str, message: str) -> None:
    _, tir = lower(matmul(8, 4, 6))
    before = str(tir)
    with pytest.raises(ScheduleError, match=f"^tir-tile: .*{message}"):
        apply_pipeline(tir, f"tir-tile{{func={KERNEL} {options}}}")
    assert str(tir) == before


TAKEN = """
func.func @taken(%x: memref<4x4xf32>) {
  tir.for %i = 0 to 4 step 1 {name = "i", kind = "serial"} {
    tir.for %j = 0 to 4 step 1 {name = "j", kind = "serial"} {
      %v = memref.load %x[%i, %j] : memref<4x4xf32>
      memref.store %v, %x[%j, %i] : memref<4x4xf32>
    }
  }
  tir.for %k = 0 to 4 step 1 {name = "i_o", kind = "serial"} {
  }
  func.return
}
"""


def test_refusals_of_split_name_tir_tile() -> None:
    """A parallel loop and a new name already taken (tir-split's checks)
    come out under tir-tile's name, the module left as it was."""
    _, tir = lower(matmul(4, 4, 4))
    parallel = apply_pipeline(tir.clone(), f"tir-parallel{{func={KERNEL} loop=i0}}")
    before = str(parallel)
    with pytest.raises(ScheduleError, match="^tir-tile: loop 'i0' in @matmul_0 is parallel"):
        apply_pipeline(parallel, tile(KERNEL, ("i0", "i1"), (2, 2)))
    assert str(parallel) == before
    taken = parse_module(TAKEN)
    before = str(taken)
    with pytest.raises(ScheduleError, match="^tir-tile: the new loop name 'i_o' is already used"):
        apply_pipeline(taken, tile("taken", ("i", "j"), (2, 2)))
    assert str(taken) == before


def test_no_function_refused() -> None:
    _, tir = lower(matmul(2, 2, 2))
    with pytest.raises(ScheduleError, match="^tir-tile: no function @nowhere in the module"):
        apply_pipeline(tir, tile("nowhere", ("i0", "i1"), (1, 1)))
    with pytest.raises(ScheduleError, match="^tir-tile: no function has a loop named 'i9'"):
        apply_pipeline(tir, "tir-tile{loops=i9,i0 factors=1,1}")
