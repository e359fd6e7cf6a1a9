"""ONNX string ops, computed at import.

xtc compiles numeric code and has no string buffers at run time. A string
tensor is a StringValue: numpy str objects known at import (a string graph
input is specialized on its value, as a Reshape's shape is: see
driver/specializing.py). These ops compute on those values with numpy; a
string result stays a StringValue (a string graph output is returned from
it) and a numeric one (RegexFullMatch, Equal, StringSplit's lengths)
becomes a constant. Any other op given strings refuses them
(`Node.input`).

StringNormalizer, StringSplit, StringConcat and RegexFullMatch are
converted here; Equal on strings is `equal_strings`, called by Equal's
converter (frontend/converters/elementwise.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from xtc.frontend.converters import Node, StringValue, Value, converts

Outputs = Sequence[Value | None]

LOCALES = ("", "en_US", "en_US.UTF-8", "en_US.utf8", "C.UTF-8")
"""The locales StringNormalizer accepts: en_US (onnxruntime's default) and
C.UTF-8, whose case mappings are Unicode's simple ones."""
CASE_CHANGES = ("NONE", "LOWER", "UPPER")


def string_tensor(items: object) -> np.ndarray:
    """`items` (an array or nested lists of str) as an array of str objects."""
    source = np.asarray(items, dtype=object)
    array = np.empty(source.shape, dtype=object)
    array[...] = source
    return array


def _broadcast(node: Node, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        left, right = np.broadcast_arrays(a, b)
    except ValueError:
        node.fail(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
    return left, right


def _elementwise(
    node: Node, a: np.ndarray, b: np.ndarray, function: Callable[[str, str], object], dtype: type
) -> np.ndarray:
    """`function` on each pair of broadcast elements, as an array of `dtype`."""
    left, right = _broadcast(node, a, b)
    result = np.empty(left.shape, dtype=dtype)
    for at in np.ndindex(left.shape):
        result[at] = function(str(left[at]), str(right[at]))
    return result


@converts("StringConcat")
def convert_string_concat(node: Node) -> Outputs:
    """X + Y, element by element, with numpy broadcasting."""
    joined = _elementwise(node, node.strings(0), node.strings(1), lambda a, b: a + b, object)
    return [StringValue(joined)]


def equal_strings(node: Node) -> Value:
    """Equal on two string tensors (broadcast): a bool constant."""
    return node.constant(
        _elementwise(node, node.strings(0), node.strings(1), lambda a, b: a == b, bool)
    )


# ---------------------------------------------------------------------------
# StringSplit


def _split(text: str, delimiter: str | None, maxsplit: int) -> list[str]:
    """`text`'s substrings: on `delimiter`, or on runs of whitespace
    (leading and trailing whitespace dropped) when it is None; at most
    `maxsplit` splits when it is not negative. An empty string has none,
    as onnxruntime gives (onnx.reference gives one empty substring)."""
    if delimiter is None:
        text = text.strip()
    if not text:
        return []
    return text.split(delimiter, maxsplit)


@converts("StringSplit")
def convert_string_split(node: Node) -> Outputs:
    """Y: each string's substrings along a new last axis, padded with ""
    to the longest count; Z (int64): each string's count."""
    x = node.strings(0)
    delimiter = node.attr("delimiter", "") or None
    maxsplit = int(node.attr("maxsplit", -1))
    parts = [_split(s, delimiter, maxsplit) for s in x.reshape(-1)]
    width = max((len(p) for p in parts), default=0)
    substrings = np.full((len(parts), width), "", dtype=object)
    for row, part in enumerate(parts):
        substrings[row, : len(part)] = part
    lengths = np.array([len(p) for p in parts], np.int64).reshape(x.shape)
    return [StringValue(substrings.reshape(*x.shape, width)), node.constant(lengths)]


# ---------------------------------------------------------------------------
# StringNormalizer


def _change_case(text: str, upper: bool) -> str:
    """`text` upper- or lowercased character by character, as a wide-char
    towupper/towlower does: a character whose case mapping is several
    characters (ß -> SS) is kept."""
    changed = [c.upper() if upper else c.lower() for c in text]
    return "".join(new if len(new) == 1 else old for new, old in zip(changed, text, strict=True))


@converts("StringNormalizer")
def convert_string_normalizer(node: Node) -> Outputs:
    """X [C] or [1, C] without the `stopwords` (compared case-insensitively
    unless is_case_sensitive), then lower- or uppercased
    (case_change_action); [""] ([[""]] for [1, C]) when none is left."""
    x = node.strings(0)
    if x.ndim not in (1, 2) or (x.ndim == 2 and x.shape[0] != 1) or x.size == 0:
        node.fail(f"input {list(x.shape)} must be [C] or [1, C] with C > 0")
    locale = node.attr("locale", "")
    if locale not in LOCALES:
        node.fail(f"locale '{locale}' is not supported: xtc normalizes strings as en_US does")
    action = node.attr("case_change_action", "NONE")
    if action not in CASE_CHANGES:
        node.fail(f"case_change_action '{action}' is not one of {', '.join(CASE_CHANGES)}")
    sensitive = bool(node.attr("is_case_sensitive", 0))

    def key(word: str) -> str:
        return word if sensitive else _change_case(word, upper=False)

    stopwords = {key(w) for w in node.attr("stopwords", [])}
    kept = [s for s in x.reshape(-1) if key(s) not in stopwords] or [""]
    if action != "NONE":
        kept = [_change_case(s, upper=action == "UPPER") for s in kept]
    result = string_tensor(kept)
    return [StringValue(result.reshape(1, -1) if x.ndim == 2 else result)]


# ---------------------------------------------------------------------------
# RegexFullMatch

POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
"""RE2's ASCII classes `[[:alpha:]]`, as Python's re spells their ranges."""
ESCAPES_NOT_RE2 = re.compile(r"\\[1-9pP]")
CONSTRUCTS_NOT_RE2 = re.compile(r"\(\?(?:=|!|<=|<!|P=|>)|[*+?}]\+")
"""What Python's re reads otherwise than RE2: backreferences, lookaround,
atomic groups and possessive quantifiers (which RE2 refuses), and \\p
classes (which re lacks)."""


def python_pattern(node: Node, pattern: str) -> re.Pattern[str]:
    """An RE2 `pattern` as a Python regular expression with RE2's meaning:
    re.ASCII, as RE2's \\w, \\d, \\s and \\b are ASCII; POSIX classes
    spelt as ranges. What RE2 refuses, or re cannot read as RE2 does, is
    refused."""
    unescaped = re.sub(r"\\.", "_", pattern)
    found = ESCAPES_NOT_RE2.search(pattern.replace("\\\\", "")) or CONSTRUCTS_NOT_RE2.search(
        unescaped
    )
    if found:
        node.fail(
            f"pattern {pattern!r}: xtc matches with Python's re, which reads "
            f"'{found.group()}' otherwise than RE2"
        )
    translated = re.sub(
        r"\[:(\^?)([a-z]+):\]",
        lambda m: _posix_class(node, pattern, m.group(1), m.group(2)),
        pattern,
    )
    try:
        return re.compile(translated, re.ASCII)
    except re.error as e:
        node.fail(f"pattern {pattern!r} is not a valid regular expression: {e}")


def _posix_class(node: Node, pattern: str, negated: str, name: str) -> str:
    if name not in POSIX_CLASSES:
        node.fail(f"pattern {pattern!r}: [:{name}:] is not a POSIX class")
    if negated:
        node.fail(f"pattern {pattern!r}: the negated class [:^{name}:] is not supported")
    return POSIX_CLASSES[name]


@converts("RegexFullMatch")
def convert_regex_full_match(node: Node) -> Outputs:
    """Whether each string matches `pattern` as a whole (a bool constant).
    The pattern is RE2 syntax, matched with Python's re (python_pattern)."""
    pattern = node.attr("pattern")
    if not isinstance(pattern, str):
        node.fail("needs its 'pattern' attribute")
    compiled = python_pattern(node, pattern)
    x = node.strings(0)
    matched = np.array([compiled.fullmatch(s) is not None for s in x.reshape(-1)], bool)
    return [node.constant(matched.reshape(x.shape))]
