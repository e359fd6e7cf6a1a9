"""RNN, GRU and LSTM through the importer, the interpreter and native code,
against onnxruntime on random inputs (onnxruntime lacks layout 1: those are
checked against the layout-0 model on transposed inputs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper

import xtc
from xtc import interp
from xtc.frontend.onnx import OnnxImportError, import_model

Array = np.ndarray[Any, np.dtype[Any]]
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
OPTIONAL = ("B", "sequence_lens", "initial_h", "initial_c", "P")


def recurrent_inputs(
    op: str,
    steps: int = 5,
    batch: int = 3,
    features: int = 4,
    hidden: int = 6,
    directions: int = 1,
    given: Sequence[str] = ("B",),
    lengths: Sequence[int] | None = None,
    seed: int = 0,
) -> dict[str, Array]:
    """X, W, R and the optional inputs named in `given`, layout 0."""
    rng = np.random.default_rng(seed)
    g = GATES[op]

    def normal(*shape: int, scale: float = 1.0) -> Array:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    values = {
        "X": normal(steps, batch, features),
        "W": normal(directions, g * hidden, features, scale=0.5),
        "R": normal(directions, g * hidden, hidden, scale=0.5),
    }
    optional = {
        "B": lambda: normal(directions, 2 * g * hidden),
        "sequence_lens": lambda: np.array(lengths, np.int32),
        "initial_h": lambda: normal(directions, batch, hidden),
        "initial_c": lambda: normal(directions, batch, hidden),
        "P": lambda: normal(directions, 3 * hidden),
    }
    values.update({name: optional[name]() for name in OPTIONAL if name in given})
    return values


def node_of(op: str, inputs: Mapping[str, Array], outputs: Sequence[str], **attrs: Any):
    names = ["X", "W", "R", *OPTIONAL[: 5 if op == "LSTM" else 3]]
    used = [n if n in inputs else "" for n in names]
    while not used[-1]:
        used.pop()
    attrs.setdefault("hidden_size", inputs["R"].shape[-1])  # onnxruntime requires it
    return helper.make_node(op, used, list(outputs), **attrs)


def model_of(
    nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, Array], outputs: Sequence[str]
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "recurrent",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs.items()
        ],
        [onnx.ValueInfoProto(name=n) for n in outputs if n],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def onnxruntime_run(model: onnx.ModelProto, inputs: Mapping[str, Array]) -> list[Array]:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return [np.asarray(v) for v in session.run(None, dict(inputs))]


def assert_all_close(got: Sequence[Array], want: Sequence[Array]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def outputs_of(op: str) -> tuple[str, ...]:
    return ("Y", "Y_h", "Y_c") if op == "LSTM" else ("Y", "Y_h")


CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    # (op, inputs' options, attributes)
    *[
        (op, {"directions": 2 if d == "bidirectional" else 1}, {"direction": d})
        for op in GATES
        for d in ("forward", "reverse", "bidirectional")
    ],
    ("RNN", {"given": ()}, {}),
    ("RNN", {"given": ("B", "initial_h"), "directions": 2}, {"direction": "bidirectional"}),
    ("RNN", {}, {"activations": ["Relu"]}),
    (
        "RNN",
        {"directions": 2},
        {
            "direction": "bidirectional",
            "activations": ["Affine", "LeakyRelu"],
            "activation_alpha": [0.5, 0.2],
            "activation_beta": [0.1],
        },
    ),
    ("RNN", {}, {"clip": 0.7}),
    ("GRU", {"given": ("initial_h",)}, {"direction": "reverse"}),
    ("GRU", {}, {"linear_before_reset": 1}),
    (
        "GRU",
        {"given": ("B", "initial_h"), "directions": 2},
        {"linear_before_reset": 1, "direction": "bidirectional", "clip": 0.5},
    ),
    ("GRU", {"given": ()}, {"linear_before_reset": 1}),
    (
        "GRU",
        {},
        {
            "activations": ["HardSigmoid", "ScaledTanh"],
            "activation_alpha": [0.3, 0.8],
            "activation_beta": [0.4, 1.2],
        },
    ),
    ("LSTM", {"given": ("initial_h", "initial_c")}, {}),
    (
        "LSTM",
        {"given": ("B", "initial_h", "initial_c", "P"), "directions": 2},
        {"direction": "bidirectional"},
    ),
    ("LSTM", {"given": ("P",)}, {"input_forget": 1, "clip": 0.5}),
    ("LSTM", {}, {"clip": 0.6, "direction": "reverse"}),
    (
        "LSTM",
        {},
        {
            "activations": ["HardSigmoid", "Elu", "Softsign"],
            "activation_alpha": [0.3, 0.8],
            "activation_beta": [0.4],
        },
    ),
    (
        "LSTM",
        {},
        {"activations": ["Sigmoid", "ThresholdedRelu", "Softplus"], "activation_alpha": [0.2]},
    ),
    *[
        (
            op,
            {"given": ("B", "sequence_lens", "initial_h"), "lengths": [5, 2, 3], "directions": 2},
            {"direction": "bidirectional"},
        )
        for op in GATES
    ],
    *[
        (op, {"given": ("sequence_lens",), "lengths": [1, 4, 5]}, {"direction": "reverse"})
        for op in GATES
    ],
]


@pytest.mark.parametrize(("op", "options", "attrs"), CASES)
def test_interpreter_matches_onnxruntime(
    op: str, options: dict[str, Any], attrs: dict[str, Any]
) -> None:
    inputs = recurrent_inputs(op, **options)
    outputs = outputs_of(op)
    model = model_of([node_of(op, inputs, outputs, **attrs)], inputs, outputs)
    assert_all_close(interp.run(import_model(model), inputs), onnxruntime_run(model, inputs))


@pytest.mark.parametrize(
    "outputs", [("", "Y_h"), ("Y",), ("", "", "Y_c"), ("Y", "", "Y_c")], ids=str
)
def test_omitted_outputs_are_not_computed(outputs: tuple[str, ...]) -> None:
    inputs = recurrent_inputs("LSTM")
    model = model_of([node_of("LSTM", inputs, outputs)], inputs, outputs)
    module = import_model(model)
    assert_all_close(interp.run(module, inputs), onnxruntime_run(model, inputs))
    assert ("graph.concat" in str(module)) == ("Y" in outputs)


@pytest.mark.parametrize("op", list(GATES))
def test_layout_1_is_layout_0_transposed(op: str) -> None:
    inputs = recurrent_inputs(op, given=("B", "initial_h", "initial_c"), directions=2)
    outputs = outputs_of(op)
    batchwise = {
        n: a.transpose(1, 0, 2) if n in ("X", "initial_h", "initial_c") else a
        for n, a in inputs.items()
    }
    attrs = {"direction": "bidirectional"}
    model = model_of([node_of(op, batchwise, outputs, layout=1, **attrs)], batchwise, outputs)
    reference = model_of([node_of(op, inputs, outputs, **attrs)], inputs, outputs)
    want = onnxruntime_run(reference, inputs)
    perms = [(2, 0, 1, 3), (1, 0, 2), (1, 0, 2)]
    assert_all_close(
        interp.run(import_model(model), batchwise),
        [w.transpose(p) for w, p in zip(want, perms, strict=False)],
    )


def test_native_code_matches_onnxruntime() -> None:
    """The three ops in one model, with run-time sequence lengths, compiled."""
    lstm = recurrent_inputs(
        "LSTM", given=("B", "sequence_lens", "P"), lengths=[4, 5, 2], directions=2, seed=1
    )
    gru = recurrent_inputs("GRU", seed=2)
    rnn = recurrent_inputs("RNN", given=("initial_h",), seed=3)
    inputs: dict[str, Array] = {}
    nodes: list[onnx.NodeProto] = []
    outputs: list[str] = []
    for prefix, values, op, attrs in (
        ("l_", lstm, "LSTM", {"direction": "bidirectional"}),
        ("g_", gru, "GRU", {"linear_before_reset": 1, "direction": "reverse"}),
        ("r_", rnn, "RNN", {"clip": 0.8}),
    ):
        node = node_of(op, values, [prefix + o for o in outputs_of(op)], **attrs)
        node.input[:] = [prefix + n if n else "" for n in node.input]
        nodes.append(node)
        outputs += node.output
        inputs.update({prefix + n: a for n, a in values.items()})
    model = model_of(nodes, inputs, outputs)
    compiled = xtc.compile(model)
    assert_all_close(compiled.run(inputs), onnxruntime_run(model, inputs))


@pytest.mark.parametrize("serial", [True, False])
def test_stacked_lstm_compiled_matches_onnxruntime(
    serial: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's classifier (two stacked LSTMs, a Gemm), small: compiled
    serial (the default for a model this small) and with its loops parallel,
    it answers as onnxruntime; each layer's R is transposed once for all its
    steps, so the weights stay the model's size (a copy per step was 24 more
    R here)."""
    from xtc.driver.compile_settings import SERIAL_VARIABLE
    from xtc.tools.model_builders import lstm_classifier

    if serial:
        monkeypatch.delenv(SERIAL_VARIABLE, raising=False)
    model = lstm_classifier(seq=12, features=16, hidden=32, batch=2, seed=3)
    x = np.random.default_rng(4).standard_normal((12, 2, 16)).astype(np.float32)
    compiled = xtc.compile(model)
    assert_all_close(compiled.run({"input": x}), onnxruntime_run(model, {"input": x}))
    assert ("tir-parallel" in compiled.manifest["pipeline"]) is not serial
    initializers = sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    assert compiled.manifest["weights_bytes"] < 1.5 * initializers


@settings(max_examples=5, deadline=None)
@given(
    steps=st.integers(1, 6),
    batch=st.integers(1, 3),
    hidden=st.integers(1, 20),
    direction=st.sampled_from(["forward", "reverse", "bidirectional"]),
)
def test_any_lstm_compiled_matches_onnxruntime(
    steps: int, batch: int, hidden: int, direction: str
) -> None:
    """Native LSTMs of any sizes (gates of tanh and sigmoid in vector code,
    a hidden width that no vector divides included) against onnxruntime."""
    directions = 2 if direction == "bidirectional" else 1
    given = ("B", "initial_h", "initial_c")
    inputs = recurrent_inputs("LSTM", steps, batch, 5, hidden, directions, given, seed=hidden)
    outputs = outputs_of("LSTM")
    model = model_of([node_of("LSTM", inputs, outputs, direction=direction)], inputs, outputs)
    assert_all_close(xtc.compile(model).run(inputs), onnxruntime_run(model, inputs))


@settings(max_examples=8, deadline=None)
@given(
    op=st.sampled_from(sorted(GATES)),
    steps=st.integers(1, 6),
    batch=st.integers(1, 3),
    features=st.integers(1, 5),
    hidden=st.integers(1, 5),
    bidirectional=st.booleans(),
)
def test_any_sizes_match_onnxruntime(
    op: str, steps: int, batch: int, features: int, hidden: int, bidirectional: bool
) -> None:
    directions = 2 if bidirectional else 1
    inputs = recurrent_inputs(op, steps, batch, features, hidden, directions, ("B", "initial_h"))
    outputs = outputs_of(op)
    direction = "bidirectional" if bidirectional else "forward"
    model = model_of([node_of(op, inputs, outputs, direction=direction)], inputs, outputs)
    assert_all_close(interp.run(import_model(model), inputs), onnxruntime_run(model, inputs))


@pytest.mark.parametrize(
    ("attrs", "lengths", "message"),
    [
        ({"activations": ["Swish"]}, None, "activation 'Swish' is not one of"),
        ({"activations": ["Tanh", "Tanh"]}, None, "must name 1 functions (1 per direction)"),
        ({"direction": "sideways"}, None, "direction 'sideways' is not forward"),
        ({"hidden_size": 7}, None, "hidden_size 7 does not match R tensor<1x6x6xf32>"),
        ({"layout": 2}, None, "layout 2 is not 0 or 1"),
        ({}, [1, 9, 2], "sequence_lens [1, 9, 2] must lie in 1..5"),
    ],
)
def test_bad_attributes_are_refused_in_one_line(
    attrs: dict[str, Any], lengths: list[int] | None, message: str
) -> None:
    inputs = recurrent_inputs("RNN")
    node = node_of("RNN", inputs, ["Y"], **attrs)
    constants = []
    if lengths is not None:
        node.input.append("lengths")
        constants.append(onnx.numpy_helper.from_array(np.array(lengths, np.int32), "lengths"))
    model = model_of([node], inputs, ["Y"])
    model.graph.initializer.extend(constants)
    with pytest.raises(OnnxImportError) as error:
        import_model(model)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_weights_of_the_wrong_shape_are_refused() -> None:
    inputs = recurrent_inputs("GRU")
    inputs["W"] = inputs["W"][:, :, :3]
    model = model_of([node_of("GRU", inputs, ["Y"])], inputs, ["Y"])
    with pytest.raises(OnnxImportError, match=r"W tensor<1x18x3xf32> must be 1×18×4"):
        import_model(model)
