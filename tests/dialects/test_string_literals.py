"""dialects/string_literals.py: the lexer's string pattern matches what
xDSL's does, in linear time, and every parse uses it."""

import re

from hypothesis import given
from hypothesis import strategies as st
from xdsl.utils.mlir_lexer import MLIRLexer

from xtc.dialects.string_literals import STRING_LITERAL
from xtc.driver.textual_ir import parse_module

XDSL_PATTERN = re.compile(r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
"""xDSL 0.74's pattern, the reference (on short texts: it backtracks
exponentially on long unclosed ones)."""


@given(st.text(alphabet='ab"\\\nnt0F \v', max_size=14))
def test_the_pattern_matches_what_xdsls_matches(text: str) -> None:
    for start in range(len(text)):
        ours, theirs = STRING_LITERAL.match(text, start), XDSL_PATTERN.match(text, start)
        assert (ours and ours.span()) == (theirs and theirs.span())


def test_the_lexer_uses_it() -> None:
    assert MLIRLexer._unescaped_characters_regex is STRING_LITERAL  # pyright: ignore[reportPrivateUsage]


def test_an_unclosed_string_before_a_long_line_is_an_error() -> None:
    """xDSL's pattern tries 2^60 splits of this line before giving up."""
    text = '"' + "a" * 60 + "\nbuiltin.module {}\n"
    try:
        parse_module(text)
    except Exception as e:  # the parse error, as a diagnostic
        assert "closing string literal" in str(e)
    else:
        raise AssertionError("an unclosed string parsed")
