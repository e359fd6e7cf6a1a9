"""The tir dialect: loop nests over buffers, as TVM's TIR.

Buffers are builtin `memref`s (xDSL's `memref.alloc`, `memref.load`,
`memref.store`); scalars use `arith` and `math`; conditions `scf.if` or
`arith.select`. tir adds the loop that schedules talk about: `tir.for` has a
name (what a schedule primitive refers to), static bounds and a kind.

    tir.for %i = 0 to 16 step 1 {name = "i", kind = "parallel"} {
      ...
    }

and the run-time check of data-dependent values (an index read from a
tensor, a divisor), usable in te compute bodies too:

    tir.assert %in_range, "Gather node 'g': index {} is out of range [-5, 5)", %i : i64
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

OUTPUT_ATTR = "graph.output"
"""Argument attribute marking a function's output buffer: its result index."""

CONCAT_AXIS_ATTR = "tir.concat_axis"
"""Function attribute of a kernel that only concatenates its inputs along
this axis into its one output (convert-te-to-tir sets it; tir-concat-in-place
reads it at the calls)."""

GPU_AXES = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")
"""The kinds of a loop bound to a GPU axis (tir-bind): its iterations are
the blocks of the grid, or the threads of a block, along that axis."""

LOOP_KINDS = ("serial", "parallel", "vectorized", "unrolled", *GPU_AXES)


@functools.lru_cache(maxsize=1024)
def _i64_attr(value: int) -> IntegerAttr[IntegerType]:
    """`value : i64`, one attribute per value (an IntegerAttr is immutable,
    and checking its range costs more than the op that holds it)."""
    return IntegerAttr(value, i64)


@irdl_op_definition
class ForOp(IRDLOperation):
    """`for (i = lower; i < upper; i += step)` over its body, which takes the
    induction variable (index). `kind` says how it runs: serial, parallel
    (across threads), vectorized, unrolled or bound to a GPU axis (one of
    GPU_AXES: `kind = "threadIdx.x"`)."""

    name = "tir.for"

    lower = prop_def(IntegerAttr[IntegerType])
    upper = prop_def(IntegerAttr[IntegerType])
    step = prop_def(IntegerAttr[IntegerType])
    loop_name = prop_def(StringAttr, prop_name="name")
    kind = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator(), RecursiveMemoryEffect())

    def __init__(
        self,
        lower: int,
        upper: int,
        name: str,
        kind: str = "serial",
        step: int = 1,
        body: Region | Sequence[Operation] = (),
    ) -> None:
        if not isinstance(body, Region):
            block = Block(arg_types=[IndexType()])
            block.add_ops(body)
            body = Region(block)
        # Operation's own constructor, as `ForOp.create` calls it: IRDL's
        # would check the arguments this signature already types, at three
        # times the cost (schedules build thousands of loops)
        Operation.__init__(
            self,
            properties={
                "lower": _i64_attr(lower),
                "upper": _i64_attr(upper),
                "step": _i64_attr(step),
                "name": StringAttr(name),
                "kind": StringAttr(kind),
            },
            regions=[body],
        )

    @property
    def induction_variable(self):  # noqa: ANN201 - a BlockArgument
        return self.body.block.args[0]

    @property
    def extent(self) -> int:
        """The number of iterations."""
        lo, hi, st = self.lower.value.data, self.upper.value.data, self.step.value.data
        return max(0, (hi - lo + st - 1) // st)

    def verify_(self) -> None:
        if self.kind.data not in LOOP_KINDS:
            raise VerifyException(
                f"'{self.name}' kind \"{self.kind.data}\" is not one of "
                + ", ".join(f'"{k}"' for k in LOOP_KINDS)
            )
        if self.step.value.data <= 0:
            raise VerifyException(f"'{self.name}' step {self.step.value.data} must be > 0")
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException(f"'{self.name}' body must take one index argument")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_variable)
        printer.print_string(
            f" = {self.lower.value.data} to {self.upper.value.data} step {self.step.value.data} "
        )
        printer.print_string(f'{{name = "{self.loop_name.data}", kind = "{self.kind.data}"}} ')
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        iv = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lower = parser.parse_integer()
        parser.parse_keyword("to")
        upper = parser.parse_integer()
        parser.parse_keyword("step")
        step = parser.parse_integer()
        attrs = parser.parse_optional_attr_dict()
        name = attrs.get("name")
        kind = attrs.get("kind", StringAttr("serial"))
        if not isinstance(name, StringAttr) or not isinstance(kind, StringAttr):
            parser.raise_error('tir.for needs {name = "..."} and a string kind')
        body = parser.parse_region([iv.resolve(IndexType())])
        return cls(lower, upper, name.data, kind.data, step, body)


PREFETCH_LOCALITIES = range(4)
"""LLVM's prefetch locality: 0 (no reuse, not kept) to 3 (kept in every
cache level); on x86, 3 is `prefetcht0` (L1) and 2 `prefetcht1` (L2)."""


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """A hint, no effect on any value: bring the cache line holding element
    `offset` of `buffer` (counted in the buffer's row-major order; an offset
    past either end is allowed: a prefetch never faults) towards the core. `locality`
    as LLVM's `llvm.prefetch` (see PREFETCH_LOCALITIES). Declares no memory
    effect trait, so passes keep it in place as an op they do not know."""

    name = "tir.prefetch"

    buffer = operand_def(MemRefType)
    offset = operand_def(IndexType)
    locality = prop_def(IntegerAttr[IntegerType])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$buffer `[` $offset `]` attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, offset: SSAValue, locality: int = 3) -> None:
        super().__init__(
            operands=[buffer, offset], properties={"locality": IntegerAttr(locality, i64)}
        )

    def verify_(self) -> None:
        if self.locality.value.data not in PREFETCH_LOCALITIES:
            raise VerifyException(
                f"'{self.name}' locality {self.locality.value.data} is not one of 0, 1, 2, 3"
            )


def escape_message(text: str) -> str:
    """`text` as literal message text: its braces doubled, so that a node
    name holding `{}` is not taken for the value's place."""
    return text.replace("{", "{{").replace("}", "}}")


def message_parts(message: str) -> tuple[str, str | None]:
    """A `tir.assert` message as (the text before its `{}`, the text after
    it), braces unescaped; (the whole text, None) when it has no `{}`.
    ValueError when it has several `{}`, a named field (`{x}`), a format
    spec or a lone brace."""
    try:
        pieces = list(string.Formatter().parse(message))
    except ValueError as e:
        raise ValueError(f"message {message!r} is not a format string: {e}") from None
    parts: list[str] = [""]
    for literal, field, spec, conversion in pieces:
        parts[-1] += literal
        if field is None:
            continue
        if field != "" or spec or conversion is not None:
            raise ValueError(
                f"message {message!r} has a field {{{field}}}: only `{{}}` (the value) is allowed"
            )
        parts.append("")
    if len(parts) > 2:
        raise ValueError(f"message {message!r} has {len(parts) - 1} `{{}}`: the value goes in one")
    return parts[0], parts[1] if len(parts) == 2 else None


def format_message(message: str, value: int | None) -> str:
    """The text a failed `tir.assert` reports: its message with the value
    in place of `{}`."""
    before, after = message_parts(message)
    return before if after is None else f"{before}{value}{after}"


@irdl_op_definition
class AssertOp(IRDLOperation):
    """A run-time check: where `condition` is false, the run fails with
    `message`, its `{}` replaced by `value` (an integer or index, printed
    as a signed 64-bit number). It does not stop the code after it, which
    must stay safe on its own (an index checked here is still clamped
    where it is used): the first failed check of a run is recorded, and the
    run reports it when it ends (`xtc_run` returns non-zero and
    `xtc_last_error()` gives the message; in Python, `xtc.InputError`).
    Braces meant literally are doubled (`escape_message`). Declares no
    memory effect trait, so passes keep it as an op with unknown effects:
    never erased, never moved out of the loop it sits in, and a loop
    holding it stays serial where a pass does not know better."""

    name = "tir.assert"

    condition = operand_def(i1)
    value = opt_operand_def(IntegerType | IndexType)
    message = prop_def(StringAttr)

    assembly_format = "$condition `,` $message (`,` $value^ `:` type($value))? attr-dict"

    def __init__(self, condition: SSAValue, message: str, value: SSAValue | None = None) -> None:
        super().__init__(
            operands=[condition, [] if value is None else [value]],
            properties={"message": StringAttr(message)},
        )

    def verify_(self) -> None:
        try:
            _, after = message_parts(self.message.data)
        except ValueError as e:
            raise VerifyException(f"'{self.name}' {e}") from None
        if after is None and self.value is not None:
            raise VerifyException(f"'{self.name}' has a value but its message has no `{{}}` for it")
        if after is not None and self.value is None:
            raise VerifyException(f"'{self.name}' message has a `{{}}` but the op has no value")


@irdl_op_definition
class CycleCounterOp(IRDLOperation):
    """A different i64 each time it runs: the CPU's cycle counter natively
    (`llvm.readcyclecounter`), fresh entropy in the interpreter. What
    graph.fresh_seed computes. Declares no memory effect trait, so passes
    keep it where it is and never merge two of them."""

    name = "tir.cycle_counter"

    result = result_def(i64)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[i64])


TIR = Dialect("tir", [ForOp, PrefetchOp, AssertOp, CycleCounterOp], [])
