"""The one search specification (static/search-spec.json) that the index, FTS5 and the page follow."""

from __future__ import annotations

from functools import cache
from typing import Any

import orjson

from sitegen.resources import resource_dir

__all__ = ["SPEC_FILE", "cjk_class", "spec", "spec_script"]

SPEC_FILE = "search-spec.json"


@cache
def spec() -> dict[str, Any]:
    """The specification's values (token lengths, CJK ranges, weights), read once per process."""
    data: dict[str, Any] = orjson.loads((resource_dir("static") / SPEC_FILE).read_bytes())
    return data


def _escape(code: int) -> str:
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


@cache
def cjk_class() -> str:
    """The CJK ranges as the inside of a Python regular expression's character class."""
    return "".join(f"{_escape(low)}-{_escape(high)}" for low, high in spec()["cjk_ranges"])


def spec_script() -> bytes:
    """The specification as a script for the page: window.sitegen.searchSpec = {...}."""
    body = orjson.dumps(spec(), option=orjson.OPT_SORT_KEYS)
    return b"window.sitegen = window.sitegen || {};\nwindow.sitegen.searchSpec = " + body + b";\n"
