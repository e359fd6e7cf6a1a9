"""Wall time per pass and stage of a compile, as a tree (`xtc compile
--timing`, like `mlir-opt --mlir-timing --mlir-timing-display=tree`).

    timer = Timer()
    with timer.scope("graph-fuse-ops"):
        ...
    print(timer.report(), file=sys.stderr)

Scopes of one name under one parent add up (a schedule step applied to 30
kernels is one line, with its count). `NO_TIMER` times nothing, for callers
that were not asked to.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class _Scope:
    name: str
    seconds: float = 0.0
    count: int = 0
    children: dict[str, _Scope] = field(default_factory=lambda: {})

    def child(self, name: str) -> _Scope:
        found = self.children.get(name)
        if found is None:
            found = self.children[name] = _Scope(name)
        return found


class Timer:
    """Nested wall-clock scopes; `report()` prints them as mlir-opt does."""

    def __init__(self) -> None:
        self._root = _Scope("Total")
        self._open: list[_Scope] = [self._root]
        self._started = time.perf_counter()

    @contextmanager
    def scope(self, name: str) -> Iterator[None]:
        """Times the block under `name`, inside the scope open around it."""
        node = self._open[-1].child(name)
        self._open.append(node)
        started = time.perf_counter()
        try:
            yield
        finally:
            node.seconds += time.perf_counter() - started
            node.count += 1
            self._open.pop()

    def add(self, name: str, seconds: float, count: int = 1) -> None:
        """Adds time measured elsewhere (in a worker process) under `name`,
        inside the scope open now."""
        node = self._open[-1].child(name)
        node.seconds += seconds
        node.count += count

    def total(self) -> float:
        """Seconds since the timer was made."""
        return time.perf_counter() - self._started

    def seconds(self, *path: str) -> float:
        """The time of the scope at `path` (names from the top), 0 if none."""
        node: _Scope | None = self._root
        for name in path:
            node = node.children.get(name) if node is not None else None
        return node.seconds if node is not None else 0.0

    def names(self) -> list[str]:
        """The top-level scopes' names, in the order they were first opened."""
        return list(self._root.children)

    def report(self) -> str:
        """The tree of scopes with their wall times and shares of the total."""
        total = self.total()
        rule = "===" + "-" * 73 + "==="
        lines = [
            rule,
            "... Execution time report ...".center(len(rule)).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        lines += _tree_lines(self._root, total, 0)
        lines.append(f"  {total:7.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


def _tree_lines(node: _Scope, total: float, depth: int) -> list[str]:
    lines: list[str] = []
    for child in node.children.values():
        share = 100.0 * child.seconds / total if total > 0 else 0.0
        times = f" (x{child.count})" if child.count > 1 else ""
        lines.append(f"  {child.seconds:7.4f} ({share:5.1f}%)  {'  ' * depth}{child.name}{times}")
        lines += _tree_lines(child, total, depth + 1)
    return lines


class _NoTimer(Timer):
    @contextmanager
    def scope(self, name: str) -> Iterator[None]:
        yield

    def add(self, name: str, seconds: float, count: int = 1) -> None:
        pass


NO_TIMER: Timer = _NoTimer()
"""A timer that keeps nothing."""
