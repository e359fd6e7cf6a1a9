"""Ops on token ids, built from others at import: TfIdfVectorizer as
Equal of the input's n-gram windows against the pool's n-grams, their
matches summed and sent to the output columns by a MatMul."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from xtc.dialects.graph import reduce as rd
from xtc.dialects.graph.base import bool_attr, ints_attr
from xtc.frontend.converters import Node, converts
from xtc.frontend.converters.tensor import cast, node_shape, reshape

Outputs = Sequence[SSAValue | None]

TFIDF_MODES = ("TF", "IDF", "TFIDF")


@dataclass(frozen=True)
class NgramPool:
    """The pool's n-grams of one length: `grams` [count, length] and the
    place of each in the pool's order (which `ngram_indexes` and
    `weights` follow)."""

    grams: np.ndarray
    ids: tuple[int, ...]

    @property
    def length(self) -> int:
        return int(self.grams.shape[1])


def _pools(node: Node, dtype: np.dtype) -> tuple[list[NgramPool], list[int]]:
    """The pool's n-grams by length, those of lengths counted only, and the
    output column of every n-gram; a repeated n-gram is refused (as
    onnxruntime does)."""
    if node.attr("pool_strings") is not None:
        node.fail("pool_strings is not supported: xtc has no string tensors")
    pool = [int(v) for v in node.attr("pool_int64s") or []]
    starts = [int(v) for v in node.attr("ngram_counts") or []]
    columns = [int(v) for v in node.attr("ngram_indexes") or []]
    if not columns or min(columns) < 0:
        node.fail(f"ngram_indexes {columns} must be nonempty and not negative")
    shortest, longest = int(node.attr("min_gram_length")), int(node.attr("max_gram_length"))
    if not 1 <= shortest <= longest:
        node.fail(
            f"min_gram_length {shortest} and max_gram_length {longest} are not 1 <= min <= max"
        )
    bounds = [*starts, len(pool)]
    if any(a > b for a, b in zip(bounds, bounds[1:], strict=False)) or (starts and starts[0] < 0):
        node.fail(f"ngram_counts {starts} are not increasing offsets into {len(pool)} pool items")
    info = np.iinfo(dtype)
    ids: dict[tuple[int, ...], int] = {}
    counted: list[tuple[int, ...]] = []
    for length, (begin, end) in enumerate(zip(bounds, bounds[1:], strict=False), start=1):
        if (end - begin) % length:
            node.fail(f"the {end - begin} pool items of {length}-grams are not a whole number")
        for at in range(begin, end, length):
            gram = tuple(pool[at : at + length])
            if gram in ids:
                node.fail(f"the pool holds the {length}-gram {list(gram)} twice")
            ids[gram] = len(ids)
            fits = all(info.min <= v <= info.max for v in gram)  # else it never matches
            if shortest <= length <= longest and fits:
                counted.append(gram)
    if len(ids) != len(columns):
        node.fail(f"ngram_indexes gives {len(columns)} columns for {len(ids)} n-grams")
    pools = []
    for length in range(shortest, longest + 1):
        grams = [g for g in counted if len(g) == length]
        if grams:
            array = np.array(grams, dtype).reshape(len(grams), length)
            pools.append(NgramPool(array, tuple(ids[g] for g in grams)))
    return pools, columns


def _weights(node: Node, mode: str, columns: Sequence[int]) -> np.ndarray:
    """The weight of each n-gram (1 without `weights`); IDF gives a column
    the weight of its n-gram, so there no two may share a column."""
    weights = node.attr("weights")
    if weights is None or mode == "TF":
        return np.ones(len(columns), np.float32)
    if len(weights) != len(columns):
        node.fail(f"{len(weights)} weights for {len(columns)} n-grams")
    if mode == "IDF" and len(set(columns)) != len(columns):
        node.fail(f"IDF weights need one column per n-gram, not ngram_indexes {list(columns)}")
    return np.asarray(weights, np.float32)


def _windows(size: int, length: int, max_skip: int) -> np.ndarray:
    """The positions [windows, length] of every n-gram of `length` with
    gaps of 0 to `max_skip` items in a row of `size` (a unigram once)."""
    distances = range(1, 2) if length == 1 else range(1, max_skip + 2)
    rows = [
        [start + k * d for k in range(length)]
        for d in distances
        for start in range(size - (length - 1) * d)
    ]
    return np.array(rows, np.int64).reshape(len(rows), length)


def _matches(node: Node, x: SSAValue, pool: NgramPool, max_skip: int) -> SSAValue | None:
    """How often each n-gram of `pool` occurs in each row of x: [..., count]
    (None where no window fits in a row)."""
    shape = node_shape(x)
    windows = _windows(shape[-1], pool.length, max_skip)
    if not len(windows):
        return None
    taken = node.apply("Gather", [x, node.constant(windows)], axis=-1)[0]
    taken = reshape(node, taken, [*shape[:-1], len(windows), 1, pool.length])
    equal = node.apply("Equal", [taken, node.constant(pool.grams)])[0]
    hits = cast(node, equal, np.float32)
    rank = len(shape)
    tokens = {"axes": ints_attr([rank + 1]), "keepdims": bool_attr(False)}
    whole = node.emit1(rd.ReduceMinOp, [hits], tokens)  # 1 where every token matches
    windows_axis = {"axes": ints_attr([rank - 1]), "keepdims": bool_attr(False)}
    return node.emit1(rd.ReduceSumOp, [whole], windows_axis)


@converts("TfIdfVectorizer")
def convert_tfidf_vectorizer(node: Node) -> Outputs:
    """Counts [..., columns] of the pool's n-grams (with up to
    max_skip_count items skipped between their tokens) in each row of the
    integer tokens X [C] or [N, C]; TF gives the counts, TFIDF the counts
    times `weights`, IDF `weights` where the count is nonzero (weights of 1
    by default). `weights` follow the pool's n-grams, as onnxruntime and
    the ONNX spec read them (onnx.reference reads them by column)."""
    x = node.input(0)
    shape = node_shape(x)
    dtype = node.dtype(0)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        node.fail(f"input {node.type_str(0)} must hold int32 or int64 tokens")
    if len(shape) not in (1, 2):
        node.fail(f"input {node.type_str(0)} must be [C] or [N, C]")
    mode = node.attr("mode")
    if mode not in TFIDF_MODES:
        node.fail(f"mode '{mode}' is not one of {', '.join(TFIDF_MODES)}")
    pools, columns = _pools(node, dtype)
    weights = _weights(node, mode, columns)
    width = max(columns) + 1
    max_skip = int(node.attr("max_skip_count", 0))
    counts, ids = [], []
    for pool in pools:
        found = _matches(node, x, pool, max_skip)
        if found is not None:
            counts.append(found)
            ids.extend(pool.ids)
    if not counts:
        return [node.constant(np.zeros((*shape[:-1], width), np.float32))]
    spread = np.zeros((len(ids), width), np.float32)  # n-gram count -> its column
    spread[np.arange(len(ids)), [columns[i] for i in ids]] = 1.0
    if mode == "TFIDF":
        spread *= weights[ids][:, None]
    joined = counts[0] if len(counts) == 1 else node.apply("Concat", counts, axis=len(shape) - 1)[0]
    y = node.apply("MatMul", [joined, node.constant(spread)])[0]
    if mode == "IDF":
        by_column = np.zeros(width, np.float32)
        by_column[columns] = weights
        seen = node.apply("Greater", [y, node.constant(np.float32(0))])[0]
        y = node.apply("Where", [seen, node.constant(by_column), node.constant(np.float32(0))])[0]
    return [y]
