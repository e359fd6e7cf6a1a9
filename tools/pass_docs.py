"""What a pass is and how to call it, read from its code: the summary is the
first paragraph of the class docstring, the description the whole
docstring, and each option is a dataclass field whose meaning is its
attribute docstring (the string literal on the lines after the field):

    factor: int
    \"\"\"How many iterations the inner loop runs.\"\"\"

`xtc-opt --list-passes`, `xtc-opt --help-pass NAME` and the generated
reference (tools/gen_docs.py) print what this module reads."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from xdsl.passes import ModulePass


@dataclass(frozen=True)
class OptionDoc:
    """One pass option: `default` is None when the option is required, else
    the default as written on the command line (`""`, `32`, `false`)."""

    name: str
    type: str
    default: str | None
    help: str


@dataclass(frozen=True)
class PassDoc:
    name: str
    summary: str
    description: str
    options: tuple[OptionDoc, ...]
    example: str
    """A pipeline that runs the pass, as given to `xtc-opt -p`."""


def describe_pass(pass_class: type[ModulePass]) -> PassDoc:
    description = _docstring(pass_class)
    return PassDoc(
        name=pass_class.name,
        summary=_first_paragraph(description),
        description=description,
        options=tuple(_options(pass_class)),
        example=_example(pass_class.name, description),
    )


def option_docstrings(cls: type) -> dict[str, str]:
    """The attribute docstrings of `cls` and its bases, by field name (the
    subclass's wins); a class whose source cannot be read gives none."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        found.update(_own_attribute_docstrings(klass))
    return found


def pass_summaries(
    factories: Mapping[str, Callable[[], type[ModulePass]]],
) -> list[tuple[str, str]]:
    """(name, summary) of each pass in name order; a pass whose factory
    fails says so in place of its summary."""
    rows: list[tuple[str, str]] = []
    for name in sorted(factories):
        try:
            summary = describe_pass(factories[name]()).summary
        except Exception as e:  # noqa: BLE001 - a broken plugin pass is listed, not fatal
            summary = f"(fails to load: {type(e).__name__})"
        rows.append((name, summary))
    return rows


def format_pass_list(xtc: Iterable[PassDoc], others: Iterable[tuple[str, str]]) -> str:
    """`xtc-opt --list-passes`: xtc's passes with their options, then the
    others (xDSL's and plugins') one line each."""
    lines = ["xtc passes (xtc-opt --help-pass NAME for one in full):", ""]
    for doc in xtc:
        lines.append(f"  {doc.name}")
        lines += _wrap(doc.summary, "      ")
        for option in doc.options:
            lines += _wrap(_option_line(option), "      - ", "        ")
    lines += ["", "xDSL and plugin passes:", ""]
    for name, summary in others:
        lines.append(f"  {name}")
        lines += _wrap(summary, "      ")
    return "\n".join(lines) + "\n"


def format_pass_help(doc: PassDoc) -> str:
    """`xtc-opt --help-pass NAME`: summary, options, example, description."""
    lines = [doc.name, *_wrap(doc.summary or "(no description)", "  "), ""]
    if doc.options:
        lines.append("Options:")
        for option in doc.options:
            lines += _wrap(_option_line(option), "  - ", "    ")
    else:
        lines.append("Options: none")
    lines += ["", "Example:", f"  xtc-opt input.mlir -p '{doc.example}'", ""]
    if doc.description:
        lines += ["Description:", textwrap.indent(doc.description, "  ")]
    return "\n".join(lines).rstrip() + "\n"


def _options(pass_class: type[ModulePass]) -> list[OptionDoc]:
    if not dataclasses.is_dataclass(pass_class):
        return []
    helps = option_docstrings(pass_class)
    return [
        OptionDoc(
            name=field.name,
            type=field.type if isinstance(field.type, str) else _type_name(field.type),
            default=_default(field),
            help=helps.get(field.name, ""),
        )
        for field in dataclasses.fields(pass_class)
    ]


def _default(field: dataclasses.Field[object]) -> str | None:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return None
    return _as_option_text(value)


def _as_option_text(value: object) -> str:
    """`value` as a pass option is written: `"text"`, `true`, `1,2`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return ",".join(_as_option_text(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return str(value)


def _type_name(annotation: object) -> str:
    return getattr(annotation, "__name__", None) or str(annotation)


def _option_line(option: OptionDoc) -> str:
    default = "required" if option.default is None else f"default {option.default}"
    meaning = f": {_one_line(option.help)}" if option.help else ""
    return f"{option.name} ({option.type}, {default}){meaning}"


def _own_attribute_docstrings(klass: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):
        return {}
    tree = ast.parse(source)
    class_def = next((node for node in tree.body if isinstance(node, ast.ClassDef)), None)
    if class_def is None:
        return {}
    found: dict[str, str] = {}
    body = class_def.body
    for statement, following in zip(body, body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found


def _docstring(cls: type) -> str:
    """The class docstring; empty for the signature that `dataclass` puts
    in place of a missing one."""
    text = inspect.cleandoc(cls.__doc__ or "")
    return "" if text.startswith(f"{cls.__name__}(") else text


def _first_paragraph(text: str) -> str:
    return _one_line(text.split("\n\n")[0])


def _wrap(text: str, indent: str, later_indent: str | None = None) -> list[str]:
    return textwrap.wrap(
        _one_line(text),
        width=_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent if later_indent is None else later_indent,
        break_on_hyphens=False,
    )


_WIDTH = 100


def _one_line(text: str) -> str:
    return " ".join(text.split())


_COMMAND_LINE = re.compile(r"Command line:\s*`([^`]+)`")


def _example(name: str, description: str) -> str:
    """The first `Command line:` pipeline of the docstring, else the bare
    pass name (a pass without required options)."""
    found = _COMMAND_LINE.search(description)
    return found.group(1) if found else name
