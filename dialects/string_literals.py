"""A linear-time string-literal pattern for xDSL's MLIR lexer, installed
at import.

xDSL 0.74 lexes `"..."` with `"(?:[^"\\\n\v\f]+|\\(...))*"`: a run of
plain characters can split into `+` pieces in exponentially many ways, so
a string left unclosed on its line (one stray `"` in a file) backtracks
for minutes before the error. Here each character is matched by exactly
one alternative: the same strings, the same error, in linear time."""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def install() -> None:
    """Makes every MLIRLexer use STRING_LITERAL."""
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL  # pyright: ignore[reportPrivateUsage]


install()
