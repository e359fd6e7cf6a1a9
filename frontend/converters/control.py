"""If, Loop and Scan, resolved at import: xtc compiles static graphs, so
their subgraphs are inlined (Node.inline) where the control flow is known.

- If: the condition must be a constant. A condition given at run time is
  specialized on its value (driver/specializing.py), like a Reshape's
  shape; the taken branch is inlined.
- Loop: the trip count and the condition must be constants (or specialized
  inputs); the body is inlined once per iteration, and the condition it
  computes must fold to a constant after each (else one error says so). At
  most MAX_ITERATIONS iterations.
- Scan (opset 9 and later): the body is inlined once per element of the
  scan inputs' static axis.

Loop and Scan stack their scan outputs with Unsqueeze and Concat.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from xtc.frontend.converters import Node, Value, converts

MAX_ITERATIONS = 1024
"""The most iterations a Loop or Scan is unrolled to."""


def _graph(node: Node, name: str) -> onnx.GraphProto:
    graph = node.attr(name)
    if not isinstance(graph, onnx.GraphProto):
        node.fail(f"has no '{name}' subgraph")
    return graph


def _truth(node: Node, value: np.ndarray, what: str) -> bool:
    if value.size != 1:
        node.fail(f"{what} has {value.size} elements, not 1")
    return bool(value.reshape(-1)[0])


@converts("If")
def convert_if(node: Node) -> Sequence[SSAValue | None]:
    condition = node.require_const(0, "the condition")
    taken = "then_branch" if _truth(node, condition, "the condition") else "else_branch"
    return node.inline(_graph(node, taken), [], taken)


def stack(node: Node, slices: list[SSAValue], axis: int, what: str) -> SSAValue:
    """The slices stacked along a new axis `axis` (negative: from the end)."""
    if not slices:
        node.fail(f"{what} has no iterations: xtc cannot tell its shape")
    rank = len(_shape(slices[0])) + 1
    axis = axis + rank if axis < 0 else axis
    if node.opset < 13:  # axes an attribute
        expanded = [node.apply("Unsqueeze", [s], axes=[axis])[0] for s in slices]
    else:
        axes = node.constant(np.array([axis], np.int64))
        expanded = [node.apply("Unsqueeze", [s, axes])[0] for s in slices]
    if len(expanded) == 1:
        return expanded[0]
    return node.apply("Concat", expanded, axis=axis)[0]


def _shape(value: SSAValue) -> tuple[int, ...]:
    from xtc.dialects.graph.base import shape_of

    return shape_of(value.type)


@converts("Loop")
def convert_loop(node: Node) -> Sequence[Value | None]:
    body = _graph(node, "body")
    carried = [node.value(i) for i in range(2, node.num_inputs)]  # sequences and optionals too
    trip_count = (
        int(node.require_const(0, "the trip count").reshape(-1)[0]) if node.has_input(0) else None
    )
    going = (
        _truth(node, node.require_const(1, "the condition"), "the condition")
        if node.has_input(1)
        else True
    )
    limit = MAX_ITERATIONS if trip_count is None else trip_count
    if limit > MAX_ITERATIONS:
        node.fail(f"runs {limit} iterations; xtc unrolls loops of at most {MAX_ITERATIONS}")
    outputs: list[list[SSAValue]] = [[] for _ in range(len(body.output) - 1 - len(carried))]
    iteration = 0
    while going and iteration < limit:
        index = node.constant(np.array(iteration, np.int64))
        flag = node.constant(np.array(True))
        condition, *results = node.inline(body, [index, flag, *carried], f"iteration {iteration}")
        carried, scanned = results[: len(carried)], results[len(carried) :]
        for k, (out, value) in enumerate(zip(outputs, scanned, strict=True)):
            if not isinstance(value, SSAValue):
                node.fail(f"its scan output {k} is not a tensor")
            out.append(value)
        known = node.importer.constants.get(condition) if isinstance(condition, SSAValue) else None
        if known is None:
            node.fail(
                f"its condition after iteration {iteration} depends on run-time values: "
                "xtc unrolls loops at import"
            )
        going = _truth(node, known, "the condition")
        iteration += 1
    if going and trip_count is None:
        node.fail(f"runs past {MAX_ITERATIONS} iterations; xtc unrolls loops of at most that")
    stacked = [stack(node, out, 0, f"scan output {k}") for k, out in enumerate(outputs)]
    return [*carried, *stacked]


def _axes(node: Node, name: str, count: int) -> list[int]:
    values = node.attr(name) or [0] * count
    if len(values) != count:
        node.fail(f"'{name}' has {len(values)} values, not {count}")
    return [int(v) for v in values]


@converts("Scan")
def convert_scan(node: Node) -> Sequence[SSAValue | None]:
    if node.opset < 9:
        return _scan_with_batch(node)
    body = _graph(node, "body")
    scans = int(node.attr("num_scan_inputs"))
    inputs = node.inputs()
    states, sequences = inputs[: len(inputs) - scans], inputs[len(inputs) - scans :]
    out_count = len(body.output) - len(states)
    return _scan(
        node,
        body,
        states,
        sequences,
        _axes(node, "scan_input_axes", scans),
        _axes(node, "scan_input_directions", scans),
        _axes(node, "scan_output_axes", out_count),
        _axes(node, "scan_output_directions", out_count),
    )


def _scan_with_batch(node: Node) -> Sequence[SSAValue | None]:
    """Scan-8: input 0 the sequence lengths (none: all full), the states and
    scan inputs with a leading batch axis, the scan axis next; each batch
    element scanned on its own, the results stacked."""
    body = _graph(node, "body")
    scans = int(node.attr("num_scan_inputs"))
    values = [node.input(i) for i in range(1, node.num_inputs)]
    states, sequences = values[: len(values) - scans], values[len(values) - scans :]
    batch = _shape(values[0])[0]
    if node.has_input(0):
        lengths = node.require_const(0, "the sequence lengths")
        full = _shape(sequences[0])[1]
        if np.any(lengths != full):
            node.fail("sequence lengths shorter than the scan axis are not supported")
    directions = _axes(node, "directions", scans)
    out_count = len(body.output) - len(states)
    results: list[list[SSAValue]] = [[] for _ in range(len(states) + out_count)]
    for b in range(batch):
        at = node.constant(np.array(b, np.int64))
        row = [node.apply("Gather", [v, at], axis=0)[0] for v in values]
        outs = _scan(
            node,
            body,
            row[: len(states)],
            row[len(states) :],
            [0] * scans,
            directions,
            [0] * out_count,
            [0] * out_count,
            f"batch {b}, ",
        )
        for collected, value in zip(results, outs, strict=True):
            collected.append(value)
    return [stack(node, r, 0, f"output {k}") for k, r in enumerate(results)]


def _scan(
    node: Node,
    body: onnx.GraphProto,
    states: list[SSAValue],
    sequences: list[SSAValue],
    in_axes: list[int],
    in_directions: list[int],
    out_axes: list[int],
    out_directions: list[int],
    where: str = "",
) -> list[SSAValue]:
    """The body inlined once per element of the sequences' scan axes: the
    final states, then the scan outputs stacked."""
    out_count = len(out_axes)
    lengths: set[int] = set()
    for i, (value, axis) in enumerate(zip(sequences, in_axes, strict=True)):
        shape = _shape(value)
        in_axes[i] = axis + len(shape) if axis < 0 else axis
        lengths.add(shape[in_axes[i]])
    if len(lengths) != 1:
        node.fail(f"its scan inputs have different lengths {sorted(lengths)}")
    (length,) = lengths
    if length > MAX_ITERATIONS:
        node.fail(f"scans {length} elements; xtc unrolls scans of at most {MAX_ITERATIONS}")
    outputs: list[list[SSAValue]] = [[] for _ in range(out_count)]
    for step in range(length):
        slices = []
        for value, axis, reverse in zip(sequences, in_axes, in_directions, strict=True):
            at = node.constant(np.array(length - 1 - step if reverse else step, np.int64))
            slices.append(node.apply("Gather", [value, at], axis=axis)[0])
        results = node.inline(body, [*states, *slices], f"{where}step {step}")
        states = results[: len(states)]
        for out, value in zip(outputs, results[len(states) :], strict=True):
            out.append(value)
    stacked = [
        stack(node, out[::-1] if reverse else out, axis, f"scan output {k}")
        for k, (out, axis, reverse) in enumerate(
            zip(outputs, out_axes, out_directions, strict=True)
        )
    ]
    return [*states, *stacked]
