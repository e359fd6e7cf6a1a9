"""What a function of a module is, as graph-fuse-ops leaves it."""

from __future__ import annotations

from xdsl.dialects.func import FuncOp

PRIMITIVE_ATTR = "graph.primitive"
"""The unit attribute graph-fuse-ops sets on each function it outlines."""


def is_primitive(func: FuncOp) -> bool:
    """Whether `func` is a fused group outlined by graph-fuse-ops."""
    return PRIMITIVE_ATTR in func.attributes
