"""`xtc-opt`: xDSL's opt driver with every xtc dialect and pass, and
diagnostics instead of tracebacks.

A malformed file prints `file:line:col: error: message` (with the source line)
and exits 1; an unknown pass or a bad pass option prints one line and exits 1.
`--verify-diagnostics` follows mlir-opt: every diagnostic must be announced by
an `// expected-error {{...}}` annotation on its line and every annotation
met (tools/diagnostics.py), else each mismatch is printed and the exit code is
1; each chunk that gives no diagnostic is printed. `--diagnostics-to-output`
writes each chunk's diagnostic to the output in place of its IR and exits 0,
so FileCheck can check it beside the IR of other chunks.
`--remarks` prints each fallback a pass took (a vectorized loop left scalar)
as `file:line:col: remark: ...` on stderr, and lets `--verify-diagnostics`
match them with `expected-remark` annotations.
`--print-ir-after-all` and `--print-ir-after=p1,p2` print the IR after passes
(to stderr, as `mlir-opt` does). `--list-passes` lists the passes, xtc's
first with their options; `--help-pass NAME` shows one in full.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from io import BytesIO
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.context import Context
from xdsl.ir import Attribute, Dialect, Operation, TypeAttribute
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from xtc.driver.textual_ir import LocatingParser, module_to_text
from xtc.driver.universe import XTC_PASSES, multiverse, plugin_dialect_factories
from xtc.plugin_warnings import report_plugin_warnings_as
from xtc.remarks import Remark, collect_remarks
from xtc.tools.diagnostics import Diagnostic, check_diagnostics, parse_expectations
from xtc.tools.pass_docs import (
    describe_pass,
    format_pass_help,
    format_pass_list,
    pass_summaries,
)
from xtc.tools.tool_exit import exit_unexpected, fail


class UserError(Exception):
    """A mistake in what the user gave: printed as one diagnostic, exit 1."""


class PluginLoadingContext(Context):
    """A context that registers the op plugins' dialects (driver/universe.py)
    the first time it is asked for a name that no registered dialect has:
    loading a plugin imports every room of xtc, 0.8 of xtc-opt's 1.2 s start
    on a 2.1 GHz Xeon, which IR without plugin ops never needs."""

    def __init__(self) -> None:
        super().__init__()
        self.plugins_registered = False

    def register_plugins(self) -> None:
        if self.plugins_registered:
            return
        self.plugins_registered = True
        taken = set(self.registered_dialect_names)
        for name, factory in plugin_dialect_factories(taken).items():
            self.register_dialect(name, factory)

    def _knows_dialect_of(self, name: str) -> bool:
        dialect_name = Dialect.split_name(name)[0] if "." in name else name
        return dialect_name in self.registered_dialect_names

    def get_optional_op(
        self, name: str, *, dialect_stack: Sequence[str] = ()
    ) -> type[Operation] | None:
        # a bare name is looked up in the dialects of the stack
        names = [name] if "." in name else [f"{dialect}.{name}" for dialect in dialect_stack]
        if not any(self._knows_dialect_of(n) for n in names):
            self.register_plugins()
        return super().get_optional_op(name, dialect_stack=dialect_stack)

    def get_optional_type(self, name: str) -> type[TypeAttribute] | None:
        if not self._knows_dialect_of(name):
            self.register_plugins()
        return super().get_optional_type(name)

    def get_optional_attr(self, name: str) -> type[Attribute] | None:
        if not self._knows_dialect_of(name):
            self.register_plugins()
        return super().get_optional_attr(name)

    def get_optional_dialect(self, name: str) -> Dialect | None:
        if not self._knows_dialect_of(name):
            self.register_plugins()
        return super().get_optional_dialect(name)


class XtcOptMain(xDSLOptMain):
    version_format = "xtc-opt (xdsl {xdsl_version})"

    def __init__(
        self,
        args: Sequence[str] | None = None,
        passes: Mapping[str, Callable[[], type[ModulePass]]] | None = None,
    ) -> None:
        self._parser: LocatingParser | None = None
        self._line_offset = 0
        self._extra_passes = dict(passes or {})
        super().__init__(description="xtc modular optimizer driver", args=args)
        # Passes create dense_resource blobs; printing them needs the builtin
        # dialect's resource interface among the loaded dialects.
        self.ctx.get_optional_dialect("builtin")

    # Dialects, passes and targets from xtc's multiverse: a broken plugin in
    # the environment is skipped with a warning, not fatal (driver/universe.py).
    def register_all_dialects(self) -> None:
        self.ctx = PluginLoadingContext()
        for name, factory in multiverse().all_dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in multiverse().all_passes.items():
            self.register_pass(name, factory)
        taken = sorted(name for name in self._extra_passes if name in self.available_passes)
        if taken:
            raise UserError(f"pass {', '.join(taken)} already defined")
        for name, factory in self._extra_passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        for name, factory in multiverse().all_targets.items():
            self.available_targets.setdefault(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after every pass",
        )
        arg_parser.add_argument(
            "--print-ir-after",
            default="",
            metavar="PASSES",
            help="comma-separated pass names: print the IR to stderr after each",
        )
        arg_parser.add_argument(
            "--diagnostics-to-output",
            action="store_true",
            help="write each chunk's diagnostic to the output in place of its IR, "
            "go on with the next chunk and exit 0",
        )
        _set_help(
            arg_parser,
            "--verify-diagnostics",
            "check the diagnostics against the `// expected-error {{message}}` "
            "annotations of the input (as mlir-opt): exit 1 on any mismatch",
        )
        arg_parser.add_argument(
            "--remarks",
            action="store_true",
            help="print to stderr each fallback a pass took (a loop left scalar, ...) as "
            "`file:line:col: remark: ...`; with --verify-diagnostics, `expected-remark` "
            "annotations match them",
        )
        arg_parser.add_argument(
            "--list-passes",
            action="store_true",
            help="list the passes (xtc's first, with their options) and exit",
        )
        arg_parser.add_argument(
            "--help-pass",
            metavar="NAME",
            help="show one pass in full (summary, options, example, description) and exit",
        )
        # xDSL's `-p` help names every pass in one block: point to --list-passes.
        _set_help(
            arg_parser,
            "--passes",
            "comma-separated pass pipeline, e.g. 'tir-split{loop=i1 factor=16},dce' "
            "(--list-passes lists the passes)",
        )

    def register_all_frontends(self) -> None:
        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            self._parser = LocatingParser(
                self.ctx, io.read().decode("utf-8"), self.get_input_name()
            )
            return self._parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    def setup_pipeline(self) -> None:
        wanted = {p for p in self.args.print_ir_after.split(",") if p}
        unknown = wanted - set(self.available_passes)
        if unknown:
            raise UserError(f"--print-ir-after: unknown pass {', '.join(sorted(unknown))}")

        def after_each_pass(
            previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None
        ) -> None:
            if previous is None:
                return
            if not self.args.disable_verify:
                self._verify_after(previous, module)
            if self.args.print_ir_after_all or previous.name in wanted:
                print(f"// -----// IR Dump After {previous.name} //----- //", file=sys.stderr)
                print(module_to_text(module), file=sys.stderr)

        try:
            self.pipeline = PassPipeline.parse_spec(
                self.available_passes, self.args.passes, after_each_pass
            )
        except ArgSpecParseError as e:
            raise UserError(" ".join(str(e).split())) from e
        except (ValueError, TypeError, KeyError) as e:
            raise UserError(f"invalid pass pipeline '{self.args.passes}': {e}") from e

    def _verify_after(self, pass_: ModulePass, module: ModuleOp) -> None:
        try:
            module.verify()
        except VerifyException as e:
            raise UserError(
                f"IR after pass '{pass_.name}' does not verify (a bug in the pass): "
                + _first_line(e)
            ) from e

    def apply_passes(self, prog: ModuleOp) -> None:
        # The pipeline verifies between passes; the input is verified here
        # even when there are no passes, so a bad file is always reported.
        if not self.args.disable_verify:
            verify_located(prog, self._parser, self._line_offset)
        super().apply_passes(prog)

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def run(self) -> None:
        if self.args.verify_diagnostics and self.args.diagnostics_to_output:
            raise UserError("--verify-diagnostics and --diagnostics-to-output exclude each other")
        if self.args.list_passes:
            sys.stdout.write(self._pass_list())
            return
        if self.args.help_pass is not None:
            sys.stdout.write(self._pass_help(self.args.help_pass))
            return
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        failed = False
        try:
            for i, (chunk, offset) in enumerate(chunks):
                if i > 0:
                    output.write("// -----\n")
                with chunk:
                    source = chunk.read()
                if self.args.verify_diagnostics:
                    failed |= self._run_verifying(source, file_extension, offset, output)
                else:
                    result, remarks = self._process_chunk(source, file_extension, offset)
                    for remark in remarks:
                        print(remark.render(), file=sys.stderr)
                    if not isinstance(result, Diagnostic):
                        output.write(result)
                    elif self.args.diagnostics_to_output:
                        output.write(result.render() + "\n")
                    else:
                        print(result.render(), file=sys.stderr)
                        failed = True
                        break
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        if failed:
            sys.exit(1)

    def _process_chunk(
        self, source: bytes, file_extension: str, offset: int
    ) -> tuple[str | Diagnostic, list[Diagnostic]]:
        """The chunk's resulting IR, or the diagnostic that stopped it, and
        the remarks its passes gave (none unless `--remarks`)."""
        with collect_remarks() as remarks:
            try:
                module = self._parse_located(BytesIO(source), file_extension, offset)
                result = "" if module is None else self._transformed(module)
            except (ParseError, DiagnosticException, UserError) as e:
                result = self._diagnostic(e, offset)
        if not self.args.remarks:
            return result, []
        return result, [self._remark_diagnostic(r, offset) for r in remarks]

    def _transformed(self, module: ModuleOp) -> str:
        self.apply_passes(module)
        return self.output_resulting_program(module)

    def _remark_diagnostic(self, remark: Remark, line_offset: int) -> Diagnostic:
        """The remark at its op's place in the source, where it has one."""
        op = remark.op
        location = self._parser.location_of(op) if self._parser and op is not None else None
        if location is None:
            return Diagnostic(self.get_input_name(), None, None, remark.text(), "remark")
        return Diagnostic(
            location.file, location.line + line_offset, location.col, remark.text(), "remark"
        )

    def _run_verifying(
        self, source: bytes, file_extension: str, offset: int, output: IO[str]
    ) -> bool:
        """Processes one chunk under `--verify-diagnostics`; prints each
        mismatch with its annotations to stderr and says whether there was one."""
        name = self.get_input_name()
        expectations, problems = parse_expectations(source.decode("utf-8"), name, offset + 1)
        result, remarks = self._process_chunk(source, file_extension, offset)
        if not isinstance(result, Diagnostic):
            output.write(result)
        produced = remarks + ([result] if isinstance(result, Diagnostic) else [])
        failures = problems + check_diagnostics(expectations, produced, name)
        for failure in failures:
            print(failure.render(), file=sys.stderr)
        return bool(failures)

    def _pass_list(self) -> str:
        xtc = [describe_pass(XTC_PASSES[name]()) for name in sorted(XTC_PASSES)]
        others = {n: f for n, f in self.available_passes.items() if n not in XTC_PASSES}
        return format_pass_list(xtc, pass_summaries(others))

    def _pass_help(self, name: str) -> str:
        factory = self.available_passes.get(name)
        if factory is None:
            raise UserError(f"--help-pass: unknown pass '{name}' (--list-passes lists them)")
        return format_pass_help(describe_pass(factory()))

    def _parse_located(self, chunk: IO[bytes], file_extension: str, offset: int) -> ModuleOp | None:
        """parse_chunk; an error that xDSL's parser raises without a location
        (it has a few on odd input) is reported at the parser's position."""
        try:
            return self.parse_chunk(chunk, file_extension, offset)
        except (ParseError, DiagnosticException, UnicodeDecodeError):
            raise
        except Exception as e:  # noqa: BLE001 - becomes a located diagnostic
            where = Diagnostic(self.get_input_name(), None, None, _first_line(e))
            if self._parser is not None:
                source = self._parser.lexer.input
                pos = min(self._parser.pos, len(source.content))
                line = source.content.count("\n", 0, pos) + 1 + offset
                col = pos - (source.content.rfind("\n", 0, pos) + 1) + 1
                where = Diagnostic(source.name, line, col, _first_line(e))
            raise LocatedError(where) from e

    def _diagnostic(self, e: Exception, line_offset: int) -> Diagnostic:
        if isinstance(e, ParseError):
            return parse_error_diagnostic(e, line_offset)
        if isinstance(e, LocatedError):
            return e.diagnostic
        # A pass that refuses its input names the op (`e.op`): point at it.
        op = getattr(e, "op", None)
        location = (
            self._parser.location_of(op) if self._parser and isinstance(op, Operation) else None
        )
        if location is not None:
            return Diagnostic(
                location.file, location.line + line_offset, location.col, _first_line(e)
            )
        return Diagnostic(self.get_input_name(), None, None, _first_line(e))


class LocatedError(DiagnosticException):
    """An error that carries its diagnostic, already placed in the source."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.render())
        self.diagnostic = diagnostic


def verify_located(module: ModuleOp, parser: LocatingParser | None, line_offset: int = 0) -> None:
    """Verifies op by op, innermost first; the first failure is raised as a
    LocatedError pointing at the op in the source."""
    for op in _post_order(module):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            location = parser.location_of(op) if parser else None
            diagnostic = (
                Diagnostic(location.file, location.line + line_offset, location.col, _first_line(e))
                if location
                else Diagnostic("<unknown>", None, None, _first_line(e))
            )
            raise LocatedError(diagnostic) from e


def _post_order(op: Operation) -> list[Operation]:
    ordered: list[Operation] = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                ordered.extend(_post_order(child))
    ordered.append(op)
    return ordered


def parse_error_diagnostic(e: ParseError, line_offset: int = 0) -> Diagnostic:
    location = e.span.get_location()
    context = e.span.print_with_context("").rstrip().split("\n")
    # print_with_context starts with its own `file:line:col` line: keep the source lines.
    source_lines = "\n".join(context[1:3]).rstrip()
    return Diagnostic(
        location.file, location.line + line_offset, location.col, e.msg, context=source_lines
    )


def _set_help(arg_parser: argparse.ArgumentParser, option: str, text: str) -> None:
    """Replaces the help of an option that xDSL's driver registers."""
    for action in arg_parser._actions:  # pyright: ignore[reportPrivateUsage]
        if option in action.option_strings:
            action.help = text


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.split("\n")[0] if text else type(e).__name__


def _fail(message: str) -> NoReturn:
    fail("xtc-opt", message)


def main(
    args: Sequence[str] | None = None,
    passes: Mapping[str, Callable[[], type[ModulePass]]] | None = None,
) -> None:
    """xtc-opt; a script that calls it with `passes` (name -> factory of a
    ModulePass class) adds those passes to the ones it can run."""
    report_plugin_warnings_as("xtc-opt")
    try:
        XtcOptMain(args, passes).run()
    except UserError as e:
        _fail(str(e))
    except FileNotFoundError as e:
        _fail(f"cannot open '{e.filename}': no such file")
    except (IsADirectoryError, PermissionError) as e:
        _fail(f"cannot open '{e.filename}': {e.strerror}")
    except UnicodeDecodeError:
        _fail("input is not UTF-8 text")
    except ValueError as e:
        # xDSL reports an unknown input extension or target this way.
        _fail(_first_line(e))
    except (Exception, KeyboardInterrupt) as e:  # noqa: BLE001 - a message, not a traceback
        exit_unexpected("xtc-opt", e)


if __name__ == "__main__":
    main()
