"""Whether JSON read back from the site folder has the types the build's dataclasses declare: a file
edited by hand, cut short or written by another version must be found out before the build trusts it."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["conforms"]

Check = Callable[[Any], bool]


def conforms(value: Any, hint: Any) -> bool:
    """Whether value (parsed JSON) fits the type hint: str, int, float, bool, None, Any, unions,
    list[X], dict[str, X], dataclasses (an object with their fields) and NamedTuples (an array)."""
    return _checker(hint)(value)


@cache
def _checker(hint: Any) -> Check:
    """A check for one hint, made once: a manifest holds thousands of records of the same few
    types, and reading the hints again for every value cost more than the rest of a no-op build."""
    if hint is Any:
        return lambda value: True
    if hint is None or hint is type(None):
        return lambda value: value is None
    if hint in _SCALARS:
        return _SCALARS[hint]
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union([_checker(option) for option in typing.get_args(hint)])
    if origin is list:
        return _list_of(_checker(typing.get_args(hint)[0]))
    if origin is dict:
        key, item = typing.get_args(hint)
        return _dict_of(_checker(key), _checker(item))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint)
    if isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields"):
        return _named_tuple(hint)
    return lambda value: False


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_SCALARS: dict[Any, Check] = {
    bool: lambda value: isinstance(value, bool),
    int: _is_int,
    float: _is_number,
    str: lambda value: isinstance(value, str),
}


def _union(options: list[Check]) -> Check:
    return lambda value: any(check(value) for check in options)


def _list_of(item: Check) -> Check:
    return lambda value: isinstance(value, list) and all(map(item, value))


def _dict_of(key: Check, item: Check) -> Check:
    return lambda value: isinstance(value, dict) and all(map(key, value)) and all(map(item, value.values()))


def _dataclass(kind: type) -> Check:
    hints = typing.get_type_hints(kind)
    fields = {name: _checker(hint) for name, hint in hints.items()}
    allowed = hints.keys()
    required = frozenset(
        f.name
        for f in dataclasses.fields(kind)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )

    def check(value: Any) -> bool:
        return (
            isinstance(value, dict)
            and required <= value.keys() <= allowed
            and all(fields[name](item) for name, item in value.items())
        )

    return check


def _named_tuple(kind: type) -> Check:
    hints = typing.get_type_hints(kind)
    fields = [_checker(hints[name]) for name in kind._fields]  # type: ignore[attr-defined]

    def check(value: Any) -> bool:
        return (
            isinstance(value, list)
            and len(value) == len(fields)
            and all(field(item) for field, item in zip(fields, value, strict=True))
        )

    return check
