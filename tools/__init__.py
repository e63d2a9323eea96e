"""Authoring tools for sitegen (not shipped)."""
