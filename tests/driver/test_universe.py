"""xtc registers its dialects and passes in one place, and plain xdsl-opt
sees them through the `xdsl.universe` entry point."""

import importlib
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import onnx
import pytest
from xdsl.universe import XDSL_UNIVERSE, Universe

from xtc.driver.universe import XTC_UNIVERSE, PluginWarning, merge_universes

ROOT = Path(__file__).resolve().parents[2]
ADD_RELU = ROOT / "filecheck" / "dialects" / "graph" / "ops-elementwise.mlir"


def test_multiverse_contains_xtc() -> None:
    multiverse = Universe.get_multiverse()
    assert "graph" in multiverse.all_dialects
    for name in XTC_UNIVERSE.all_passes:
        assert name in multiverse.all_passes


def test_pass_name_is_module_name_is_filecheck_file_name() -> None:
    """Same-dialect passes live in passes/, conversions in lowering/; the
    FileCheck file sits in the matching folder under the pass's name."""
    for name, factory in XTC_UNIVERSE.all_passes.items():
        pass_class = factory()
        assert pass_class.name == name
        module = importlib.import_module(pass_class.__module__)
        room = "lowering" if name.startswith("convert-") else "passes"
        assert module.__name__ == f"xtc.{room}." + name.replace("-", "_"), module.__name__
        assert (ROOT / "filecheck" / room / f"{name}.mlir").is_file(), name
        assert pass_class.__doc__ and len(pass_class.__doc__.strip()) > 40, (
            f"{name}: the docstring must state the input it expects and the output"
        )


def test_plain_xdsl_opt_loads_xtc() -> None:
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "xdsl-opt"),
            str(ADD_RELU),
            "-p",
            "graph-fold-constants",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "graph.add" in result.stdout


# ------------------------------------------------------ plugins cannot break xtc

PLUGIN_MODULE = """
from xdsl.universe import Universe


def _get_pass():
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    class MyPass(DeadCodeElimination):
        name = "my-plugin-pass"

    return MyPass


GOOD = Universe(all_passes={"my-plugin-pass": _get_pass})
CLASHING = Universe(all_passes={"dce": _get_pass})
NOT_A_UNIVERSE = 42
"""

ENTRY_POINTS = """[xdsl.universe]
broken = broken_xtc_test_plugin:UNIVERSE
clashing = xtc_test_plugin:CLASHING
good = xtc_test_plugin:GOOD
not-a-universe = xtc_test_plugin:NOT_A_UNIVERSE
xtc = no_such_module_shadowing_xtc:XTC_UNIVERSE
"""


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    """A folder on which Python finds a distribution with five xdsl.universe
    entry points: one whose module raises on import, one clashing with
    xDSL's dce, one that works, one that is not a Universe, and a stale
    `xtc` one pointing at a module that does not exist."""
    (tmp_path / "broken_xtc_test_plugin.py").write_text(
        "raise ImportError('this plugin is broken')\n"
    )
    (tmp_path / "xtc_test_plugin.py").write_text(PLUGIN_MODULE)
    info = tmp_path / "xtc_test_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: xtc-test-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return tmp_path


def test_a_broken_plugin_is_skipped_with_a_warning_naming_it(
    plugins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(plugins))
    found = [
        p for p in entry_points(group="xdsl.universe") if "plugin" in p.value or "shadow" in p.value
    ]
    assert len(found) == 5
    with pytest.warns(PluginWarning) as caught:
        merged = merge_universes(entry_points(group="xdsl.universe"))
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 3, messages
    assert "'broken'" in messages[0] and "this plugin is broken" in messages[0]
    assert "'clashing'" in messages[1] and "redefines dce" in messages[1]
    assert "'not-a-universe'" in messages[2] and "not an xdsl Universe" in messages[2]
    assert "my-plugin-pass" in merged.all_passes
    assert set(XTC_UNIVERSE.all_passes) <= set(merged.all_passes)
    assert merged.all_passes["dce"] is XDSL_UNIVERSE.all_passes["dce"]


def test_xtc_tools_work_beside_a_broken_plugin(plugins: Path, tmp_path: Path) -> None:
    """xDSL's own multiverse dies on the broken plugin; xtc-opt and xtc
    compile run, warn once per plugin, and the working plugin's pass runs."""
    environment = {**os.environ, "PYTHONPATH": str(plugins)}
    bin_dir = Path(sys.executable).parent
    xdsl = subprocess.run(
        [sys.executable, "-c", "from xdsl.universe import Universe; Universe.get_multiverse()"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert xdsl.returncode != 0 and "this plugin is broken" in xdsl.stderr
    opt = subprocess.run(
        [str(bin_dir / "xtc-opt"), str(ADD_RELU), "-p", "graph-fold-constants,my-plugin-pass"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert opt.returncode == 0, opt.stderr
    assert "graph.add" in opt.stdout
    warned = [line for line in opt.stderr.splitlines() if line.startswith("xtc-opt: warning:")]
    assert len(warned) == 3 and len(opt.stderr.splitlines()) == 3, opt.stderr
    model = tmp_path / "relu.onnx"
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"])],
        "relu",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])],
    )
    onnx.save(onnx.helper.make_model(graph), model)
    compiled = subprocess.run(
        [str(bin_dir / "xtc"), "compile", str(model), "-o", str(tmp_path / "relu.tar")],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stderr.count("xtc: warning: xdsl.universe plugin 'broken'") == 1
    assert (tmp_path / "relu.tar").is_file()
