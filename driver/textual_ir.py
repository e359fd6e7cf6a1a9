"""Reading and printing xtc IR text: one context with every dialect xtc
uses, a parser that remembers where each op starts (for located
diagnostics), and the printer with the `dialect_resources` section."""

from __future__ import annotations

import re
from io import StringIO

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, TypeAttribute
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.utils.lexer import Input, Location
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from xtc.dialects import string_literals  # noqa: F401 - installs the linear string pattern
from xtc.dialects.resource_blobs import blob_storage


def make_context() -> Context:
    """A context with xDSL's dialects, every xtc dialect and those of working
    plugins (xdsl.universe and xtc.ops), loaded lazily; blobs are read into
    xtc's blob storage (dialects/resource_blobs.py)."""
    from xtc.driver.universe import all_dialects

    blob_storage()
    ctx = Context()
    for name, factory in all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


class LinearTimeLexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that cannot backtrack: xDSL
    0.74's takes time exponential in the line length on an unterminated
    string (a malformed file would hang xtc-opt)."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')


class LocatingParser(Parser):
    """xDSL's parser that records each op's start position, and reads a
    `dense_resource<key>` as the resource named `key` even when an earlier
    parse in this process declared the same key (xDSL 0.74 would rename the
    handle to `key_0` and leave it without data)."""

    def __init__(self, ctx: Context, text: str, name: str = "<stdin>") -> None:
        super().__init__(ctx, text, name)
        self._parser_state = ParserState(LinearTimeLexer(Input(text, name)))
        self.op_starts: dict[Operation, int] = {}
        self._shaped_types: dict[str, TypeAttribute] = {}

    def parse_optional_type(self) -> TypeAttribute | None:
        """xDSL's, but a shaped type (`memref<1x64x56x56xf32>`) written as
        the same text earlier in this file is the type read there: a kernel
        names each of its buffers' types at every load and store, and a
        memref type costs more to read than the op it ends."""
        token = self._current_token
        if token.kind is not MLIRTokenKind.BARE_IDENT or token.text not in _SHAPED_TYPES:
            return super().parse_optional_type()
        content = self.lexer.input.content
        start = token.span.start
        end = _after_angle_brackets(content, token.span.end)
        text = content[start:end] if end is not None else ""
        known = self._shaped_types.get(text)
        if known is not None:
            self._resume_from(end)
            return known
        parsed = super().parse_optional_type()
        # kept only where the type read is exactly that text (a comment
        # after it, or brackets the scan misread, keep it out)
        if parsed is not None and end is not None and not content[end : self.pos].strip():
            self._shaped_types[text] = parsed
        return parsed

    def parse_operation(self) -> Operation:
        start = self.pos
        op = super().parse_operation()
        self.op_starts[op] = start
        return op

    def _parse_dialect_resource_handle(
        self, dialect_name: str, interface: OpAsmDialectInterface
    ) -> str:
        key = self.parse_identifier(" for resource handle")
        if interface.lookup(key) is None:
            interface.declare_resource(key)
        self.dialect_resources.add((dialect_name, key))
        return key

    def location_of(self, op: Operation) -> Location | None:
        """file:line:col of the op's first character, if this parser read it."""
        start = self.op_starts.get(op)
        if start is None:
            return None
        source = self.lexer.input
        line = source.content.count("\n", 0, start) + 1
        col = start - (source.content.rfind("\n", 0, start) + 1) + 1
        return Location(source.name, line, col)


_SHAPED_TYPES = frozenset(("memref", "vector", "tensor"))


def _after_angle_brackets(content: str, start: int) -> int | None:
    """The position after the `>` that closes the `<` at `start` (None when
    `start` holds no `<`, or it is not closed on its line); the `>` of `->`
    (in an affine map) closes nothing."""
    if content[start : start + 1] != "<":
        return None
    depth = 0
    for position in range(start, len(content)):
        char = content[position]
        if char == "<":
            depth += 1
        elif char == ">" and content[position - 1] != "-":
            depth -= 1
            if depth == 0:
                return position + 1
        elif char == "\n" or char == '"':
            return None
    return None


def parse_module(text: str, name: str = "<string>", ctx: Context | None = None) -> ModuleOp:
    """Parses IR text (raises xDSL's ParseError with a located message)."""
    return LocatingParser(ctx or make_context(), text, name).parse_module()


def module_to_text(module: ModuleOp, generic: bool = False) -> str:
    """The module as `xtc-opt` prints it, blobs included."""
    from xdsl.dialects.builtin import Builtin

    out = StringIO()
    printer = Printer(stream=out, print_generic_format=generic)
    printer.print_op(module)
    printer.print_metadata([Builtin])
    out.write("\n")
    return out.getvalue()
