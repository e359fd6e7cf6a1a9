"""How xtc's command-line tools end: one line `<program>: error: ...` and
exit 1, never a traceback (XTC_TRACEBACK=1 shows it for an internal error)."""

from __future__ import annotations

import os
import sys
import traceback
from typing import NoReturn


def fail(program: str, message: str) -> NoReturn:
    """Prints `<program>: error: <message>` to stderr and exits 1."""
    print(f"{program}: error: {message}", file=sys.stderr)
    sys.exit(1)


def exit_unexpected(program: str, e: Exception | KeyboardInterrupt) -> NoReturn:
    """Ends the tool after an exception no other handler took: 130 on
    Ctrl-C, 1 on a closed output pipe, else an internal-error line."""
    if isinstance(e, KeyboardInterrupt):
        sys.exit(130)
    if isinstance(e, BrokenPipeError):
        sys.exit(1)
    if os.environ.get("XTC_TRACEBACK"):
        traceback.print_exc()
    text = str(e).strip()
    first_line = text.split("\n")[0] if text else type(e).__name__
    fail(
        program,
        f"internal error: {type(e).__name__}: {first_line} "
        "(please report it; XTC_TRACEBACK=1 shows the traceback)",
    )
