"""The ops nested in an op, as a list: what xDSL's `Operation.walk` yields,
in the same order, at a third of its cost (its walk is a generator per
region, block and op; a kernel's lowering walks its tens of thousands of
ops several times). A list is a snapshot: the caller may change the IR
while it goes through it."""

from __future__ import annotations

from xdsl.ir import Operation


def ops_within(op: Operation) -> list[Operation]:
    """`op` and every op nested in it, each before the ops of its regions
    (the order of `op.walk()`)."""
    found: list[Operation] = []
    _add_in_order(op, found)
    return found


def ops_within_reversed(op: Operation) -> list[Operation]:
    """`op.walk(reverse=True)`: `op`, then its regions, blocks and ops from
    the last, each op before the ops of its regions."""
    found: list[Operation] = []
    _add_reversed(op, found)
    return found


def _add_in_order(op: Operation, found: list[Operation]) -> None:
    found.append(op)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if inner.regions:
                    _add_in_order(inner, found)
                else:
                    found.append(inner)


def _add_reversed(op: Operation, found: list[Operation]) -> None:
    found.append(op)
    for region in reversed(op.regions):
        for block in reversed(region.blocks):
            for inner in reversed(block.ops):
                if inner.regions:
                    _add_reversed(inner, found)
                else:
                    found.append(inner)
