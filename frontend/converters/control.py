"""If, Loop and Scan: resolved at import where the control flow is known
there (their subgraphs inlined, Node.inline), else regions of graph.if and
graph.loop (dialects/graph/control.py) that decide at run time.

- If: a constant condition inlines the taken branch. A condition known only
  at run time gives a graph.if whose regions hold both branches, which must
  give the same types (xtc compiles static shapes).
- Loop: with a constant trip count and condition, the body is inlined once
  per iteration while the condition it computes folds to a constant, for at
  most MAX_ITERATIONS iterations. Otherwise (a trip count or condition
  given at run time, a condition computed from data, a longer loop) it is a
  graph.loop whose body is converted once; its carried values keep their
  types, and it may have no scan outputs (their count is a run-time value).
- Scan (opset 9 and later): the body is inlined once per element of the
  scan inputs' static axis; past MAX_ITERATIONS elements, it is a graph.loop
  gathering one element per iteration.

Loop and Scan stack their scan outputs with Unsqueeze and Concat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn, TypeVar

import numpy as np
import onnx
from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, TensorType, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from xtc.dialects.graph.base import elem, type_str
from xtc.dialects.graph.control import IfOp, LoopOp, YieldOp
from xtc.dialects.graph.elementwise import IdentityOp
from xtc.dialects.graph.random import RandomUniformOp
from xtc.frontend.converters import NeedsConstantError, Node, Value, converts, ssa_name

MAX_ITERATIONS = 1024
"""The most iterations a Loop or Scan is unrolled to."""
NO_REGIONS = "the target compiles no control flow decided at run time"


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
def convert_if(node: Node) -> Sequence[Value | None]:
    condition = node.const(0)
    if condition is not None:
        taken = "then_branch" if _truth(node, condition, "the condition") else "else_branch"
        return node.inline(_graph(node, taken), [], taken)
    if not node.importer.control_regions:
        node.fail_not_constant(0, "the condition (input 0)", NO_REGIONS)
    flag = node.input(0)
    if elem_type(flag) != i1 or _count(flag) != 1:
        node.fail(f"the condition is {type_str(flag.type)}, not a one-element tensor of bool")
    then, then_values = _region(node, _graph(node, "then_branch"), [], "then_branch")
    orelse, else_values = _region(node, _graph(node, "else_branch"), [], "else_branch")
    why = _why_not_a_region(then_values, else_values)
    if why is not None:
        _discard(then)
        _discard(orelse)
        node.fail_not_constant(
            0, "the condition (input 0)", f"{why}, and xtc compiles static shapes"
        )
    then.add_op(YieldOp(_tensors(then_values)))
    orelse.add_op(YieldOp(_tensors(else_values)))
    types = [v.type for v in _tensors(then_values)]
    return list(_emit(node, IfOp(flag, types, Region(then), Region(orelse))).results)


def _tensors(values: Sequence[Value]) -> list[SSAValue]:
    return [v for v in values if isinstance(v, SSAValue)]


def _why_not_a_region(then: Sequence[Value], orelse: Sequence[Value]) -> str | None:
    """Why branches giving these values cannot be the regions of one graph.if."""
    if len(_tensors(then)) != len(then) or len(_tensors(orelse)) != len(orelse):
        return "a branch gives a sequence or an optional"
    then_types = [v.type for v in _tensors(then)]
    else_types = [v.type for v in _tensors(orelse)]
    if then_types == else_types:
        return None
    listed = [", ".join(type_str(t) for t in types) for types in (then_types, else_types)]
    return f"its branches give different types ({listed[0]} and {listed[1]})"


def elem_type(value: SSAValue) -> Attribute:
    return elem(value.type)


def _count(value: SSAValue) -> int:
    return int(np.prod(_shape(value)))


_Control = TypeVar("_Control", IfOp, LoopOp)


def _emit(node: Node, op: _Control) -> _Control:
    op.location = NameLoc(StringAttr(node.name), NoneAttr())
    node.importer.block.add_op(op)
    return op


def _region(
    node: Node, graph: onnx.GraphProto, arg_types: Sequence[Attribute], at: str
) -> tuple[Block, list[Value]]:
    """A block converting `graph` on arguments of `arg_types` (its
    terminator not yet added), and the graph's outputs."""
    block = Block(arg_types=arg_types)
    for arg, declared in zip(block.args, graph.input, strict=False):
        arg.name_hint = ssa_name(declared.name)
    importer = node.importer
    outer = importer.block
    importer.block = block
    try:
        outputs = node.inline(graph, list(block.args), at)
    finally:
        importer.block = outer
    return block, outputs


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


class _KnownOnlyAtRunTime(Exception):
    """The loop cannot be unrolled at import: it becomes a graph.loop."""


@converts("Loop")
def convert_loop(node: Node) -> Sequence[Value | None]:
    body = _graph(node, "body")
    carried = [node.value(i) for i in range(2, node.num_inputs)]  # sequences and optionals too
    trip_count = node.const(0)
    condition = node.const(1)
    known = (trip_count is not None or not node.has_input(0)) and (
        condition is not None or not node.has_input(1)
    )
    if not node.importer.control_regions:
        for i, what in ((0, "the trip count"), (1, "the condition")):
            if node.has_input(i) and node.const(i) is None:
                node.fail_not_constant(i, f"{what} (input {i})", NO_REGIONS)
    if known:
        scratch = Block()
        importer = node.importer
        outer = importer.block
        importer.block = scratch
        try:
            results = _unrolled(node, body, carried, trip_count, condition)
        except _KnownOnlyAtRunTime:
            results = None
        finally:
            importer.block = outer
        if results is not None:
            for op in list(scratch.ops):
                op.detach()
                outer.add_op(op)
            return results
        _discard(scratch)
        if not node.importer.control_regions:
            node.fail(
                f"its condition depends on run-time values or it runs more than "
                f"{MAX_ITERATIONS} iterations: {NO_REGIONS}"
            )
    return _loop_region(node, body, carried)


def _discard(block: Block) -> None:
    """Erases the ops of an abandoned unrolling, so that the values they use
    lose those uses."""
    for op in reversed(list(block.ops)):
        block.erase_op(op, safe_erase=False)


def _unrolled(
    node: Node,
    body: onnx.GraphProto,
    carried: list[Value],
    max_trip_count: np.ndarray | None,
    condition: np.ndarray | None,
) -> list[Value]:
    """The body inlined once per iteration (no trip count or condition:
    none given); _KnownOnlyAtRunTime when the number of iterations is not
    known at import or exceeds MAX_ITERATIONS."""
    trip_count = None if max_trip_count is None else int(max_trip_count.reshape(-1)[0])
    going = True if condition is None else _truth(node, condition, "the condition")
    limit = MAX_ITERATIONS if trip_count is None else trip_count
    if limit > MAX_ITERATIONS:
        raise _KnownOnlyAtRunTime
    outputs: list[list[SSAValue]] = [[] for _ in range(len(body.output) - 1 - len(carried))]
    iteration = 0
    while going and iteration < limit:
        index = node.constant(np.array(iteration, np.int64))
        flag = node.constant(np.array(True))
        computed, *results = node.inline(body, [index, flag, *carried], f"iteration {iteration}")
        carried, scanned = results[: len(carried)], results[len(carried) :]
        for k, (out, value) in enumerate(zip(outputs, scanned, strict=True)):
            if not isinstance(value, SSAValue):
                node.fail(f"its scan output {k} is not a tensor")
            out.append(value)
        known = node.importer.constants.get(computed) if isinstance(computed, SSAValue) else None
        if known is None:
            raise _KnownOnlyAtRunTime
        going = _truth(node, known, "the condition")
        iteration += 1
    if going and trip_count is None:
        raise _KnownOnlyAtRunTime
    stacked = [stack(node, out, 0, f"scan output {k}") for k, out in enumerate(outputs)]
    return [*carried, *stacked]


def _not_static(node: Node, why: str) -> NoReturn:
    """Fails on a loop that must run a number of iterations known at import:
    its trip count or condition asked for as a constant when it is an input
    (a specializing compile freezes it), else a plain error."""
    for i, what in ((0, "the trip count"), (1, "the condition")):
        if node.has_input(i) and node.const(i) is None:
            node.fail_not_constant(
                i, f"{what} (input {i})", f"{why}, and xtc compiles static shapes"
            )
    node.fail(f"{why}: xtc compiles static shapes")


def _loop_region(node: Node, body: onnx.GraphProto, values: list[Value]) -> Sequence[Value | None]:
    """The loop as a graph.loop: the body converted once. Scan outputs need
    a number of iterations known at import (see _static_iterations)."""
    carried = _tensors(values)
    if len(carried) != len(values):
        _not_static(node, "it carries a sequence or an optional and is not unrolled")
    if node.has_input(0):
        trip_count = node.input(0)
        if elem_type(trip_count) != i64 or _count(trip_count) != 1:
            node.fail(f"the trip count is {type_str(trip_count.type)}, not one int64")
    else:
        trip_count = node.constant(np.array(np.iinfo(np.int64).max, np.int64))
    if node.has_input(1):
        going = node.input(1)
        if elem_type(going) != i1 or _count(going) != 1:
            node.fail(f"the condition is {type_str(going.type)}, not one bool")
    else:
        going = node.constant(np.array(True))
    scans = len(body.output) - 1 - len(carried)
    if scans and (node.const(0) is None or (node.has_input(1) and node.const(1) is None)):
        _not_static(node, f"it has {scans} scan outputs and a trip count known only at run time")
    arg_types = [TensorType(i64, []), TensorType(i1, []), *(v.type for v in carried)]
    try:
        block, given = _region(node, body, arg_types, "body")
    except NeedsConstantError as needs:
        # a value of the body known at import once unrolled (from the iteration number, say)
        _not_static(node, f"its body needs a constant ({needs})")
    if any(isinstance(op, RandomUniformOp) for op in block.walk()):
        # one body converted once would draw the same values every iteration
        _discard(block)
        _not_static(node, "its body draws random values, which differ per iteration")
    outputs = _tensors(given)
    if len(given) < 1 + len(carried) or len(outputs) != len(given):
        node.fail(f"its body gives {len(given)} outputs, not {1 + len(carried)} tensors or more")
    flag = outputs[0]
    if elem_type(flag) != i1 or _count(flag) != 1:
        node.fail(f"its body's condition is {type_str(flag.type)}, not one bool")
    for k, (before, after) in enumerate(zip(carried, outputs[1:], strict=False)):
        if before.type != after.type:
            _discard(block)
            _not_static(
                node,
                f"loop-carried value {k} changes from {type_str(before.type)} to "
                f"{type_str(after.type)}",
            )
    slices = outputs[1 + len(carried) :]
    iterations = _static_iterations(node, block, flag) if slices else 0
    if iterations is None:
        _discard(block)
        _not_static(
            node,
            f"it has {len(slices)} scan outputs and runs a number of iterations known only "
            "at run time",
        )
    scan_types = [TensorType(elem_type(v), [iterations, *_shape(v)]) for v in slices]
    block.add_op(YieldOp(outputs))
    op = _emit(node, LoopOp(trip_count, going, carried, Region(block), scan_types))
    return list(op.results)


def _static_iterations(node: Node, block: Block, flag: SSAValue) -> int | None:
    """The iterations the loop runs when known at import: a constant trip
    count, no condition or a constant true one, and a body that yields its
    condition unchanged (or true); else None."""
    constants = node.importer.constants
    trip_count = node.const(0)
    if trip_count is None:
        return None
    if node.has_input(1):
        start = node.const(1)
        if start is None or not bool(np.all(start)):
            return None
    passed = flag is block.args[1] or (
        isinstance(flag.owner, IdentityOp) and flag.owner.input is block.args[1]
    )
    if not passed and not (flag in constants and bool(np.all(constants[flag]))):
        return None
    return max(int(trip_count.reshape(-1)[0]), 0)


def _scan_loop(
    node: Node,
    body: onnx.GraphProto,
    states: list[SSAValue],
    sequences: list[SSAValue],
    in_axes: list[int],
    in_directions: list[int],
    out_axes: list[int],
    out_directions: list[int],
    length: int,
) -> list[SSAValue]:
    """A Scan too long to unroll as a graph.loop of `length` iterations whose
    body gathers element i (or length - 1 - i) of each sequence; its scan
    results, stacked by iteration, reversed and moved to their axes after."""
    arg_types = [TensorType(i64, []), TensorType(i1, []), *(s.type for s in states)]
    block = Block(arg_types=arg_types)
    importer = node.importer
    outer = importer.block
    importer.block = block
    try:
        step = block.args[0]
        backwards = node.apply("Sub", [node.constant(np.array(length - 1, np.int64)), step])[0]
        slices = [
            node.apply("Gather", [value, backwards if reverse else step], axis=axis)[0]
            for value, axis, reverse in zip(sequences, in_axes, in_directions, strict=True)
        ]
        given = node.inline(body, [*block.args[2:], *slices], "body")
    finally:
        importer.block = outer
    outputs = _tensors(given)
    if len(outputs) != len(given) or len(given) < len(states):
        node.fail(f"its body gives {len(given)} outputs, not {len(states)} tensors or more")
    for k, (before, after) in enumerate(zip(states, outputs, strict=False)):
        if before.type != after.type:
            node.fail(
                f"state {k} changes from {type_str(before.type)} to {type_str(after.type)}: "
                "xtc compiles static shapes"
            )
    rows = outputs[len(states) :]
    block.add_op(YieldOp([block.args[1], *outputs]))
    scan_types = [TensorType(elem_type(v), [length, *_shape(v)]) for v in rows]
    trip_count = node.constant(np.array(length, np.int64))
    loop = _emit(
        node, LoopOp(trip_count, node.constant(np.array(True)), states, Region(block), scan_types)
    )
    stacked = [
        _place_scan(node, v, axis, bool(reverse), length)
        for v, axis, reverse in zip(loop.scan_results, out_axes, out_directions, strict=True)
    ]
    return [*loop.results[: len(states)], *stacked]


def _place_scan(node: Node, stacked: SSAValue, axis: int, reverse: bool, length: int) -> SSAValue:
    """Scan rows stacked on axis 0 by iteration, reversed when `reverse`,
    then moved to `axis` (negative: from the end)."""
    if reverse:
        order = node.constant(np.arange(length - 1, -1, -1, dtype=np.int64))
        stacked = node.apply("Gather", [stacked, order], axis=0)[0]
    rank = len(_shape(stacked))
    axis = axis + rank if axis < 0 else axis
    if axis == 0:
        return stacked
    perm = [*range(1, axis + 1), 0, *range(axis + 1, rank)]
    return node.apply("Transpose", [stacked], perm=perm)[0]


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
        if not node.importer.control_regions:
            node.fail(f"scans {length} elements; {NO_REGIONS} and unrolls at most {MAX_ITERATIONS}")
        return _scan_loop(
            node, body, states, sequences, in_axes, in_directions, out_axes, out_directions, length
        )
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
