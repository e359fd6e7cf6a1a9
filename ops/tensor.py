"""Compute rules: tensor graph ops."""

from __future__ import annotations
