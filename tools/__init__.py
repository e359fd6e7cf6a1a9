"""The command-line tools: `xtc-opt`, `xtc-run`, the `xtc` CLI (compile, run,
tune, conformance, cache), the conformance runner, the model builders and
the generated reference. They stand on the driver (driver/)."""
