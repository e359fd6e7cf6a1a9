"""graph-fold-constants (being written)."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class GraphFoldConstants(ModulePass):
    name = "graph-fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass
