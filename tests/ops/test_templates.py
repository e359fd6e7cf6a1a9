"""Schedule templates (ops/schedules.py): every nest's knobs, today's
heuristics as the default config (the bench models' untuned schedules are
exactly the recorded ones), and random configs that keep the numbers, on
the tir interpreter and natively."""

from __future__ import annotations

import json
from functools import cache
from math import prod
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException

from xtc import interp
from xtc.dialects.graph.constant import numpy_dtype
from xtc.interp.tir import output_arguments
from xtc.ops.schedules import (
    MAX_PARALLEL_LAUNCHES,
    ElementwiseTemplate,
    MicroKernelTemplate,
    NestTemplate,
    RowReductionTemplate,
    VectorBlocksTemplate,
    kernel_schedule,
)
from xtc.ops.space import ConfigError, Knob, Space
from xtc.tools.make_model import MODELS
from xtc.driver.native import run_native
from xtc.driver.pipelines import apply_pipeline
from xtc.driver.textual_ir import parse_module
from xtc.passes.tir_loops import enclosing_loops, loops_in
from xtc.tune.task import tir_model

GOLDEN = Path(__file__).parent / "data" / "default_pipelines.json"


@pytest.mark.parametrize("model", sorted(json.loads(GOLDEN.read_text())))
def test_untuned_schedules_are_the_recorded_ones(model: str) -> None:
    """The default config of every template gives, step for step, the
    schedule the heuristics gave before they became templates (recorded
    in tests/ops/data/default_pipelines.json from the bench models)."""
    from xtc.driver.scheduling import schedule_kernels

    module, entry = tir_model(MODELS[model]())
    # Steps only: verifying after each (the default) took 3.0 of ResNet-50's 3.6 s.
    steps = schedule_kernels(module, entry, verify_each=False)
    assert steps == json.loads(GOLDEN.read_text())[model]


def test_no_parallel_loop_of_resnet18_starts_more_than_the_launches_allowed() -> None:
    """Each parallel loop of ResNet-18's default schedules starts at most
    MAX_PARALLEL_LAUNCHES times a call (the extents around it multiplied):
    the Winograd stages, whose first loop of PARALLEL_ITERATIONS lies inside
    up to 144 iterations of the transform positions' loops, run their
    outer loops fused in parallel instead."""
    from xtc.driver.scheduling import schedule_kernels

    module, entry = tir_model(MODELS["resnet18"]())
    steps = schedule_kernels(module, entry, verify_each=False)
    assert any(step.startswith("tir-fuse{func=fused_winograd") for step in steps)
    launches = [
        (loop.loop_name.data, prod(around.extent for around in enclosing_loops(loop)[1:]))
        for loop in loops_in(module)
        if loop.kind.data == "parallel"
    ]
    assert launches and max(count for _, count in launches) <= MAX_PARALLEL_LAUNCHES, launches


def test_space_numbers_its_points_and_checks_configs() -> None:
    space = Space((Knob("rows", (4, 8, 12)), Knob("prefetch", (0, 32))))
    assert len(space) == 6
    assert [space.index(p) for p in space] == list(range(6))
    assert space.point(4) == {"rows": 12, "prefetch": 0}
    assert len(space.neighbours({"rows": 4, "prefetch": 0})) == 3
    with pytest.raises(ConfigError, match="'rows' = 5 is not one of"):
        space.check({"rows": 5, "prefetch": 0})
    with pytest.raises(ConfigError, match="unknown knob 'cols'"):
        space.check({"rows": 4, "prefetch": 0, "cols": 1})
    assert {"rows": 8, "prefetch": 32} in space
    assert {"rows": 8} not in space
    assert space.problem({"rows": 8}) == "knob 'prefetch' has no value"
    assert space.problem({"rows": 8, "prefetch": 32}) is None
    assert ["rows", "prefetch"] not in space


def graph_kernels(text: str, fused: bool = False) -> ModuleOp:
    """The kernels of a graph text at the tir level, each op its own, or
    (`fused`) fused as a compile fuses them (a conv's bias and relu)."""
    pipeline = "convert-graph-to-te,convert-te-to-tir"
    if fused:
        pipeline = "graph-fuse-ops,convert-graph-to-te,te-inline,convert-te-to-tir"
    return apply_pipeline(parse_module(text), pipeline)


def conv_text(
    c_in: int, c_out: int, size: int, layout: str, kernel: int = 3, groups: int = 1
) -> str:
    c_group = c_in // groups
    blocks = {
        "OIHW32o": (c_out // 32, c_group, kernel, kernel, 32),
        "OIHW8o": (c_out // 8, c_group, kernel, kernel, 8),
        "OIHW4o": (c_out // 4, c_group, kernel, kernel, 4),
        "OIHW": (c_out, c_group, kernel, kernel),
    }
    w = "x".join(map(str, blocks[layout]))
    x, y = f"1x{c_in}x{size}x{size}", f"1x{c_out}x{size}x{size}"
    pad = kernel // 2
    attributes = f'padding = array<i64: {pad}, {pad}, {pad}, {pad}>, kernel_layout = "{layout}"'
    if groups > 1:
        attributes += f", groups = {groups} : i64"
    types = f"(tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{y}xf32>"
    return f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>) -> tensor<{y}xf32> {{
  %c = graph.conv2d %x, %w {{{attributes}}} : {types}
  %r = graph.relu %c : (tensor<{y}xf32>) -> tensor<{y}xf32>
  func.return %r : tensor<{y}xf32>
}}
"""


def conv_bias_relu_text(c_in: int, c_out: int, size: int) -> str:
    """A 3x3 conv (OIHW32o weights), its bias and relu: one kernel fused."""
    x, y = f"1x{c_in}x{size}x{size}", f"1x{c_out}x{size}x{size}"
    w = f"{c_out // 32}x{c_in}x3x3x32"
    attributes = 'padding = array<i64: 1, 1, 1, 1>, kernel_layout = "OIHW32o"'
    types = f"(tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{y}xf32>"
    return f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>, %b: tensor<{c_out}xf32>)
    -> tensor<{y}xf32> {{
  %c = graph.conv2d %x, %w {{{attributes}}} : {types}
  %s = graph.bias_add %c, %b {{axis = 1 : i64}} : (tensor<{y}xf32>, tensor<{c_out}xf32>)
    -> tensor<{y}xf32>
  %r = graph.relu %s : (tensor<{y}xf32>) -> tensor<{y}xf32>
  func.return %r : tensor<{y}xf32>
}}
"""


def blocked_pointwise_text(c_in: int, c_out: int, size: int) -> str:
    """A 1x1 conv over a blocked activation (NCHW32c in and out, OIHW32o
    weights), as graph-block-activations leaves ResNet-50's."""
    x, y = f"1x{c_in // 32}x{size}x{size}x32", f"1x{c_out // 32}x{size}x{size}x32"
    w = f"{c_out // 32}x{c_in}x1x1x32"
    attributes = 'kernel_layout = "OIHW32o", data_layout = "NCHW32c", out_layout = "NCHW32c"'
    types = f"(tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{y}xf32>"
    return f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>) -> tensor<{y}xf32> {{
  %c = graph.conv2d %x, %w {{{attributes}}} : {types}
  func.return %c : tensor<{y}xf32>
}}
"""


def matmul_text(m: int, k: int, n: int) -> str:
    return f"""
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %c = graph.matmul %a, %b : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  func.return %c : tensor<{m}x{n}xf32>
}}
"""


def depthwise_text(channels: int, size: int) -> str:
    x = f"1x{channels}x{size}x{size}"
    types = f"(tensor<{x}xf32>, tensor<{channels}x1x3x3xf32>) -> tensor<{x}xf32>"
    return f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{channels}x1x3x3xf32>) -> tensor<{x}xf32> {{
  %c = graph.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>, groups = {channels} : i64}} : {types}
  func.return %c : tensor<{x}xf32>
}}
"""


def elementwise_text(rows: int, columns: int) -> str:
    t = f"tensor<{rows}x{columns}xf32>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %y = graph.sigmoid %x : ({t}) -> {t}
  func.return %y : {t}
}}
"""


def softmax_text(rows: int, columns: int) -> str:
    t = f"tensor<{rows}x{columns}xf32>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %y = graph.softmax %x {{axis = -1 : i64}} : ({t}) -> {t}
  func.return %y : {t}
}}
"""


NATIVE_KERNELS = {
    "conv-blocked": conv_text(16, 32, 14, "OIHW8o"),
    "conv-1x1": conv_text(32, 16, 12, "OIHW", kernel=1),
    "conv-grouped": conv_text(16, 32, 10, "OIHW8o", groups=2),
    "conv-1x1-few-channels": conv_text(16, 32, 28, "OIHW8o", kernel=1),
    "conv-1x1-grouped-4": conv_text(24, 24, 14, "OIHW4o", kernel=1, groups=3),
    "matmul": matmul_text(24, 32, 64),
    "matmul-long-reduction": matmul_text(12, 256, 32),
    "matrix-vector": matmul_text(1, 32, 64),
    "depthwise": depthwise_text(8, 14),
    "elementwise": elementwise_text(6, 64),
    "softmax": softmax_text(6, 96),
}
TINY_KERNELS = {
    "conv": conv_text(4, 16, 4, "OIHW8o"),
    "conv-grouped": conv_text(4, 16, 4, "OIHW8o", groups=2),
    "conv-1x1-grouped-4": conv_text(8, 8, 10, "OIHW4o", kernel=1, groups=2),
    "matmul": matmul_text(4, 8, 32),
    "matmul-long-reduction": matmul_text(2, 128, 16),
    "depthwise": depthwise_text(4, 6),
    "softmax": softmax_text(3, 40),
}


@cache
def kernel_alone(text: str, fused: bool = False) -> tuple[ModuleOp, FuncOp]:
    """The first kernel of a graph text at the tir level (its ops fused
    or not), alone in a module."""
    module = graph_kernels(text, fused)
    kernel = next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data != "main")
    alone = ModuleOp([kernel.clone()])
    function = alone.body.block.first_op
    assert isinstance(function, FuncOp)
    return alone, function


Kernel = tuple[ModuleOp, FuncOp, list[np.ndarray], list[np.ndarray]]


def the_kernel(text: str, native: bool = False, fused: bool = False) -> Kernel:
    """The first kernel of a graph text at the tir level (`kernel_alone`),
    alone in a module as @main, random inputs and its outputs unscheduled:
    interpreted, or run natively (a kernel too large to interpret in a
    test's time)."""
    alone, function = kernel_alone(text, fused)
    outputs = output_arguments(function)
    rng = np.random.default_rng(3)
    inputs = [
        rng.standard_normal(t.get_shape()).astype(numpy_dtype(t.get_element_type()))
        for i, t in enumerate(function.function_type.inputs.data)
        if i not in outputs and isinstance(t, MemRefType)
    ]
    if native:
        expected = run_native(applied_as_main(alone, []), inputs)
    else:
        expected = interp.run(alone, inputs, function.sym_name.data)
    return alone, function, inputs, expected


def scheduled(
    text: str, index: int, native: bool = False
) -> tuple[ModuleOp, list[np.ndarray], list[np.ndarray]] | None:
    """The kernel with the config numbered `index` (modulo the space)
    applied, renamed @main; None when a primitive refuses a step. The
    expected outputs are the unscheduled kernel's (`the_kernel`)."""
    module, function, inputs, expected = the_kernel(text, native)
    schedule = kernel_schedule(function)
    space = schedule.space()
    config = space.point(index % len(space))
    try:
        return applied_as_main(module, schedule.steps(config)), inputs, expected
    except DiagnosticException:
        return None


def applied_as_main(module: ModuleOp, steps: list[str]) -> ModuleOp:
    """A copy of the kernel's module with `steps` applied, the kernel
    renamed @main (run_native's entry)."""
    copy = module.clone()
    for step in steps:
        apply_pipeline(copy, step)
    main = copy.body.block.first_op
    assert isinstance(main, FuncOp)
    main.sym_name = type(main.sym_name)("main")
    main.sym_visibility = None
    return copy


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(kernel=st.sampled_from(sorted(NATIVE_KERNELS)), index=st.integers(0, 1 << 30))
def test_random_configs_keep_the_numbers_natively(kernel: str, index: int) -> None:
    found = scheduled(NATIVE_KERNELS[kernel], index, native=True)
    if found is None:
        return  # an invalid config: refused, never run
    module, inputs, expected = found
    for got, want in zip(run_native(module, inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_peeled_tail_tile_moves_its_window_column_out_too() -> None:
    """12-row tiles of two vectors over a 34-wide row (a tuner's choice):
    the main tile and the 10-row tail (34 registers with kw's shared
    broadcasts) each take kh innermost, under their own names, and the
    numbers stay the unscheduled kernel's (natively)."""
    module, function, inputs, expected = the_kernel(conv_text(8, 64, 34, "OIHW32o"), native=True)
    schedule = kernel_schedule(function)
    config = {**schedule.default(), "1.rows": 12}
    steps = schedule.steps(config)
    assert "tir-reorder{func=conv2d_0 order=r0,r2,r1}" in steps
    assert "tir-reorder{func=conv2d_0 order=r0_i3_1_tail,r2_i3_1_tail,r1_i3_1_tail}" in steps
    for got, want in zip(run_native(applied_as_main(module, steps), inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@settings(max_examples=8, deadline=None)
@given(kernel=st.sampled_from(sorted(TINY_KERNELS)), index=st.integers(0, 1 << 30))
def test_random_configs_keep_the_numbers_on_the_interpreter(kernel: str, index: int) -> None:
    found = scheduled(TINY_KERNELS[kernel], index)
    if found is None:
        return
    module, inputs, expected = found
    for got, want in zip(interp.run(module, inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel", sorted(NATIVE_KERNELS))
def test_most_configs_are_valid(kernel: str) -> None:
    """Refusals happen (and make a config invalid), but the knobs' values
    are chosen so that most points of a space are schedules."""
    module, function = kernel_alone(NATIVE_KERNELS[kernel])
    schedule = kernel_schedule(function)
    space = schedule.space()
    indices = np.random.default_rng(1).integers(0, len(space), 12)
    valid = 0
    for index in indices:
        try:
            applied_as_main(module, schedule.steps(space.point(int(index))))
        except DiagnosticException:
            continue
        valid += 1
    assert valid >= 9, (kernel, valid)


def test_each_kind_of_nest_gets_its_template() -> None:
    kinds = {
        name: [type(t) for t in kernel_schedule(kernel_alone(text)[1]).templates]
        for name, text in NATIVE_KERNELS.items()
    }
    # the padding nest copies rows: a vector loop
    assert kinds["conv-blocked"] == [ElementwiseTemplate, MicroKernelTemplate]
    assert kinds["matmul"] == [MicroKernelTemplate]
    assert kinds["matrix-vector"] == [VectorBlocksTemplate]
    assert kinds["elementwise"] == [ElementwiseTemplate]
    # the maximum and the sum along each row, then the normalization
    softmax = [RowReductionTemplate, RowReductionTemplate, ElementwiseTemplate]
    assert kinds["softmax"] == softmax

    def global_pool(width: int) -> list[type]:
        x = f"tensor<1x3x5x{width}xf32>"
        pool = f"func.func @main(%x: {x}) -> tensor<1x3x1x1xf32> {{\n" + (
            f"  %y = graph.global_avg_pool2d %x : ({x}) -> tensor<1x3x1x1xf32>\n"
            "  func.return %y : tensor<1x3x1x1xf32>\n}\n"
        )
        return [type(t) for t in kernel_schedule(kernel_alone(pool)[1]).templates]

    # 7-wide rows: one vector of 7 partial sums
    assert global_pool(7) == [RowReductionTemplate]
    # 3-wide rows are too short for a vector: the parallel loop only
    assert global_pool(3) == [NestTemplate]


@pytest.mark.parametrize(
    ("kernel", "tile"),
    [
        # 16 input channels: 28-wide rows as two vectors of 14, 8 rows (a block)
        ("conv-1x1-few-channels", ["i1_i", "i3_i_o", "i3_i_i"]),
        # a grouped 1x1 conv in blocks of 4: 4 rows, one vector of the 14-wide row
        ("conv-1x1-grouped-4", ["i1_i", "i3_i"]),
    ],
)
def test_pointwise_conv_vectors_run_along_the_output_row(kernel: str, tile: list[str]) -> None:
    """A 1x1 conv with a short reduction or narrow weight blocks gets its
    register tile turned over: vectors along the NCHW output row (read in
    place from the input), rows over the output channels of one weight
    block; the default config keeps the numbers natively."""
    module, function, inputs, expected = the_kernel(NATIVE_KERNELS[kernel], native=True)
    schedule = kernel_schedule(function)
    (template,) = schedule.templates
    assert isinstance(template, MicroKernelTemplate)
    steps = schedule.steps(schedule.default())
    func = function.sym_name.data
    rows = 8 if kernel == "conv-1x1-few-channels" else 4
    assert f"tir-split{{func={func} loop=i1 factor={rows}}}" in steps
    order = next(s for s in steps if s.startswith("tir-reorder"))
    assert order.endswith(f"order=i0,i2,i3_o,i1,{','.join(tile[1:])}}}")
    assert not any("_wb," in s for s in steps)  # the write-back stores rows: no transpose
    for got, want in zip(run_native(applied_as_main(module, steps), inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def winograd_text() -> str:
    """F(4x4, 3x3) over an 8x8 NCHW16c map, 32 channels in and out."""
    x, u = "tensor<1x2x8x8x16xf32>", "tensor<6x6x2x32x16xf32>"
    matrices = "tensor<6x6xf32>, tensor<4x6xf32>"
    return f"""
func.func @main(%x: {x}, %u: {u}, %bt: tensor<6x6xf32>, %at: tensor<4x6xf32>) -> {x} {{
  %y = graph.winograd_conv2d %x, %u, %bt, %at {{padding = array<i64: 1, 1, 1, 1>,
    data_layout = "NCHW16c"}} : ({x}, {u}, {matrices}) -> {x}
  func.return %y : {x}
}}
"""


def test_a_winograd_transform_tiles_the_positions_its_input_does_not_vary_along() -> None:
    """The input transform's two stages, rows[a, .., j, lane] = Σ_i Bᵀ[a, i]
    x[.., i, j, lane] and v[a, β, .., p, lane] = Σ_j Bᵀ[β, j] rows[a, .., p,
    j, lane], take the positions (a, then β) as the register tile's rows:
    the input is indexed by the lanes and by the tile column j (tile p),
    and a tile over those would load it once per row and vector each step.
    The products (rows over the tiles p), the output transform's rows (its
    positions v) and the output (its columns) keep the last spatial loop,
    which no operand reads along with the lanes, or (the output) no other
    loop avoids. The default config keeps the numbers natively."""
    module, function, inputs, expected = the_kernel(winograd_text(), native=True)
    schedule = kernel_schedule(function)
    rows = [
        template.block.loop_name.data
        for template in schedule.templates
        if isinstance(template, MicroKernelTemplate)
    ]
    assert rows == ["i0_1", "i1_2", "i4_3", "i4_4", "i3_5"]
    steps = schedule.steps(schedule.default())
    for got, want in zip(run_native(applied_as_main(module, steps), inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_default_configs_are_points_of_their_spaces() -> None:
    for text in NATIVE_KERNELS.values():
        schedule = kernel_schedule(kernel_alone(text)[1])
        schedule.space().check(schedule.default())
        assert len(schedule.space()) > 1


@pytest.mark.parametrize(
    ("text", "loops", "rows"),
    [
        # two column blocks of 32, 14 output rows, 14-wide rows in two blocks of 7
        # (the loops of the conv nest, after the padding's, suffixed _1)
        (conv_text(2, 64, 14, "OIHW32o"), ["i1_1_o", "i2_1", "i3_1_o"], 7),
        # matmul: the column blocks and the row blocks (24 rows, blocks of 6)
        (matmul_text(24, 32, 64), ["i1_o", "i0_o"], 6),
    ],
)
def test_each_tile_order_is_another_schedule_that_keeps_the_numbers(
    text: str, loops: list[str], rows: int
) -> None:
    """The micro-kernel's `tile_order` knob: every order of the loops
    outside the register tile, today's first and the default; each gives
    its own steps (the loops nested in that order) and the numbers stay
    the unscheduled kernel's natively."""
    from itertools import permutations

    module, function, inputs, expected = the_kernel(text, native=True)
    schedule = kernel_schedule(function)
    index = len(schedule.templates) - 1
    knob = f"{index}.tile_order"
    orders = schedule.space().knob(knob).values
    assert sorted(orders) == sorted(",".join(p) for p in permutations(loops))
    default = schedule.default()
    assert orders[0] == default[knob] == ",".join(loops)
    config = {**default, f"{index}.rows": rows}
    seen: set[tuple[str, ...]] = set()
    for order in orders:
        steps = schedule.steps({**config, knob: order})
        seen.add(tuple(steps))
        chain = next(s for s in steps if s.startswith("tir-reorder"))
        names = chain.split("order=")[1].rstrip("}").split(",")
        # the row blocks' loop is named before its split (today's steps) or after
        loops_in_order = str(order).split(",")
        places = [names.index(n) if n in names else names.index(n[:-2]) for n in loops_in_order]
        assert places == sorted(places), (order, chain)
        got = run_native(applied_as_main(module, steps), inputs)
        for got_array, want in zip(got, expected, strict=True):
            np.testing.assert_allclose(got_array, want, rtol=1e-4, atol=1e-4)
    assert len(seen) == len(orders)


def test_a_tile_order_moves_only_loops_of_several_iterations() -> None:
    """Orders that differ only in where a loop of one iteration goes (a
    14-wide row in one block of 14 rows) give the same steps: the tuner
    sees one schedule, not several."""
    _, function = kernel_alone(conv_text(8, 64, 14, "OIHW32o"))
    schedule = kernel_schedule(function)
    config = {**schedule.default(), "1.rows": 14}
    first = schedule.steps({**config, "1.tile_order": "i1_1_o,i2_1,i3_1_o"})
    assert schedule.steps({**config, "1.tile_order": "i3_1_o,i1_1_o,i2_1"}) == first
    assert schedule.steps({**config, "1.tile_order": "i2_1,i1_1_o,i3_1_o"}) != first


@pytest.mark.parametrize(
    ("c_in", "size", "default_block"),
    [
        (1024, 14, 4),  # ResNet-50's layer-3 1x1 reduce: 128 KB of weights a column block
        (2048, 7, 4),  # layer 4's: 256 KB, one tile a row
        (256, 14, 0),  # 32 KB: the whole loop stays in L1
    ],
)
def test_a_blocked_conv_with_large_weights_sweeps_its_channel_blocks_in_blocks_of_16_kb(
    c_in: int, size: int, default_block: int
) -> None:
    """A 1x1 conv over an NCHW32c activation reads its weights 4 KB a step
    of its channel-block loop (32 channels x 32 columns): when a column
    block's weights pass twice REDUCTION_BLOCK_BYTES and several tiles read
    them, the default sweeps 4 steps (16 KB) at a time with every tile
    (tir-hoist-reduction), the knob offers the short blocks of 4 KB or more,
    and the blocked schedule keeps the numbers natively."""
    text = blocked_pointwise_text(c_in, 64, size)
    module, function, inputs, expected = the_kernel(text, native=True)
    schedule = kernel_schedule(function)
    template = schedule.templates[-1]
    assert isinstance(template, MicroKernelTemplate)
    assert template.weight_step_bytes == 32 * 32 * 4
    knob = f"{len(schedule.templates) - 1}.reduction_block"
    steps_of_loop = c_in // 32
    short = tuple(b for b in (2, 4, 8, 16, 32) if b < steps_of_loop and steps_of_loop % b == 0)
    assert schedule.space().knob(knob).values == (0, *short)
    default = schedule.default()
    assert default[knob] == default_block
    steps = schedule.steps(default)
    assert any(s.startswith("tir-hoist-reduction") for s in steps) == (default_block > 0)
    got = run_native(applied_as_main(module, steps), inputs)
    for got_array, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(got_array, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("c_in", "distance"), [(1024, 32), (128, 0)])
def test_a_blocked_conv_prefetches_its_weights_a_page_ahead_along_a_channel_block(
    c_in: int, distance: int
) -> None:
    """A 1x1 conv over an NCHW32c activation reads its weights 128 bytes a
    step of the loop over a block's channels (32 columns of f32): past
    REDUCTION_BLOCK_BYTES of weights a column block, the default prefetches
    them WEIGHT_PREFETCH_BYTES ahead in that loop (32 steps), and the
    prefetching schedule keeps the numbers natively; 16 KB of weights (128
    channels), read from L1, get no prefetch, and the knob turns it off."""
    module, function, inputs, expected = the_kernel(
        blocked_pointwise_text(c_in, 64, 7), native=True
    )
    schedule = kernel_schedule(function)
    knob = f"{len(schedule.templates) - 1}.weight_prefetch"
    assert schedule.space().knob(knob).values == (0, 2048, 4096, 8192)
    default = schedule.default()
    assert default[knob] == (4096 if distance else 0)
    prefetches = [s for s in schedule.steps(default) if s.startswith("tir-prefetch")]
    if distance:
        name = function.sym_name.data
        assert prefetches == [f"tir-prefetch{{func={name} loop=r1 buffer=1 distance={distance}}}"]
    else:
        assert prefetches == []
    assert not [s for s in schedule.steps({**default, knob: 0}) if s.startswith("tir-prefetch")]
    got = run_native(applied_as_main(module, schedule.steps(default)), inputs)
    for got_array, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(got_array, want, rtol=1e-4, atol=1e-4)


def test_a_conv_writing_nchw_from_a_blocked_activation_finds_its_weights() -> None:
    """A conv of too few output channels for a block (SqueezeNet's 512 -> 64
    squeeze convs, with their bias and relu) reads an NCHW32c activation
    and writes NCHW: its output channels, the vector loop, index its
    blocked weights through a division. The template finds that load in the
    reduction (argument 1), not the bias's (argument 2, indexed by the
    vector loop itself), and prefetches the weights WEIGHT_PREFETCH_BYTES
    ahead along the channel block (32 steps of 128 bytes), keeping the
    numbers natively."""
    x, w = "1x16x13x13x32", "2x512x1x1x32"
    y = "1x64x13x13"
    attributes = 'kernel_layout = "OIHW32o", data_layout = "NCHW32c", out_layout = "NCHW"'
    text = f"""
func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>, %b: tensor<64xf32>) -> tensor<{y}xf32> {{
  %c = graph.conv2d %x, %w {{{attributes}}} : (tensor<{x}xf32>, tensor<{w}xf32>) -> tensor<{y}xf32>
  %s = graph.bias_add %c, %b {{axis = 1 : i64}} : (tensor<{y}xf32>, tensor<64xf32>)
    -> tensor<{y}xf32>
  %r = graph.relu %s : (tensor<{y}xf32>) -> tensor<{y}xf32>
  func.return %r : tensor<{y}xf32>
}}
"""
    module, function, inputs, expected = the_kernel(text, native=True, fused=True)
    schedule = kernel_schedule(function)
    weights = schedule.templates[-1].weights
    assert weights is not None and weights.memref == function.args[1]
    steps = schedule.steps(schedule.default())
    name = function.sym_name.data
    assert [s for s in steps if s.startswith("tir-prefetch")] == [
        f"tir-prefetch{{func={name} loop=r1 buffer=1 distance=32}}"
    ]
    got = run_native(applied_as_main(module, steps), inputs)
    for got_array, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(got_array, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("c_in", "c_out", "size", "first"),
    [
        (64, 256, 56, "i2"),  # 800 KB of activation x 8 blocks > 64 KB of weights x 56 rows
        (1024, 256, 14, "i1"),  # 800 KB x 8 blocks < 1 MB of weights x 14 rows
    ],
)
def test_a_blocked_conv_puts_its_rows_outside_its_weight_blocks_when_that_moves_fewer_bytes(
    c_in: int, c_out: int, size: int, first: str
) -> None:
    """A 1x1 conv over an NCHW32c activation loops over its weight blocks
    (i1, 32 output channels each) and its rows (i2): rows go first, run in
    parallel, when re-reading the activation per weight block moves more
    bytes than re-reading the weights per row (ResNet-50's 64->256 at 56x56
    expansions); otherwise the weight blocks stay first. Either keeps the
    numbers natively."""
    module, function, inputs, expected = the_kernel(
        blocked_pointwise_text(c_in, c_out, size), native=True
    )
    schedule = kernel_schedule(function)
    default = schedule.default()
    order = str(default[f"{len(schedule.templates) - 1}.tile_order"]).split(",")
    assert order[0] == first and set(order[:2]) == {"i1", "i2"}
    steps = schedule.steps(default)
    assert f"tir-parallel{{func={function.sym_name.data} loop={first}}}" in steps
    got = run_native(applied_as_main(module, steps), inputs)
    for got_array, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(got_array, want, rtol=1e-4, atol=1e-4)


def test_a_matmul_keeps_its_whole_reduction_by_default() -> None:
    """A matmul reads no blocked activation: however large its weights
    (768 x 32 columns, 96 KB a column block), the default keeps the whole
    reduction loop per tile (REDUCTION_BLOCKS' measurements), while the knob
    offers the blocks of K."""
    _, function = kernel_alone(matmul_text(128, 768, 64))
    schedule = kernel_schedule(function)
    knob = f"{len(schedule.templates) - 1}.reduction_block"
    assert schedule.default()[knob] == 0
    assert {64, 128, 256} <= set(schedule.space().knob(knob).values)


def test_a_pinned_copy_loop_is_left_out_of_the_tile_order() -> None:
    """A depthwise conv whose padded copy is computed per channel plane
    (`_copy_loop`): the channel loop stays outermost, so the tile order
    only orders the loops inside it."""
    text = depthwise_text(96, 56)  # a 1.3 MB padded copy
    _, function = kernel_alone(text)
    schedule = kernel_schedule(function)
    assert schedule.computed_at, "the padded copy is computed per plane"
    (at,) = schedule.computed_at.values()
    consumer = schedule.templates[-1]
    assert isinstance(consumer, MicroKernelTemplate) and consumer.pinned == at
    assert at not in consumer.tile_loops()


@pytest.mark.parametrize(
    ("text", "fused", "blocks"),
    [
        # 256 input channels, a bias and a relu in the write-back
        (conv_bias_relu_text(256, 32, 6), True, (0, 64, 128)),
        (matmul_text(24, 512, 64), False, (0, 64, 128, 256)),
    ],
)
def test_each_reduction_block_is_another_schedule_that_keeps_the_numbers(
    text: str, fused: bool, blocks: tuple[int, ...]
) -> None:
    """The micro-kernel's `reduction_block` knob: the outermost reduction
    loop (input channels, K) in blocks that every tile sweeps in turn
    (tir-hoist-reduction), 0 (the whole loop, today's) first and the
    default; each block its own steps, each keeping the numbers natively,
    the fused bias and relu applied to whole sums only."""
    module, function, inputs, expected = the_kernel(text, native=True, fused=fused)
    schedule = kernel_schedule(function)
    knob = f"{len(schedule.templates) - 1}.reduction_block"
    assert schedule.space().knob(knob).values == blocks
    default = schedule.default()
    assert default[knob] == 0
    seen: set[tuple[str, ...]] = set()
    for block in blocks:
        steps = schedule.steps({**default, knob: block})
        seen.add(tuple(steps))
        assert any(s.startswith("tir-hoist-reduction") for s in steps) == (block > 0)
        got = run_native(applied_as_main(module, steps), inputs)
        for got_array, want in zip(got, expected, strict=True):
            np.testing.assert_allclose(got_array, want, rtol=1e-4, atol=1e-4)
    assert len(seen) == len(blocks)
