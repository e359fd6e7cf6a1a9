"""Real architectures built with `onnx.helper` and random weights (nothing is
downloaded): ResNet, MobileNet-v2, SqueezeNet, AlexNet, VGG, GoogLeNet
(Inception v1), DenseNet, ShuffleNet, a BERT-style encoder, a stacked
LSTM, and any of them quantized to 8 bits by onnxruntime's `quantize_static`
(`quantized`, `resnet_int8`). Tests compare xtc
with onnxruntime on them; benchmarks time them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

if TYPE_CHECKING:
    from onnxruntime.quantization import CalibrationDataReader


class GraphBuilder:
    """Collects nodes and initializers; names values uniquely."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def weight(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def random(self, name: str, shape: Sequence[int], scale: float = 1.0) -> str:
        data = self.rng.standard_normal(shape).astype(np.float32) * scale
        return self.weight(name, data)

    def node(self, op: str, inputs: Sequence[str], stem: str | None = None, **attrs: object) -> str:
        out = self.fresh(stem or op.lower())
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attrs))
        return out

    def model(
        self,
        inputs: Sequence[onnx.ValueInfoProto],
        outputs: Sequence[str],
        opset: int,
        name: str,
    ) -> onnx.ModelProto:
        output_infos = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
        graph = helper.make_graph(self.nodes, name, list(inputs), output_infos, self.initializers)
        opsets = [helper.make_opsetid("", opset)]
        # The oldest IR version the opset allows, as exporters write, not
        # onnx's newest: an older onnxruntime refuses IR versions it predates.
        ir_version = helper.find_min_ir_version_for(opsets)
        return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


def _batch_norm(b: GraphBuilder, x: str, channels: int, tag: str) -> str:
    """Inference BatchNormalization with random statistics near the identity."""
    gamma = b.weight(f"{tag}.weight", b.rng.uniform(0.5, 1.5, channels).astype(np.float32))
    beta = b.weight(f"{tag}.bias", b.rng.uniform(-0.1, 0.1, channels).astype(np.float32))
    mean = b.weight(f"{tag}.running_mean", b.rng.uniform(-0.1, 0.1, channels).astype(np.float32))
    var = b.weight(f"{tag}.running_var", b.rng.uniform(0.5, 1.5, channels).astype(np.float32))
    return b.node("BatchNormalization", [x, gamma, beta, mean, var], tag, epsilon=1e-5)


def _conv_bn(
    b: GraphBuilder, x: str, c_in: int, c_out: int, k: int, stride: int, relu: bool, tag: str
) -> str:
    fan_in = c_in * k * k
    w = b.random(f"{tag}.conv.weight", [c_out, c_in, k, k], (2.0 / fan_in) ** 0.5)
    pad = k // 2
    y = b.node(
        "Conv",
        [x, w],
        f"{tag}.conv",
        kernel_shape=[k, k],
        strides=[stride, stride],
        pads=[pad, pad, pad, pad],
    )
    y = _batch_norm(b, y, c_out, f"{tag}.bn")
    return b.node("Relu", [y], f"{tag}.relu") if relu else y


def _basic_block(b: GraphBuilder, x: str, c_in: int, c_out: int, stride: int, tag: str) -> str:
    y = _conv_bn(b, x, c_in, c_out, 3, stride, True, f"{tag}.a")
    y = _conv_bn(b, y, c_out, c_out, 3, 1, False, f"{tag}.b")
    shortcut = x
    if stride != 1 or c_in != c_out:
        shortcut = _conv_bn(b, x, c_in, c_out, 1, stride, False, f"{tag}.down")
    y = b.node("Add", [y, shortcut], f"{tag}.add")
    return b.node("Relu", [y], f"{tag}.out")


def resnet_like(
    widths: Sequence[int] = (8, 16, 32),
    image: int = 32,
    classes: int = 10,
    batch: int | str = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """conv7x7/2 + BN + ReLU + maxpool, one basic block per stage (residual
    add, 1x1 projection when the shape changes), global average pool,
    flatten, Gemm: the ResNet-18 pattern at test size."""
    b = GraphBuilder(seed)
    x = _conv_bn(b, "data", 3, widths[0], 7, 2, True, "stem")
    x = b.node("MaxPool", [x], "stem.pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = widths[0]
    for i, width in enumerate(widths):
        x = _basic_block(b, x, c, width, 1 if i == 0 else 2, f"layer{i + 1}")
        c = width
    x = b.node("GlobalAveragePool", [x], "pool")
    x = b.node("Flatten", [x], "flatten", axis=1)
    w = b.random("fc.weight", [classes, c], (1.0 / c) ** 0.5)
    bias = b.random("fc.bias", [classes], 0.1)
    logits = b.node("Gemm", [x, w, bias], "fc", transB=1)
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 3, image, image])
    return b.model([data], [logits], 13, "resnet_like")


def bert_encoder(
    layers: int = 1,
    seq: int = 16,
    hidden: int = 32,
    heads: int = 4,
    ffn: int = 64,
    batch: int | str = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """BERT encoder layers as exporters write them: MatMul + Add projections,
    head split through Shape/Gather/Concat/Reshape, scaled dot-product
    attention with an additive mask, Softmax, LayerNormalization, and GELU
    spelled with Erf."""
    b = GraphBuilder(seed)
    head = hidden // heads
    scale = hidden**-0.5
    x = "input"
    # The additive mask: 0 where attended, -10000 where masked (1 = keep in `mask`).
    one = b.weight("one", np.array(1.0, np.float32))
    big = b.weight("minus_10000", np.array(-10000.0, np.float32))
    keep = b.node(
        "Unsqueeze", ["mask", b.weight("axes_1_2", np.array([1, 2], np.int64))], "mask.4d"
    )
    keep = b.node("Cast", [keep], "mask.float", to=TensorProto.FLOAT)
    additive = b.node("Mul", [b.node("Sub", [one, keep], "mask.inv"), big], "mask.add")
    for layer in range(layers):
        t = f"layer{layer}"

        def dense(v: str, n_in: int, n_out: int, name: str) -> str:
            w = b.random(f"{name}.weight", [n_in, n_out], (1.0 / n_in) ** 0.5)
            bias = b.random(f"{name}.bias", [n_out], 0.02)
            return b.node("Add", [b.node("MatMul", [v, w], f"{name}.matmul"), bias], name)

        def split_heads(v: str, name: str) -> str:
            shape = b.node("Shape", [v], f"{name}.shape")
            batch_dim = b.node(
                "Gather",
                [shape, b.weight(f"{name}.i0", np.array(0, np.int64))],
                f"{name}.b",
                axis=0,
            )
            seq_dim = b.node(
                "Gather",
                [shape, b.weight(f"{name}.i1", np.array(1, np.int64))],
                f"{name}.s",
                axis=0,
            )
            dims = [
                b.node("Unsqueeze", [batch_dim, b.weight(f"{name}.ax0", np.array([0], np.int64))]),
                b.node("Unsqueeze", [seq_dim, b.weight(f"{name}.ax0b", np.array([0], np.int64))]),
                b.weight(f"{name}.heads", np.array([heads, head], np.int64)),
            ]
            target = b.node("Concat", dims, f"{name}.target", axis=0)
            return b.node(
                "Transpose",
                [b.node("Reshape", [v, target], f"{name}.reshape")],
                f"{name}.transpose",
                perm=[0, 2, 1, 3],
            )

        q = split_heads(dense(x, hidden, hidden, f"{t}.query"), f"{t}.q")
        k = split_heads(dense(x, hidden, hidden, f"{t}.key"), f"{t}.k")
        v = split_heads(dense(x, hidden, hidden, f"{t}.value"), f"{t}.v")
        kt = b.node("Transpose", [k], f"{t}.kt", perm=[0, 1, 3, 2])
        scores = b.node("MatMul", [q, kt], f"{t}.scores")
        scores = b.node("Mul", [scores, b.weight(f"{t}.scale", np.array(scale, np.float32))])
        scores = b.node("Add", [scores, additive], f"{t}.masked")
        probs = b.node("Softmax", [scores], f"{t}.probs", axis=-1)
        context = b.node(
            "Transpose",
            [b.node("MatMul", [probs, v], f"{t}.context")],
            f"{t}.merge",
            perm=[0, 2, 1, 3],
        )
        context = b.node(
            "Reshape", [context, b.weight(f"{t}.flat", np.array([0, 0, hidden], np.int64))]
        )
        attn = dense(context, hidden, hidden, f"{t}.attn_out")
        x = _layer_norm(b, b.node("Add", [attn, x], f"{t}.res1"), hidden, f"{t}.ln1")
        inner = dense(x, hidden, ffn, f"{t}.ffn_in")
        inner = _gelu_erf(b, inner, f"{t}.gelu")
        out = dense(inner, ffn, hidden, f"{t}.ffn_out")
        x = _layer_norm(b, b.node("Add", [out, x], f"{t}.res2"), hidden, f"{t}.ln2")
    inputs = [
        helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, seq, hidden]),
        helper.make_tensor_value_info("mask", TensorProto.INT64, [batch, seq]),
    ]
    return b.model(inputs, [x], 17, "bert_encoder")


def _layer_norm(b: GraphBuilder, x: str, hidden: int, name: str) -> str:
    gamma = b.weight(f"{name}.weight", b.rng.uniform(0.8, 1.2, hidden).astype(np.float32))
    beta = b.random(f"{name}.bias", [hidden], 0.05)
    return b.node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=1e-12)


def _gelu_erf(b: GraphBuilder, x: str, name: str) -> str:
    """x * 0.5 * (1 + erf(x / sqrt(2))), as PyTorch exports GELU before opset 20."""
    root2 = b.weight(f"{name}.sqrt2", np.array(2**0.5, np.float32))
    half = b.weight(f"{name}.half", np.array(0.5, np.float32))
    one = b.weight(f"{name}.one", np.array(1.0, np.float32))
    erf = b.node("Erf", [b.node("Div", [x, root2], f"{name}.div")], f"{name}.erf")
    return b.node("Mul", [b.node("Mul", [x, b.node("Add", [erf, one])]), half], name)


def _bottleneck(b: GraphBuilder, x: str, c_in: int, width: int, stride: int, tag: str) -> str:
    """1x1 reduce, 3x3 (strided, as torchvision's v1.5), 1x1 expand x4, residual."""
    c_out = width * 4
    y = _conv_bn(b, x, c_in, width, 1, 1, True, f"{tag}.a")
    y = _conv_bn(b, y, width, width, 3, stride, True, f"{tag}.b")
    y = _conv_bn(b, y, width, c_out, 1, 1, False, f"{tag}.c")
    shortcut = x
    if stride != 1 or c_in != c_out:
        shortcut = _conv_bn(b, x, c_in, c_out, 1, stride, False, f"{tag}.down")
    y = b.node("Add", [y, shortcut], f"{tag}.add")
    return b.node("Relu", [y], f"{tag}.out")


_RESNET_STAGES = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}


def resnet(
    depth: int = 50, image: int = 224, classes: int = 1000, batch: int = 1, seed: int = 0
) -> onnx.ModelProto:
    """torchvision's ResNet-18/34 (basic blocks) or -50/101 (bottlenecks),
    batch norms unfolded, as exporters write it."""
    if depth not in _RESNET_STAGES:
        raise ValueError(f"ResNet depth must be one of {sorted(_RESNET_STAGES)}, got {depth}")
    b = GraphBuilder(seed)
    x = _conv_bn(b, "data", 3, 64, 7, 2, True, "stem")
    x = b.node("MaxPool", [x], "stem.pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for stage, blocks in enumerate(_RESNET_STAGES[depth]):
        width = 64 << stage
        for i in range(blocks):
            stride = 2 if stage > 0 and i == 0 else 1
            tag = f"layer{stage + 1}.{i}"
            if depth >= 50:
                x = _bottleneck(b, x, c, width, stride, tag)
                c = width * 4
            else:
                x = _basic_block(b, x, c, width, stride, tag)
                c = width
    x = b.node("GlobalAveragePool", [x], "pool")
    x = b.node("Flatten", [x], "flatten", axis=1)
    w = b.random("fc.weight", [classes, c], (1.0 / c) ** 0.5)
    bias = b.random("fc.bias", [classes], 0.1)
    logits = b.node("Gemm", [x, w, bias], "fc", transB=1)
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 3, image, image])
    return b.model([data], [logits], 13, f"resnet{depth}")


def _conv_bn_relu6(
    b: GraphBuilder,
    x: str,
    c_in: int,
    c_out: int,
    k: int,
    stride: int,
    groups: int,
    relu6: bool,
    tag: str,
) -> str:
    fan_in = (c_in // groups) * k * k
    w = b.random(f"{tag}.conv.weight", [c_out, c_in // groups, k, k], (2.0 / fan_in) ** 0.5)
    pad = k // 2
    y = b.node(
        "Conv",
        [x, w],
        f"{tag}.conv",
        kernel_shape=[k, k],
        strides=[stride, stride],
        pads=[pad, pad, pad, pad],
        group=groups,
    )
    y = _batch_norm(b, y, c_out, f"{tag}.bn")
    if not relu6:
        return y
    low = b.weight(f"{tag}.clip.min", np.array(0.0, np.float32))
    high = b.weight(f"{tag}.clip.max", np.array(6.0, np.float32))
    return b.node("Clip", [y, low, high], f"{tag}.relu6")


def mobilenet_v2(
    image: int = 224, classes: int = 1000, batch: int = 1, seed: int = 0
) -> onnx.ModelProto:
    """MobileNet-v2: inverted residuals (1x1 expand, 3x3 depthwise, 1x1
    project), ReLU6 as Clip, residual adds where shapes allow."""
    b = GraphBuilder(seed)
    x = _conv_bn_relu6(b, "data", 3, 32, 3, 2, 1, True, "stem")
    c = 32
    settings = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]
    block = 0
    for expand, c_out, repeats, first_stride in settings:
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            tag = f"block{block}"
            hidden = c * expand
            y = x
            if expand != 1:
                y = _conv_bn_relu6(b, y, c, hidden, 1, 1, 1, True, f"{tag}.expand")
            y = _conv_bn_relu6(b, y, hidden, hidden, 3, stride, hidden, True, f"{tag}.dw")
            y = _conv_bn_relu6(b, y, hidden, c_out, 1, 1, 1, False, f"{tag}.project")
            if stride == 1 and c == c_out:
                y = b.node("Add", [y, x], f"{tag}.add")
            x, c = y, c_out
            block += 1
    x = _conv_bn_relu6(b, x, c, 1280, 1, 1, 1, True, "head")
    x = b.node("GlobalAveragePool", [x], "pool")
    x = b.node("Flatten", [x], "flatten", axis=1)
    w = b.random("classifier.weight", [classes, 1280], (1.0 / 1280) ** 0.5)
    bias = b.random("classifier.bias", [classes], 0.1)
    logits = b.node("Gemm", [x, w, bias], "classifier", transB=1)
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 3, image, image])
    return b.model([data], [logits], 13, "mobilenet_v2")


def squeezenet(
    image: int = 224, classes: int = 1000, batch: int = 1, seed: int = 0
) -> onnx.ModelProto:
    """SqueezeNet 1.1: fire modules (1x1 squeeze, then 1x1 and 3x3 expands
    concatenated), max pools, a 1x1 conv classifier and a global average pool."""
    b = GraphBuilder(seed)

    def conv_relu(x: str, c_in: int, c_out: int, k: int, stride: int, pad: int, tag: str) -> str:
        w = b.random(f"{tag}.weight", [c_out, c_in, k, k], (2.0 / (c_in * k * k)) ** 0.5)
        bias = b.random(f"{tag}.bias", [c_out], 0.05)
        y = b.node(
            "Conv", [x, w, bias], tag, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4
        )
        return b.node("Relu", [y], f"{tag}.relu")

    def fire(x: str, c_in: int, squeeze: int, expand: int, tag: str) -> str:
        s = conv_relu(x, c_in, squeeze, 1, 1, 0, f"{tag}.squeeze")
        e1 = conv_relu(s, squeeze, expand, 1, 1, 0, f"{tag}.expand1x1")
        e3 = conv_relu(s, squeeze, expand, 3, 1, 1, f"{tag}.expand3x3")
        return b.node("Concat", [e1, e3], f"{tag}.concat", axis=1)

    def pool(x: str, tag: str) -> str:
        return b.node("MaxPool", [x], tag, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)

    x = conv_relu("data", 3, 64, 3, 2, 0, "conv1")
    x = pool(x, "pool1")
    x = fire(x, 64, 16, 64, "fire2")
    x = fire(x, 128, 16, 64, "fire3")
    x = pool(x, "pool3")
    x = fire(x, 128, 32, 128, "fire4")
    x = fire(x, 256, 32, 128, "fire5")
    x = pool(x, "pool5")
    x = fire(x, 256, 48, 192, "fire6")
    x = fire(x, 384, 48, 192, "fire7")
    x = fire(x, 384, 64, 256, "fire8")
    x = fire(x, 512, 64, 256, "fire9")
    x = conv_relu(x, 512, classes, 1, 1, 0, "classifier")
    x = b.node("GlobalAveragePool", [x], "pool")
    x = b.node("Flatten", [x], "flatten", axis=1)
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 3, image, image])
    return b.model([data], [x], 13, "squeezenet")


def _conv(
    b: GraphBuilder,
    x: str,
    c_in: int,
    c_out: int,
    k: int,
    tag: str,
    stride: int = 1,
    pad: int = 0,
    groups: int = 1,
    bias: bool = True,
) -> str:
    """A square Conv with He-scaled random weights (and a small bias)."""
    fan_in = (c_in // groups) * k * k
    w = b.random(f"{tag}.weight", [c_out, c_in // groups, k, k], (2.0 / fan_in) ** 0.5)
    inputs = [x, w, b.random(f"{tag}.bias", [c_out], 0.05)] if bias else [x, w]
    return b.node(
        "Conv",
        inputs,
        tag,
        kernel_shape=[k, k],
        strides=[stride, stride],
        pads=[pad] * 4,
        group=groups,
    )


def _conv_relu(
    b: GraphBuilder,
    x: str,
    c_in: int,
    c_out: int,
    k: int,
    tag: str,
    stride: int = 1,
    pad: int = 0,
    groups: int = 1,
) -> str:
    return b.node("Relu", [_conv(b, x, c_in, c_out, k, tag, stride, pad, groups)], f"{tag}.relu")


def _classifier(
    b: GraphBuilder, x: str, features: int, hidden: Sequence[int], classes: int, tag: str
) -> str:
    """Flatten, then Gemm + ReLU per hidden width, then the logits Gemm."""
    x = b.node("Flatten", [x], f"{tag}.flatten", axis=1)
    widths = [features, *hidden, classes]
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:], strict=False)):
        w = b.random(f"{tag}.fc{i}.weight", [n_out, n_in], (2.0 / n_in) ** 0.5)
        bias = b.random(f"{tag}.fc{i}.bias", [n_out], 0.05)
        x = b.node("Gemm", [x, w, bias], f"{tag}.fc{i}", transB=1)
        if i < len(hidden):
            x = b.node("Relu", [x], f"{tag}.fc{i}.relu")
    return x


def _image_input(batch: int, image: int) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 3, image, image])


def _pooled(side: int, k: int, stride: int, pad: int = 0, ceil: bool = False) -> int:
    """The output side of a conv or pool window over `side` pixels."""
    span = side + 2 * pad - k
    return (-(-span // stride) if ceil else span // stride) + 1


def alexnet(
    image: int = 224,
    classes: int = 1000,
    hidden: int = 4096,
    batch: int = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """AlexNet as Krizhevsky et al. (and Caffe's bvlc_alexnet) wrote it: an
    11x11 stride-4 conv, LRN after the first two convs, the two-GPU split kept
    as group=2 in conv2, conv4 and conv5, three 3x3 stride-2 max pools, and a
    9216-4096-4096-1000 classifier (`hidden` wide)."""
    b = GraphBuilder(seed)

    def lrn(x: str, tag: str) -> str:
        return b.node("LRN", [x], tag, size=5, alpha=1e-4, beta=0.75, bias=2.0)

    def pool(x: str, tag: str) -> str:
        return b.node("MaxPool", [x], tag, kernel_shape=[3, 3], strides=[2, 2])

    x = pool(lrn(_conv_relu(b, "data", 3, 96, 11, "conv1", stride=4, pad=2), "norm1"), "pool1")
    x = pool(lrn(_conv_relu(b, x, 96, 256, 5, "conv2", pad=2, groups=2), "norm2"), "pool2")
    x = _conv_relu(b, x, 256, 384, 3, "conv3", pad=1)
    x = _conv_relu(b, x, 384, 384, 3, "conv4", pad=1, groups=2)
    x = pool(_conv_relu(b, x, 384, 256, 3, "conv5", pad=1, groups=2), "pool5")
    side = _pooled(image, 11, 4, 2)
    for _ in range(3):
        side = _pooled(side, 3, 2)
    if side < 1:
        raise ValueError(f"AlexNet needs an image of at least 63 pixels, got {image}")
    logits = _classifier(b, x, 256 * side * side, [hidden, hidden], classes, "classifier")
    return b.model([_image_input(batch, image)], [logits], 13, "alexnet")


_VGG_STAGES = {11: (1, 1, 2, 2, 2), 13: (2, 2, 2, 2, 2), 16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}


def vgg(
    depth: int = 19,
    image: int = 224,
    classes: int = 1000,
    width: float = 1.0,
    hidden: int = 4096,
    batch: int = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """VGG-11/13/16/19 (Simonyan and Zisserman; torchvision, no batch norm):
    3x3 conv + ReLU stages of 64-128-256-512-512 channels (times `width`),
    each closed by a 2x2 max pool, then a 25088-4096-4096-1000 classifier
    (`hidden` wide). VGG-19 at full size holds about 548 MiB of weights."""
    if depth not in _VGG_STAGES:
        raise ValueError(f"VGG depth must be one of {sorted(_VGG_STAGES)}, got {depth}")
    if image < 32:
        raise ValueError(f"VGG needs an image of at least 32 pixels, got {image}")
    b = GraphBuilder(seed)
    x, c = "data", 3
    for stage, convs in enumerate(_VGG_STAGES[depth]):
        c_out = max(1, round(min(64 << stage, 512) * width))
        for i in range(convs):
            x = _conv_relu(b, x, c, c_out, 3, f"stage{stage + 1}.conv{i + 1}", pad=1)
            c = c_out
        x = b.node("MaxPool", [x], f"stage{stage + 1}.pool", kernel_shape=[2, 2], strides=[2, 2])
    side = image >> 5
    logits = _classifier(b, x, c * side * side, [hidden, hidden], classes, "classifier")
    return b.model([_image_input(batch, image)], [logits], 13, f"vgg{depth}")


# GoogLeNet's modules: (1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection).
_INCEPTION_MODULES: dict[str, tuple[int, int, int, int, int, int]] = {
    "3a": (64, 96, 128, 16, 32, 32),
    "3b": (128, 128, 192, 32, 96, 64),
    "4a": (192, 96, 208, 16, 48, 64),
    "4b": (160, 112, 224, 24, 64, 64),
    "4c": (128, 128, 256, 24, 64, 64),
    "4d": (112, 144, 288, 32, 64, 64),
    "4e": (256, 160, 320, 32, 128, 128),
    "5a": (256, 160, 320, 32, 128, 128),
    "5b": (384, 192, 384, 48, 128, 128),
}


def inception_v1(
    image: int = 224,
    classes: int = 1000,
    width: float = 1.0,
    batch: int = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """GoogLeNet (Inception v1) with batch norms, as torchvision builds it but
    with the paper's 5x5 branch: a 7x7/2 stem, ceil-mode max pools, nine
    inception modules (1x1, 1x1-3x3, 1x1-5x5 and maxpool-1x1 branches
    concatenated), global average pool and one Gemm. Channels times `width`."""
    side = _pooled(image, 7, 2, 3)
    for _ in range(3):  # the stride-2 pools before 3a, 4a and 5a
        side = _pooled(side, 3, 2, ceil=True)
    if side < 3:
        raise ValueError(f"Inception v1 needs an image of at least 47 pixels, got {image}")
    b = GraphBuilder(seed)

    def scaled(c: int) -> int:
        return max(1, round(c * width))

    def conv(x: str, c_in: int, c_out: int, k: int, tag: str, stride: int = 1) -> str:
        y = _batch_norm(
            b, _conv(b, x, c_in, c_out, k, tag, stride, k // 2, bias=False), c_out, f"{tag}.bn"
        )
        return b.node("Relu", [y], f"{tag}.relu")

    def pool(x: str, tag: str, stride: int = 2) -> str:
        pads = [1, 1, 1, 1] if stride == 1 else [0, 0, 0, 0]
        return b.node(
            "MaxPool", [x], tag, kernel_shape=[3, 3], strides=[stride] * 2, pads=pads, ceil_mode=1
        )

    def module(x: str, c_in: int, name: str) -> tuple[str, int]:
        c1, r3, c3, r5, c5, cp = (scaled(c) for c in _INCEPTION_MODULES[name])
        tag = f"inception{name}"
        branches = [
            conv(x, c_in, c1, 1, f"{tag}.b1"),
            conv(conv(x, c_in, r3, 1, f"{tag}.b2.reduce"), r3, c3, 3, f"{tag}.b2"),
            conv(conv(x, c_in, r5, 1, f"{tag}.b3.reduce"), r5, c5, 5, f"{tag}.b3"),
            conv(pool(x, f"{tag}.b4.pool", stride=1), c_in, cp, 1, f"{tag}.b4"),
        ]
        return b.node("Concat", branches, f"{tag}.concat", axis=1), c1 + c3 + c5 + cp

    x = pool(conv("data", 3, scaled(64), 7, "conv1", stride=2), "pool1")
    x = conv(x, scaled(64), scaled(64), 1, "conv2")
    x = pool(conv(x, scaled(64), scaled(192), 3, "conv3"), "pool2")
    c = scaled(192)
    for name in _INCEPTION_MODULES:
        if name in ("4a", "5a"):
            x = pool(x, f"pool{name[0]}")
        x, c = module(x, c, name)
    x = b.node("GlobalAveragePool", [x], "pool")
    logits = _classifier(b, x, c, [], classes, "fc")
    return b.model([_image_input(batch, image)], [logits], 13, "inception_v1")


def densenet(
    blocks: Sequence[int] = (6, 12, 24, 16),
    growth: int = 32,
    stem: int = 64,
    image: int = 224,
    classes: int = 1000,
    batch: int = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """DenseNet (121 by default) as torchvision exports it: pre-activation
    layers (BN, ReLU, 1x1 conv to 4 x growth, BN, ReLU, 3x3 conv to growth)
    each reading the Concat of every earlier feature map of its block,
    transitions that halve the channels (1x1 conv) and the side (2x2 average
    pool), then BN, ReLU, global average pool and one Gemm."""
    b = GraphBuilder(seed)

    def bn_relu_conv(x: str, c_in: int, c_out: int, k: int, tag: str) -> str:
        y = b.node("Relu", [_batch_norm(b, x, c_in, f"{tag}.norm")], f"{tag}.relu")
        return _conv(b, y, c_in, c_out, k, f"{tag}.conv", pad=k // 2, bias=False)

    x = _batch_norm(b, _conv(b, "data", 3, stem, 7, "conv0", 2, 3, bias=False), stem, "norm0")
    x = b.node("Relu", [x], "relu0")
    x = b.node("MaxPool", [x], "pool0", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = stem
    for i, layers in enumerate(blocks):
        features = [x]
        for j in range(layers):
            tag = f"block{i + 1}.layer{j + 1}"
            y = x if j == 0 else b.node("Concat", features, f"{tag}.concat", axis=1)
            y = bn_relu_conv(y, c + j * growth, 4 * growth, 1, f"{tag}.1")
            features.append(bn_relu_conv(y, 4 * growth, growth, 3, f"{tag}.2"))
        x = b.node("Concat", features, f"block{i + 1}.concat", axis=1)
        c += layers * growth
        if i + 1 < len(blocks):
            x = bn_relu_conv(x, c, c // 2, 1, f"transition{i + 1}")
            c //= 2
            pool = f"transition{i + 1}.pool"
            x = b.node("AveragePool", [x], pool, kernel_shape=[2, 2], strides=[2, 2])
    x = b.node("Relu", [_batch_norm(b, x, c, "norm5")], "relu5")
    x = b.node("GlobalAveragePool", [x], "pool")
    logits = _classifier(b, x, c, [], classes, "classifier")
    depth = 2 * sum(blocks) + len(blocks) + 1
    return b.model([_image_input(batch, image)], [logits], 13, f"densenet{depth}")


def _channel_shuffle(
    b: GraphBuilder, x: str, channels: int, side: int, groups: int, tag: str
) -> str:
    """Reshape to (N, groups, C/groups, H, W), swap the two channel axes,
    reshape back: ShuffleNet's channel shuffle as exporters write it."""
    split = [-1, groups, channels // groups, side, side]
    y = b.node("Reshape", [x, b.weight(f"{tag}.split", np.array(split, np.int64))], f"{tag}.split")
    y = b.node("Transpose", [y], f"{tag}.transpose", perm=[0, 2, 1, 3, 4])
    merged = b.weight(f"{tag}.merged", np.array([-1, channels, side, side], np.int64))
    return b.node("Reshape", [y, merged], f"{tag}.merge")


def shufflenet(
    groups: int = 3,
    stages: Sequence[int] = (240, 480, 960),
    repeats: Sequence[int] = (4, 8, 4),
    image: int = 224,
    classes: int = 1000,
    batch: int = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """ShuffleNet v1 (Zhang et al., g=3 by default): a 3x3/2 stem and max
    pool, then units of grouped 1x1 conv, channel shuffle, 3x3 depthwise conv
    and grouped 1x1 conv; the first unit of a stage has stride 2 and concats
    a 3x3/2 average-pooled shortcut, the others add the identity."""
    b = GraphBuilder(seed)

    def conv_bn(x: str, c_in: int, c_out: int, k: int, tag: str, stride: int, g: int) -> str:
        y = _conv(b, x, c_in, c_out, k, tag, stride, k // 2, g, bias=False)
        return _batch_norm(b, y, c_out, f"{tag}.bn")

    stem = 24
    x = b.node("Relu", [conv_bn("data", 3, stem, 3, "conv1", 2, 1)], "conv1.relu")
    x = b.node("MaxPool", [x], "pool1", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    side = _pooled(_pooled(image, 3, 2, 1), 3, 2, 1)
    c = stem
    for stage, (c_out, units) in enumerate(zip(stages, repeats, strict=True)):
        for unit in range(units):
            tag = f"stage{stage + 2}.{unit}"
            stride = 2 if unit == 0 else 1
            branch_out = c_out - c if stride == 2 else c_out
            mid = c_out // 4
            # The first grouped conv of the network sees only the 24 stem channels.
            g = 1 if stage == 0 and unit == 0 else groups
            y = b.node("Relu", [conv_bn(x, c, mid, 1, f"{tag}.gconv1", 1, g)], f"{tag}.relu1")
            y = _channel_shuffle(b, y, mid, side, groups, f"{tag}.shuffle")
            y = conv_bn(y, mid, mid, 3, f"{tag}.dwconv", stride, mid)
            y = conv_bn(y, mid, branch_out, 1, f"{tag}.gconv2", 1, groups)
            if stride == 2:
                shortcut = b.node(
                    "AveragePool",
                    [x],
                    f"{tag}.shortcut",
                    kernel_shape=[3, 3],
                    strides=[2, 2],
                    pads=[1, 1, 1, 1],
                )
                y = b.node("Concat", [shortcut, y], f"{tag}.concat", axis=1)
            else:
                y = b.node("Add", [y, x], f"{tag}.add")
            x, c = b.node("Relu", [y], f"{tag}.relu"), c_out
            side = _pooled(side, 3, stride, 1)
    x = b.node("GlobalAveragePool", [x], "pool")
    logits = _classifier(b, x, c, [], classes, "fc")
    return b.model([_image_input(batch, image)], [logits], 13, f"shufflenet_g{groups}")


def lstm_classifier(
    layers: int = 2,
    seq: int = 64,
    features: int = 64,
    hidden: int = 128,
    classes: int = 10,
    batch: int = 1,
    seed: int = 0,
) -> onnx.ModelProto:
    """A sequence classifier: `input` seq×batch×features through `layers`
    stacked LSTMs (ONNX LSTM nodes, forward, with biases), then Gemm on the
    last layer's final hidden state to batch×classes logits."""
    b = GraphBuilder(seed)
    x, width = "input", features
    scale = hidden**-0.5
    final = ""
    for layer in range(layers):
        tag = f"lstm{layer + 1}"
        w = b.random(f"{tag}.W", [1, 4 * hidden, width], scale)
        r = b.random(f"{tag}.R", [1, 4 * hidden, hidden], scale)
        bias = b.random(f"{tag}.B", [1, 8 * hidden], scale)
        y, final = b.fresh(f"{tag}.Y"), b.fresh(f"{tag}.Y_h")
        last = layer == layers - 1
        b.nodes.append(
            helper.make_node(
                "LSTM",
                [x, w, r, bias],
                ["" if last else y, final],
                name=tag,
                hidden_size=hidden,
            )
        )
        if not last:  # seq×1×batch×hidden -> seq×batch×hidden
            axis = b.weight(f"{tag}.axis", np.array([1], np.int64))
            x, width = b.node("Squeeze", [y, axis], f"{tag}.squeeze"), hidden
    axis = b.weight("head.axis", np.array([0], np.int64))
    state = b.node("Squeeze", [final, axis], "head.squeeze")
    w = b.random("fc.weight", [classes, hidden], scale)
    fc_bias = b.random("fc.bias", [classes], 0.1)
    logits = b.node("Gemm", [state, w, fc_bias], "fc", transB=1)
    data = helper.make_tensor_value_info("input", TensorProto.FLOAT, [seq, batch, features])
    return b.model([data], [logits], 14, f"lstm{layers}")


CALIBRATION_BATCHES = 4
"""How many random images calibrate a quantized model's activation ranges."""


def _random_images(name: str, shape: Sequence[int], count: int, seed: int) -> CalibrationDataReader:
    """onnxruntime's calibration reader over `count` random images for input
    `name`, drawn from a fixed seed."""
    from onnxruntime.quantization import CalibrationDataReader

    rng = np.random.default_rng(seed)
    batches = [{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)]

    class RandomImages(CalibrationDataReader):
        def get_next(self) -> dict[str, np.ndarray]:
            # None ends the data, though onnxruntime's annotation says dict.
            return batches.pop() if batches else None  # pyright: ignore[reportReturnType]

    return RandomImages()


def quantized(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """`model` quantized as onnxruntime's tooling does it: batch norms
    folded into the convolutions (`quant_pre_process`), then
    `quantize_static` in QDQ format with uint8 activations and int8 weights
    per output channel, the activation ranges calibrated (min-max) on random
    images from `seed`. Needs onnxruntime; works in a temporary folder."""
    import tempfile
    from pathlib import Path

    from onnxruntime.quantization import QuantFormat, QuantType, quant_pre_process, quantize_static

    (data,) = model.graph.input
    shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
    with tempfile.TemporaryDirectory() as folder:
        plain, prepared, result = (str(Path(folder, n)) for n in ("m.onnx", "p.onnx", "q.onnx"))
        onnx.save(model, plain)
        quant_pre_process(plain, prepared, skip_symbolic_shape=True)
        quantize_static(
            prepared,
            result,
            _random_images(data.name, shape, CALIBRATION_BATCHES, seed),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        return onnx.load(result)


def resnet_int8(
    depth: int = 18, image: int = 224, classes: int = 1000, batch: int = 1, seed: int = 0
) -> onnx.ModelProto:
    """`resnet(depth, ...)` quantized to 8 bits by `quantized`."""
    return quantized(resnet(depth, image, classes, batch, seed), seed)
