"""`xtc`: the command line for models, like `tvmc`.

    xtc import model.onnx [-o model.mlir] [--input-shapes "data:[1,3,224,224]"]
    xtc conformance [-k REGEX] [-j N]

compile / run / tune come with their issues. Errors print one line,
`xtc: error: ...`, and exit 1; a traceback is a bug.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from xtc import __version__


def cmd_import(args: argparse.Namespace) -> int:
    from xtc.frontend.onnx import import_model, parse_input_shapes
    from xtc.tools.textual_ir import module_to_text

    shapes = parse_input_shapes(args.input_shapes) if args.input_shapes else None
    text = module_to_text(import_model(args.model, shapes))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_conformance(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from xtc.tools.conformance import main as conformance_main

    return conformance_main(rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xtc", description="the xtc deep-learning compiler")
    parser.add_argument("--version", action="version", version=f"xtc {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    importer = commands.add_parser("import", help="print an ONNX model as graph IR")
    importer.add_argument("model", help="the .onnx file")
    importer.add_argument("-o", "--output", help="write the IR here instead of stdout")
    importer.add_argument(
        "--input-shapes",
        metavar="SHAPES",
        help="static shapes for inputs with symbolic dimensions: "
        '"name:[1,3,224,224] other:[1,128]"',
    )
    commands.add_parser(
        "conformance",
        help="run ONNX's node conformance cases (xtc conformance --help)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv[:1] == ["conformance"]:
        sys.exit(cmd_conformance(argparse.Namespace(), argv[1:]))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        sys.exit(0)
    from xtc.frontend.onnx import OnnxImportError

    try:
        sys.exit(cmd_import(args))
    except (OnnxImportError, OSError) as e:
        print(f"xtc: error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - last resort: a message, not a traceback
        if os.environ.get("XTC_TRACEBACK"):
            traceback.print_exc()
        print(
            f"xtc: internal error: {type(e).__name__}: {e} "
            "(please report it; XTC_TRACEBACK=1 shows the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
