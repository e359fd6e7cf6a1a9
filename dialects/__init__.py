"""The dialects xtc defines: graph (tensors and operators), te (tensor
expressions) and tir (loop nests over buffers)."""
