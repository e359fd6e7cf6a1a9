"""The ONNX importer: an ONNX model to one `graph` module (`onnx.py`), with
one converter per ONNX op, grouped by category in `converters/`."""
