"""xtc registers its dialects and passes in one place, and plain xdsl-opt
sees them through the `xdsl.universe` entry point."""

import importlib
import subprocess
import sys
from pathlib import Path

from xdsl.universe import Universe

from xtc.tools.universe import XTC_UNIVERSE

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
