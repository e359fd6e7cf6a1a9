"""TfIdfVectorizer, built from other ops at import
(frontend/converters/text.py), against onnxruntime on the interpreter and
natively."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import helper

import xtc
from xtc.driver.onnx_backend import specializing_model
from xtc.frontend.onnx import OnnxImportError, import_model

RNG = np.random.default_rng(17)

UNI_BI_TRI_POOL = dict(
    # unigrams 0..3, bigrams (1, 2) (2, 2) (0, 3) (3, 1), trigrams (2, 1, 0) (1, 1, 1)
    pool_int64s=[0, 1, 2, 3, 1, 2, 2, 2, 0, 3, 3, 1, 2, 1, 0, 1, 1, 1],
    ngram_counts=[0, 4, 12],
    ngram_indexes=[9, 0, 3, 2, 8, 1, 4, 6, 7, 5],
)


def tfidf_model(shape: tuple[int, ...], dtype: int, **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "tfidf",
        [helper.make_tensor_value_info("x", dtype, list(shape))],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])


def ort(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return np.asarray(session.run(None, {"x": x})[0])


@pytest.mark.parametrize(
    ("mode", "weighted", "shape", "dtype"),
    [
        ("TF", False, (3, 11), np.int64),
        ("TFIDF", True, (11,), np.int32),
        ("IDF", True, (2, 7), np.int64),
        ("IDF", False, (4, 5), np.int32),
        ("TFIDF", True, (2, 9), np.int64),
    ],
)
def test_tfidf_of_unigrams_to_trigrams_with_skips_is_onnxruntimes(
    mode: str, weighted: bool, shape: tuple[int, ...], dtype: type
) -> None:
    """Trigrams, int64 tokens, weights, IDF and TFIDF, which the cases have
    none of: tokens 0..3 so that n-grams repeat in a row."""
    attrs: dict[str, object] = dict(
        UNI_BI_TRI_POOL, mode=mode, min_gram_length=1, max_gram_length=3, max_skip_count=2
    )
    if weighted:
        attrs["weights"] = [float(w) for w in RNG.uniform(0.5, 2.0, 10).round(2)]
    model = tfidf_model(shape, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), **attrs)
    x = RNG.integers(0, 4, shape).astype(dtype)
    want = ort(model, x)
    got = np.asarray(specializing_model(model, "interp").run({"x": x})[0])
    native = np.asarray(xtc.compile(model, cache=False).run({"x": x})[0])
    assert want.shape == shape[:-1] + (10,) and want.any()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(native, want, rtol=1e-6)


def test_tfidf_of_trigrams_only_skips_the_rows_too_short() -> None:
    """Rows of 2 tokens hold no trigram: zeros, without a kernel."""
    attrs = dict(UNI_BI_TRI_POOL, mode="TF", min_gram_length=3, max_gram_length=3, max_skip_count=0)
    model = tfidf_model((3, 2), onnx.TensorProto.INT64, **attrs)
    x = RNG.integers(0, 4, (3, 2)).astype(np.int64)
    got = np.asarray(specializing_model(model, "interp").run({"x": x})[0])
    np.testing.assert_array_equal(got, np.zeros((3, 10), np.float32))
    np.testing.assert_array_equal(got, ort(model, x))


def test_tfidf_of_a_string_pool_is_refused() -> None:
    model = tfidf_model(
        (4,),
        onnx.TensorProto.INT64,
        mode="TF",
        min_gram_length=1,
        max_gram_length=1,
        pool_strings=["a", "b"],
        ngram_counts=[0],
        ngram_indexes=[0, 1],
    )
    with pytest.raises(OnnxImportError, match="pool_strings is not supported: xtc has no string"):
        import_model(model)


def test_tfidf_with_fewer_columns_than_ngrams_is_refused() -> None:
    attrs = dict(UNI_BI_TRI_POOL, ngram_indexes=[0, 1, 2])
    model = tfidf_model(
        (4,), onnx.TensorProto.INT64, mode="TF", min_gram_length=1, max_gram_length=2, **attrs
    )
    with pytest.raises(OnnxImportError, match="ngram_indexes gives 3 columns for 10 n-grams"):
        import_model(model)


def test_tfidf_of_a_pool_with_a_repeated_ngram_is_refused() -> None:
    model = tfidf_model(
        (4,),
        onnx.TensorProto.INT64,
        mode="TF",
        min_gram_length=2,
        max_gram_length=2,
        pool_int64s=[1, 1, 2, 1, 2],
        ngram_counts=[0, 1],
        ngram_indexes=[0, 1, 2],
    )
    with pytest.raises(OnnxImportError, match=r"holds the 2-gram \[1, 2\] twice"):
        import_model(model)


@pytest.mark.parametrize("mode", ["TF", "TFIDF", "IDF"])
def test_tfidf_adds_the_ngrams_sent_to_one_column(mode: str) -> None:
    """ngram_indexes [0, 0, 1, 1]: a column counts both its n-grams (IDF
    unweighted, as onnxruntime: which weight it takes is unspecified)."""
    attrs: dict[str, object] = dict(
        pool_int64s=[0, 1, 2, 3],
        ngram_counts=[0],
        ngram_indexes=[0, 0, 1, 1],
        mode=mode,
        min_gram_length=1,
        max_gram_length=1,
        max_skip_count=0,
    )
    if mode == "TFIDF":
        attrs["weights"] = [1.0, 2.0, 4.0, 8.0]
    model = tfidf_model((5,), onnx.TensorProto.INT64, **attrs)
    x = np.array([0, 1, 2, 3, 0], np.int64)
    got = np.asarray(specializing_model(model, "interp").run({"x": x})[0])
    want = {"TF": [3.0, 2.0], "TFIDF": [4.0, 12.0], "IDF": [1.0, 1.0]}[mode]
    np.testing.assert_array_equal(got, np.array(want, np.float32))
    np.testing.assert_array_equal(got, ort(model, x))
