"""Helpers for tests of single graph ops: build a one-op module, check that it
round-trips through text in custom and generic form, and run it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute

from xtc import interp
from xtc.dialects.graph.base import GraphOp
from xtc.dialects.graph.constant import element_type_of


def tensor_type_of(array: np.ndarray) -> TensorType[Attribute]:
    return TensorType(element_type_of(array.dtype), list(array.shape))


def single_op_module(
    op_class: type[GraphOp],
    input_types: Sequence[Attribute],
    props: Mapping[str, Attribute] | None = None,
) -> ModuleOp:
    """`func @main(args) { %r = op(args); return %r }`, result types inferred."""
    func = FuncOp("main", (list(input_types), []))
    op = op_class.build_inferred(list(func.body.block.args), props)
    func.body.block.add_ops([op, ReturnOp(*op.results)])
    func.function_type = FunctionType.from_lists(list(input_types), list(op.result_types))
    module = ModuleOp([func])
    module.verify()
    return module


def check_roundtrip(module: ModuleOp) -> None:
    """Printing, reparsing and printing again gives the same text, in the custom
    and in the generic form, and the reparsed module verifies."""
    from xtc.driver.textual_ir import module_to_text, parse_module

    for generic in (False, True):
        text = module_to_text(module, generic=generic)
        reparsed = parse_module(text)
        reparsed.verify()
        assert module_to_text(reparsed, generic=generic) == text, text


def run_single_op(
    op_class: type[GraphOp],
    inputs: Sequence[np.ndarray],
    props: Mapping[str, Attribute] | None = None,
) -> list[np.ndarray]:
    """Builds the op over `inputs`' types, round-trips it, runs the interpreter."""
    module = single_op_module(op_class, [tensor_type_of(a) for a in inputs], props)
    check_roundtrip(module)
    return interp.run(module, list(inputs))


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Random arrays for the entry function's arguments (normal floats,
    small integers, random booleans)."""
    from xtc.dialects.graph.constant import numpy_dtype

    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for t in interp.entry_function(module).function_type.inputs.data:
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape())
        dtype = numpy_dtype(t.get_element_type())
        if dtype == np.bool_:
            arrays.append(rng.random(shape) < 0.5)
        elif np.issubdtype(dtype, np.integer):
            arrays.append(rng.integers(-5, 6, shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def filecheck_cases(text: str) -> list[str]:
    """Each function of a FileCheck file's `text` as a module of its own,
    the function renamed @main and the comment lines (RUN, CHECK) dropped:
    what the numerical twin of a graph pass's FileCheck test runs."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return [
        "func.func @main" + chunk[chunk.index("(") :] for chunk in body.split("func.func @")[1:]
    ]


def assert_pipeline_preserves_outputs(
    text: str, pipeline: str, seeds: Sequence[int] = (0, 1), rtol: float = 1e-5
) -> ModuleOp:
    """Runs the module before and after `pipeline` on random inputs and
    compares; returns the transformed module."""
    from xtc.driver.pipelines import apply_pipeline
    from xtc.driver.textual_ir import parse_module

    before = parse_module(text)
    after = apply_pipeline(parse_module(text), pipeline)
    for seed in seeds:
        inputs = random_inputs(before, seed)
        expected = interp.run(before, inputs)
        got = interp.run(after, inputs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(
                g, e, rtol=rtol, atol=rtol * max(1.0, float(np.abs(e).max(initial=0)))
            )
    return after


def matmul_text(m: int, k: int, n: int) -> str:
    """`@main` computing the m x k by k x n f32 matmul."""
    a, b, c = (f"tensor<{r}x{s}xf32>" for r, s in ((m, k), (k, n), (m, n)))
    return (
        f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
        f"  %c = graph.matmul %a, %b : ({a}, {b}) -> {c}\n"
        f"  func.return %c : {c}\n}}\n"
    )
