"""xtc: a deep-learning compiler built as MLIR-style dialects on xDSL."""

__version__ = "0.1.0"
