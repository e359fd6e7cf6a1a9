"""graph.conv2d_u8s8 natively, at its default schedule (the micro-kernel
whose 8-bit dot products tir-lower-vectorized turns into VNNI `vpdpbusd`
where the CPU has it), against the graph interpreter's i32 reference: with
VNNI as this CPU has it, and with the fallback forced (XTC_VNNI=0), which
must then say so in a remark. The u8 x i8 extremes are part of every input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xtc import interp, remarks
from xtc.analysis.host_cpu import VNNI_VARIABLE
from xtc.driver.compiler import compile_graph
from xtc.driver.textual_ir import parse_module


def conv_text(n: int, h: int, w: int, c4: int, blocks: int, k: int, stride: int) -> str:
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    x = f"tensor<{n}x{h}x{w}x{4 * c4}xui8>"
    weight = f"tensor<{blocks}x{c4}x{k}x{k}x16x4xi8>"
    y = f"tensor<{n}x{oh}x{ow}x{16 * blocks}xi32>"
    return f"""
func.func @main(%x: {x}, %w: {weight}) -> {y} {{
  %y = graph.conv2d_u8s8 %x, %w {{strides = array<i64: {stride}, {stride}>}}
    : ({x}, {weight}) -> {y}
  func.return %y : {y}
}}
"""


def random_operands(text: str, seed: int) -> list[np.ndarray]:
    """u8 data and i8 weights over their whole ranges, the extremes included
    (255 x -128 is the product a 16-bit intermediate would overflow)."""
    rng = np.random.default_rng(seed)
    main = interp.entry_function(parse_module(text))
    shapes = [tuple(arg.type.get_shape()) for arg in main.args]
    x = rng.integers(0, 256, shapes[0]).astype(np.uint8)
    w = rng.integers(-128, 128, shapes[1]).astype(np.int8)
    x.reshape(-1)[:2], w.reshape(-1)[:2] = (255, 0), (-128, 127)
    return [x, w]


def native_and_reference(text: str, seed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    inputs = random_operands(text, seed)
    (want,) = interp.run(parse_module(text), inputs)
    reported: list[remarks.Remark] = []
    model = compile_graph(parse_module(text), opt_level=3, on_remark=reported.append)
    (got,) = model.run(inputs)
    return got, want, [r.category for r in reported]


SHAPES = st.tuples(
    st.integers(1, 2),  # batch
    st.integers(3, 9),  # height
    st.integers(3, 17),  # width
    st.integers(1, 3),  # input channels / 4
    st.integers(1, 2),  # output channels / 16
    st.sampled_from([1, 3]),  # kernel
    st.integers(1, 2),  # stride
)


@settings(max_examples=6, deadline=None)
@given(SHAPES, st.integers(0, 2**16))
def test_native_matches_the_i32_reference(shape: tuple[int, ...], seed: int) -> None:
    got, want, _ = native_and_reference(conv_text(*shape), seed)
    np.testing.assert_array_equal(got, want)


def test_forced_fallback_widens_matches_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VNNI_VARIABLE, "0")
    got, want, categories = native_and_reference(conv_text(1, 6, 14, 2, 2, 3, 1), 7)
    np.testing.assert_array_equal(got, want)
    assert remarks.DOT_PRODUCT_WIDENED in categories


def test_invalid_vnni_option_is_one_line_error() -> None:
    from xdsl.utils.exceptions import DiagnosticException

    from xtc.driver.pipelines import apply_pipeline

    with pytest.raises(DiagnosticException, match='vnni is "maybe", expected'):
        apply_pipeline(
            parse_module(conv_text(1, 3, 3, 1, 1, 1, 1)), "tir-lower-vectorized{vnni=maybe}"
        )
