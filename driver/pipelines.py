"""Pass pipelines written as `xtc-opt -p` strings, applied from Python."""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from xtc.driver.textual_ir import make_context
from xtc.driver.universe import multiverse


@functools.cache
def _all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every registered pass (reading the entry points once: it is slow)."""
    return dict(multiverse().all_passes)


@functools.lru_cache(maxsize=4096)
def parse_pipeline(spec: str) -> PassPipeline:
    """`"graph-simplify-inference,graph-fold-constants,dce"` as a pipeline.
    Kept per spec (a compile applies each schedule step's spec to a kernel,
    and the same lowering spec to every kernel): a pass is a frozen
    dataclass, so one pipeline serves every module."""
    return PassPipeline.parse_spec(_all_passes(), spec)


def apply_pipeline(module: ModuleOp, spec: str, *, verify: bool = True) -> ModuleOp:
    """Applies the pipeline in place, verifying after it unless told not
    to; returns the module."""
    parse_pipeline(spec).apply(make_context(), module)
    if verify:
        module.verify()
    return module


def pipeline_steps(spec: str) -> list[str]:
    """The passes of an `xtc-opt -p` string, each with its options
    (`a,b{x=1,2},c` -> ["a", "b{x=1,2}", "c"]: commas inside braces stay)."""
    steps: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(spec):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            steps.append(spec[start:i])
            start = i + 1
    if spec[start:]:
        steps.append(spec[start:])
    return steps
