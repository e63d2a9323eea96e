"""JSON values shown as text: indented, and clipped where they nest deeper than a page shows."""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["MAX_NESTING", "clip_nesting", "json_text"]

# Nesting shown at most (orjson writes 255 levels; a hostile line can hold a thousand).
MAX_NESTING = 200


def json_text(value: Any) -> str:
    """A value as indented JSON for display, nesting past MAX_NESTING shown as "…"; repr() for what
    JSON cannot hold."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(value, option=option).decode()
    except TypeError:
        pass  # too deep, or not JSON
    try:
        return orjson.dumps(clip_nesting(value), option=option).decode()
    except TypeError:
        try:
            return repr(value)
        except RecursionError:
            return "…"


def clip_nesting(value: Any, limit: int = MAX_NESTING) -> Any:
    """A copy of value whose lists and dicts nested deeper than limit are replaced by "…"; made
    without recursion, so any depth is safe."""
    if not isinstance(value, dict | list):
        return value
    top: dict[Any, Any] | list[Any] = {} if isinstance(value, dict) else []
    pending: list[tuple[Any, Any, int]] = [(value, top, 1)]
    while pending:
        source, target, depth = pending.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            copy = item
            if isinstance(item, dict | list):
                if depth >= limit:
                    copy = "…"
                else:
                    copy = {} if isinstance(item, dict) else []
                    pending.append((item, copy, depth + 1))
            if isinstance(target, dict):
                target[key] = copy
            else:
                target.append(copy)
    return top
