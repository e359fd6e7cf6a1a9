"""tir.ForOp's constructor builds the op IRDL's constructor builds: the
same properties (bounds as i64 attributes), one region taking the index,
and it verifies; its bound attributes are shared between loops."""

from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, i64
from xdsl.ir import Block, Region
from xdsl.irdl import IRDLOperation

from xtc.dialects.tir import ForOp


@given(
    st.integers(-64, 64),
    st.integers(-64, 256),
    st.integers(1, 16),
    st.sampled_from(["serial", "parallel", "unrolled"]),
)
def test_for_is_the_op_irdl_builds(lower: int, upper: int, step: int, kind: str) -> None:
    loop = ForOp(lower, upper, "i", kind, step)
    reference = ForOp.__new__(ForOp)
    IRDLOperation.__init__(
        reference,
        properties={
            "lower": IntegerAttr(lower, i64),
            "upper": IntegerAttr(upper, i64),
            "step": IntegerAttr(step, i64),
            "name": StringAttr("i"),
            "kind": StringAttr(kind),
        },
        regions=[Region(Block(arg_types=[IndexType()]))],
    )
    assert loop.properties == reference.properties
    assert loop.attributes == reference.attributes == {}
    assert [type(a.type) for a in loop.body.block.args] == [IndexType]
    assert loop.extent == max(0, (upper - lower + step - 1) // step)
    loop.verify()
    assert str(loop) == str(reference)


def test_loops_share_their_bound_attributes() -> None:
    first, second = ForOp(0, 8, "i"), ForOp(0, 8, "j")
    assert first.lower is second.lower and first.upper is second.upper
