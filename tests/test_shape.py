"""conforms: parsed JSON checked against the build's dataclass and NamedTuple hints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pytest

from sitegen.site.state.shape import conforms


class Point(NamedTuple):
    x: int
    label: str | None


@dataclass
class Record:
    name: str
    size: int
    ratio: float = 0.0
    tags: list[str] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None


GOOD = {"name": "a", "size": 3, "ratio": 1, "tags": ["x"], "points": [[1, None], [2, "b"]], "extra": {"k": [1]}}


def test_a_record_of_the_declared_types_conforms() -> None:
    assert conforms(GOOD, Record)
    assert conforms({"name": "a", "size": 0}, Record)
    assert conforms([GOOD, GOOD], list[Record])
    assert conforms({"s": GOOD}, dict[str, Record | None])
    assert conforms({"s": None}, dict[str, Record | None])


@pytest.mark.parametrize(
    "changes",
    [
        {"size": True},  # a bool is not an int
        {"size": 1.5},
        {"name": None},
        {"ratio": "1"},
        {"tags": "x"},
        {"tags": [1]},
        {"points": [[1]]},  # a NamedTuple is an array of its length
        {"points": [[1, 2]]},
        {"extra": {1: 2}},  # not JSON, but a dict key must be a string
        {"unknown": 1},
    ],
)
def test_a_wrong_value_anywhere_does_not_conform(changes: dict[str, Any]) -> None:
    assert not conforms({**GOOD, **changes}, Record)


def test_missing_required_fields_and_wrong_containers_do_not_conform() -> None:
    assert not conforms({"name": "a"}, Record)
    assert not conforms([GOOD], Record)
    assert not conforms(GOOD, list[Record])
    assert not conforms([GOOD, {"name": 1, "size": 1}], list[Record])
