"""The error of a compile request xtc refuses: its own module, so that
every room of the driver can raise it without importing the compiler."""


class CompileError(Exception):
    """A compile request xtc refuses (bad target, opt level, option)."""
