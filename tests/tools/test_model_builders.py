"""The real-architecture builders (ResNet-18/50, MobileNet-v2, SqueezeNet 1.1,
AlexNet, VGG, GoogLeNet, DenseNet, ShuffleNet v1) at test size: valid ONNX,
run by onnxruntime, interpreted (and a few compiled) by xtc to the same
numbers, and built of the nodes that make each architecture what it is."""

from collections import Counter
from collections.abc import Callable

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

import xtc
from xtc import interp
from xtc.frontend.onnx import import_model
from xtc.tools.model_builders import (
    alexnet,
    densenet,
    inception_v1,
    mobilenet_v2,
    resnet,
    resnet_int8,
    shufflenet,
    squeezenet,
    vgg,
)

# name -> (builder at test size, image side). SqueezeNet needs a bigger image:
# its stride-2 stem and three stride-2 max pools collapse anything under 17.
SMALL_MODELS: dict[str, tuple[Callable[[], onnx.ModelProto], int]] = {
    "resnet18": (lambda: resnet(18, image=32, classes=10), 32),
    "resnet50": (lambda: resnet(50, image=32, classes=10), 32),
    "mobilenet_v2": (lambda: mobilenet_v2(image=32, classes=10), 32),
    "squeezenet": (lambda: squeezenet(image=64, classes=10), 64),
    "alexnet": (lambda: alexnet(image=63, classes=10, hidden=32), 63),
    "vgg19": (lambda: vgg(19, image=32, classes=10, width=0.125, hidden=32), 32),
    "inception_v1": (lambda: inception_v1(image=47, classes=10, width=0.125), 47),
    "densenet": (
        lambda: densenet(blocks=(2, 3), growth=4, stem=8, image=32, classes=10),
        32,
    ),
    "shufflenet": (
        lambda: shufflenet(stages=(48, 96, 192), repeats=(2, 2, 1), image=32, classes=10),
        32,
    ),
}


@pytest.fixture(scope="module")
def small_models() -> dict[str, onnx.ModelProto]:
    """Each test-size model built once for the whole file."""
    return {name: build() for name, (build, _) in SMALL_MODELS.items()}


def onnxruntime_outputs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return [np.asarray(o) for o in session.run(None, inputs)]


def assert_close_to_scale(got: np.ndarray, expected: np.ndarray, rtol: float = 1e-4) -> None:
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale)


def op_counts(model: onnx.ModelProto) -> Counter[str]:
    return Counter(node.op_type for node in model.graph.node)


def conv_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [node for node in model.graph.node if node.op_type == "Conv"]


def attribute(node: onnx.NodeProto, name: str, default: int) -> int:
    for attr in node.attribute:
        if attr.name == name:
            return int(onnx.helper.get_attribute_value(attr))
    return default


def attribute_ints(node: onnx.NodeProto, name: str) -> list[int]:
    for attr in node.attribute:
        if attr.name == name:
            return list(attr.ints)
    raise AssertionError(f"{node.name} has no attribute {name}")


def spatial_dims(model: onnx.ModelProto) -> list[int]:
    """Height and width of every 4-d value, from ONNX's strict shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    dims: list[int] = []
    for info in inferred.graph.value_info:
        shape = info.type.tensor_type.shape.dim
        if len(shape) == 4:
            dims += [shape[2].dim_value, shape[3].dim_value]
    return dims


@pytest.mark.parametrize("name", list(SMALL_MODELS))
def test_builder_output_is_valid_onnx(name: str, small_models: dict[str, onnx.ModelProto]) -> None:
    model = small_models[name]
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(inferred, full_check=True)
    (output,) = inferred.graph.output
    assert [d.dim_value for d in output.type.tensor_type.shape.dim] == [1, 10]


@pytest.mark.parametrize("name", list(SMALL_MODELS))
def test_interpreter_matches_onnxruntime(
    name: str, small_models: dict[str, onnx.ModelProto]
) -> None:
    model = small_models[name]
    image = SMALL_MODELS[name][1]
    x = np.random.default_rng(0).standard_normal((1, 3, image, image)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"data": x})
    assert expected.shape == (1, 10) and np.isfinite(expected).all()
    (got,) = interp.run(import_model(model), [x])
    assert got.shape == expected.shape
    assert_close_to_scale(got, expected)


def test_resnet50_is_torchvision_shaped(small_models: dict[str, onnx.ModelProto]) -> None:
    counts = op_counts(small_models["resnet50"])
    # 1 stem + 16 bottlenecks x 3 + 4 projections (one per stage).
    assert counts["Conv"] == 53
    assert counts["BatchNormalization"] == 53
    assert counts["Add"] == 16
    assert counts["MaxPool"] == counts["GlobalAveragePool"] == counts["Gemm"] == 1
    projections = [n for n in conv_nodes(small_models["resnet50"]) if ".down." in n.name]
    assert len(projections) == 4


def test_resnet18_is_torchvision_shaped(small_models: dict[str, onnx.ModelProto]) -> None:
    counts = op_counts(small_models["resnet18"])
    # 1 stem + 8 basic blocks x 2 + 3 projections (stages 2-4).
    assert counts["Conv"] == 20
    assert counts["Add"] == 8
    kernels = Counter(
        attribute_ints(n, "kernel_shape")[0] for n in conv_nodes(small_models["resnet18"])
    )
    assert kernels == {7: 1, 3: 16, 1: 3}


def test_full_size_builders_give_imagenet_logits() -> None:
    """At 224x224 and 1000 classes the graphs keep the same layer counts and
    produce (1, 1000) logits (shape inference only: nothing runs)."""
    for model, convs in [
        (resnet(50), 53),
        (resnet(18), 20),
        (mobilenet_v2(), 52),
        (squeezenet(), 26),
    ]:
        assert op_counts(model)["Conv"] == convs, model.graph.name
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        dims = [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
        assert dims == [1, 1000], model.graph.name


def test_mobilenet_v2_uses_depthwise_convs(small_models: dict[str, onnx.ModelProto]) -> None:
    model = small_models["mobilenet_v2"]
    weights = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    depthwise = []
    for node in conv_nodes(model):
        groups = attribute(node, "group", 1)
        out_channels, in_per_group = weights[node.input[1]].shape[:2]
        if groups > 1:
            # Depthwise: one group per channel, one input channel per filter.
            assert groups == out_channels and in_per_group == 1, node.name
            depthwise.append(node)
    assert len(depthwise) == 17
    assert {attribute_ints(n, "kernel_shape")[0] for n in depthwise} == {3}
    counts = op_counts(model)
    # 1 stem + 17 blocks (the first has no expand) + 1 head = 52 convs; ReLU6 is Clip.
    assert counts["Conv"] == 52
    assert counts["Clip"] == 35 and "Relu" not in counts
    assert counts["Add"] == 10  # the residuals where stride 1 keeps the width


def test_squeezenet_has_eight_fire_modules(small_models: dict[str, onnx.ModelProto]) -> None:
    model = small_models["squeezenet"]
    counts = op_counts(model)
    assert counts["Concat"] == 8
    assert counts["Conv"] == 26  # conv1 + 8 fires x 3 + the 1x1 classifier
    assert counts["MaxPool"] == 3
    assert "Gemm" not in counts and "BatchNormalization" not in counts
    for node in model.graph.node:
        if node.op_type == "Concat":
            assert attribute(node, "axis", 0) == 1 and len(node.input) == 2


def test_squeezenet_smallest_image() -> None:
    """17 is the smallest side keeping every spatial dim >= 1; at 16 pool5 has
    nothing left to pool (onnxruntime then dies of a division by zero)."""
    assert min(spatial_dims(squeezenet(image=17, classes=10))) >= 1
    assert min(spatial_dims(squeezenet(image=16, classes=10))) == 0


def test_unknown_resnet_depth_is_refused() -> None:
    with pytest.raises(ValueError, match="depth must be one of"):
        resnet(depth=42)


def grouped_convs(model: onnx.ModelProto) -> Counter[int]:
    """How many convs have each group count above 1."""
    return Counter(g for n in conv_nodes(model) if (g := attribute(n, "group", 1)) > 1)


def test_alexnet_keeps_lrn_and_the_two_tower_groups(
    small_models: dict[str, onnx.ModelProto],
) -> None:
    model = small_models["alexnet"]
    counts = op_counts(model)
    assert counts["Conv"] == 5 and counts["LRN"] == 2 and counts["MaxPool"] == 3
    assert counts["Gemm"] == 3
    assert grouped_convs(model) == {2: 3}  # conv2, conv4, conv5
    conv1 = conv_nodes(model)[0]
    assert attribute_ints(conv1, "kernel_shape") == [11, 11]
    assert attribute_ints(conv1, "strides") == [4, 4]


def test_vgg_depths_count_their_convs() -> None:
    for depth, convs in [(11, 8), (16, 13), (19, 16)]:
        model = vgg(depth, image=32, classes=10, width=0.0625, hidden=8)
        counts = op_counts(model)
        assert counts["Conv"] == convs and counts["MaxPool"] == 5 and counts["Gemm"] == 3
        assert {attribute_ints(n, "kernel_shape")[0] for n in conv_nodes(model)} == {3}


def test_inception_modules_concat_four_branches(
    small_models: dict[str, onnx.ModelProto],
) -> None:
    model = small_models["inception_v1"]
    concats = [n for n in model.graph.node if n.op_type == "Concat"]
    assert len(concats) == 9 and all(len(n.input) == 4 for n in concats)
    kernels = Counter(attribute_ints(n, "kernel_shape")[0] for n in conv_nodes(model))
    # The stem's 7x7 and 3x3; per module one 3x3 and one 5x5 beside four 1x1s.
    assert kernels == {7: 1, 3: 10, 5: 9, 1: 37}
    assert op_counts(model)["BatchNormalization"] == 57


def test_densenet_layers_read_every_earlier_feature_map(
    small_models: dict[str, onnx.ModelProto],
) -> None:
    model = small_models["densenet"]
    concat_widths = sorted(len(n.input) for n in model.graph.node if n.op_type == "Concat")
    # Blocks of 2 and 3 layers: layer j > 1 reads j maps; each block ends with all of them.
    assert concat_widths == [2, 2, 3, 3, 4]
    assert op_counts(model)["AveragePool"] == 1  # one transition between two blocks


def test_shufflenet_shuffles_between_grouped_convs(
    small_models: dict[str, onnx.ModelProto],
) -> None:
    model = small_models["shufflenet"]
    counts = op_counts(model)
    assert counts["Transpose"] == 5 and counts["Reshape"] == 10  # one shuffle per unit
    assert counts["Concat"] == counts["AveragePool"] == 3  # the stride-2 units
    assert counts["Add"] == 2
    groups = grouped_convs(model)
    # Per unit one depthwise conv (groups = its channels) and grouped 1x1s with g=3.
    assert groups[3] == 9 and sum(groups.values()) == 14


def test_full_size_new_builders_give_imagenet_logits() -> None:
    """GoogLeNet, DenseNet-121 and ShuffleNet at 224x224 (shape inference
    only; AlexNet and VGG are left out for their hundreds of MiB of weights)."""
    for model, convs in [(inception_v1(), 57), (densenet(), 120), (shufflenet(), 49)]:
        assert op_counts(model)["Conv"] == convs, model.graph.name
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        dims = [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
        assert dims == [1, 1000], model.graph.name


@pytest.mark.parametrize("name", ["alexnet", "shufflenet"])
def test_native_code_matches_onnxruntime(name: str) -> None:
    """Compiled, not interpreted: grouped convs, LRN, channel shuffle and
    concat through the whole pipeline (the other builders run in the bench)."""
    builders = {
        "alexnet": lambda: alexnet(image=63, classes=10, hidden=32),
        "shufflenet": lambda: shufflenet(stages=(48, 96, 192), repeats=(1, 1, 1), image=32),
    }
    model = builders[name]()
    image = SMALL_MODELS[name][1]
    x = np.random.default_rng(1).standard_normal((1, 3, image, image)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"data": x})
    (got,) = xtc.compile(model).run({"data": x})
    assert_close_to_scale(got, expected)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: alexnet(image=62), "at least 63 pixels"),
        (lambda: vgg(19, image=31), "at least 32 pixels"),
        (lambda: vgg(17), "depth must be one of"),
        (lambda: inception_v1(image=46), "at least 47 pixels"),
    ],
)
def test_too_small_images_and_unknown_depths_are_refused(
    build: Callable[[], onnx.ModelProto], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def output_step(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear that writes the model's output."""
    (output,) = model.graph.output
    (node,) = [n for n in model.graph.node if n.output[0] == output.name]
    assert node.op_type == "DequantizeLinear"
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return float(constants[node.input[1]])


def test_resnet_int8_is_quantized_per_channel() -> None:
    """Every conv reads a dequantized u8 activation and an i8 weight with one
    scale per output channel; the batch norms are folded away."""
    model = resnet_int8(18, image=32, classes=10)
    counts = op_counts(model)
    assert counts["Conv"] == 20 and counts["BatchNormalization"] == 0
    producers = {n.output[0]: n for n in model.graph.node}
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for conv in conv_nodes(model):
        x, w = (producers[name] for name in conv.input[:2])
        assert x.op_type == w.op_type == "DequantizeLinear"
        assert constants[w.input[0]].dtype == np.int8
        channels = constants[w.input[0]].shape[0]
        assert constants[w.input[1]].shape == (channels,)
        assert producers[x.input[0]].op_type == "QuantizeLinear"
        assert constants[producers[x.input[0]].input[2]].dtype == np.uint8


def test_resnet_int8_runs_natively_within_one_quantization_step() -> None:
    model = resnet_int8(18, image=32, classes=10)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"data": x})
    (got,) = xtc.compile(model).run({"data": x})
    assert got.shape == expected.shape == (1, 10)
    assert float(np.abs(got - expected).max()) <= output_step(model) * (1 + 1e-5)
