"""What every tir schedule pass shares (xtc.passes.schedule_pass): the
functions it applies to, options checked when the pass is built, one way
to refuse naming pass, function and loop; and no pass imports another."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from xtc.dialects.tir import ForOp
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.driver.universe import XTC_PASSES
from xtc.passes.schedule_pass import PassOptionError, SchedulePass
from xtc.passes.tir_loops import ScheduleError, loops_by_name
from xtc.passes.tir_prefetch import TirPrefetch
from xtc.passes.tir_reorder import TirReorder
from xtc.passes.tir_tile import TirTile
from xtc.tools.xtc_opt import main as xtc_opt

ROOT = Path(__file__).resolve().parents[2]
SCHEDULE_PASSES = (
    "tir-split tir-reorder tir-tile tir-fuse tir-unroll tir-vectorize tir-parallel "
    "tir-cache-read tir-cache-write tir-compute-at tir-compute-inline tir-prefetch tir-bind "
    "tir-reuse-term"
).split()
SHARED_MODULES = {
    "tir_loops",
    "schedule_pass",
    "loop_rewrites",
    "independent_iterations",
    "gpu_memory",
}
"""The modules of passes/ that hold no pass, which schedule passes may import."""

TWO_FUNCTIONS = """\
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  func.return
}
func.func @g(%a: memref<100xf32>) {
  tir.for %i = 0 to 100 step 1 {name = "i", kind = "serial"} {
    %x = memref.load %a[%i] : memref<100xf32>
    memref.store %x, %a[%i] : memref<100xf32>
  }
  func.return
}
"""


def _kinds(spec: str) -> dict[str, str]:
    module = apply_pipeline(parse_module(TWO_FUNCTIONS), spec)
    return {
        f.sym_name.data: loops_by_name(f)["i"][0].kind.data
        for f in module.ops
        if isinstance(f, FuncOp)
    }


def test_every_schedule_pass_derives_the_base() -> None:
    for name in SCHEDULE_PASSES:
        pass_class: type[ModulePass] = XTC_PASSES[name]()
        assert issubclass(pass_class, SchedulePass), name
        assert "func" in pass_class.__dataclass_fields__, name


def test_no_schedule_pass_imports_another_pass() -> None:
    for path in sorted((ROOT / "passes").glob("tir_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xtc.passes."):
                imported = (node.module or "").removeprefix("xtc.passes.")
                assert imported in SHARED_MODULES, f"{path.name} imports the pass {imported}"


def test_without_func_every_function_with_the_loop_is_scheduled() -> None:
    assert _kinds("tir-parallel{loop=i}") == {"f": "parallel", "g": "parallel"}
    assert _kinds("tir-vectorize{func=f loop=i}") == {"f": "vectorized", "g": "serial"}
    assert _kinds("tir-unroll{func=f loop=i}") == {"f": "unrolled", "g": "serial"}


def test_a_refusal_names_pass_function_and_loop_and_points_at_the_loop() -> None:
    with pytest.raises(ScheduleError) as caught:
        apply_pipeline(parse_module(TWO_FUNCTIONS), "tir-unroll{loop=i}")
    assert str(caught.value) == "tir-unroll: loop 'i' in @g has 100 iterations; at most 64 unroll"
    assert isinstance(caught.value.op, ForOp)
    assert caught.value.op.loop_name.data == "i"


def test_a_buffer_refusal_names_the_argument_by_name_and_position() -> None:
    with pytest.raises(ScheduleError) as caught:
        apply_pipeline(parse_module(TWO_FUNCTIONS), "tir-cache-read{func=g loop=i buffer=a}")
    assert str(caught.value) == (
        "tir-cache-read: cannot cache %a (argument 0) in loop 'i' of @g: the loop body writes it"
    )


BAD_OPTIONS: list[tuple[Callable[[], ModulePass], str]] = [
    (lambda: TirTile(loops=("i",), factors=(2,)), "tile needs two or more loops, loops names 1"),
    (lambda: TirTile(loops=("i", "j"), factors=(2,)), "2 loops named but 1 factors given"),
    (lambda: TirTile(loops=("i", "j"), factors=(2, 0)), "factor 0 for loop 'j' is not"),
    (lambda: TirPrefetch(loop="i", buffer=0, distance=0), "distance=0 must be at least 1"),
    (lambda: TirPrefetch(loop="i", buffer=0, locality=4), "locality=4 is not one of 0, 1"),
    (lambda: TirReorder(order=()), "order names no loop"),
]


@pytest.mark.parametrize(("build", "message"), BAD_OPTIONS)
def test_a_bad_option_is_refused_when_the_pass_is_built(
    build: Callable[[], ModulePass], message: str
) -> None:
    with pytest.raises(PassOptionError) as caught:
        build()
    error = caught.value
    assert str(error).startswith("tir-") and message in str(error)
    assert isinstance(error, ValueError) and isinstance(error, ScheduleError)


def test_xtc_opt_reports_a_bad_option_before_reading_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "tir-tile{loops=i,j factors=2,0}"
    with pytest.raises(SystemExit) as exit_status:
        xtc_opt([str(tmp_path / "absent.mlir"), "-p", spec])
    assert exit_status.value.code == 1
    assert capsys.readouterr().err == (
        f"xtc-opt: error: invalid pass pipeline '{spec}': tir-tile: factor 0 for loop 'j' "
        "is not a positive integer\n"
    )
