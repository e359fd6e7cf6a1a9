"""The compile driver: the one way from a model to a loaded library
(`compiler.py`, behind `xtc.compile`), the registry of every xtc dialect and
pass (`universe.py`), pass pipelines written as `xtc-opt -p` strings
(`pipelines.py`), textual IR (`textual_ir.py`) and running a tir module
natively (`native.py`). The command-line tools in `tools/` and the tuner in
`tune/` stand on it."""
