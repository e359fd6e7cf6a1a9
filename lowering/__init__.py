"""One conversion per dialect pair: convert-graph-to-te, convert-te-to-tir
and convert-tir-to-llvm (with the parallel-loop outlining and the loop
vectorization it runs first)."""
