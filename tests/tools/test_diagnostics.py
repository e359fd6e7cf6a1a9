"""MLIR's `expected-*` annotations: where they point, what they match, and
what `check_diagnostics` reports when diagnostics and annotations differ."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtc.tools.diagnostics import Diagnostic, Severity, check_diagnostics, parse_expectations

FILE = "t.mlir"


def targets(text: str, first_line: int = 1) -> list[tuple[str, int | None, str]]:
    expectations, problems = parse_expectations(text, FILE, first_line)
    assert problems == [], [p.render() for p in problems]
    return [(e.severity, e.line, e.text) for e in expectations]


def problems_of(text: str) -> list[str]:
    return [p.render() for p in parse_expectations(text, FILE)[1]]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("op // expected-error {{bad}}", [("error", 1, "bad")]),
        ("a\n// expected-error@+1 {{x}}\nb", [("error", 3, "x")]),
        ("a\nb\n// expected-warning @-2 {{x}}", [("warning", 1, "x")]),
        ("a\n// expected-note@above {{x}}", [("note", 1, "x")]),
        ("// expected-remark@below {{x}}\nb", [("remark", 2, "x")]),
        ("// expected-error@unknown {{x}}", [("error", None, "x")]),
        # @above and @below skip the lines that hold annotations themselves.
        (
            "a\n// expected-error@above {{x}}\n// expected-error@above {{y}}",
            [("error", 1, "x"), ("error", 1, "y")],
        ),
        (
            "// expected-error@below {{x}}\n// expected-error@below {{y}}\nc",
            [("error", 3, "x"), ("error", 3, "y")],
        ),
        # The message runs to the last `}}` of the line.
        ("// expected-error {{a {} b {i}}}", [("error", 1, "a {} b {i}")]),
        ("// expected-error {{}}", [("error", 1, "")]),
        # Prose and CHECK lines that mention annotations are not annotations.
        ("// the expected-error annotations below", []),
        ('// CHECK: error: expected error "x" was not produced', []),
        # Outside a comment it is IR text, not an annotation.
        ('"expected-error {{x}}"', []),
    ],
)
def test_annotation_targets(text: str, expected: list[tuple[str, int | None, str]]) -> None:
    assert targets(text) == expected


def test_lines_count_from_the_chunk_start_in_the_file() -> None:
    assert targets("\n// expected-error@+1 {{x}}\nop", first_line=10) == [("error", 12, "x")]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("// expected-error {{no end}", "t.mlir:1:4: error: malformed expected-error: write"),
        ("// expected-error @+x {{m}}", "t.mlir:1:4: error: malformed expected-error"),
        ("// expected-error@above {{m}}", "t.mlir:1:4: error: @above has no line above it"),
        ("a\n// expected-note@below {{m}}", "t.mlir:2:26: error: expected-note@below has no line"),
        ("a\n// expected-error@-2 {{m}}", "expected-error@-2 points at line 0, outside lines 1-2"),
        ("// expected-error@+5 {{m}}", "expected-error@+5 points at line 6, outside lines 1-1"),
        ("// expected-error-re {{a {{[0-9}}}}", "t.mlir:1:4: error: bad regex in {{a {{[0-9}}}}"),
        ("// expected-error-re {{a {{[0-9]+}}", "regex '{{' with no '}}'"),
    ],
)
def test_malformed_annotations_are_located_diagnostics(text: str, problem: str) -> None:
    found = problems_of(text)
    assert len(found) == 1 and problem in found[0], found


def produced(line: int | None, message: str, severity: Severity = "error") -> Diagnostic:
    return Diagnostic(FILE, line, 3, message, severity)


def failures(text: str, *diagnostics: Diagnostic) -> list[str]:
    expectations, problems = parse_expectations(text, FILE)
    assert problems == []
    return [f.render() for f in check_diagnostics(expectations, diagnostics, FILE)]


def test_matching_diagnostic_passes() -> None:
    text = "// expected-error@+1 {{op result}}\nop"
    assert failures(text, produced(2, "'graph.relu' op result type")) == []


def test_missing_diagnostic_is_reported_at_the_annotation() -> None:
    assert failures("// expected-error@+1 {{foo}}\nop") == [
        't.mlir:1:24: error: expected error "foo" was not produced'
    ]


def test_unexpected_diagnostic_is_reported_where_it_was_produced() -> None:
    assert failures("op", produced(1, "bar")) == ["t.mlir:1:3: error: unexpected error: bar"]


def test_wrong_message_is_both_unexpected_and_missing() -> None:
    assert failures("op // expected-error {{foo}}", produced(1, "bar")) == [
        "t.mlir:1:3: error: unexpected error: bar",
        't.mlir:1:24: error: expected error "foo" was not produced',
    ]


@pytest.mark.parametrize(
    "annotation, diagnostic",
    [
        ("// expected-error@+1 {{x}}", produced(3, "x")),  # wrong line
        ("// expected-warning@+1 {{x}}", produced(2, "x")),  # wrong severity
        ("// expected-error@unknown {{x}}", produced(2, "x")),  # located, not unknown
        ("// expected-error@+1 {{x}}", produced(None, "x")),  # unknown, not on line 2
    ],
)
def test_place_and_severity_must_match(annotation: str, diagnostic: Diagnostic) -> None:
    assert len(failures(annotation + "\nop\nop", diagnostic)) == 2


def test_unknown_location_matches_unknown_annotation() -> None:
    assert failures("// expected-error@unknown {{refused}}", produced(None, "pass refused")) == []


def test_each_annotation_meets_one_diagnostic() -> None:
    text = "op // expected-error {{x}}"
    assert failures(text, produced(1, "x"), produced(1, "x")) == [
        "t.mlir:1:3: error: unexpected error: x"
    ]


def test_regex_annotation() -> None:
    text = "op // expected-error-re {{dim {{[0-9]+}} of (x)}}"
    assert failures(text, produced(1, "dim 12 of (x) is bad")) == []
    assert len(failures(text, produced(1, "dim N of (x)"))) == 2


one_line = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=30)


@given(message=one_line, cut=st.tuples(st.integers(0, 30), st.integers(0, 30)))
def test_any_substring_of_the_message_matches(message: str, cut: tuple[int, int]) -> None:
    expected = message[min(cut) : max(cut)]
    text = f"op // expected-error {{{{{expected}}}}}"
    assert targets(text) == [("error", 1, expected)]
    assert failures(text, produced(1, message)) == []


@given(
    lines=st.integers(1, 20),
    data=st.data(),
)
def test_relative_offsets_point_at_the_line(lines: int, data: st.DataObject) -> None:
    at = data.draw(st.integers(1, lines))
    target = data.draw(st.integers(1, lines))
    body = [f"op{i}" for i in range(1, lines + 1)]
    offset = target - at
    where = f"@{offset:+d}" if offset else ""
    body[at - 1] = f"// expected-error{where} {{{{m}}}}"
    text = "\n".join(body)
    assert targets(text) == [("error", target, "m")]
    assert failures(text, produced(target, "m")) == []
