"""com.example.ChannelShuffle through xtc, found by the `xtc.ops` entry
point of this installed package (no register_ops call): ONNX import, the
interpreter, native code from xtc.compile and from `xtc compile`, and
xtc-opt's parser and verifier, each against the numpy reference."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

pytest.importorskip(
    "xtc_channel_shuffle", reason="the example is not installed: pip install -e examples/custom_op"
)
from xtc_channel_shuffle import channel_shuffle  # noqa: E402

import xtc  # noqa: E402
from xtc import interp  # noqa: E402
from xtc.frontend.onnx import OnnxImportError, import_model  # noqa: E402
from xtc.plugins import load_op_plugins  # noqa: E402
from xtc.driver.textual_ir import module_to_text  # noqa: E402

RNG = np.random.default_rng(7)


def shuffle_model(shape: list[int], group: int, dtype: int = TensorProto.FLOAT) -> onnx.ModelProto:
    """x -> com.example.ChannelShuffle(group) -> Relu -> y."""
    shuffle = helper.make_node(
        "ChannelShuffle", ["x"], ["s"], domain="com.example", group=group, name="shuffle"
    )
    relu = helper.make_node("Relu", ["s"], ["y"], name="relu")
    graph = helper.make_graph(
        [shuffle, relu],
        "shufflenet_block",
        [helper.make_tensor_value_info("x", dtype, shape)],
        [helper.make_tensor_value_info("y", dtype, shape)],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def expected(x: np.ndarray, group: int) -> np.ndarray:
    return np.maximum(channel_shuffle(x, group=group), 0)


CASES = [([1, 6, 3, 3], 2), ([2, 12, 4, 5], 3), ([3, 8], 4), ([1, 4, 2, 2, 2], 4)]


def test_the_entry_point_registers_the_plugin() -> None:
    assert "channel_shuffle" in [p.name for p in load_op_plugins()]


def test_the_reference_shuffles_channels_across_groups() -> None:
    x = np.arange(6).reshape(1, 6)
    assert channel_shuffle(x, group=2).tolist() == [[0, 3, 1, 4, 2, 5]]
    assert channel_shuffle(x, group=3).tolist() == [[0, 2, 4, 1, 3, 5]]


def test_import_gives_the_plugin_op() -> None:
    text = module_to_text(import_model(shuffle_model([1, 6, 3, 3], 2)))
    assert "example.channel_shuffle %x {group = 2 : i64}" in text
    assert "graph.relu %s" in text


@pytest.mark.parametrize(("shape", "group"), CASES)
def test_the_interpreter_matches_the_reference(shape: list[int], group: int) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    got = interp.run(import_model(shuffle_model(shape, group)), {"x": x})[0]
    np.testing.assert_array_equal(got, expected(x, group))


@pytest.mark.parametrize(("shape", "group"), CASES)
def test_native_code_matches_the_reference(shape: list[int], group: int) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    got = xtc.compile(shuffle_model(shape, group)).run({"x": x})[0]
    np.testing.assert_array_equal(got, expected(x, group))


def test_integers_shuffle_too() -> None:
    x = RNG.integers(-50, 50, size=(2, 6, 3)).astype(np.int32)
    got = xtc.compile(shuffle_model([2, 6, 3], 3, TensorProto.INT32)).run([x])[0]
    np.testing.assert_array_equal(got, expected(x, 3))


def test_the_xtc_cli_compiles_and_runs_the_model(tmp_path: Path) -> None:
    onnx.save(shuffle_model([1, 6, 3, 3], 3), tmp_path / "shuffle.onnx")
    xtc_cli = Path(sys.executable).parent / "xtc"
    subprocess.run(
        [str(xtc_cli), "compile", "shuffle.onnx", "-o", "shuffle.tar"], cwd=tmp_path, check=True
    )
    x = RNG.standard_normal((1, 6, 3, 3)).astype(np.float32)
    np.testing.assert_array_equal(xtc.load(tmp_path / "shuffle.tar").run([x])[0], expected(x, 3))


def test_a_group_that_does_not_divide_the_channels_names_the_node() -> None:
    with pytest.raises(OnnxImportError) as caught:
        import_model(shuffle_model([1, 6, 2, 2], 4))
    assert str(caught.value) == (
        "com.example.ChannelShuffle node 'shuffle' (opset 17): example.channel_shuffle: "
        "group 4 does not divide the 6 channels of tensor<1x6x2x2xf32>"
    )


def xtc_opt(*args: str, source: str) -> subprocess.CompletedProcess[str]:
    binary = Path(sys.executable).parent / "xtc-opt"
    return subprocess.run(
        [str(binary), *args], input=source, capture_output=True, text=True, check=False
    )


def test_textual_ir_round_trips_through_xtc_opt() -> None:
    text = module_to_text(import_model(shuffle_model([1, 6, 3, 3], 2)))
    printed = xtc_opt(source=text)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() == text.strip()
    generic = xtc_opt("--print-op-generic", source=text)
    assert '"example.channel_shuffle"(%x) <{group = 2 : i64}>' in generic.stdout
    assert xtc_opt(source=generic.stdout).stdout.strip() == text.strip()


def test_xtc_opt_reports_a_bad_group_at_its_line() -> None:
    source = (
        "func.func @main(%x: tensor<1x6xf32>) -> tensor<1x6xf32> {\n"
        "  %s = example.channel_shuffle %x {group = 4 : i64} : "
        "(tensor<1x6xf32>) -> tensor<1x6xf32>\n"
        "  func.return %s : tensor<1x6xf32>\n"
        "}\n"
    )
    done = xtc_opt(source=source)
    assert done.returncode == 1
    assert "stdin:2:3: error: 'example.channel_shuffle' op group 4 does not divide" in (done.stderr)


def test_kernels_are_lowered_with_the_compute_rule() -> None:
    lowered = xtc_opt(
        "-p",
        "graph-fuse-ops,convert-graph-to-te",
        source=module_to_text(import_model(shuffle_model([1, 6, 3, 3], 2))),
    )
    assert lowered.returncode == 0, lowered.stderr
    assert 'te.ops = ["example.channel_shuffle", "graph.relu"]' in lowered.stdout
