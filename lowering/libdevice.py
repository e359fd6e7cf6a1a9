"""CUDA's libdevice (`libdevice.10.bc`, LLVM bitcode of the `__nv_*` math
functions): where it is, and which of its functions a math intrinsic or a
libm call of a kernel becomes (`llvm.exp.f32` -> `__nv_expf`, `erf` ->
`__nv_erf`). runtime/ptx.py links it into the kernels before PTX emission.

Looked for, in order: `$XTC_LIBDEVICE` (the file), `$CUDA_HOME` and
`$CUDA_PATH` (`nvvm/libdevice/` under them), `/usr/local/cuda*/nvvm/libdevice/`,
and the pip package `nvidia-cuda-nvcc-cu12` (`nvidia/cuda_nvcc/nvvm/libdevice/`).
"""

from __future__ import annotations

import glob
import importlib.util
import os
from pathlib import Path

LIBDEVICE_FILE = "libdevice.10.bc"
LIBDEVICE_ENV = "XTC_LIBDEVICE"
HOW_TO_GET = (
    f"install CUDA's libdevice (pip install nvidia-cuda-nvcc-cu12, or a CUDA toolkit) "
    f"or point {LIBDEVICE_ENV} at {LIBDEVICE_FILE}"
)

MATH_FUNCTIONS = frozenset(
    {
        # LLVM intrinsics NVPTX has no instruction for (llvm.<name>.f32)
        "exp",
        "exp2",
        "log",
        "log2",
        "log10",
        "sin",
        "cos",
        "tan",
        "pow",
        "tanh",
        "sinh",
        "cosh",
        "asin",
        "acos",
        "atan",
        "atan2",
        # libm calls of convert-to-llvm (erf, erff, ...)
        "erf",
        "cbrt",
        "expm1",
        "log1p",
        "asinh",
        "acosh",
        "atanh",
    }
)
"""The math functions libdevice defines as `__nv_<name>` (f64) and
`__nv_<name>f` (f32)."""

LIBM_NAMES: dict[str, str] = {
    **{name: f"__nv_{name}" for name in MATH_FUNCTIONS},
    **{f"{name}f": f"__nv_{name}f" for name in MATH_FUNCTIONS},
}
"""A libm function's name -> its libdevice function."""


def libdevice_function(name: str, bits: int) -> str:
    """The libdevice function computing `name` on floats of `bits` (32 or 64)."""
    return f"__nv_{name}f" if bits == 32 else f"__nv_{name}"


def _candidates() -> list[Path]:
    found: list[Path] = []
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(variable)
        if root:
            found.append(Path(root) / "nvvm" / "libdevice" / LIBDEVICE_FILE)
    pattern = f"/usr/local/cuda*/nvvm/libdevice/{LIBDEVICE_FILE}"
    found.extend(Path(p) for p in sorted(glob.glob(pattern), reverse=True))
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    except ImportError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            found.append(Path(location) / "nvvm" / "libdevice" / LIBDEVICE_FILE)
    return found


class LibdeviceError(Exception):
    """XTC_LIBDEVICE names no file."""


def find_libdevice() -> Path | None:
    """The libdevice bitcode file, or None where none is installed.
    LibdeviceError when $XTC_LIBDEVICE is set to a missing file."""
    chosen = os.environ.get(LIBDEVICE_ENV)
    if chosen:
        path = Path(chosen)
        if not path.is_file():
            raise LibdeviceError(f"{LIBDEVICE_ENV}={chosen} is not a file")
        return path
    return next((p for p in _candidates() if p.is_file()), None)
