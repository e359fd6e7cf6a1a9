"""Compute rules: elementwise graph ops."""

from __future__ import annotations
