"""tir-profile-calls: the model function's calls timed into @xtc_profile, its
results unchanged (interpreter), and the compiled model's profile
(`xtc.compile(..., profile=True)`, `CompiledModel.profile`) natively."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import memref
from xdsl.dialects.func import CallOp, FuncOp

import xtc
from xtc import interp
from xtc.dialects.tir import CycleCounterOp
from xtc.driver.compiler import compile_model, model_cache_key
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_profile_calls import PROFILE_GLOBAL, profiled_callees
from xtc.runtime.model import CompiledModel
from xtc.runtime.profile import MODEL_FUNCTION_ROW, NotProfiledError
from xtc.tools.model_builders import resnet_like

KERNELS = ("scale", "shift", "square")
KERNEL_BODIES = {
    "scale": "%w = arith.mulf %v, %v : f32",
    "shift": "%c = arith.constant 1.5 : f32\n    %w = arith.addf %v, %c : f32",
    "square": "%w = arith.mulf %v, %v : f32",
}


def _module_text(calls: list[str]) -> str:
    """@main calling `calls` in order, each kernel reading the last buffer
    written (the input first) and writing the output."""
    lines = ["func.func @main(%x: memref<8xf32>, %out0: memref<8xf32> {graph.output = 0 : i64}) {"]
    source = "%x"
    for name in calls:
        lines.append(f"  func.call @{name}({source}, %out0) : (memref<8xf32>, memref<8xf32>) -> ()")
        source = "%out0"
    lines += ["  func.return", "}"]
    for name, body in KERNEL_BODIES.items():
        lines += [
            f"func.func @{name}(%a: memref<8xf32>, %b: memref<8xf32>) {{",
            '  tir.for %i = 0 to 8 step 1 {name = "i", kind = "serial"} {',
            "    %v = memref.load %a[%i] : memref<8xf32>",
            f"    {body}",
            "    memref.store %w, %b[%i] : memref<8xf32>",
            "  }",
            "  func.return",
            "}",
        ]
    return "\n".join(lines) + "\n"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(KERNELS), min_size=1, max_size=6))
def test_every_call_is_bracketed_and_the_results_hold(calls: list[str]) -> None:
    module = parse_module(_module_text(calls))
    x = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
    expected = interp.run(module, [x])
    apply_pipeline(module, "tir-profile-calls", verify=True)
    main = next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "main")
    callees = list(dict.fromkeys(calls))
    assert profiled_callees(main) == callees
    (table,) = [op for op in module.ops if isinstance(op, memref.GlobalOp)]
    assert table.sym_name.data == PROFILE_GLOBAL
    assert table.type.get_shape() == (len(callees) + 1, 2)
    body = list(main.body.block.ops)
    for call in [op for op in body if isinstance(op, CallOp)]:
        at = body.index(call)
        assert isinstance(body[at - 1], CycleCounterOp) and isinstance(body[at + 1], CycleCounterOp)
    # one read around each call, one at the start and one before the return
    assert sum(isinstance(op, CycleCounterOp) for op in body) == 2 * len(calls) + 2
    for kernel in (op for op in module.ops if isinstance(op, FuncOp) and op is not main):
        assert not any(isinstance(op, CycleCounterOp) for op in kernel.walk())
    np.testing.assert_array_equal(interp.run(module, [x])[0], expected[0])


@pytest.fixture(scope="module")
def small_resnet() -> onnx.ModelProto:
    return resnet_like(widths=(4, 8), image=16)


@pytest.fixture(scope="module")
def plain(small_resnet: onnx.ModelProto) -> CompiledModel:
    """The model compiled without profiling."""
    model = xtc.compile(small_resnet, cache=False)
    assert isinstance(model, CompiledModel)
    return model


IMAGE = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)


def test_a_profiled_model_computes_the_same_and_times_every_kernel_call(
    small_resnet: onnx.ModelProto, plain: CompiledModel
) -> None:
    # one module (the tir dumped): the kernels compiled with the model function
    tir: list[str] = []
    profiled = compile_model(
        small_resnet,
        cache=False,
        profile=True,
        dump=lambda stage, text: tir.append(text),
        dump_stages=["tir"],
    )
    assert isinstance(profiled, CompiledModel)
    np.testing.assert_array_equal(profiled.run([IMAGE])[0], plain.run([IMAGE])[0])
    (text,) = tir
    main = text[text.index("func.func @main") :]
    main = main[: main.index("\n  }\n")]
    calls = re.findall(r"func\.call @(\w+)\(", main)
    assert main.count("tir.cycle_counter") == 2 * len(calls) + 2
    kernels = profiled.manifest["profile"]["kernels"]
    assert kernels == list(dict.fromkeys(calls))
    assert "tir-profile-calls" in profiled.manifest["pipeline"].split(",")

    runs = 7
    result = profiled.profile([IMAGE], runs=runs)
    by_kernel = {row.kernel: row for row in result.rows}
    assert set(by_kernel) == {*kernels, MODEL_FUNCTION_ROW}
    assert result.rows[-1].kernel == MODEL_FUNCTION_ROW
    for name in kernels:
        assert by_kernel[name].calls == calls.count(name)
        assert by_kernel[name].ms > 0.0
    kernel_rows = result.rows[:-1]
    assert [r.ms for r in kernel_rows] == sorted((r.ms for r in kernel_rows), reverse=True)
    assert sum(r.ms for r in result.rows) == pytest.approx(result.run_ms)
    assert sum(r.share for r in result.rows) == pytest.approx(1.0)
    assert result.runs == runs
    table = result.table()
    assert f"Profile of {runs} runs" in table and kernels[0] in table


def test_a_model_compiled_without_profile_says_how_to_profile_it(plain: CompiledModel) -> None:
    with pytest.raises(NotProfiledError, match="compile it with `xtc compile --profile`"):
        plain.profile([IMAGE])


def test_kernel_units_are_profiled_and_profiling_is_part_of_the_cache_key(
    small_resnet: onnx.ModelProto, plain: CompiledModel
) -> None:
    # cached: the kernels compiled apart, as units; a hit profiles as well
    profiled = xtc.compile(small_resnet, profile=True)
    again = xtc.compile(small_resnet, profile=True)
    assert isinstance(profiled, CompiledModel) and isinstance(again, CompiledModel)
    assert profiled.manifest["kernel_units"]["units"] > 0
    assert profiled.manifest.get("compile_cache") != "hit"
    assert again.manifest.get("compile_cache") == "hit"
    assert model_cache_key(small_resnet, None, "llvm", 3, None) != model_cache_key(
        small_resnet, None, "llvm", 3, None, profile=True
    )
    np.testing.assert_array_equal(again.run([IMAGE])[0], plain.run([IMAGE])[0])
    rows = {r.kernel: r for r in again.profile([IMAGE], runs=2).rows}
    assert set(rows) == {*profiled.manifest["profile"]["kernels"], MODEL_FUNCTION_ROW}
