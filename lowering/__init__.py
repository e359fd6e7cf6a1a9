"""One conversion per dialect pair: convert-graph-to-te, convert-te-to-tir
and convert-tir-to-llvm, the last a pipeline of its stages (tir-lower-parallel,
tir-lower-unrolled, tir-lower-vectorized, convert-tir-to-cf,
convert-to-llvm), each a pass of its own here (but for tir-cse, a
same-dialect pass in passes/, run between the vectorizer and
convert-tir-to-cf); what the stages share to emit llvm ops is llvm_emit.py."""
