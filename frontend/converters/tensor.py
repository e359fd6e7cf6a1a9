"""ONNX converters: tensor ops."""

from __future__ import annotations
