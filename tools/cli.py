"""`xtc`: the command line for models (import / compile / run / tune come
with their issues). Today: `xtc --version`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from xtc import __version__


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="xtc", description="the xtc deep-learning compiler")
    parser.add_argument("--version", action="version", version=f"xtc {__version__}")
    parser.parse_args(argv)
    parser.print_help()


if __name__ == "__main__":
    main()
