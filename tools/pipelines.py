"""Pass pipelines written as `xtc-opt -p` strings, applied from Python."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.universe import Universe

from xtc.tools.textual_ir import make_context


def parse_pipeline(spec: str) -> PassPipeline:
    """`"graph-simplify-inference,graph-fold-constants,dce"` as a pipeline."""
    return PassPipeline.parse_spec(Universe.get_multiverse().all_passes, spec)


def apply_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    """Applies the pipeline in place, verifying after it; returns the module."""
    parse_pipeline(spec).apply(make_context(), module)
    module.verify()
    return module
