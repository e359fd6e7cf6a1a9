"""graph-apply-pdl: graph rewrites written as PDL patterns in a file.

Expects: any IR (graph IR is what the patterns are written for) and, in the
option `file`, a module of `pdl.pattern` ops, each with a `pdl.rewrite`
body (see examples/pdl/).
Produces: the IR with every pattern applied greedily until none matches
(refused after 100 sweeps that all rewrote something); ops a rewrite leaves
without uses are erased. The result is verified: a
pattern that builds an invalid op is refused, naming the file.

Matching and rewriting are xDSL's PDL interpreter (the `apply-pdl` pass).
This pass adds what `apply-pdl` lacks: a pattern file that is missing, does
not parse or verify, holds no pattern, names an op that no dialect defines,
or uses what xDSL's interpreter cannot run (native rewrites and constraints,
an op created without result types, which it does not infer) is refused with
one line naming the file, before anything is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import pdl
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreters.pdl import PDLRewritePattern
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.utils.exceptions import (
    InterpretationError,
    ParseError,
    PassFailedException,
    VerifyException,
)

PASS = "graph-apply-pdl"
MAX_SWEEPS = 100
"""Sweeps over the IR before a pattern set that keeps matching is refused."""


def refuse(message: str) -> PassFailedException:
    return PassFailedException(f"{PASS}: {message}")


def first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def read_pattern_module(ctx: Context, path: str) -> ModuleOp:
    """The parsed and verified module of `path`."""
    if not path:
        raise refuse('no pattern file: write graph-apply-pdl{file="patterns.mlir"}')
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise refuse(f"cannot open '{path}': no such file") from None
    except (IsADirectoryError, PermissionError) as e:
        raise refuse(f"cannot open '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise refuse(f"'{path}' is not UTF-8 text") from None
    try:
        module = Parser(ctx, text, path).parse_module()
    except ParseError as e:
        location = e.span.get_location()
        raise refuse(f"{location.file}:{location.line}:{location.col}: {e.msg.strip()}") from None
    try:
        module.verify()
    except VerifyException as e:
        raise refuse(f"'{path}' does not verify: {first_line(e)}") from None
    return module


def unsupported_use(ctx: Context, pattern: pdl.PatternOp) -> str | None:
    """What in `pattern` xDSL's PDL interpreter cannot run, if anything."""
    for op in pattern.walk():
        if isinstance(op, pdl.ApplyNativeConstraintOp | pdl.ApplyNativeRewriteOp):
            return f"calls the native function '{op.constraint_name.data}'"
        if isinstance(op, pdl.RewriteOp) and (op.root is None or not op.body.blocks):
            return "needs a pdl.rewrite of a root op with a body"
        if not isinstance(op, pdl.OperationOp) or op.opName is None:
            continue
        op_class = ctx.get_optional_op(op.opName.data)
        if op_class is None:
            return f"uses the unknown op '{op.opName.data}'"
        creates = isinstance(op.parent_op(), pdl.RewriteOp)
        if creates and not op.type_values and has_results(op_class):
            return (
                f"creates '{op.opName.data}' without result types: "
                "give them (-> (%t : !pdl.type)), they are not inferred"
            )
    return None


def has_results(op_class: type) -> bool:
    return issubclass(op_class, IRDLOperation) and bool(op_class.get_irdl_definition().results)


def load_patterns(ctx: Context, path: str) -> list[PDLRewritePattern]:
    """One rewrite pattern per `pdl.pattern` of the file at `path`."""
    module = read_pattern_module(ctx, path)
    patterns = [op for op in module.walk() if isinstance(op, pdl.PatternOp)]
    if not patterns:
        raise refuse(f"'{path}' holds no pdl.pattern")
    for pattern in patterns:
        why = unsupported_use(ctx, pattern)
        if why is not None:
            raise refuse(f"{path}: pattern @{pattern_name(pattern)} {why}")
    return [PDLRewritePattern(rewrite_of(pattern), ctx) for pattern in patterns]


def rewrite_of(pattern: pdl.PatternOp) -> pdl.RewriteOp:
    """The pattern's pdl.rewrite (its verifier made sure there is one)."""
    (rewrite,) = (op for op in pattern.body.ops if isinstance(op, pdl.RewriteOp))
    return rewrite


def pattern_name(pattern: pdl.PatternOp) -> str:
    return pattern.sym_name.data if pattern.sym_name is not None else "<unnamed>"


@dataclass(frozen=True)
class GraphApplyPdl(ModulePass):
    """Applies the PDL patterns of a file until none matches.

    The file holds `pdl.pattern`s (see the module docstring); an op that a
    rewrite creates must state its result types. A pattern file the pass
    cannot use is refused in one line, naming the file and the pattern.

    Command line: `graph-apply-pdl{file="rewrites.mlir"}`
    """

    name = PASS

    file: str = ""
    """The pattern file (.mlir), relative to the working directory."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = load_patterns(ctx, self.file)
        # One sweep at a time, so that a pattern matching its own output
        # (relu -> relu) is refused instead of rewriting forever.
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(list(patterns)), apply_recursively=False
        )
        try:
            converged = any(not walker.rewrite_module(op) for _ in range(MAX_SWEEPS))
        except InterpretationError as e:
            raise refuse(f"{self.file}: {first_line(e)}") from None
        if not converged:
            raise refuse(
                f"the patterns of {self.file} still match after {MAX_SWEEPS} sweeps: "
                "does one rewrite what it creates?"
            )
        try:
            op.verify()
        except VerifyException as e:
            raise refuse(
                f"the patterns of {self.file} produce IR that does not verify: {first_line(e)}"
            ) from None
