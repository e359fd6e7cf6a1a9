"""How a plugin that xtc skips is reported: a `PluginWarning`, printed by
xtc's tools as one line, `<program>: warning: ...`, as command-line tools
report. Importable without xDSL, so that a tool sets it up before it knows
whether it needs the compiler."""

from __future__ import annotations

import sys
import warnings
from typing import TextIO


class PluginWarning(UserWarning):
    """An `xdsl.universe` plugin, or an op plugin, that xtc skips."""


def report_plugin_warnings_as(program: str) -> None:
    """Makes a PluginWarning print as one line, `<program>: warning: ...`,
    as command-line tools report (other warnings print as Python does)."""
    show = warnings.showwarning

    def show_warning(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, PluginWarning):
            print(f"{program}: warning: {message}", file=file or sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    warnings.showwarning = show_warning
