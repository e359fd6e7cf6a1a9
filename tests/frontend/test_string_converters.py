"""String ops, computed at import (frontend/converters/strings.py), against
onnxruntime on inputs the conformance cases do not cover: string inputs
specialized on their values, string outputs returned from them, numeric
results computed natively."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import xtc
from xtc.driver.compiler import CompileError
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.converters import NeedsConstantError
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.frontend.structured import Layout

S = TensorProto.STRING


def strings(*rows: object) -> np.ndarray:
    array = np.empty(np.shape(rows), dtype=object)
    array[...] = rows
    return array


def model_of(
    nodes: Sequence[onnx.NodeProto],
    inputs: dict[str, tuple[int, Sequence[int]]],
    outputs: dict[str, int],
    opset: int = 20,
    initializers: Sequence[onnx.TensorProto] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "strings",
        [helper.make_tensor_value_info(n, t, list(s)) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def ort(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return [np.asarray(v) for v in session.run(None, inputs)]


def assert_same(got: Sequence[object], want: Sequence[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        assert g.shape == w.shape
        if w.dtype == object:
            assert g.dtype == object and g.tolist() == w.tolist()
        else:
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)


def check_against_onnxruntime(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> None:
    """The interpreted and the native specializing runners give ort's outputs."""
    want = ort(model, inputs)
    for path in ("interp", "native"):
        assert_same(specializing_model(model, path).run(inputs), want)


def test_string_concat_broadcasts_columns_against_a_row_and_a_constant() -> None:
    """[2, 1] + [3], then + a Constant string: 2-D broadcasting, which the
    cases (1-D and scalars) do not have."""
    suffix = numpy_helper.from_array(strings("!"), "suffix")
    nodes = [
        helper.make_node("StringConcat", ["a", "b"], ["ab"]),
        helper.make_node("Constant", [], ["bang"], value=suffix),
        helper.make_node("StringConcat", ["ab", "bang"], ["y"]),
    ]
    model = model_of(nodes, {"a": (S, [2, 1]), "b": (S, [3])}, {"y": S})
    check_against_onnxruntime(model, {"a": strings(["x"], ["é"]), "b": strings("1", "", "中")})


@pytest.mark.parametrize(
    ("attrs", "x"),
    [
        ({"maxsplit": 1}, strings(" a b  c ", "x", "")),
        ({"maxsplit": 0}, strings(["  a b "], ["c"])),
        ({"delimiter": "ab", "maxsplit": 1}, strings("xabyabz", "ab", "")),
        ({"delimiter": ", "}, strings(["1, 2, 3", "4"], [", ", "5,6"])),
        ({"maxsplit": -1}, strings("one  two three", "")),
    ],
)
def test_string_split_is_onnxruntimes(attrs: dict[str, object], x: np.ndarray) -> None:
    """maxsplit with surrounding whitespace, a delimiter of two characters,
    empty strings and 2-D inputs."""
    node = helper.make_node("StringSplit", ["x"], ["y", "z"], **attrs)
    model = model_of([node], {"x": (S, x.shape)}, {"y": S, "z": TensorProto.INT64})
    check_against_onnxruntime(model, {"x": x})


def test_string_split_lengths_feed_a_native_kernel() -> None:
    """A numeric result of strings is a constant that a run-time input
    meets natively, through xtc.compile too."""
    nodes = [
        helper.make_node("StringSplit", ["x"], ["parts", "count"]),
        helper.make_node("Cast", ["count"], ["n"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["n", "w"], ["y"]),
    ]
    model = model_of(
        nodes, {"x": (S, [3]), "w": (TensorProto.FLOAT, [3])}, {"y": TensorProto.FLOAT}
    )
    inputs = {"x": strings("a b c", "", "d e"), "w": np.array([0.5, 2.0, -1.0], np.float32)}
    check_against_onnxruntime(model, inputs)
    compiled = xtc.compile(model, cache=False)
    np.testing.assert_allclose(compiled.run(inputs)[0], [1.5, 0.0, -2.0])


@pytest.mark.parametrize(
    ("attrs", "x"),
    [
        (
            {"case_change_action": "LOWER", "stopwords": ["THE", "a"]},
            strings("The", "Cat", "a", "A", "sat"),
        ),
        ({"case_change_action": "UPPER", "stopwords": ["x"]}, strings(["X", "x"])),
        ({"is_case_sensitive": 1, "stopwords": ["Dog"]}, strings(["dog", "Dog", "DOG"])),
        ({"case_change_action": "UPPER"}, strings("éa", "straße", "ǆ")),
    ],
)
def test_string_normalizer_is_onnxruntimes(attrs: dict[str, object], x: np.ndarray) -> None:
    """Case-insensitive stopwords, a [1, C] input left empty ([[""]]),
    case-sensitive ones, and characters past ASCII (ß has no one-character
    uppercase and stays). onnxruntime is given locale C.UTF-8: its en_US
    needs a locale this machine may not have installed."""
    node = helper.make_node("StringNormalizer", ["x"], ["y"], locale="C.UTF-8", **attrs)
    model = model_of([node], {"x": (S, x.shape)}, {"y": S}, opset=10)
    check_against_onnxruntime(model, {"x": x})


@pytest.mark.parametrize(
    ("pattern", "x"),
    [
        (r"\w+", strings("abc", "é", "a_1", "")),
        (r"[[:digit:]]+-[[:alpha:]]*", strings(["12-ab", "1-"], ["x-1", "٣-a"])),
        (r"a|ab", strings("ab", "a", "b")),
        (r"(?i)hello\s\d{2}\b", strings("HeLLo 42", "hello 4", "hello\u00a042")),
        (r"a.c", strings("abc", "a\nc", "aéc")),
    ],
)
def test_regex_full_match_is_onnxruntimes(pattern: str, x: np.ndarray) -> None:
    """RE2's ASCII \\w \\d \\s \\b, POSIX classes, alternation matched as a
    whole, flags, and . on a non-ASCII character and a newline."""
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)
    model = model_of([node], {"x": (S, x.shape)}, {"y": TensorProto.BOOL})
    check_against_onnxruntime(model, {"x": x})


def test_equal_on_strings_broadcasts_in_two_dimensions() -> None:
    node = helper.make_node("Equal", ["a", "b"], ["y"])
    model = model_of([node], {"a": (S, [2, 1]), "b": (S, [3])}, {"y": TensorProto.BOOL})
    check_against_onnxruntime(model, {"a": strings(["x"], ["y"]), "b": strings("x", "y", "X")})


def test_a_string_input_is_specialized_on_its_value() -> None:
    """Each new value of the strings imports again; the same value (as
    str objects or a numpy str array) reuses its specialization."""
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern="a+")
    model = model_of([node], {"x": (S, [2])}, {"y": TensorProto.BOOL})
    runner = specializing_model(model, "interp")
    assert runner.run({"x": strings("aa", "b")})[0].tolist() == [True, False]
    assert runner.run({"x": strings("b", "aaa")})[0].tolist() == [False, True]
    assert runner.run({"x": strings("aa", "b")})[0].tolist() == [True, False]
    assert runner.specialized_inputs == ["x"]
    assert len(runner.specializations) == 2


def test_a_compiled_model_specialized_on_strings_exports_its_values(tmp_path: object) -> None:
    node = helper.make_node("Equal", ["x", "k"], ["y"])
    key = numpy_helper.from_array(strings("key"), "k")
    model = model_of([node], {"x": (S, [2])}, {"y": TensorProto.BOOL}, initializers=[key])
    compiled = xtc.compile(model, cache=False)
    assert compiled.run({"x": np.array(["key", "lock"])})[0].tolist() == [True, False]
    path = f"{tmp_path}/equal.tar"
    compiled.export(path)
    loaded = xtc.load(path)
    assert loaded.run({"x": strings("key", "lock")})[0].tolist() == [True, False]
    with pytest.raises(xtc.InputError, match="holds no specialization"):
        loaded.run({"x": strings("lock", "key")})


def test_string_layout_prints_and_parses_back() -> None:
    layout = Layout.of_strings(strings(["a", 'q"uote'], ["中", ""]))
    again = Layout.parse(str(layout))
    assert again == layout
    assert again.string_value().tolist() == [["a", 'q"uote'], ["中", ""]]


# ---------------------------------------------------------------------------
# Refusals, each one line.


def refusal(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> str:
    with pytest.raises(OnnxImportError) as caught:
        specializing_model(model, "interp").run(inputs)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_op_that_takes_no_strings_refuses_them() -> None:
    node = helper.make_node("Reshape", ["x", "shape"], ["y"])
    shape = numpy_helper.from_array(np.array([2, 1], np.int64), "shape")
    model = model_of([node], {"x": (S, [2])}, {"y": S}, initializers=[shape])
    message = refusal(model, {"x": strings("a", "b")})
    assert "Reshape node" in message and "input 0 holds strings" in message


def test_a_string_op_refuses_numbers() -> None:
    node = helper.make_node("StringConcat", ["x", "x"], ["y"])
    model = model_of([node], {"x": (TensorProto.FLOAT, [2])}, {"y": S})
    message = refusal(model, {"x": np.ones(2, np.float32)})
    assert "input 0 must hold strings" in message


@pytest.mark.parametrize(
    ("attrs", "x", "says"),
    [
        ({"locale": "fr_FR"}, strings("a"), "locale 'fr_FR' is not supported"),
        ({"case_change_action": "TITLE"}, strings("a"), "case_change_action 'TITLE'"),
        ({}, strings(["a", "b"], ["c", "d"]), "must be [C] or [1, C]"),
    ],
)
def test_string_normalizer_refusals(attrs: dict[str, object], x: np.ndarray, says: str) -> None:
    node = helper.make_node("StringNormalizer", ["x"], ["y"], **attrs)
    model = model_of([node], {"x": (S, x.shape)}, {"y": S}, opset=10)
    assert says in refusal(model, {"x": x})


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        (r"(a)\1", "reads '\\1' otherwise than RE2"),
        (r"a(?=b)", "reads '(?=' otherwise than RE2"),
        (r"\pL+", "reads '\\p' otherwise than RE2"),
        (r"a++", "reads '++' otherwise than RE2"),
        (r"[[:greek:]]", "[:greek:] is not a POSIX class"),
        (r"(a", "is not a valid regular expression"),
    ],
)
def test_regex_full_match_refuses_what_python_reads_otherwise(pattern: str, says: str) -> None:
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)
    model = model_of([node], {"x": (S, [1])}, {"y": TensorProto.BOOL})
    assert says in refusal(model, {"x": strings("aa")})


def test_an_escaped_backslash_before_a_digit_is_no_backreference() -> None:
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=r"a\\1")
    model = model_of([node], {"x": (S, [2])}, {"y": TensorProto.BOOL})
    check_against_onnxruntime(model, {"x": strings("a\\1", "a1")})


def test_import_without_the_strings_names_the_input() -> None:
    node = helper.make_node("StringConcat", ["x", "x"], ["y"])
    model = model_of([node], {"x": (S, [2])}, {"y": S})
    with pytest.raises(NeedsConstantError, match="input 'x' holds strings"):
        import_model(model)


def test_compile_refuses_a_string_output_in_one_line() -> None:
    node = helper.make_node("StringConcat", ["x", "x"], ["joined"])
    model = model_of([node], {"x": (S, [2])}, {"joined": S})
    with pytest.raises(CompileError, match="output 'joined' holds strings") as caught:
        xtc.compile(model, cache=False).run({"x": strings("a", "b")})
    assert "\n" not in str(caught.value)


def test_a_frozen_string_input_must_hold_strings() -> None:
    node = helper.make_node("StringConcat", ["x", "x"], ["y"])
    model = model_of([node], {"x": (S, [2])}, {"y": S})
    with pytest.raises(OnnxImportError, match="frozen input 'x' holds a int"):
        import_model(model, freeze={"x": np.array([1, 2], dtype=object)})
