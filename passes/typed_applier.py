"""A GreedyRewritePatternApplier that tries on each op only the patterns
whose `@op_type_rewrite_pattern` type (or `op_types` tuple) it has.

xDSL's applier calls every pattern on every op, and each pattern checks the
op's type itself: with 30 patterns, lowering a model makes over a million
calls that do nothing. This applier asks each pattern once which op types it
takes (the type annotation that `op_type_rewrite_pattern` saw), and keeps,
per op class met, the patterns that may match it, in their order. The
result is the same rewrites in the same order: a pattern skipped here is
one whose type check would have failed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import UnionType
from typing import Union, cast, get_args, get_origin

from xdsl.ir import Operation
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, RewritePattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead

_ANY: tuple[type[Operation], ...] = (Operation,)


def matched_types(pattern: RewritePattern) -> tuple[type[Operation], ...]:
    """The op classes `pattern` may rewrite: its `op_types` attribute (a
    tuple of op classes) where it has one, else those named by its
    `@op_type_rewrite_pattern` annotation, else every op."""
    declared = getattr(pattern, "op_types", None)
    if isinstance(declared, tuple) and declared:
        return cast(tuple[type[Operation], ...], declared)
    method = type(pattern).match_and_rewrite
    names = method.__code__.co_freevars
    if "expected_type" not in names or method.__closure__ is None:
        return _ANY
    expected = method.__closure__[names.index("expected_type")].cell_contents
    if get_origin(expected) in (Union, UnionType):
        expected = get_args(expected)
    else:
        expected = (expected,)
    if all(isinstance(t, type) and issubclass(t, Operation) for t in expected):
        return tuple(expected)
    return _ANY


def matched_op_types(pattern: RewritePattern) -> tuple[type[Operation], ...]:
    """The op classes `pattern` may rewrite (every op: Operation); for a
    TypedPatternApplier, those of its patterns."""
    if isinstance(pattern, TypedPatternApplier):
        return tuple(t for types in pattern.types for t in types)
    return matched_types(pattern)


class TypedPatternApplier(GreedyRewritePatternApplier):
    """GreedyRewritePatternApplier(patterns), dispatching on op classes (no
    folding; trivially dead ops are erased first, as there)."""

    def __init__(self, patterns: Sequence[RewritePattern]) -> None:
        super().__init__(list(patterns))
        self.types = [matched_types(p) for p in self.rewrite_patterns]
        self._types_key = tuple(self.types)
        self._by_class: dict[type[Operation], list[RewritePattern]] = {}

    def _patterns_for(self, op_class: type[Operation]) -> list[RewritePattern]:
        found = self._by_class.get(op_class)
        if found is None:
            chosen = _chosen_patterns(self._types_key, op_class)
            found = [self.rewrite_patterns[i] for i in chosen]
            self._by_class[op_class] = found
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self.dce_enabled and is_trivially_dead(op):
            rewriter.erase(op)
            return
        for pattern in self._patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


@functools.cache
def _chosen_patterns(
    types: tuple[tuple[type[Operation], ...], ...], op_class: type[Operation]
) -> tuple[int, ...]:
    """The positions of the patterns that may rewrite `op_class`, given
    each pattern's op types: kept for the process (a pass makes a new
    applier for each module, and each issubclass test costs an abc check)."""
    return tuple(i for i, taken in enumerate(types) if issubclass(op_class, taken))
