"""Default x86 schedules: for each kernel at the tir level, the schedule
primitives (an `xtc-opt -p` pipeline naming the kernel and its loops) that
make it fast without tuning.

    default_schedule(kernel) -> ["tir-split{func=conv2d_3 loop=i1_1 factor=16}", ...]

Every top-level loop nest of the kernel gets one recipe:

- a reduction nest (spatial loops, a scalar accumulator, reduction loops,
  an epilogue and one store: conv2d, matmul, dense, batch_matmul, pooling)
  becomes a register-blocked micro-kernel. The vector loop is the spatial
  loop that is the contiguous (last) index of a weight-like operand (conv2d
  with blocked OIHW32o weights: output channels, through `oc rem 32`;
  matmul: output columns), else of the output (depthwise conv, pooling:
  the output row). Its columns are split in blocks of two 16-lane vectors
  (or one vector of 16, 8 or 4 lanes, whichever divides; a loop of 5 to 16
  iterations that none divides is one vector of its own length); the next spatial
  loop is register-blocked by up to 12 rows for two vectors, 14 for one
  (the largest dividing count; a 13-wide row gets one vector of 13 rows, the
  block's second vector an outer loop; a tail is peeled when nothing
  divides). The accumulators become a rows × vectors register tile
  (`tir-cache-write`) with the reduction loops outside it, the rows and
  vectors unrolled, the lanes vectorized; the epilogue runs once per tile,
  its stores along the output row when that is contiguous (NCHW). With one
  output row (a matrix-vector product) the tile is several vectors of the
  columns instead. Operand panels are packed (`tir-cache-read`): matmul's
  B, a column block at a time; an activation read along the blocked row
  (a 1x1 conv's input), a row at a time with the rows looped outside the
  column blocks, when re-reading it per column block would move more bytes
  than re-reading the weights per row; otherwise the reduction prefetches
  that activation 32 steps ahead (`tir-prefetch`), the next channel
  planes being a stride no hardware prefetcher follows;
- an elementwise nest stored along its innermost loop has that loop split
  by the widest vector width dividing it and vectorized (with
  tir-expand-math in the pipeline, exp and erf vectorize too);
- every nest runs its first loop of more than one iteration in parallel
  (before the prefetch step, which only adds hints).

A primitive that refuses (a shape the recipe did not foresee) only stops
that nest's recipe there: every primitive keeps the numbers, so a partly
scheduled kernel is still right.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import constant_int

VECTOR_WIDTHS = (16, 8, 4)
"""Lanes of f32 tried, widest first (16 = one AVX-512 register)."""
BLOCK_FACTORS = (14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2)
"""Register-block sizes tried for the blocked loop, largest dividing first
(AVX-512 has 32 vector registers: 14 accumulators leave room for the
weight vector and the broadcasts)."""
MIN_WHOLE_VECTOR = 5
"""The shortest loop no vector width divides that is still vectorized as
one vector of its own length (MobileNet's 7- and 14-wide depthwise rows:
3x faster than scalar code)."""
MAX_ACCUMULATORS = 24
"""Rows × vectors of a register tile: AVX-512's 32 vector registers less
the weight vectors and the broadcasts (14 rows of one vector, 12 of two)."""
PREFETCH_DISTANCE = 32
"""Reduction steps ahead that a conv prefetches its input (measured on
ResNet-50: 16 and 64 gained less than 32)."""
PARALLEL_ITERATIONS = 8
"""Iterations wanted of the parallel loop, to share among the threads."""


@dataclass(frozen=True)
class Nest:
    """A top-level loop nest: its perfectly nested spatial loops and, for a
    reduction nest, the rank-0 accumulator under the innermost one."""

    spatial: tuple[ForOp, ...]
    accumulator: memref.AllocaOp | None
    store: memref.StoreOp | None


def default_schedule(kernel: FuncOp) -> list[list[str]]:
    """The recipe of each top-level nest of `kernel` (see module doc)."""
    if not kernel.body.blocks:
        return []
    name = kernel.sym_name.data
    nests = [op for op in kernel.body.block.ops if isinstance(op, ForOp)]
    return [recipe for op in nests if (recipe := nest_schedule(name, analyse(op)))]


def analyse(top: ForOp) -> Nest:
    spatial = [top]
    while True:
        inner = [op for op in spatial[-1].body.block.ops]
        if len(inner) == 1 and isinstance(inner[0], ForOp):
            spatial.append(inner[0])
            continue
        break
    body = list(spatial[-1].body.block.ops)
    accumulator = next(
        (op for op in body if isinstance(op, memref.AllocaOp) and _rank(op.memref.type) == 0),
        None,
    )
    stores = [op for op in body if isinstance(op, memref.StoreOp)]
    store = stores[-1] if stores else None
    return Nest(tuple(spatial), accumulator, store)


def nest_schedule(func: str, nest: Nest) -> list[str]:
    """The micro-kernel recipe when the nest is a reduction it fits, then
    the first remaining outer loop of more than one iteration in parallel."""
    steps: list[str] = []
    outer = [(_name(loop), loop.extent) for loop in nest.spatial]
    hints: list[str] = []
    if nest.accumulator is not None and nest.store is not None:
        recipe = _micro_kernel(func, nest)
        if recipe is not None:
            steps, outer = recipe
            hints = _activation_prefetch(func, nest, steps)
    elif nest.store is not None:
        recipe = _elementwise_vector(func, nest)
        if recipe is not None:
            steps, outer = recipe
    parallel = _parallel_loop(outer)
    if parallel is not None:
        steps.append(f"tir-parallel{{func={func} loop={parallel}}}")
    return steps + hints


def _elementwise_vector(func: str, nest: Nest) -> tuple[list[str], list[tuple[str, int]]] | None:
    """An elementwise nest whose store runs along its innermost loop: that
    loop split by the widest vector width dividing it, the inner part
    vectorized. None when the store is not contiguous or no width divides."""
    innermost = nest.spatial[-1]
    assert nest.store is not None
    if any(isinstance(op, ForOp) for op in innermost.body.walk()):
        return None
    if not nest.store.indices or nest.store.indices[-1] is not innermost.induction_variable:
        return None
    width = next((w for w in VECTOR_WIDTHS if innermost.extent % w == 0), None)
    if width is None:
        return None
    name = _name(innermost)
    outer = [(_name(loop), loop.extent) for loop in nest.spatial[:-1]]
    if innermost.extent == width:
        return [f"tir-vectorize{{func={func} loop={name}}}"], outer
    steps = [
        f"tir-split{{func={func} loop={name} factor={width}}}",
        f"tir-vectorize{{func={func} loop={name}_i}}",
    ]
    return steps, [*outer, (f"{name}_o", innermost.extent // width)]


def _parallel_loop(outer: list[tuple[str, int]]) -> str | None:
    """The first outer loop with at least PARALLEL_ITERATIONS iterations,
    else the one with the most (None when all have one)."""
    for name, extent in outer:
        if extent >= PARALLEL_ITERATIONS:
            return name
    name, extent = max(outer, key=lambda entry: entry[1], default=("", 1))
    return name if extent > 1 else None


def _micro_kernel(func: str, nest: Nest) -> tuple[list[str], list[tuple[str, int]]] | None:
    """(the steps, the outer loops they leave: name and extent), or None
    when the nest has no vector loop or nothing to block."""
    found = _vector_loop(nest)
    if found is None:
        return None
    vector, blocked = found
    columns = _column_split(vector.extent, blocked)
    if columns is None:
        return None
    split, width = columns
    others = [loop for loop in nest.spatial if loop is not vector]
    if not others or others[-1].extent < 2:
        return _vector_blocks(func, nest, vector, width)
    block = others[-1]
    factor, vectors = _tile_shape(block.extent, split // width)
    v, b = _name(vector), _name(block)
    outer: list[tuple[str, int]] = []
    for loop in nest.spatial:
        if loop is vector:
            outer.append((f"{v}_o", loop.extent // split))
        elif loop is not block:
            outer.append((_name(loop), loop.extent))
    steps = [f"tir-split{{func={func} loop={v} factor={split}}}"]
    if split == width:
        lanes, tile = f"{v}_i", [b, f"{v}_i"]
    else:
        # Two vectors per block of columns: both in the tile, or the tile
        # one vector wide and the block's vectors an outer loop.
        steps.append(f"tir-split{{func={func} loop={v}_i factor={width}}}")
        lanes = f"{v}_i_i"
        if vectors > 1:
            tile = [b, f"{v}_i_o", lanes]
        else:
            outer.append((f"{v}_i_o", split // width))
            tile = [b, lanes]
    position = next(i for i, (name, _) in enumerate(outer) if name == f"{v}_o")
    rows = _rows_first(nest, block, outer, position)
    chain = [name for name, _ in outer] + tile
    steps += [
        f"tir-reorder{{func={func} order={','.join(chain)}}}",
        f"tir-split{{func={func} loop={b} factor={factor}}}",
        f"tir-cache-write{{func={func} loop={b}_o}}",
        f"tir-unroll{{func={func} loop={b}_i}}",
    ]
    if vectors > 1:
        steps.append(f"tir-unroll{{func={func} loop={v}_i_o}}")
    steps += [
        f"tir-vectorize{{func={func} loop={lanes}}}",
        f"tir-vectorize{{func={func} loop={lanes}_init}}",
        *_write_back(func, nest, block, [f"{name}_wb" for name in tile[1:]], f"{b}_i_wb"),
    ]
    panel = _panel_argument(nest, vector, split)
    if panel is not None and block.extent >= 2 * factor:
        # Pack the operand's column panel once per v_o: every row tile
        # then reads contiguous lines per reduction step.
        steps.append(f"tir-cache-read{{func={func} loop={v}_o buffer={panel}}}")
    if rows is not None:
        steps.append(f"tir-cache-read{{func={func} loop={outer[position][0]} buffer={rows}}}")
    return steps, [*outer, (f"{b}_o", block.extent // factor)]


def _activation_prefetch(func: str, nest: Nest, steps: list[str]) -> list[str]:
    """Prefetch what the reduction will read of a conv's NCHW input
    PREFETCH_DISTANCE steps ahead, when the micro-kernel reads it in place:
    each step reads a row piece of the next channel plane, a stride no
    hardware prefetcher follows, so the first column block's pass waits on
    every line. Not when the rows are packed first (tir-cache-read)."""
    found = _vector_loop(nest)
    if found is None:
        return []
    others = [loop for loop in nest.spatial if loop is not found[0]]
    rows = _rows_argument(nest, others[-1]) if others else None
    innermost = nest.spatial[-1]
    reduction = next((op for op in innermost.body.block.ops if isinstance(op, ForOp)), None)
    if rows is None or reduction is None or reduction.extent <= PREFETCH_DISTANCE:
        return []
    argument = rows[0]
    if any(step.startswith("tir-cache-read") and f"buffer={argument}}}" in step for step in steps):
        return []
    return [
        f"tir-prefetch{{func={func} loop={_name(reduction)} buffer={argument} "
        f"distance={PREFETCH_DISTANCE}}}"
    ]


def _rows_first(
    nest: Nest, block: ForOp, outer: list[tuple[str, int]], position: int
) -> int | None:
    """When an activation read along the blocked row (a 1x1 conv's NCHW
    input) costs more to re-read per column block (`outer[position]`) than
    the weights cost to re-read per row (the loop after it): moves that row
    loop in front of the column blocks and returns the activation's
    position, to pack each row's slab once for all blocks. Else None."""
    rows = _rows_argument(nest, block)
    if rows is None or position + 1 >= len(outer):
        return None
    argument, activation = rows
    weights = _argument_bytes(nest, exclude=argument)
    row_count, column_blocks = outer[position + 1][1], outer[position][1]
    if weights * row_count >= activation * column_blocks:
        return None
    outer.insert(position, outer.pop(position + 1))
    return argument


def _write_back(func: str, nest: Nest, block: ForOp, columns: list[str], rows: str) -> list[str]:
    """The tile's write-back loops (`rows` around the `columns`): vectorized
    along the columns, or, when the output is contiguous along the blocked
    loop (a conv2d's NCHW output row), turned so that each column stores
    (and reads its residual) as one vector along the rows."""
    assert nest.store is not None
    if nest.store.indices and nest.store.indices[-1] is block.induction_variable:
        return [
            f"tir-reorder{{func={func} order={','.join([*columns, rows])}}}",
            f"tir-vectorize{{func={func} loop={rows}}}",
        ]
    return [f"tir-vectorize{{func={func} loop={columns[-1]}}}"]


def _column_split(extent: int, blocked: int | None) -> tuple[int, int] | None:
    """(the columns split off the vector loop, the lanes of a vector) for a
    vector loop of `extent`: a block of b (a blocked weight) is b / 16
    vectors of 16 or one vector of b; otherwise two vectors of the widest
    width that divides the extent twice, else one, else (a loop of 5 to 16
    iterations) the whole loop as one vector. None when nothing fits."""
    if blocked is not None:
        if extent % blocked:
            return None
        if blocked % VECTOR_WIDTHS[0] == 0 and blocked <= 2 * VECTOR_WIDTHS[0]:
            return blocked, VECTOR_WIDTHS[0]
        return (blocked, blocked) if blocked in VECTOR_WIDTHS else None
    width = next((w for w in VECTOR_WIDTHS if extent % w == 0), None)
    if width is None:
        # A short row no width divides (7, 13 or 14 wide) is one vector of
        # its own length: LLVM pads it to a register.
        if MIN_WHOLE_VECTOR <= extent <= VECTOR_WIDTHS[0]:
            return extent, extent
        return None
    return (2 * width, width) if extent % (2 * width) == 0 else (width, width)


def _tile_shape(extent: int, vectors: int) -> tuple[int, int]:
    """(rows, vectors) of the register tile over a blocked loop of `extent`
    when a block of columns holds `vectors` vectors: all of them when some
    row count that fits divides the extent, else one vector (more rows fit)."""
    if vectors > 1:
        rows = _block_factor(extent, vectors)
        if extent % rows == 0 or _block_factor(extent, 1) == rows:
            return rows, vectors
    return _block_factor(extent, 1), 1


def _vector_blocks(
    func: str, nest: Nest, vector: ForOp, width: int
) -> tuple[list[str], list[tuple[str, int]]] | None:
    """The micro-kernel when no other loop can be blocked (a matrix-vector
    product: one output row): the tile is several vectors of the vector
    loop itself, `v_o_i` × `v_i`. None when the loop holds one vector."""
    vectors = vector.extent // width
    if vectors < 2:
        return None
    factor = _block_factor(vectors, 1)
    v = _name(vector)
    outer = [(_name(loop), loop.extent) for loop in nest.spatial if loop is not vector]
    chain = [name for name, _ in outer] + [f"{v}_o", f"{v}_i"]
    steps = [
        f"tir-split{{func={func} loop={v} factor={width}}}",
        f"tir-reorder{{func={func} order={','.join(chain)}}}",
        f"tir-split{{func={func} loop={v}_o factor={factor}}}",
        f"tir-cache-write{{func={func} loop={v}_o_o}}",
        f"tir-unroll{{func={func} loop={v}_o_i}}",
        f"tir-vectorize{{func={func} loop={v}_i}}",
        f"tir-vectorize{{func={func} loop={v}_i_init}}",
        f"tir-vectorize{{func={func} loop={v}_i_wb}}",
    ]
    return steps, [*outer, (f"{v}_o_o", vectors // factor)]


PANEL_BYTES = 4 * 1024 * 1024
"""The largest operand panel the micro-kernel packs (tir-cache-read)."""


def _panel_argument(nest: Nest, vector: ForOp, width: int) -> int | None:
    """The position of the kernel argument that the reduction loads with
    `vector`'s variable as the last index (matmul's B, an IHWO weight),
    when packing its `width`-wide panel pays: the vector loop spans more
    than one vector and the panel fits PANEL_BYTES. None otherwise."""
    if vector.extent <= width:
        return None
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not op.indices:
            continue
        if op.indices[-1] is not vector.induction_variable:
            continue
        size = _argument_size(op.memref)
        if size is None or not _inside_reduction(op, innermost):
            continue
        assert isinstance(op.memref, BlockArgument) and isinstance(op.memref.type, MemRefType)
        panel = size // max(1, op.memref.type.get_shape()[-1]) * width
        return op.memref.index if 0 < panel <= PANEL_BYTES else None
    return None


def _rows_argument(nest: Nest, block: ForOp) -> tuple[int, int] | None:
    """(position, bytes) of the kernel argument that the reduction reads
    with the blocked loop's variable in its last index, every index affine
    in the loop variables (a 1x1 convolution's NCHW input, not a padded
    window). None when there is none."""
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if not isinstance(op, memref.LoadOp) or not op.indices:
            continue
        last = _affine_variables(op.indices[-1])
        if last is None or block.induction_variable not in last:
            continue
        if not _inside_reduction(op, innermost):
            continue
        size = _argument_size(op.memref)
        if size is None or any(_affine_variables(i) is None for i in op.indices):
            return None
        assert isinstance(op.memref, BlockArgument)
        return op.memref.index, size
    return None


def _argument_bytes(nest: Nest, exclude: int) -> int:
    """The bytes of the kernel arguments the reduction reads, but `exclude`
    (the weights, next to the activation)."""
    innermost = nest.spatial[-1]
    seen: dict[int, int] = {}
    for op in innermost.body.walk():
        if isinstance(op, memref.LoadOp) and _inside_reduction(op, innermost):
            size = _argument_size(op.memref)
            if size is not None and isinstance(op.memref, BlockArgument):
                seen[op.memref.index] = size
    return sum(size for position, size in seen.items() if position != exclude)


def _argument_size(buffer: SSAValue) -> int | None:
    """The bytes of a kernel argument, None for another buffer."""
    if not isinstance(buffer, BlockArgument) or not isinstance(buffer.type, MemRefType):
        return None
    if not isinstance(buffer.block.parent_op(), FuncOp):
        return None
    bytes_each = (getattr(buffer.type.get_element_type(), "bitwidth", 32) + 7) // 8
    return bytes_each * prod(buffer.type.get_shape())


def _affine_variables(index: SSAValue) -> set[SSAValue] | None:
    """The loop variables of an index that is a sum of constant multiples
    of loop variables (what tir-cache-read can pack), None for another."""
    if isinstance(index, BlockArgument):
        return {index} if isinstance(index.block.parent_op(), ForOp) else None
    owner = index.owner
    if isinstance(owner, arith.ConstantOp):
        return set()
    if isinstance(owner, arith.AddiOp):
        lhs, rhs = _affine_variables(owner.lhs), _affine_variables(owner.rhs)
        return None if lhs is None or rhs is None else lhs | rhs
    if isinstance(owner, arith.MuliOp):
        lhs, rhs = _affine_variables(owner.lhs), _affine_variables(owner.rhs)
        if lhs is None or rhs is None or (lhs and rhs):
            return None
        return lhs | rhs
    return None


def _block_factor(extent: int, vectors: int) -> int:
    """Rows of a tile `vectors` registers wide: the largest that divides
    `extent` within MAX_ACCUMULATORS, else the largest that fits."""
    fits = [f for f in BLOCK_FACTORS if f * vectors <= MAX_ACCUMULATORS and f <= extent]
    for f in fits:
        if extent % f == 0:
            return f
    return fits[0] if fits else min(extent, BLOCK_FACTORS[-1])


def _vector_loop(nest: Nest) -> tuple[ForOp, int | None] | None:
    """The spatial loop that is the last index of a load in the reduction
    (a weight read along its contiguous axis), else of the output store;
    with the vector width that index imposes: b when it is `loop rem b` (a
    weight in blocks of b, OIHW16o), None when any width will do."""
    variables = {loop.induction_variable: loop for loop in nest.spatial}
    innermost = nest.spatial[-1]
    for op in innermost.body.walk():
        if isinstance(op, memref.LoadOp) and op.memref is not _memref_of(nest.accumulator):
            if op.indices and _inside_reduction(op, innermost):
                found = _loop_of_index(op.indices[-1], variables)
                if found is not None:
                    return found
    assert nest.store is not None
    if nest.store.indices:
        return _loop_of_index(nest.store.indices[-1], variables)
    return None


def _loop_of_index(
    index: SSAValue, variables: dict[SSAValue, ForOp]
) -> tuple[ForOp, int | None] | None:
    """(loop, None) for a loop variable, (loop, b) for `variable rem b`."""
    if index in variables:
        return variables[index], None
    owner = index.owner
    if isinstance(owner, arith.RemSIOp | arith.RemUIOp) and owner.lhs in variables:
        divisor = constant_int(owner.rhs)
        if divisor is not None:
            return variables[owner.lhs], divisor
    return None


def _inside_reduction(op: Operation, innermost: ForOp) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not innermost:
        if isinstance(parent, ForOp):
            return True
        parent = parent.parent_op()
    return False


def _memref_of(op: memref.AllocaOp | None) -> SSAValue | None:
    return op.memref if op is not None else None


def _rank(t: object) -> int:
    return len(t.get_shape()) if isinstance(t, MemRefType) else -1


def _name(loop: ForOp) -> str:
    return loop.loop_name.data
