"""Compute rules: nn graph ops."""

from __future__ import annotations
