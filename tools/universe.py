"""Every xtc dialect and pass, registered in one place. The factories import
lazily so that tools start fast. Exported through the `xdsl.universe` entry
point, so plain `xdsl-opt` loads xtc too."""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def get_graph_dialect() -> Dialect:
    from xtc.dialects.graph import Graph

    return Graph


def get_te_dialect() -> Dialect:
    from xtc.dialects.te import TE

    return TE


def get_tir_dialect() -> Dialect:
    from xtc.dialects.tir import TIR

    return TIR


def get_graph_fold_constants() -> type[ModulePass]:
    from xtc.passes.graph_fold_constants import GraphFoldConstants

    return GraphFoldConstants


def get_graph_simplify_inference() -> type[ModulePass]:
    from xtc.passes.graph_simplify_inference import GraphSimplifyInference

    return GraphSimplifyInference


XTC_DIALECTS = {"graph": get_graph_dialect, "te": get_te_dialect, "tir": get_tir_dialect}

XTC_PASSES = {
    "graph-fold-constants": get_graph_fold_constants,
    "graph-simplify-inference": get_graph_simplify_inference,
}

XTC_UNIVERSE = Universe(all_dialects=XTC_DIALECTS, all_passes=XTC_PASSES)
