"""Import a script by its path (bench/ is a folder of scripts, not a
package), for the tests of those scripts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path, module_name: str) -> ModuleType:
    """The module that executing `path` gives, named `module_name`. The
    module is in sys.modules only while it executes: dataclasses look their
    module up there."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python script")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[module_name]
    return module
