import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from xtc.dialects.graph import elementwise as ew
from xtc.dialects.graph.base import ShapeError
from xtc.interp.testing import run_single_op, single_op_module, tensor_type_of


@settings(max_examples=25, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
def test_add_broadcasts_like_numpy(shapes: hnp.BroadcastableShapes) -> None:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes.input_shapes)
    (got,) = run_single_op(ew.AddOp, [a, b])
    np.testing.assert_allclose(got, a + b, rtol=1e-6)


def test_add_refuses_incompatible_shapes_naming_both() -> None:
    a = np.zeros((2, 3), np.float32)
    b = np.zeros((4,), np.float32)
    with pytest.raises(ShapeError, match=r"tensor<2x3xf32> and tensor<4xf32>"):
        single_op_module(ew.AddOp, [tensor_type_of(a), tensor_type_of(b)])


@given(st.integers(1, 5), st.integers(1, 5))
@settings(max_examples=10, deadline=None)
def test_relu(n: int, m: int) -> None:
    x = np.random.default_rng(1).standard_normal((n, m)).astype(np.float32)
    (got,) = run_single_op(ew.ReluOp, [x])
    np.testing.assert_array_equal(got, np.maximum(x, 0))
