"""Same-dialect rewrites, one pass per file: `graph_fold_constants.py` is `graph-fold-constants`."""
