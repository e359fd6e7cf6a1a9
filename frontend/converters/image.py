"""ImageDecoder: encoded bytes (BMP, JPEG, JPEG 2000, PNG, PNM, TIFF, WebP)
to an H x W x C uint8 image. The image's size depends on the bytes, so it
is decoded at import when they are a constant (given at run time, the
model is specialized on them, as NonZero is). Decoding is Pillow's, as in
ONNX's reference, an optional dependency: `pip install 'xtc[images]'`."""

from __future__ import annotations

import io
from collections.abc import Sequence
from types import ModuleType

import numpy as np
from xdsl.ir import SSAValue

from xtc.frontend.converters import Node, converts

Outputs = Sequence[SSAValue | None]

PIXEL_FORMATS = ("RGB", "BGR", "Grayscale")


def _pillow(node: Node) -> ModuleType:
    """PIL.Image, or a one-line refusal naming the package to install."""
    try:
        import PIL.Image
    except ImportError:
        node.fail("decoding an image needs Pillow: pip install 'xtc[images]'")
    return PIL.Image


def decode_image(image_module: ModuleType, encoded: bytes, pixel_format: str) -> np.ndarray:
    """The image in `encoded` as [H, W, 3] RGB or BGR, or [H, W, 1] luma
    (ITU-R 601-2, Pillow's "L" conversion, as ONNX's reference)."""
    with image_module.open(io.BytesIO(encoded)) as image:
        if pixel_format == "Grayscale":
            return np.asarray(image.convert("L"), np.uint8)[:, :, np.newaxis]
        rgb = np.asarray(image if image.mode == "RGB" else image.convert("RGB"), np.uint8)
    return rgb[:, :, ::-1] if pixel_format == "BGR" else rgb


@converts("ImageDecoder")
def convert_image_decoder(node: Node) -> Outputs:
    pixel_format = node.attr("pixel_format", "RGB")
    if pixel_format not in PIXEL_FORMATS:
        node.fail(f"pixel_format '{pixel_format}' is not one of {', '.join(PIXEL_FORMATS)}")
    if node.dtype(0) != np.uint8 or len(node.shape(0)) != 1:
        node.fail(f"encoded_stream {node.type_str(0)} must be a 1-D uint8 tensor")
    image_module = _pillow(node)
    encoded = node.const(0)
    if encoded is None:
        node.fail_not_constant(
            0, "encoded_stream (input 0)", "the image's size depends on the encoded bytes"
        )
    what = f"the {encoded.size} bytes of encoded_stream"
    try:
        decoded = decode_image(image_module, encoded.tobytes(), pixel_format)
    except image_module.UnidentifiedImageError:
        node.fail(f"{what} are in no image format Pillow reads")
    except (OSError, ValueError, SyntaxError, image_module.DecompressionBombError) as e:
        node.fail(f"{what} are not an image Pillow decodes: {e}")
    return [node.constant(np.ascontiguousarray(decoded))]
