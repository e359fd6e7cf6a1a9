"""Writes a real architecture as an ONNX file, with random weights (nothing
is downloaded): the README's main job starts here.

    python -m xtc.tools.make_model resnet50 -o resnet50.onnx
    python -m xtc.tools.make_model --list
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import onnx

from xtc.tools import model_builders as builders

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet18": lambda: builders.resnet(18),
    "resnet50": lambda: builders.resnet(50),
    "mobilenet_v2": builders.mobilenet_v2,
    "squeezenet": builders.squeezenet,
    "bert": lambda: builders.bert_encoder(layers=4, seq=128, hidden=768, heads=12, ffn=3072),
    "resnet_like": builders.resnet_like,
    "alexnet": builders.alexnet,
    "vgg16": lambda: builders.vgg(16),
    "vgg19": lambda: builders.vgg(19),
    "inception_v1": builders.inception_v1,
    "densenet121": builders.densenet,
    "shufflenet": builders.shufflenet,
    "lstm": builders.lstm_classifier,
}
"""Each model at its usual size: 224x224 images and 1000 classes; the BERT
encoder is BERT-base's layer (hidden 768, 12 heads) stacked 4 deep, at
sequence length 128. VGG-19 holds 548 MiB of weights, AlexNet 233 MiB;
`shufflenet` is ShuffleNet v1 with 3 groups; `lstm` two stacked LSTMs
(hidden 128) over 64 steps of 64 features, classified by a Gemm."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m xtc.tools.make_model", description="write a model as ONNX"
    )
    parser.add_argument("model", nargs="?", choices=sorted(MODELS), help="which architecture")
    parser.add_argument("-o", "--output", help="the .onnx file (default: MODEL.onnx)")
    parser.add_argument("--list", action="store_true", help="list the models")
    args = parser.parse_args(argv)
    if args.list or args.model is None:
        print("\n".join(sorted(MODELS)))
        return 0
    output = args.output or f"{args.model}.onnx"
    try:
        onnx.save(MODELS[args.model](), output)
    except OSError as e:
        print(f"make_model: error: cannot write {output}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
