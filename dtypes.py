"""numpy dtypes as xtc classifies them, without xDSL: the graph dialect,
the interpreter, the ONNX converters and `xtc run` (which fills a model's
inputs without importing the compiler) ask the same question."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np


def is_float_dtype(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` is a float: numpy's, or ml_dtypes' (bf16, float8,
    float4), which numpy counts as void ('V')."""
    if dtype.kind == "f":
        return True
    if dtype.kind != "V":
        return False
    try:
        ml_dtypes.finfo(dtype)
    except ValueError:
        return False
    return True
