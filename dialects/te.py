"""The te dialect: tensor expressions, as TVM's `te.compute`.

A kernel is a `func.func` over tensors whose body holds `te.compute` ops.
`te.compute` defines every element of its result tensor by an index lambda:
its single block takes one `index` argument per result dimension and yields
the element (scalar ops from `arith` and `math`, reads with `tensor.extract`).
`te.reduce`, inside a compute body, folds a scalar lambda over a box of reduce
indices with sum, prod, max or min. A body may check a value it reads at run
time with `tir.assert` (an index read from a tensor): such a compute has
effects, so no pass drops or merges it.

    %c = te.compute : tensor<4x5xf32> {
    ^bb0(%i: index, %j: index):
      %s = te.reduce {kind = "sum", extents = array<i64: 3>} : f32 {
      ^bb0(%k: index):
        %a = tensor.extract %A[%i, %k] : tensor<4x3xf32>
        %b = tensor.extract %B[%k, %j] : tensor<3x5xf32>
        %m = arith.mulf %a, %b : f32
        te.yield %m : f32
      }
      te.yield %s : f32
    }
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    IndexType,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

REDUCE_KINDS = ("sum", "prod", "max", "min")


def _yielded_type(op: IRDLOperation) -> Attribute:
    block = op.regions[0].block
    last = block.last_op
    if not isinstance(last, YieldOp):
        raise VerifyException(f"'{op.name}' body must end with te.yield")
    return last.value.type


def _check_index_args(op: IRDLOperation, count: int, what: str) -> None:
    args = op.regions[0].block.args
    if len(args) != count:
        raise VerifyException(
            f"'{op.name}' body takes {len(args)} indices, expected {count} ({what})"
        )
    for arg in args:
        if not isinstance(arg.type, IndexType):
            raise VerifyException(f"'{op.name}' body arguments must be index, got {arg.type}")


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """A tensor defined element by element by its body (an index lambda)."""

    name = "te.compute"

    result = result_def(TensorType)
    body = region_def("single_block")
    materialize = opt_prop_def(UnitAttr)
    """Set: the tensor is a stage of its own, never computed where it is
    read (te-inline keeps it; its compute rule measured that it pays)."""

    traits = traits_def(Pure(), RecursiveMemoryEffect())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result) $body"

    def verify_(self) -> None:
        result_type = cast(TensorType[Attribute], self.result.type)
        rank = len(result_type.get_shape())
        _check_index_args(self, rank, f"one per dimension of {result_type}")
        element = result_type.get_element_type()
        if _yielded_type(self) != element:
            raise VerifyException(
                f"'{self.name}' yields {_yielded_type(self)}, but the result's "
                f"elements are {element}"
            )


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """A scalar: `kind` folded over the body's values for every point of the
    box `extents` (the body takes one index per extent)."""

    name = "te.reduce"

    kind = prop_def(StringAttr)
    extents = prop_def(DenseArrayBase)
    result = result_def(AnyFloat | IntegerType)
    body = region_def("single_block")

    traits = traits_def(Pure(), RecursiveMemoryEffect())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result) $body"

    def extent_values(self) -> tuple[int, ...]:
        return tuple(int(v) for v in cast(DenseArrayBase[IntegerType], self.extents).get_values())

    def verify_(self) -> None:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(
                f"'{self.name}' kind \"{self.kind.data}\" is not one of "
                + ", ".join(f'"{k}"' for k in REDUCE_KINDS)
            )
        extents = self.extent_values()
        if any(e < 0 for e in extents):
            raise VerifyException(f"'{self.name}' extents {list(extents)} must be >= 0")
        _check_index_args(self, len(extents), "one per extent")
        if _yielded_type(self) != self.result.type:
            raise VerifyException(
                f"'{self.name}' yields {_yielded_type(self)}, but its result is {self.result.type}"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The element (te.compute) or the term (te.reduce) at the body's indices."""

    name = "te.yield"

    value = operand_def(AnyFloat | IntegerType)

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ComputeOp, ReduceOp), Pure()))
    assembly_format = "$value attr-dict `:` type($value)"


TE = Dialect("te", [ComputeOp, ReduceOp, YieldOp], [])
