"""Command-line tools: xtc-opt, xtc, and the universe that registers dialects and passes."""
