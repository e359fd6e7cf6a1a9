"""Running llvm-level modules: LLVM IR text, llvmlite's MCJIT, object files
linked into one native model library with a C entry, the compiled-model
artifact, run-time faults, and compile timing."""
