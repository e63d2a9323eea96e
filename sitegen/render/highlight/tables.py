"""pygments' regex lexers as data for the page's own highlighter, kept in the user's cache folder.

Past its first screen a page (every site page, and a long exported one) leaves its code plain and
static/highlight.js colours it when it is shown, with the rules of the same installed pygments lexer,
so the reader sees what the server would have written. sitegen.render.highlight.translate makes a table
from a lexer; this module keeps them, so that a page whose code is all in the build's fragment store
needs neither pygments' lexer machinery nor a translation.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pygments

from sitegen.fileio import open_regular, replace_file
from sitegen.resources import cache_folder

__all__ = ["fenced_languages", "lexer_table", "table_json", "with_called"]

_FENCE_LANGUAGE = re.compile(r"^\s*```([\w\-]+)", re.MULTILINE)


_tables: dict[str, dict[str, Any] | None] = {}


def lexer_table(alias: str) -> dict[str, Any] | None:
    """The rule table of a portable lexer, by alias: {"patterns": [[source, flags], ...], "states":
    {name: [[pattern index, action, new state], ...]}, "using": [aliases it calls]}; None when the
    lexer, or one it calls, is not portable."""
    if alias in _tables:
        return _tables[alias]
    # Kept before the lexers it calls are looked at: a lexer that calls this one back finds it.
    table = _tables[alias] = _own_table(alias)
    if table is not None and any(lexer_table(name) is None for name in table["using"]):
        table = _tables[alias] = None
    return table


def _own_table(alias: str) -> dict[str, Any] | None:
    """The table translated, or as translated before: kept in the user's cache folder, as translating
    a lexer's rules takes longer than its table takes to read (0.1 s of a page with ten languages)."""
    folder = _table_cache()
    path = folder / f"{quote(alias, safe='')}.json" if folder is not None else None
    if path is not None:
        try:
            with open_regular(path) as handle:
                cached = json.loads(handle.read())
            if isinstance(cached, dict) and isinstance(cached.get("table"), dict | None):
                return cached["table"]  # type: ignore[no-any-return]
        except (OSError, ValueError):
            pass  # none yet, or not ours: translated again, and written anew
    from sitegen.render.highlight.translate import translated_table

    table = translated_table(alias)
    if path is not None:
        with contextlib.suppress(OSError):  # a full disk: kept another time
            replace_file(path, json.dumps({"table": table}), undoable=False)
    return table


@cache
def _table_cache() -> Path | None:
    """The cache folder for tables made by this code from this pygments in this Python (whose re
    parser they are read with): a change to any of them starts a new folder."""
    key = hashlib.sha256(f"{pygments.__version__} {sys.version_info[:2]}".encode())
    # The code the tables come from, by its files: importing it would load pygments' lexer machinery.
    here = Path(__file__).parent
    for name in ("translate.py", "lexing.py", "pygments_html.py", "rule_lexers.py", "yaml_rules.py"):
        key.update((here / name).read_bytes())
    return cache_folder(f"lexer-tables/{key.hexdigest()[:16]}")


def fenced_languages(alias: str, text: str) -> set[str] | None:
    """The lexers the page needs to colour text with this one besides it and those it calls: those
    named by Markdown's fenced blocks. None when a block names a lexer that only runs on the server."""
    table = lexer_table(alias)
    if table is None:
        return None
    if not table["fences"]:
        return set()
    from sitegen.render.highlight.pygments_html import lexer_class_by_name

    found = set()
    for language in set(_FENCE_LANGUAGE.findall(text)):
        cls = lexer_class_by_name(language)
        if cls is None or not cls.aliases:
            continue  # a language pygments does not know: its code is a string, on the server too
        if lexer_table(cls.aliases[0]) is None:
            return None
        found.add(cls.aliases[0])
    return found


def with_called(aliases: set[str]) -> set[str]:
    """The portable lexers named, and those they call through using(), all the way down."""
    found: set[str] = set()
    todo = list(aliases)
    while todo:
        alias = todo.pop()
        if alias not in found and (table := lexer_table(alias)) is not None:
            found.add(alias)
            todo.extend(table["using"])
    return found


def table_json(alias: str) -> str | None:
    """A portable lexer's table as JSON safe inside a <script> element."""
    table = lexer_table(alias)
    if table is None:
        return None
    text = json.dumps({"lang": alias, **table}, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
