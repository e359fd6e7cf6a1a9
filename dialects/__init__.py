"""The dialects xtc defines: graph (te and tir come later)."""
