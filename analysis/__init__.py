"""Analyses that passes, lowerings and schedules share, with no pass of
their own: the affine form of loop indices and the region a loop body
reads (`loops`), the bytes of an element type (`types`), which functions
graph-fuse-ops outlined (`functions`), what keeps a vectorized loop
serial (`vectorizable`), and the ops nested in an op, as a list
(`walk`). A pass imports these, never another pass."""
