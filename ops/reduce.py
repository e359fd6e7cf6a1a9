"""Compute rules: reduce graph ops."""

from __future__ import annotations
