"""What every tir schedule pass (tir-split, tir-tile, tir-cache-read, ...)
shares: the `func` option, choosing the functions it applies to, options
checked when the pass is built, and one way to refuse.

A schedule pass is a frozen dataclass of options deriving SchedulePass. It
says which of its options name loops (`LOOP_OPTIONS`, `loop` by default),
may refuse option values no input could accept (`check_options`, run at
construction: a bad option is an error of the pipeline, before any IR is
read), and transforms one chosen function (`schedule`). Its refusals are
ScheduleErrors built by a Refuser, so each names the pass, the function
and the loop, and points at the op in the way."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xtc.dialects.tir import ForOp
from xtc.passes.tir_loops import (
    ScheduleError,
    describe_buffer,
    find_loop,
    function_name,
    loop_name,
    select_functions,
)


class PassOptionError(ScheduleError, ValueError):
    """An option value no input could accept (`factor=0`). It is a
    ValueError, so that xtc-opt reports it as an invalid pipeline, and a
    ScheduleError, so that a driver trying schedule steps treats it as a
    refused step."""


@dataclass(frozen=True)
class Refuser:
    """The refusals of one application of a schedule pass to `loop` of
    `func`: each message starts with `head`, which names what the pass was
    doing, to which loop of which function (by default `loop 'L' in @f `,
    so that the message reads on), and points at an op (`loop` unless
    told)."""

    pass_name: str
    func: FuncOp
    loop: ForOp
    head: str | None = None

    def __call__(self, message: str, op: Operation | None = None) -> ScheduleError:
        head = self.head
        if head is None:
            head = f"loop '{loop_name(self.loop)}' in @{function_name(self.func)} "
        return ScheduleError(self.pass_name, head + message, op if op is not None else self.loop)

    def on(self, loop: ForOp) -> Refuser:
        """This pass's refusals about another loop of the function."""
        return Refuser(self.pass_name, self.func, loop)

    def about(self, loop: ForOp, detail: str) -> Refuser:
        """Refusals about a part of this application: each message starts
        with this one's head and `detail`, and points at `loop` by default."""
        return Refuser(self.pass_name, self.func, loop, (self.head or "") + detail)


@dataclass(frozen=True, kw_only=True)
class SchedulePass(ModulePass, ABC):
    """A tir schedule primitive applied to the loops of one function, or of
    every function that has them."""

    LOOP_OPTIONS: ClassVar[tuple[str, ...]] = ("loop",)
    """The options that name loops (a name, or a tuple of names)."""

    func: str = ""
    """The function to schedule; empty: every function that has the loop."""

    def __post_init__(self) -> None:
        self.check_options()

    def check_options(self) -> None:
        """Refuses (raise self.bad_option(...)) option values that no input
        could accept; a pass whose options all may be valid keeps this."""

    def bad_option(self, message: str) -> PassOptionError:
        return PassOptionError(self.name, message)

    def loops_named(self) -> list[str]:
        """The loops each chosen function must have, each once (the values
        of LOOP_OPTIONS, in order); without `func`, the functions that have
        the first are chosen."""
        names: list[str] = []
        for option in self.LOOP_OPTIONS:
            value: str | tuple[str, ...] = getattr(self, option)
            names += [value] if isinstance(value, str) else value
        return names

    @abstractmethod
    def schedule(self, func: FuncOp, rewriter: PatternRewriter) -> None:
        """Transforms one chosen function, or refuses with a ScheduleError."""

    def find_loop(self, func: FuncOp, name: str) -> ForOp:
        """The loop of `func` named `name`; refuses a missing or ambiguous one."""
        return find_loop(self.name, func, name)

    def refuser(self, func: FuncOp, loop: ForOp, head: str | None = None) -> Refuser:
        """Refusals about `loop` of `func`, each message after `head`
        (default: `loop 'L' in @f `)."""
        return Refuser(self.name, func, loop, head)

    def buffer_refuser(self, func: FuncOp, loop: ForOp, buffer: SSAValue, verb: str) -> Refuser:
        """Refusals about `buffer` read in `loop`: `cannot <verb> %b
        (argument 1) in loop 'L' of @f: ...`."""
        head = (
            f"cannot {verb} {describe_buffer(buffer)} in loop '{loop_name(loop)}' of "
            f"@{function_name(func)}: "
        )
        return Refuser(self.name, func, loop, head)

    def apply_to(self, func: FuncOp) -> None:
        """Schedules `func` alone, outside a rewrite walk: a refusal raises
        its ScheduleError as it is, without the walk printing the whole
        module into a note (seconds for a model with weights), for callers
        that try a schedule and fall back when it is refused."""
        self.schedule(func, PatternRewriter(func))

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        chosen = select_functions(op, self.name, self.func, self.loops_named())
        # The chosen functions are ops of the module's body: a loop over them,
        # not a rewrite walk that visits every op of the module (a quarter of
        # a kernel's scheduling); an error gets the walk's note all the same.
        functions = [f for f in op.ops if isinstance(f, FuncOp) and function_name(f) in chosen]
        for func in functions:
            try:
                self.schedule(func, PatternRewriter(func))
            except Exception as err:
                func.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
