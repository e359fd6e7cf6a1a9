"""A small Python DSL that writes `te` IR, so a compute rule reads like TVM's:

    def dense(k: KernelBuilder, x: Tensor, w: Tensor) -> Tensor:
        (m, n_in), (n, _) = x.shape, w.shape
        return k.compute((m, n), x.element_type, lambda i, j:
            k.reduce("sum", (n_in,), lambda r: x[i, r] * w[j, r]))

`Expr` wraps a scalar or index SSA value; Python operators and the functions
below emit `arith` / `math` ops into the block being built (xDSL's
ImplicitBuilder). Python numbers mix freely with Exprs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Union, cast

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, math
from xdsl.dialects import tensor as xtensor
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
    f32,
    i1,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region, SSAValue

from xtc.analysis.loops import constant_float
from xtc.dialects.te import ComputeOp, ReduceOp, YieldOp
from xtc.dialects.tir import AssertOp

Number = int | float | bool
ExprLike = Union["Expr", Number]


def is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def constant(value: Number, type_: Attribute) -> Expr:
    """An `arith.constant` of `type_` (index, integer or float)."""
    if is_float(type_):
        return Expr(arith.ConstantOp(FloatAttr(float(value), cast(AnyFloat, type_))).result)
    if isinstance(type_, IntegerType) and type_.width.data == 1:
        return Expr(arith.ConstantOp(IntegerAttr(int(bool(value)), i1)).result)
    if isinstance(type_, IntegerType | IndexType):
        normalized = int(value)
        if isinstance(type_, IntegerType):
            width = type_.width.data
            normalized &= (1 << width) - 1
            if normalized >= 1 << (width - 1):
                normalized -= 1 << width
            # arith works on signless integers; unsigned bit patterns wrap.
            type_ = IntegerType(width)
        return Expr(arith.ConstantOp(IntegerAttr(normalized, type_)).result)
    raise TypeError(f"no constant of type {type_}")


class Expr:
    """A scalar (float, integer, i1) or index value being built."""

    def __init__(self, value: SSAValue, unsigned: bool = False) -> None:
        self.value = value
        # Signedness lives on the tensor element type, not on arith values.
        self.unsigned = unsigned

    @property
    def type(self) -> Attribute:
        return self.value.type

    def _other(self, other: ExprLike) -> Expr:
        return other if isinstance(other, Expr) else constant(other, self.type)

    def _binary(
        self, other: ExprLike, float_op: type, int_op: type, uint_op: type | None = None
    ) -> Expr:
        rhs = self._other(other)
        if is_float(self.type):
            return Expr(float_op(self.value, rhs.value).result)
        op = uint_op if (uint_op is not None and self.unsigned) else int_op
        return Expr(op(self.value, rhs.value).result, self.unsigned)

    def __add__(self, other: ExprLike) -> Expr:
        return self._binary(other, arith.AddfOp, arith.AddiOp)

    def __radd__(self, other: ExprLike) -> Expr:
        return self._other(other) + self

    def __sub__(self, other: ExprLike) -> Expr:
        return self._binary(other, arith.SubfOp, arith.SubiOp)

    def __rsub__(self, other: ExprLike) -> Expr:
        return self._other(other) - self

    def __mul__(self, other: ExprLike) -> Expr:
        return self._binary(other, arith.MulfOp, arith.MuliOp)

    def __rmul__(self, other: ExprLike) -> Expr:
        return self._other(other) * self

    def __truediv__(self, other: ExprLike) -> Expr:
        """Float division; integer division truncating toward zero (as C)."""
        return self._binary(other, arith.DivfOp, arith.DivSIOp, arith.DivUIOp)

    def __rtruediv__(self, other: ExprLike) -> Expr:
        return self._other(other) / self

    def __floordiv__(self, other: ExprLike) -> Expr:
        """Integer/index division rounding toward -inf."""
        rhs = self._other(other)
        op = arith.DivUIOp if self.unsigned else arith.FloorDivSIOp
        return Expr(op(self.value, rhs.value).result, self.unsigned)

    def __mod__(self, other: ExprLike) -> Expr:
        """Remainder with the sign of the dividend (C `%`, `fmod` for floats)."""
        rhs = self._other(other)
        if is_float(self.type):
            raise TypeError("use fmod() for floats")
        op = arith.RemUIOp if self.unsigned else arith.RemSIOp
        return Expr(op(self.value, rhs.value).result, self.unsigned)

    def __neg__(self) -> Expr:
        if is_float(self.type):
            return Expr(arith.NegfOp(self.value).result)
        return constant(0, self.type) - self

    def _compare(self, other: ExprLike, float_pred: str, int_pred: str) -> Expr:
        rhs = self._other(other)
        if is_float(self.type):
            return Expr(arith.CmpfOp(self.value, rhs.value, float_pred).result)
        pred = int_pred
        if self.unsigned and int_pred[0] == "s":
            pred = "u" + int_pred[1:]
        return Expr(arith.CmpiOp(self.value, rhs.value, pred).result)

    def __lt__(self, other: ExprLike) -> Expr:
        return self._compare(other, "olt", "slt")

    def __le__(self, other: ExprLike) -> Expr:
        return self._compare(other, "ole", "sle")

    def __gt__(self, other: ExprLike) -> Expr:
        return self._compare(other, "ogt", "sgt")

    def __ge__(self, other: ExprLike) -> Expr:
        return self._compare(other, "oge", "sge")

    def eq(self, other: ExprLike) -> Expr:
        return self._compare(other, "oeq", "eq")

    def ne(self, other: ExprLike) -> Expr:
        return self._compare(other, "une", "ne")

    def __and__(self, other: ExprLike) -> Expr:
        return Expr(arith.AndIOp(self.value, self._other(other).value).result, self.unsigned)

    def __or__(self, other: ExprLike) -> Expr:
        return Expr(arith.OrIOp(self.value, self._other(other).value).result, self.unsigned)

    def __xor__(self, other: ExprLike) -> Expr:
        return Expr(arith.XOrIOp(self.value, self._other(other).value).result, self.unsigned)

    __hash__ = None  # type: ignore[assignment]  # `==` is not overloaded: use eq()


def select(condition: Expr, if_true: ExprLike, if_false: ExprLike) -> Expr:
    """condition ? if_true : if_false (one of the two must be an Expr)."""
    if isinstance(if_true, Expr):
        t, f = if_true, if_true._other(if_false)
    else:
        assert isinstance(if_false, Expr), "select needs a typed operand"
        t, f = if_false._other(if_true), if_false
    # A constant branch has no signedness: the typed branch decides.
    unsigned = t.unsigned or f.unsigned
    return Expr(arith.SelectOp(condition.value, t.value, f.value).result, unsigned)


def maximum(a: Expr, b: ExprLike) -> Expr:
    """max, propagating NaN for floats (as numpy); see `_zeros_unordered`."""
    return _zeros_unordered(a._binary(b, arith.MaximumfOp, arith.MaxSIOp, arith.MaxUIOp))


def minimum(a: Expr, b: ExprLike) -> Expr:
    """min, propagating NaN for floats (as numpy); see `_zeros_unordered`."""
    return _zeros_unordered(a._binary(b, arith.MinimumfOp, arith.MinSIOp, arith.MinUIOp))


def _zeros_unordered(result: Expr) -> Expr:
    """A float max / min against a constant zero (ReLU, a clip at 0) gets
    `nsz`: which zero max(-0, +0) gives is unspecified, as for np.maximum
    (it returns its first operand), and x86 takes one `vmaxps` a vector for
    llvm.maximum nsz against three with the zeros ordered. NaN still
    propagates."""
    op = result.value.owner
    if not isinstance(op, arith.MaximumfOp | arith.MinimumfOp):
        return result
    if any(constant_float(operand) == 0.0 for operand in op.operands):
        op.properties["fastmath"] = arith.FastMathFlagsAttr((arith.FastMathFlag.NO_SIGNED_ZEROS,))
    return result


def _unary_math(op: type) -> Callable[[Expr], Expr]:
    def apply(x: Expr) -> Expr:
        return Expr(op(x.value).result)

    apply.__name__ = op.__name__
    return apply


exp = _unary_math(math.ExpOp)
log = _unary_math(math.LogOp)
sqrt = _unary_math(math.SqrtOp)
rsqrt = _unary_math(math.RsqrtOp)
tanh = _unary_math(math.TanhOp)
erf = _unary_math(math.ErfOp)
sin = _unary_math(math.SinOp)
cos = _unary_math(math.CosOp)
tan = _unary_math(math.TanOp)
asin = _unary_math(math.AsinOp)
acos = _unary_math(math.AcosOp)
atan = _unary_math(math.AtanOp)
sinh = _unary_math(math.SinhOp)
cosh = _unary_math(math.CoshOp)
asinh = _unary_math(math.AsinhOp)
acosh = _unary_math(math.AcoshOp)
atanh = _unary_math(math.AtanhOp)
floor = _unary_math(math.FloorOp)
ceil = _unary_math(math.CeilOp)
round_even = _unary_math(math.RoundEvenOp)
log1p = _unary_math(math.Log1pOp)
expm1 = _unary_math(math.ExpM1Op)


def check(condition: Expr, message: str, value: ExprLike | None = None) -> None:
    """A run-time check (`tir.assert`): where `condition` is false, the run
    fails with `message`, its `{}` standing for `value` (converted to i64).
    The code after it runs on regardless and must stay safe on its own."""
    if value is None:
        AssertOp(condition.value, message)
        return
    shown = convert(value, i64) if isinstance(value, Expr) else constant(int(value), i64)
    AssertOp(condition.value, message, shown.value)


def absolute(x: Expr) -> Expr:
    if is_float(x.type):
        return Expr(math.AbsFOp(x.value).result)
    return Expr(math.AbsIOp(x.value).result)


def power(x: Expr, y: Expr) -> Expr:
    return Expr(math.PowFOp(x.value, y.value).result)


def fmod(x: Expr, y: ExprLike) -> Expr:
    """C fmod for floats: x - trunc(x / y) * y."""
    rhs = x._other(y)
    quotient = Expr(math.TruncOp((x / rhs).value).result)
    return x - quotient * rhs


def convert(x: Expr, to: Attribute, unsigned: bool = False) -> Expr:
    """Converts between index, integers (signed or `unsigned`) and floats,
    as C casts do (float to int truncates)."""
    src = x.type
    if src == to and x.unsigned == unsigned:
        return x
    if isinstance(to, IntegerType) and to.signedness.data == Signedness.UNSIGNED:
        to, unsigned = IntegerType(to.width.data), True
    if isinstance(src, IndexType) or isinstance(to, IndexType):
        if is_float(src) or is_float(to):
            via = convert(x, i64)
            return convert(via, to, unsigned)
        if isinstance(src, IntegerType) and (x.unsigned or _is_i1(src)) and cast_width(src) < 64:
            # index_cast sign-extends: an unsigned value (or true) widens with zeros first.
            x = Expr(arith.ExtUIOp(x.value, i64).result, True)
        return Expr(arith.IndexCastOp(x.value, to).result, unsigned)
    if is_float(src) and is_float(to):
        if cast_width(to) == cast_width(src):
            # f16 <-> bf16: no direct extf/truncf between types of one width.
            return convert(convert(x, f32), to)
        wider = cast_width(to) > cast_width(src)
        op = arith.ExtFOp if wider else arith.TruncFOp
        return Expr(op(x.value, to).result)
    if is_float(src):
        if isinstance(to, IntegerType) and to.width.data == 1:
            return x.ne(0.0)
        op = arith.FPToUIOp if unsigned else arith.FPToSIOp
        return Expr(op(x.value, to).result, unsigned)
    if is_float(to):
        op = arith.UIToFPOp if x.unsigned or _is_i1(src) else arith.SIToFPOp
        return Expr(op(x.value, to).result)
    src_width, to_width = cast_width(src), cast_width(to)
    if to_width == 1:
        return x.ne(0)
    if to_width < src_width:
        return Expr(arith.TruncIOp(x.value, to).result, unsigned)
    if to_width > src_width:
        op = arith.ExtUIOp if x.unsigned or _is_i1(src) else arith.ExtSIOp
        return Expr(op(x.value, to).result, unsigned)
    return Expr(x.value, unsigned)


def _is_i1(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def cast_width(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    return cast(AnyFloat, t).bitwidth


class Tensor:
    """A tensor value in a kernel; `t[i, j]` reads one element."""

    def __init__(self, value: SSAValue) -> None:
        assert isinstance(value.type, TensorType)
        self.value = value

    @property
    def type(self) -> TensorType[Attribute]:
        return cast(TensorType[Attribute], self.value.type)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.get_shape())

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def element_type(self) -> Attribute:
        return self.type.get_element_type()

    @property
    def unsigned(self) -> bool:
        return is_unsigned(self.element_type)

    def __getitem__(self, indices: Sequence[ExprLike] | ExprLike) -> Expr:
        if not isinstance(indices, Sequence):
            indices = [indices]
        index_values = [index(i).value for i in indices]
        read = xtensor.ExtractOp(self.value, index_values, self.element_type)
        return Expr(to_signless(read.result), self.unsigned)


def index(value: ExprLike) -> Expr:
    """An index Expr from an int or an Expr (integers are cast)."""
    if isinstance(value, Expr):
        return value if isinstance(value.type, IndexType) else convert(value, IndexType())
    return constant(int(value), IndexType())


def to_signless(value: SSAValue) -> SSAValue:
    """arith computes on signless integers: an unsigned element is reinterpreted."""
    if is_unsigned(value.type):
        signless = IntegerType(cast(IntegerType, value.type).width.data)
        return UnrealizedConversionCastOp.get([value], [signless]).results[0]
    return value


def from_signless(value: SSAValue, element_type: Attribute) -> SSAValue:
    """A signless scalar as the (maybe unsigned) element type it is stored as."""
    if value.type != element_type and is_unsigned(element_type):
        return UnrealizedConversionCastOp.get([value], [element_type]).results[0]
    return value


def scalar_type(element_type: Attribute) -> Attribute:
    """The arith type of a tensor element type (signless integers)."""
    if isinstance(element_type, IntegerType):
        return IntegerType(element_type.width.data)
    return element_type


class KernelBuilder:
    """Builds one kernel: `func.func @name(tensors...) -> tensors` of te ops."""

    def __init__(self, name: str, input_types: Sequence[Attribute]) -> None:
        self.name = name
        self.block = Block(arg_types=list(input_types))
        self.inputs = [Tensor(a) for a in self.block.args]
        self._context = ImplicitBuilder(self.block)
        self._context.__enter__()

    def compute(
        self,
        shape: Sequence[int],
        element_type: Attribute,
        body: Callable[..., ExprLike],
        materialize: bool = False,
    ) -> Tensor:
        """The tensor whose element at (i0, i1, ...) is `body(i0, i1, ...)`;
        `materialize`: a stage of its own, never inlined where it is read."""
        op = ComputeOp.create(
            properties={"materialize": UnitAttr()} if materialize else {},
            result_types=[TensorType(element_type, list(shape))],
            regions=[Region(Block(arg_types=[IndexType()] * len(shape)))],
        )
        with ImplicitBuilder(op.body.block) as indices:
            value = body(*[Expr(i) for i in indices])
            value = value if isinstance(value, Expr) else constant(value, scalar_type(element_type))
            YieldOp.create(operands=[from_signless(value.value, element_type)])
        return Tensor(op.result)

    def reduce(
        self,
        kind: str,
        extents: Sequence[int],
        body: Callable[..., Expr],
        result_type: Attribute | None = None,
    ) -> Expr:
        """kind ("sum", "prod", "max", "min") of body(r0, r1, ...) over the box."""
        op_block = Block(arg_types=[IndexType()] * len(extents))
        with ImplicitBuilder(op_block) as indices:
            term = body(*[Expr(i) for i in indices])
            YieldOp.create(operands=[term.value])
        op = ReduceOp.create(
            properties={
                "kind": StringAttr(kind),
                "extents": DenseArrayBase.from_list(i64, list(extents)),
            },
            result_types=[result_type or term.type],
            regions=[Region(op_block)],
        )
        return Expr(op.result, term.unsigned)

    def finish(self, outputs: Sequence[Tensor]) -> FuncOp:
        """Closes the kernel; returns its function (private)."""
        ReturnOp(*[o.value for o in outputs])
        self._context.__exit__(None, None, None)
        function_type = FunctionType.from_lists(
            [a.type for a in self.block.args], [o.value.type for o in outputs]
        )
        return FuncOp(self.name, function_type, Region(self.block), "private")
