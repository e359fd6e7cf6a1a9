"""graph.if, graph.loop and graph.yield (dialects/graph/control.py): built
from Python, verified, and run by the interpreter."""

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, i1, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from xtc import interp
from xtc.dialects.graph.control import IfOp, LoopOp, YieldOp
from xtc.dialects.graph.elementwise import AddOp, NegOp

VECTOR = TensorType(f32, [3])
FLAG = TensorType(i1, [])
COUNT = TensorType(i64, [])


def if_function() -> FuncOp:
    """r = c ? -x : x."""
    block = Block(arg_types=[FLAG, VECTOR])
    c, x = block.args
    negated = NegOp.build_inferred([x])
    then = Region(Block([negated, YieldOp([negated.results[0]])]))
    orelse = Region(Block([YieldOp([x])]))
    pick = IfOp(c, [VECTOR], then, orelse)
    block.add_ops([pick, ReturnOp(pick.results[0])])
    return FuncOp("main", ([FLAG, VECTOR], [VECTOR]), Region(block))


def loop_function() -> FuncOp:
    """x doubled m times, while c."""
    block = Block(arg_types=[COUNT, FLAG, VECTOR])
    m, c, x = block.args
    body = Block(arg_types=[COUNT, FLAG, VECTOR])
    doubled = AddOp.build_inferred([body.args[2], body.args[2]])
    body.add_ops([doubled, YieldOp([body.args[1], doubled.results[0]])])
    loop = LoopOp(m, c, [x], Region(body))
    block.add_ops([loop, ReturnOp(loop.results[0])])
    return FuncOp("main", ([COUNT, FLAG, VECTOR], [VECTOR]), Region(block))


@pytest.mark.parametrize("condition", [True, False])
def test_if_runs_the_branch_its_condition_picks(condition: bool) -> None:
    module = ModuleOp([if_function()])
    module.verify()
    x = np.array([1, -2, 3], np.float32)
    (got,) = interp.run(module, [np.array(condition), x])
    assert got.tolist() == (-x if condition else x).tolist()


@pytest.mark.parametrize(("trips", "going", "factor"), [(3, True, 8), (0, True, 1), (5, False, 1)])
def test_loop_runs_while_the_trip_count_and_condition_allow(
    trips: int, going: bool, factor: int
) -> None:
    module = ModuleOp([loop_function()])
    module.verify()
    x = np.array([1, -2, 3], np.float32)
    (got,) = interp.run(module, [np.array(trips, np.int64), np.array(going), x])
    assert got.tolist() == (x * factor).tolist()


def test_if_refuses_branches_of_other_types() -> None:
    func = if_function()
    pick = next(op for op in func.walk() if isinstance(op, IfOp))
    pick.else_region.block.erase_op(pick.else_region.block.first_op)  # type: ignore[arg-type]
    pick.else_region.block.add_op(YieldOp([]))
    with pytest.raises(VerifyException, match=r"the else region yields \(\), the op returns"):
        pick.verify()


def test_loop_refuses_a_float_trip_count() -> None:
    block = Block(arg_types=[VECTOR, FLAG, VECTOR])
    body = Block(arg_types=[COUNT, FLAG, VECTOR])
    body.add_op(YieldOp([body.args[1], body.args[2]]))
    loop = LoopOp(block.args[0], block.args[1], [block.args[2]], Region(body))
    with pytest.raises(VerifyException, match="max trip count must be a one-element tensor of i64"):
        loop.verify()
