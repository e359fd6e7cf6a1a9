"""Helpers shipped for tests, ours and those of plugin authors: building and
running one graph op (`graph_op.py`). Nothing in xtc's own rooms imports
them."""
