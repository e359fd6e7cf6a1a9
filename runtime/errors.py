"""The error a run refuses its inputs with, shared by the JIT and the model
library (runtime/llvm_jit.py, runtime/model.py); `xtc.InputError`."""

from __future__ import annotations


class InputError(ValueError):
    """Inputs the model cannot run on: names, count, shape or dtype that do
    not match it (refused before native code runs), or values that make a
    run fail (a run-time fault: an index out of range, an integer division
    by zero; the message names the node and the value)."""
