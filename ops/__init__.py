"""Placeholder: filled by later issues (see DESIGN.md)."""
