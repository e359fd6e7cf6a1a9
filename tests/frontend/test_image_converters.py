"""ImageDecoder (frontend/converters/image.py): random images encoded with
Pillow, decoded on the interpreter and natively with the bytes given at run
time (specialized on), in the three pixel formats; onnxruntime has no
ImageDecoder, so JPEG is checked against Pillow's own decode."""

from __future__ import annotations

import io
import sys

import numpy as np
import onnx
import pytest
from PIL import Image

import xtc
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model
from xtc.testing.onnx_models import one_node_model

RNG = np.random.default_rng(17)


def random_image(height: int, width: int) -> np.ndarray:
    return RNG.integers(0, 256, (height, width, 3), dtype=np.uint8)


def encode(image: np.ndarray, image_format: str) -> np.ndarray:
    with io.BytesIO() as f:
        Image.fromarray(image).save(f, format=image_format)
        return np.frombuffer(f.getvalue(), np.uint8)


def decoder_model(encoded: np.ndarray, pixel_format: str) -> onnx.ModelProto:
    return one_node_model("ImageDecoder", {"data": encoded}, opset=20, pixel_format=pixel_format)


def run_both(encoded: np.ndarray, pixel_format: str) -> np.ndarray:
    """The interpreter's image, after checking native code gives it too and
    that the bytes were specialized on."""
    model = decoder_model(encoded, pixel_format)
    interp = specializing_model(model, "interp")
    (got,) = interp.run({"data": encoded})
    assert interp.specialized_inputs == ["data"]
    (native,) = xtc.compile(model, cache=False).run({"data": encoded})
    np.testing.assert_array_equal(np.asarray(native), np.asarray(got))
    return np.asarray(got)


def luma(rgb: np.ndarray) -> np.ndarray:
    """ITU-R 601-2 luma [H, W, 1], rounded (Pillow's fixed point may differ by 1)."""
    weights = np.array([0.299, 0.587, 0.114])
    return np.round(rgb.astype(np.float64) @ weights).astype(np.uint8)[:, :, np.newaxis]


def test_png_decodes_exactly_in_rgb_and_bgr() -> None:
    image = random_image(7, 11)
    encoded = encode(image, "PNG")
    rgb = run_both(encoded, "RGB")
    assert rgb.dtype == np.uint8
    np.testing.assert_array_equal(rgb, image)
    np.testing.assert_array_equal(run_both(encoded, "BGR"), image[:, :, ::-1])


def test_png_in_grayscale_is_the_luma_of_each_pixel() -> None:
    image = random_image(9, 5)
    got = run_both(encode(image, "PNG"), "Grayscale")
    assert got.shape == (9, 5, 1)
    difference = np.abs(got.astype(np.int16) - luma(image).astype(np.int16))
    assert difference.max() <= 1


@pytest.mark.parametrize("pixel_format", ["RGB", "BGR", "Grayscale"])
def test_jpeg_decodes_as_pillow_does(pixel_format: str) -> None:
    image = random_image(16, 24)
    encoded = encode(image, "JPEG")
    with Image.open(io.BytesIO(encoded.tobytes())) as decoded:
        if pixel_format == "Grayscale":
            want = np.asarray(decoded.convert("L"))[:, :, np.newaxis]
        else:
            want = np.asarray(decoded)[:, :, :: -1 if pixel_format == "BGR" else 1]
    got = run_both(encoded, pixel_format)
    assert got.shape == (16, 24, 1 if pixel_format == "Grayscale" else 3)
    np.testing.assert_array_equal(got, want)
    # Lossy, but near the image encoded.
    if pixel_format == "RGB":
        assert np.abs(got.astype(np.int16) - image.astype(np.int16)).mean() < 64


def test_a_grayscale_png_decodes_to_three_equal_channels_in_rgb() -> None:
    gray = RNG.integers(0, 256, (4, 6), dtype=np.uint8)
    with io.BytesIO() as f:
        Image.fromarray(gray, mode="L").save(f, format="PNG")
        encoded = np.frombuffer(f.getvalue(), np.uint8)
    np.testing.assert_array_equal(run_both(encoded, "RGB"), np.repeat(gray[:, :, None], 3, 2))
    np.testing.assert_array_equal(run_both(encoded, "Grayscale"), gray[:, :, None])


@pytest.mark.parametrize(
    ("encoded", "reason"),
    [
        (b"not an image at all", "the 19 bytes of encoded_stream are in no image format"),
        (bytes(encode(random_image(30, 40), "PNG")[:60]), "60 bytes .* not an image .* truncated"),
    ],
)
def test_bytes_that_are_no_image_are_refused_in_one_line(encoded: bytes, reason: str) -> None:
    constant = {"data": np.frombuffer(encoded, np.uint8)}
    model = one_node_model("ImageDecoder", {}, constant, opset=20)
    with pytest.raises(OnnxImportError, match=reason) as refusal:
        import_model(model)
    assert "\n" not in str(refusal.value)


def test_an_unknown_pixel_format_is_refused() -> None:
    encoded = encode(random_image(2, 2), "PNG")
    with pytest.raises(OnnxImportError, match=r"pixel_format 'YUV' is not one of RGB, BGR"):
        import_model(decoder_model(encoded, "YUV"))


def test_without_pillow_image_decoder_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoded = encode(random_image(2, 2), "PNG")
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(OnnxImportError) as refusal:
        specializing_model(decoder_model(encoded, "RGB"), "interp").run({"data": encoded})
    message = str(refusal.value)
    assert "\n" not in message
    assert "ImageDecoder node" in message and "pip install 'xtc[images]'" in message
