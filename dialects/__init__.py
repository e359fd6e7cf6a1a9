"""The dialects xtc defines: graph (tensors and operators), te (tensor
expressions), tir (loop nests over buffers) and llvm_ext (the vector
instructions xDSL's llvm dialect lacks)."""
