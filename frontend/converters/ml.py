"""ai.onnx.ml ops, built from graph ops at import: Binarizer,
ArrayFeatureExtractor, LabelEncoder and TreeEnsemble.

Their parameters are attributes, so each becomes constants and a few
comparisons, selects, gathers and matrix products: a LabelEncoder a lookup
of the input among its constant keys, a TreeEnsemble a dense evaluation of
every split of every tree followed by a product that finds the leaf each
row reaches. String tensors are import-time values in xtc
(frontend/converters/strings.py), so a LabelEncoder or an
ArrayFeatureExtractor of strings computes at import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph import tensor as tn
from xtc.dialects.graph.base import elem, int_attr, ints_attr
from xtc.frontend.converters import Node, StringValue, Value, converts
from xtc.frontend.converters.nn import (
    add,
    cast,
    div,
    dtype_of,
    matmul,
    reduce,
    reshape,
    scalar,
    shape,
    where,
)
from xtc.frontend.converters.strings import string_tensor

ML_DOMAIN = "ai.onnx.ml"

Outputs = Sequence[Value | None]


def gather_last_axis(node: Node, data: SSAValue, indices: SSAValue) -> SSAValue:
    return node.emit1(tn.GatherOp, [data, indices], {"axis": int_attr(len(shape(data)) - 1)})


# ---------------------------------------------------------------------------
# Binarizer, ArrayFeatureExtractor


@converts("Binarizer", domain=ML_DOMAIN)
def convert_binarizer(node: Node) -> Outputs:
    """1 where X > threshold, else 0 (NaN included), in X's element type."""
    x = node.input(0)
    if dtype_of(x).kind not in "fi":
        node.fail(f"X {node.type_str(0)} must hold floats or signed integers")
    threshold = float(node.attr("threshold", 0.0))
    if dtype_of(x).kind == "i":
        # An integer exceeds t exactly when it exceeds floor(t).
        threshold = float(np.clip(math.floor(threshold), *_int_range(dtype_of(x))))
    above = node.emit1(ew.GreaterOp, [x, scalar(node, threshold, x)])
    return [where(node, above, scalar(node, 1, x), scalar(node, 0, x))]


def _int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


@converts("ArrayFeatureExtractor", domain=ML_DOMAIN)
def convert_array_feature_extractor(node: Node) -> Outputs:
    """The entries of X's last axis at the given indices (flattened); a 1-D X
    gives one row, as onnxruntime does."""
    value = node.value(0)
    if isinstance(value, StringValue):
        indices = node.const(1)
        if indices is None:
            node.fail_not_constant(1, "Y (input 1)", "X holds strings, which xtc selects at import")
        array = value.array
        picked = np.take(array, indices.reshape(-1), axis=-1)
        return [
            StringValue(string_tensor(picked.reshape(_extracted_shape(array.shape, picked.shape))))
        ]
    x = node.input(0)
    if dtype_of(node.input(1)).kind not in "iu":
        node.fail(f"Y {node.type_str(1)} must hold integer indices")
    count = int(np.prod(shape(node.input(1))))
    indices = reshape(node, node.input(1), (count,))
    picked = gather_last_axis(node, x, indices)
    return [reshape(node, picked, _extracted_shape(shape(x), shape(picked)))]


def _extracted_shape(data: tuple[int, ...], picked: tuple[int, ...]) -> tuple[int, ...]:
    return (1, picked[-1]) if len(data) == 1 else picked


# ---------------------------------------------------------------------------
# LabelEncoder


@dataclass(frozen=True)
class Mapping:
    """A LabelEncoder's keys, the value of each, and the value of any other
    input: numpy arrays (str objects for strings)."""

    keys: np.ndarray
    values: np.ndarray
    default: Any


def _strings(items: Sequence[str | bytes] | np.ndarray) -> np.ndarray:
    decoded = [i.decode("utf-8") if isinstance(i, bytes) else str(i) for i in np.ravel(items)]
    return string_tensor(decoded)


def _attr_array(node: Node, kinds: Sequence[tuple[str, Any]], what: str) -> np.ndarray:
    """The first attribute among `kinds` (name, numpy dtype or str) the
    node has, as an array; fails naming `what` when it has none."""
    for name, dtype in kinds:
        if node.has_attr(name):
            value = node.attr(name)
            if dtype is str or (isinstance(value, np.ndarray) and value.dtype.kind in "OSU"):
                return _strings(value)
            return np.asarray(value, dtype=dtype).reshape(-1)
    node.fail(f"has no {what} (one of {', '.join(n for n, _ in kinds)})")


def label_mapping(node: Node) -> Mapping:
    keys = _attr_array(
        node,
        [("keys_strings", str), ("keys_int64s", np.int64), ("keys_floats", np.float32)]
        + [("keys_tensor", None)],
        "keys",
    )
    values = _attr_array(
        node,
        [("values_strings", str), ("values_int64s", np.int64), ("values_floats", np.float32)]
        + [("values_tensor", None)],
        "values",
    )
    if len(keys) != len(values):
        node.fail(f"has {len(keys)} keys and {len(values)} values")
    if node.has_attr("values_tensor"):
        default_tensor = node.attr("default_tensor")
        if default_tensor is not None:
            default = _strings(default_tensor)[0] if values.dtype == object else default_tensor
            default = np.asarray(default).reshape(-1)[0]
        else:
            default = (
                "_Unused" if values.dtype == object else (-1 if values.dtype.kind in "iu" else -0.0)
            )
    elif values.dtype == object:
        default = node.attr("default_string", "_Unused")
    elif values.dtype.kind == "i":
        default = node.attr("default_int64", -1)
    else:
        default = node.attr("default_float", -0.0)
    # onnxruntime maps a key given twice to its first value, onnx.reference to its last.
    unique, counts = np.unique(keys, return_counts=True)
    if (counts > 1).any():
        node.fail(f"key {unique[counts > 1].tolist()[0]!r} is given more than once")
    return Mapping(keys, values, default)


@converts("LabelEncoder", domain=ML_DOMAIN)
def convert_label_encoder(node: Node) -> Outputs:
    mapping = label_mapping(node)
    value = node.value(0)
    if isinstance(value, StringValue):
        return [encode_strings(node, value.array, mapping)]
    x = node.input(0)
    if mapping.keys.dtype == object:
        node.fail(f"its keys are strings, X {node.type_str(0)} is not")
    if mapping.values.dtype == object:
        node.fail(
            "its values are strings, which xtc computes at import only: X must hold strings too"
        )
    return [encode_numbers(node, x, mapping)]


def encode_strings(node: Node, strings: np.ndarray, mapping: Mapping) -> Value:
    """The encoding of strings known at import: a constant, or strings."""
    table = dict(zip(mapping.keys.tolist(), mapping.values.tolist(), strict=True))
    found = [table.get(s, mapping.default) for s in strings.reshape(-1).tolist()]
    if mapping.values.dtype == object:
        return StringValue(string_tensor(np.array(found, dtype=object).reshape(strings.shape)))
    return node.constant(np.array(found, dtype=mapping.values.dtype).reshape(strings.shape))


def encode_numbers(node: Node, x: SSAValue, mapping: Mapping) -> SSAValue:
    """Each element's position among the keys (the count of keys where there
    is none) indexes the values followed by the default."""
    dtype = dtype_of(x)
    with np.errstate(invalid="ignore", over="ignore"):
        keys = mapping.keys.astype(dtype)
    # A key that X's type cannot hold matches nothing.
    exact = keys.astype(mapping.keys.dtype) == mapping.keys
    keys, values = keys[exact], mapping.values[exact]
    table = node.constant(np.append(values, np.array(mapping.default, values.dtype)))
    if len(keys) == 0:
        return node.emit1(tn.GatherOp, [table, node.constant(np.zeros(shape(x), np.int64))])
    rank = len(shape(x))
    column = node.emit1(tn.UnsqueezeOp, [x], {"axes": ints_attr([rank])})
    matches = node.emit1(ew.EqualOp, [column, node.constant(keys)])
    positions = where(
        node,
        matches,
        node.constant(np.arange(len(keys), dtype=np.int64)),
        node.constant(np.array(len(keys), np.int64)),
    )
    first = reduce(node, rd.ReduceMinOp, positions, [rank], keepdims=False)
    return node.emit1(tn.GatherOp, [table, first], {"axis": int_attr(0)})


# ---------------------------------------------------------------------------
# TreeEnsemble (ai.onnx.ml 5): every split of every tree is compared at once,
# giving a rows × splits matrix C of 0/1; a path to a leaf is a column of
# +1 (true branch taken) and -1 (false branch), so that C @ paths + the
# count of false branches equals the path's length exactly where the row
# follows it. The rows × paths matrix of 0/1 then weights the targets.

COMPARISONS = (
    ew.LessEqualOp,  # BRANCH_LEQ
    ew.LessOp,  # BRANCH_LT
    ew.GreaterEqualOp,  # BRANCH_GTE
    ew.GreaterOp,  # BRANCH_GT
    ew.EqualOp,  # BRANCH_EQ
    ew.NotEqualOp,  # BRANCH_NEQ
)
"""The comparison of each split mode, by its number."""
MEMBER_MODE = 6
"""BRANCH_MEMBER: the feature is one of the split's set."""
AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
MAX_PATHS = 1 << 16
"""The most root-to-leaf paths a TreeEnsemble may have: the dense form
holds a splits × paths matrix."""


@dataclass(frozen=True)
class Path:
    """A root-to-leaf path: (split, branch taken) pairs and the leaf."""

    steps: tuple[tuple[int, bool], ...]
    leaf: int


@dataclass(frozen=True)
class Trees:
    """The TreeEnsemble's attributes, checked."""

    splits: np.ndarray
    features: np.ndarray
    modes: np.ndarray
    true_ids: np.ndarray
    false_ids: np.ndarray
    true_leafs: np.ndarray
    false_leafs: np.ndarray
    missing_true: np.ndarray
    leaf_targets: np.ndarray
    leaf_weights: np.ndarray
    roots: np.ndarray
    targets: int


def _ints(node: Node, name: str) -> np.ndarray:
    value = node.attr(name)
    if value is None:
        node.fail(f"attribute '{name}' is required")
    return np.asarray(value, dtype=np.int64).reshape(-1)


def ensemble(node: Node, dtype: np.dtype[Any], features: int) -> Trees:
    splits = node.attr("nodes_splits")
    weights = node.attr("leaf_weights")
    if splits is None or weights is None:
        node.fail("attributes 'nodes_splits' and 'leaf_weights' are required")
    columns = {
        name: _ints(node, name)
        for name in (
            "nodes_featureids",
            "nodes_modes",
            "nodes_truenodeids",
            "nodes_falsenodeids",
            "nodes_trueleafs",
            "nodes_falseleafs",
        )
    }
    count = len(np.ravel(splits))
    uneven = [name for name, column in columns.items() if len(column) != count]
    if uneven:
        node.fail(f"{', '.join(uneven)} must have one entry per split ({count})")
    leaf_targets = _ints(node, "leaf_targetids")
    if len(leaf_targets) != len(np.ravel(weights)):
        node.fail(f"has {len(leaf_targets)} leaf_targetids and {len(np.ravel(weights))} weights")
    targets = int(node.attr("n_targets", int(leaf_targets.max(initial=-1)) + 1))
    if leaf_targets.size and not 0 <= leaf_targets.min() <= leaf_targets.max() < targets:
        node.fail(f"leaf_targetids must lie in [0, {targets}) (n_targets)")
    feature_ids = columns["nodes_featureids"]
    if feature_ids.size and not 0 <= feature_ids.min() <= feature_ids.max() < features:
        node.fail(f"nodes_featureids must lie in [0, {features}): X has {features} features")
    modes = columns["nodes_modes"]
    if modes.size and not 0 <= modes.min() <= modes.max() <= MEMBER_MODE:
        node.fail(f"nodes_modes must lie in [0, {MEMBER_MODE}]")
    missing = node.attr("nodes_missing_value_tracks_true")
    return Trees(
        splits=np.asarray(splits).astype(dtype).reshape(-1),
        features=feature_ids,
        modes=modes,
        true_ids=columns["nodes_truenodeids"],
        false_ids=columns["nodes_falsenodeids"],
        true_leafs=columns["nodes_trueleafs"],
        false_leafs=columns["nodes_falseleafs"],
        missing_true=np.zeros(count, bool)
        if missing is None
        else np.asarray(missing, bool).reshape(-1),
        leaf_targets=leaf_targets,
        leaf_weights=np.asarray(weights).astype(dtype).reshape(-1),
        roots=_ints(node, "tree_roots"),
        targets=targets,
    )


def tree_paths(node: Node, trees: Trees) -> list[Path]:
    """Every root-to-leaf path of every tree, in order."""
    splits, leaves = len(trees.modes), len(trees.leaf_targets)
    paths: list[Path] = []

    def walk(index: int, is_leaf: bool, steps: tuple[tuple[int, bool], ...]) -> None:
        limit = leaves if is_leaf else splits
        if not 0 <= index < limit:
            node.fail(f"a branch leads to {'leaf' if is_leaf else 'split'} {index}, of {limit}")
        if is_leaf:
            paths.append(Path(steps, index))
            if len(paths) > MAX_PATHS:
                node.fail(f"its trees have more than {MAX_PATHS} paths")
            return
        if len(steps) > splits:
            node.fail("its branches form a cycle")
        walk(int(trees.true_ids[index]), bool(trees.true_leafs[index]), (*steps, (index, True)))
        walk(int(trees.false_ids[index]), bool(trees.false_leafs[index]), (*steps, (index, False)))

    for root in trees.roots.tolist():
        if not 0 <= root < splits:
            node.fail(f"tree root {root} is not one of the {splits} splits")
        # A tree that is one leaf: both branches of its root lead to it.
        if (
            trees.true_leafs[root]
            and trees.false_leafs[root]
            and trees.true_ids[root] == trees.false_ids[root]
        ):
            walk(int(trees.true_ids[root]), True, ())
        else:
            walk(root, False, ())
    return paths


def member_sets(node: Node, trees: Trees, dtype: np.dtype[Any]) -> np.ndarray:
    """The set of each split in BRANCH_MEMBER mode, one row per split (NaN
    padded): membership_values holds them in split order, each ended by NaN."""
    members = np.asarray(node.attr("membership_values", np.zeros(0)), dtype=np.float64).ravel()
    sets: list[list[float]] = [[]]
    for value in members.tolist():
        if math.isnan(value):
            sets.append([])
        else:
            sets[-1].append(value)
    if sets and not sets[-1]:
        sets.pop()
    member_splits = np.flatnonzero(trees.modes == MEMBER_MODE)
    if len(sets) != len(member_splits):
        node.fail(
            f"membership_values holds {len(sets)} sets for {len(member_splits)} "
            "BRANCH_MEMBER splits"
        )
    table = np.full((len(trees.modes), max((len(s) for s in sets), default=0) or 1), np.nan)
    for split, members_of in zip(member_splits.tolist(), sets, strict=True):
        table[split, : len(members_of)] = members_of
    return table.astype(dtype)


def split_outcomes(node: Node, x: SSAValue, trees: Trees) -> SSAValue:
    """rows × splits: whether each row takes each split's true branch."""
    dtype = dtype_of(x)
    values = node.emit1(tn.GatherOp, [x, node.constant(trees.features)], {"axis": int_attr(1)})
    outcome: SSAValue | None = None
    for mode in sorted(set(trees.modes.tolist())):
        if mode == MEMBER_MODE:
            sets = node.constant(member_sets(node, trees, dtype))
            column = node.emit1(tn.UnsqueezeOp, [values], {"axes": ints_attr([2])})
            hits = cast(node, node.emit1(ew.EqualOp, [column, sets]), elem(x.type))
            taken = node.emit1(
                ew.GreaterOp,
                [reduce(node, rd.ReduceMaxOp, hits, [2], keepdims=False), scalar(node, 0, x)],
            )
        else:
            taken = node.emit1(COMPARISONS[mode], [values, node.constant(trees.splits)])
        outcome = (
            taken
            if outcome is None
            else where(node, node.constant(trees.modes == mode), taken, outcome)
        )
    assert outcome is not None
    if trees.missing_true.any():
        missing = node.emit1(ew.NotEqualOp, [values, values])  # NaN only
        tracked = node.emit1(ew.AndOp, [missing, node.constant(trees.missing_true)])
        outcome = node.emit1(ew.OrOp, [outcome, tracked])
    return outcome


@converts("TreeEnsemble", domain=ML_DOMAIN)
def convert_tree_ensemble(node: Node) -> Outputs:
    x = node.input(0)
    dtype = dtype_of(x)
    if dtype.kind != "f" or len(shape(x)) != 2:
        node.fail(f"X {node.type_str(0)} must be a 2-D float tensor (rows × features)")
    post = int(node.attr("post_transform", 0))
    if post != 0:
        node.fail(f"post_transform {post} is not supported (only 0, none)")
    aggregate = int(node.attr("aggregate_function", 1))
    if not 0 <= aggregate < len(AGGREGATES):
        node.fail(f"aggregate_function {aggregate} is not one of 0 to {len(AGGREGATES) - 1}")
    rows = shape(x)[0]
    trees = ensemble(node, dtype, shape(x)[1])
    paths = tree_paths(node, trees)
    directions = np.zeros((len(trees.modes), len(paths)), dtype)
    false_counts = np.zeros(len(paths), dtype)
    lengths = np.zeros(len(paths), dtype)
    for column, path in enumerate(paths):
        for split, taken in path.steps:
            directions[split, column] += 1 if taken else -1
            false_counts[column] += 0 if taken else 1
        lengths[column] = len(path.steps)
    outcomes = cast(node, split_outcomes(node, x, trees), elem(x.type))
    agreeing = add(
        node, matmul(node, outcomes, node.constant(directions)), node.constant(false_counts)
    )
    followed = node.emit1(ew.EqualOp, [agreeing, node.constant(lengths)])
    leaves = np.array([p.leaf for p in paths], np.int64)
    weights = trees.leaf_weights[leaves]
    targets = trees.leaf_targets[leaves]
    name = AGGREGATES[aggregate]
    if name in ("SUM", "AVERAGE"):
        table = np.zeros((len(paths), trees.targets), dtype)
        table[np.arange(len(paths)), targets] = weights
        total = matmul(node, cast(node, followed, elem(x.type)), node.constant(table))
        if name == "AVERAGE":
            total = div(node, total, scalar(node, len(trees.roots), x))
        return [total]
    # MIN, MAX: over the followed paths of each target; 0 for a target that
    # none reaches, as onnxruntime gives (onnx.reference leaves the type's extreme).
    info = np.finfo(dtype)
    start = info.max if name == "MIN" else info.min
    of_target = np.arange(trees.targets)[:, None] == targets[None, :]  # targets × paths
    reaching = matmul(
        node, cast(node, followed, elem(x.type)), node.constant(of_target.T.astype(dtype))
    )
    reached = node.emit1(ew.GreaterOp, [reaching, scalar(node, 0, x)])
    followed = node.emit1(tn.UnsqueezeOp, [followed], {"axes": ints_attr([1])})
    counted = node.emit1(ew.AndOp, [followed, node.constant(of_target)])
    candidates = where(node, counted, node.constant(weights), scalar(node, start, x))
    reduction = rd.ReduceMinOp if name == "MIN" else rd.ReduceMaxOp
    result = reduce(node, reduction, candidates, [2], keepdims=False)
    return [where(node, reached, reshape(node, result, (rows, trees.targets)), scalar(node, 0, x))]
