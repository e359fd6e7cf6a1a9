"""Op plugins (xtc/plugins.py): a module registered with `xtc.register_ops`
or found through the `xtc.ops` entry point brings its op into the importer,
the interpreter, xtc-opt's parser and the native compiler; a malformed or
clashing plugin is refused whole, and a broken entry point is skipped with a
warning naming it while xtc goes on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper

import xtc
from xtc import interp, plugins
from xtc.frontend.converters import CONVERTERS, load_builtin_converters
from xtc.frontend.onnx import OnnxImportError, import_model, supported_ops
from xtc.ops import COMPUTE_RULES, load_builtin_compute_rules
from xtc.driver.textual_ir import module_to_text, parse_module
from xtc.plugin_warnings import PluginWarning

CUBE_PLUGIN = """
from typing import ClassVar

from xdsl.dialects.builtin import AnyTensorTypeConstr
from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from xtc.dialects.graph.base import GraphOp, OpPattern
from xtc.plugins import compute_rule, converts, reference


@irdl_op_definition
class CubeOp(GraphOp):
    name = "testops.cube"
    input = operand_def(AnyTensorTypeConstr)
    output = result_def(AnyTensorTypeConstr)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"
    FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE

    @classmethod
    def infer_types(cls, operand_types, props):
        return [operand_types[0]]


TestOps = Dialect("testops", [CubeOp], [])


@converts("Cube", domain="org.xtc.test")
def convert_cube(node):
    return [node.emit1(CubeOp, [node.input(0)])]


@reference(CubeOp)
def cube(x):
    return x * x * x


@compute_rule(CubeOp)
def cube_compute(k, op, inputs):
    (x,) = inputs
    return [k.compute(x.shape, x.element_type, lambda *i: x[list(i)] * x[list(i)] * x[list(i)])]
"""


def make_module(name: str, source: str) -> types.ModuleType:
    """A module defined by `source`, as if imported from a file."""
    module = types.ModuleType(name)
    exec(compile(textwrap.dedent(source), f"<{name}>", "exec"), module.__dict__)
    return module


@pytest.fixture(autouse=True)
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no plugin (none of the environment's entry
    points) and leaves xtc's tables as it found them."""
    converters, rules = dict(load_builtin_converters()), dict(load_builtin_compute_rules())
    monkeypatch.setattr(plugins, "_REGISTERED", [])
    monkeypatch.setattr(plugins, "entry_points", lambda group: [])
    plugins.load_op_plugins.cache_clear()
    yield
    CONVERTERS.clear()
    CONVERTERS.update(converters)
    COMPUTE_RULES.clear()
    COMPUTE_RULES.update(rules)
    plugins.load_op_plugins.cache_clear()


def cube_model(domain: str = "org.xtc.test", imported: str | None = None) -> ModelProto:
    cube = helper.make_node("Cube", ["x"], ["c"], domain=domain, name="cube")
    relu = helper.make_node("Relu", ["c"], ["y"], name="relu")
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [cube, relu],
        "g",
        [value("x", TensorProto.FLOAT, [2, 3])],
        [value("y", TensorProto.FLOAT, [2, 3])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(imported or domain, 1)]
    return helper.make_model(graph, opset_imports=opsets)


X = np.array([[-1.5, 0.5, 2.0], [1.0, -0.25, 3.0]], np.float32)
EXPECTED = np.maximum(X**3, 0)


def test_a_registered_op_imports_interprets_parses_and_compiles() -> None:
    module = make_module("xtc_test_cube", CUBE_PLUGIN)
    plugin = xtc.register_ops(module)
    assert [d.name for d in plugin.dialects] == ["testops"]
    assert "org.xtc.test.Cube" in supported_ops()

    graph = import_model(cube_model())
    text = module_to_text(graph)
    assert "testops.cube %x" in text
    assert module_to_text(parse_module(text)) == text
    np.testing.assert_array_equal(interp.run(graph, [X])[0], EXPECTED)
    np.testing.assert_array_equal(xtc.compile(cube_model()).run([X])[0], EXPECTED)


def test_registering_the_same_module_twice_gives_the_same_plugin() -> None:
    module = make_module("xtc_test_cube", CUBE_PLUGIN)
    assert xtc.register_ops(module) is xtc.register_ops(module)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('"Cube", domain="org.xtc.test"', '"Relu", domain="ai.onnx"', "redefines converter Relu"),
        ("testops", "graph", "redefines dialect 'graph'"),
        ('"testops.cube"', '"other.cube"', "other.cube is not named 'testops.<op>'"),
        ("CubeOp(GraphOp)", "CubeOp(IRDLOperation)", "testops.cube is not a graph op"),
        (
            "FUSION_KIND: ClassVar[OpPattern | None] = OpPattern.ELEMENTWISE",
            "",
            "testops.cube states no fusion kind",
        ),
    ],
)
def test_a_clashing_or_malformed_plugin_is_refused_whole(old: str, new: str, message: str) -> None:
    source = "from xdsl.irdl import IRDLOperation\n" + CUBE_PLUGIN.replace(old, new)
    before = dict(CONVERTERS)
    with pytest.raises(plugins.PluginError, match=message):
        xtc.register_ops(make_module("xtc_test_bad", source))
    assert CONVERTERS == before
    assert plugins.registered_plugins() == ()


def test_a_module_defining_nothing_is_refused() -> None:
    with pytest.raises(plugins.PluginError, match="defines no dialect, converter"):
        xtc.register_ops(make_module("xtc_test_empty", "import numpy\n"))


def test_a_reference_for_an_op_of_another_dialect_is_refused() -> None:
    source = CUBE_PLUGIN + (
        "\nfrom xtc.dialects.graph.elementwise import ReluOp\n"
        "@reference(ReluOp)\ndef relu(x):\n    return x\n"
    )
    with pytest.raises(plugins.PluginError, match=r"@reference\(graph.relu\) names an op"):
        xtc.register_ops(make_module("xtc_test_other", source))


def test_an_op_of_an_unknown_domain_names_it_and_suggests_a_plugin() -> None:
    with pytest.raises(OnnxImportError) as caught:
        import_model(cube_model())
    message = str(caught.value)
    assert "org.xtc.test.Cube (node 'cube')" in message
    assert "no xtc op plugin defines domain 'org.xtc.test'" in message
    assert "xtc.ops" in message and "xtc.register_ops" in message


def test_a_custom_domain_missing_from_opset_import_is_refused() -> None:
    xtc.register_ops(make_module("xtc_test_cube", CUBE_PLUGIN))
    with pytest.raises(OnnxImportError, match="uses domain 'org.xtc.test', which the model's"):
        import_model(cube_model(imported="org.xtc.other"))


def test_the_ai_onnx_domain_is_onnx_s_own() -> None:
    relu = helper.make_node("Relu", ["x"], ["y"], domain="ai.onnx")
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [relu], "g", [value("x", TensorProto.FLOAT, [3])], [value("y", TensorProto.FLOAT, [3])]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx", 17)])
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    np.testing.assert_array_equal(interp.run(import_model(model), [x])[0], [0.0, 0.0, 2.0])


PLUGIN_MODULES = {
    "xtc_test_cube": CUBE_PLUGIN,
    "xtc_test_raising": "raise ZeroDivisionError('the plugin divides by zero')\n",
    "xtc_test_callable": "def broken():\n    raise RuntimeError('no ops')\n\nNUMBER = 3\n",
}

PLUGIN_ENTRY_POINTS = {
    "a-missing": "xtc_test_no_such_module",
    "b-raising": "xtc_test_raising",
    "c-good": "xtc_test_cube",
    "d-callable": "xtc_test_callable:broken",
    "e-number": "xtc_test_callable:NUMBER",
}


def test_broken_entry_points_are_skipped_with_a_warning_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, source in PLUGIN_MODULES.items():
        (tmp_path / f"{name}.py").write_text(source)
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = [EntryPoint(n, v, plugins.ENTRY_POINT_GROUP) for n, v in PLUGIN_ENTRY_POINTS.items()]
    monkeypatch.setattr(plugins, "entry_points", lambda group: found)
    with pytest.warns(PluginWarning) as caught:
        loaded = plugins.load_op_plugins()
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 4, messages
    assert "plugin 'a-missing'" in messages[0] and "ModuleNotFoundError" in messages[0]
    assert "plugin 'b-raising'" in messages[1] and "divides by zero" in messages[1]
    assert "plugin 'd-callable'" in messages[2] and "RuntimeError: no ops" in messages[2]
    assert "plugin 'e-number'" in messages[3] and "neither a module nor a list" in messages[3]
    assert [p.name for p in loaded] == ["c-good"]
    assert "org.xtc.test.Cube" in supported_ops()


def test_xtc_opt_parses_an_entry_point_plugin_s_op(tmp_path: Path) -> None:
    """Through a real (throwaway) installed distribution: xtc-opt knows the
    plugin's dialect, and a broken plugin beside it is one warning line."""
    (tmp_path / "xtc_test_cube.py").write_text(CUBE_PLUGIN)
    info = tmp_path / "xtc_test_cube-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: xtc-test-cube\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[xtc.ops]\ncube = xtc_test_cube\nbroken = xtc_test_no_such_module\n"
    )
    source = tmp_path / "cube.mlir"
    source.write_text(
        "%x = builtin.unrealized_conversion_cast to tensor<2xf32>\n"
        "%c = testops.cube %x : (tensor<2xf32>) -> tensor<2xf32>\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "xtc.tools.xtc_opt", str(source)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{tmp_path}:{':'.join(sys.path)}", "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "testops.cube %x : (tensor<2xf32>) -> tensor<2xf32>" in done.stdout
    assert done.stderr.splitlines() == [
        "xtc-opt: warning: xtc.ops plugin 'broken' (xtc_test_no_such_module) is skipped: "
        "ModuleNotFoundError: No module named 'xtc_test_no_such_module'"
    ]
