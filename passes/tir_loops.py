"""What the tir schedule primitives (tir-split, tir-reorder, tir-fuse,
tir-unroll, tir-vectorize, tir-cache-write) share: choosing the functions a
schedule applies to, finding a loop by its name, checking that loops are
perfectly nested, moving index arithmetic down a nest, building loops and
index arithmetic, renaming the loops of a copied nest, and the diagnostic
every refusal raises.

Options on the command line: `key=value` pairs separated by spaces inside
braces, passes separated by commas, the whole pipeline quoted for the shell:
`xtc-opt k.mlir -p 'tir-split{func=matmul_0 loop=i1 factor=16},tir-unroll{loop=i1_i}'`.
A name made of letters, digits, `_` and `-` (`matmul_0`, `i1_o`) is written
as it is; any other name (one with a dot, or one that reads as a number or as
true/false) goes in double quotes: `loop="i.0"`. A tuple of names is
comma-separated: `order=i0_o,i1_o,i0_i`. Printed back (`str(pass)`) every
string is quoted: `tir-split{func="matmul_0" loop="i1" factor=16}`, which
reads the same."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from xtc.analysis.loops import constant_int
from xtc.dialects.tir import ForOp


class ScheduleError(DiagnosticException):
    """A schedule primitive refused its input. The message starts with the
    pass name and names the function and the loop; `op` is the operation it
    refused (xtc-opt points its diagnostic there).

    xDSL's rewrite walker adds the whole IR, in generic form, as a note to an
    error raised in a pattern, which Python prints after the traceback; a
    ScheduleError keeps that text in `ir` instead, and `module` is the
    top-level op holding `op`, so the error reads as its message alone."""

    def __init__(self, pass_name: str, message: str, op: Operation | None = None) -> None:
        super().__init__(f"{pass_name}: {message}")
        self.op = op
        self.ir: str | None = None
        """The IR when the pass refused, the refused op marked (generic form)."""

    @property
    def module(self) -> Operation | None:
        """The top-level op (the module) that holds the refused op."""
        if self.op is None:
            return None
        top = self.op.get_toplevel_object()
        return top if isinstance(top, Operation) else None

    def add_note(self, note: str) -> None:
        if self.ir is None and f"Error while applying pattern: {self}" in note:
            self.ir = note
        else:
            super().add_note(note)


def function_name(func: FuncOp) -> str:
    return func.sym_name.data


def loop_name(loop: ForOp) -> str:
    return loop.loop_name.data


def loops_in(op: Operation) -> list[ForOp]:
    """Every tir.for inside `op` (and `op` itself when it is one), outer first."""
    found: list[ForOp] = []
    _add_loops(op, found)
    return found


def _add_loops(op: Operation, found: list[ForOp]) -> None:
    # a loop is an op with a region: only those are looked into
    if isinstance(op, ForOp):
        found.append(op)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if inner.regions:
                    _add_loops(inner, found)


def loops_by_name(func: FuncOp) -> dict[str, list[ForOp]]:
    """The function's loops grouped by name."""
    named: dict[str, list[ForOp]] = {}
    for loop in loops_in(func):
        named.setdefault(loop_name(loop), []).append(loop)
    return named


def _defined_functions(module: ModuleOp) -> list[FuncOp]:
    return [op for op in module.body.block.ops if isinstance(op, FuncOp) and op.body.blocks]


def select_functions(
    module: ModuleOp, pass_name: str, func: str, loops: Sequence[str]
) -> frozenset[str]:
    """The names of the functions a schedule applies to: `func` when it is
    given, else every function that has a loop named `loops[0]`. Refuses a
    `func` that names no function, and a function chosen that lacks one of
    `loops` or has two loops of one of those names."""
    functions = _defined_functions(module)
    if func:
        chosen = [(f, loops_by_name(f)) for f in functions if function_name(f) == func]
        if not chosen:
            raise ScheduleError(pass_name, f"no function @{func} in the module")
    else:
        named = [(f, loops_by_name(f)) for f in functions]
        chosen = [(f, by_name) for f, by_name in named if loops[0] in by_name]
        if not chosen:
            raise ScheduleError(pass_name, f"no function has a loop named '{loops[0]}'")
    for f, by_name in chosen:
        for name in loops:
            _only_loop(pass_name, f, name, by_name.get(name, []))
    return frozenset(function_name(f) for f, _ in chosen)


def find_loop(pass_name: str, func: FuncOp, name: str) -> ForOp:
    """The loop of `func` named `name`; refuses a missing or ambiguous name."""
    return _only_loop(pass_name, func, name, loops_by_name(func).get(name, []))


def _only_loop(pass_name: str, func: FuncOp, name: str, found: list[ForOp]) -> ForOp:
    """The one loop of `found` (those of `func` named `name`); refuses none
    or several."""
    if not found:
        raise ScheduleError(pass_name, f"no loop named '{name}' in @{function_name(func)}", func)
    if len(found) > 1:
        raise ScheduleError(
            pass_name,
            f"{len(found)} loops are named '{name}' in @{function_name(func)}; a schedule "
            "needs loop names that are unique in their function",
            found[1],
        )
    return found[0]


def check_unit_stride(pass_name: str, func: FuncOp, loop: ForOp) -> None:
    """Refuses a loop that does not run from 0 with step 1."""
    lower, step = loop.lower.value.data, loop.step.value.data
    if lower != 0 or step != 1:
        raise ScheduleError(
            pass_name,
            f"loop '{loop_name(loop)}' in @{function_name(func)} runs from {lower} with "
            f"step {step}; {pass_name} needs a loop from 0 with step 1",
            loop,
        )


def check_fresh_names(
    pass_name: str, func: FuncOp, names: Iterable[str], op: Operation | None = None
) -> None:
    """Refuses new loop names that a loop of `func` already has, or that
    repeat among themselves."""
    taken = set(loops_by_name(func))
    seen: set[str] = set()
    for name in names:
        if name in taken or name in seen:
            raise ScheduleError(
                pass_name,
                f"the new loop name '{name}' is already used in @{function_name(func)}",
                op,
            )
        seen.add(name)


def top_level_op(func: FuncOp, op: Operation) -> Operation:
    """The op of the function's body that holds `op` (or `op` itself)."""
    current = op
    while current.parent_op() is not func:
        parent = current.parent_op()
        assert parent is not None, "an op of the function lies outside it"
        current = parent
    return current


def is_pure_scalar(op: Operation) -> bool:
    """An op without regions or memory effects (index arithmetic, constants):
    it can move into a loop nested deeper, or be copied, without changing
    what the program computes. An integer remainder by a non-zero constant
    (tir-fuse's `v % E`) is one: xDSL gives remui and remsi an effect for
    the division by zero that a constant divisor rules out."""
    if op.regions:
        return False
    if isinstance(op, arith.RemUIOp | arith.RemSIOp):
        return constant_int(op.rhs) not in (None, 0)
    return is_side_effect_free(op)


def direct_loops(loop: ForOp) -> list[ForOp]:
    """The loops directly in `loop`'s body."""
    return [op for op in loop.body.block.ops if isinstance(op, ForOp)]


def only_inner_loop(loop: ForOp) -> ForOp | None:
    """The loop that `loop`'s body holds when it holds exactly one loop and
    otherwise only pure scalar ops; None for any other body."""
    inner = direct_loops(loop)
    if len(inner) != 1:
        return None
    others = [op for op in loop.body.block.ops if op is not inner[0]]
    return inner[0] if all(is_pure_scalar(op) for op in others) else None


def has_inner_loop(loop: ForOp) -> bool:
    """Whether a tir.for is nested anywhere in `loop`'s body."""
    return len(loops_in(loop)) > 1  # the loop itself, and one inside


def rank0_accumulator(loop: ForOp) -> memref.AllocaOp | None:
    """The first rank-0 `memref.alloca` directly in `loop`'s body."""
    for op in loop.body.block.ops:
        if isinstance(op, memref.AllocaOp) and _rank(op.memref.type) == 0:
            return op
    return None


def _rank(t: Attribute) -> int:
    return len(t.get_shape()) if isinstance(t, MemRefType) else -1


def why_not_perfect(loop: ForOp, func: FuncOp) -> str:
    """Why `loop`'s body is not exactly one loop and pure scalar ops."""
    where = f"loop '{loop_name(loop)}' in @{function_name(func)}"
    inner = direct_loops(loop)
    if rank0_accumulator(loop) is not None and inner:
        return (
            f"{where} holds the accumulator of reduction loop '{loop_name(inner[0])}': "
            f"moving '{loop_name(inner[0])}' out of it would break the reduction "
            "(tir-cache-write moves reduction loops out)"
        )
    if len(inner) > 1:
        names = ", ".join(f"'{loop_name(i)}'" for i in inner)
        return f"{where} is not perfectly nested: its body holds {len(inner)} loops ({names})"
    if not inner:
        return f"{where} is not perfectly nested: its body holds no loop directly"
    other = next(op for op in loop.body.block.ops if op is not inner[0] and not is_pure_scalar(op))
    return f"{where} is not perfectly nested: its body holds '{other.name}' beside loop " + (
        f"'{loop_name(inner[0])}'"
    )


def perfect_nest(pass_name: str, func: FuncOp, names: Sequence[str]) -> list[ForOp]:
    """The loops named `names` (unique, distinct) as a nest, outer first, each
    one's body holding only the next loop and pure scalar ops. Refuses loops
    that are not such a nest, naming the loop in the way."""
    loops = [find_loop(pass_name, func, name) for name in names]
    if len(set(names)) != len(names):
        repeated = next(n for n in names if names.count(n) > 1)
        raise ScheduleError(pass_name, f"loop '{repeated}' is named twice", loops[0])
    outer = [a for a in loops if all(a.is_ancestor(b) for b in loops)]
    if not outer:
        listed = ", ".join(f"'{n}'" for n in names)
        raise ScheduleError(
            pass_name,
            f"loops {listed} in @{function_name(func)} are not nested in one another",
            loops[0],
        )
    nest = [outer[0]]
    while len(nest) < len(loops):
        inner = only_inner_loop(nest[-1])
        if inner is None:
            raise ScheduleError(pass_name, why_not_perfect(nest[-1], func), nest[-1])
        if loop_name(inner) not in names:
            raise ScheduleError(
                pass_name,
                f"loop '{loop_name(inner)}' in @{function_name(func)} lies between "
                f"'{loop_name(nest[-1])}' and the other loops named, which must be "
                "directly nested",
                inner,
            )
        nest.append(inner)
    return nest


def sink_pure_ops(nest: Sequence[ForOp]) -> None:
    """Moves the pure scalar ops of every loop of a perfect nest but the
    innermost to the start of the innermost one's body, keeping their order
    (they may use the ivs of loops around them, which all still do)."""
    target = nest[-1].body.block
    anchor = target.first_op
    for loop in nest[:-1]:
        for op in list(loop.body.block.ops):
            if isinstance(op, ForOp):
                continue
            op.detach()
            if anchor is None:
                target.add_op(op)
            else:
                target.insert_op_before(op, anchor)


def new_loop(name: str, extent: int, kind: str = "serial") -> ForOp:
    """`tir.for` from 0 to `extent` step 1, its iv named after the loop."""
    loop = ForOp(0, extent, name, kind)
    loop.induction_variable.name_hint = name
    return loop


def loop_like(loop: ForOp, name: str | None = None) -> ForOp:
    """An empty loop with `loop`'s bounds, step and kind, named `name`
    (`loop`'s own name by default)."""
    name = loop_name(loop) if name is None else name
    new = ForOp(
        loop.lower.value.data,
        loop.upper.value.data,
        name,
        loop.kind.data,
        loop.step.value.data,
    )
    new.induction_variable.name_hint = name
    return new


def nest_of(loops: Sequence[ForOp]) -> Block:
    """Puts each loop in the body of the one before; the innermost body."""
    for outer, inner in zip(loops, loops[1:], strict=False):
        outer.body.block.add_op(inner)
    return loops[-1].body.block


def index_constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def set_kind(loop: ForOp, kind: str, rewriter: PatternRewriter) -> None:
    """Gives `loop` the kind `kind`, telling the rewriter when it changes."""
    if loop.kind.data != kind:
        loop.properties["kind"] = StringAttr(kind)
        rewriter.notify_op_modified(loop)


def rename_loops_inside(op: Operation, suffix: str) -> None:
    """Appends `suffix` to the name of every loop inside `op` (not `op`)."""
    for loop in loops_in(op):
        if loop is not op:
            loop.properties["name"] = StringAttr(loop_name(loop) + suffix)
            loop.induction_variable.name_hint = loop_name(loop)


def describe_buffer(buffer: SSAValue) -> str:
    """How a refusal names a buffer: `%in1 (argument 1)` for an argument of
    a function, `%pad` for another named value; without a name `argument
    1`, `the memref<4xf32> from 'memref.alloc'` or `a memref<4xf32> block
    argument`."""
    hint = f"%{buffer.name_hint}" if buffer.name_hint else None
    if isinstance(buffer, BlockArgument) and isinstance(buffer.block.parent_op(), FuncOp):
        position = f"argument {buffer.index}"
        return f"{hint} ({position})" if hint else position
    if hint:
        return hint
    if isinstance(buffer, OpResult):
        return f"the {buffer.type} from '{buffer.op.name}'"
    return f"a {buffer.type} block argument"


def find_buffer(pass_name: str, func: FuncOp, buffer: int | str) -> SSAValue:
    """The argument of `func` that `buffer` names: its position (0 is the
    first), or its SSA name (`in1` or `%in1`). Refuses (as `pass_name`) a
    position out of range, a name no argument or several arguments have,
    and an argument that is not a memref."""
    arguments = func.body.block.args
    where = f"@{function_name(func)}"
    if isinstance(buffer, str) and buffer.isdigit():
        buffer = int(buffer)
    if isinstance(buffer, int):
        if not 0 <= buffer < len(arguments):
            raise ScheduleError(
                pass_name,
                f"buffer={buffer}: {where} has {len(arguments)} arguments; buffer is a "
                f"position from 0 to {len(arguments) - 1} or an argument's name",
                func,
            )
        chosen = arguments[buffer]
    else:
        name = buffer.removeprefix("%")
        named = [a for a in arguments if a.name_hint == name]
        if len(named) != 1:
            listed = ", ".join(f"%{a.name_hint}" for a in arguments if a.name_hint)
            problem = "no argument" if not named else f"{len(named)} arguments"
            raise ScheduleError(
                pass_name,
                f"buffer={buffer}: {problem} of {where} named %{name} (its arguments: "
                f"{listed or 'none named'}); name it by its position instead",
                func,
            )
        chosen = named[0]
    if not isinstance(chosen.type, MemRefType):
        raise ScheduleError(
            pass_name,
            f"buffer={buffer}: {describe_buffer(chosen)} of {where} is a "
            f"{chosen.type}, not a buffer",
            func,
        )
    return chosen


def emit_sum(terms: dict[SSAValue, int], constant: int) -> tuple[list[Operation], SSAValue]:
    """Index arithmetic computing `constant + sum(c * v)`: the ops and the
    value (a term itself when it is the whole sum)."""
    ops: list[Operation] = []
    total: SSAValue | None = None
    for value, coefficient in terms.items():
        term = value
        if coefficient != 1:
            scale = index_constant(coefficient)
            product = arith.MuliOp(value, scale.result)
            ops += [scale, product]
            term = product.result
        if total is None:
            total = term
        else:
            add = arith.AddiOp(total, term)
            ops.append(add)
            total = add.result
    if total is None or constant != 0:
        offset = index_constant(constant)
        ops.append(offset)
        if total is None:
            return ops, offset.result
        add = arith.AddiOp(total, offset.result)
        ops.append(add)
        total = add.result
    return ops, total


def enclosing_loops(loop: ForOp) -> list[ForOp]:
    """`loop` and the loops around it, innermost first."""
    found: list[ForOp] = []
    current: Operation | None = loop
    while current is not None:
        if isinstance(current, ForOp):
            found.append(current)
        current = current.parent_op()
    return found
