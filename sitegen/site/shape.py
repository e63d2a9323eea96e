"""Whether JSON read back from the site folder has the types the build's dataclasses declare: a file
edited by hand, cut short or written by another version must be found out before the build trusts it."""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any

__all__ = ["conforms"]


@cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _required(kind: type) -> frozenset[str]:
    return frozenset(
        f.name
        for f in dataclasses.fields(kind)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )


def conforms(value: Any, hint: Any) -> bool:
    """Whether value (parsed JSON) fits the type hint: str, int, float, bool, None, Any, unions,
    list[X], dict[str, X], dataclasses (an object with their fields) and NamedTuples (an array)."""
    if hint is Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(conforms(value, option) for option in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(conforms(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint)
        return isinstance(value, dict) and all(conforms(k, key) and conforms(v, item) for k, v in value.items())
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = _hints(hint)
        return (
            isinstance(value, dict)
            and _required(hint) <= value.keys() <= hints.keys()
            and all(conforms(v, hints[k]) for k, v in value.items())
        )
    if isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields"):
        hints = _hints(hint)
        return (
            isinstance(value, list)
            and len(value) == len(hint._fields)
            and all(conforms(v, hints[name]) for v, name in zip(value, hint._fields, strict=True))
        )
    return False
