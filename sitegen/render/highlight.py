"""Syntax highlighting with pygments: lexers by name or file name only, a size limit, and a content cache."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from markupsafe import Markup, escape
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

__all__ = ["HIGHLIGHT_LIMIT", "Highlighter", "lexer_name_for_path"]

# Past this many characters a block is shown as plain text: pygments is slow on huge inputs
# and colour adds little to a 200 KB log.
HIGHLIGHT_LIMIT = 100_000


@lru_cache(maxsize=512)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=1024)
def lexer_name_for_path(path: str) -> str | None:
    """A lexer alias chosen from a file name (never by guessing from content)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if not name:
        return None
    try:
        lexer = get_lexer_for_filename(name)
    except ClassNotFound:
        return None
    return lexer.aliases[0] if lexer.aliases else None


class Highlighter:
    """Highlights code to class-based HTML; the same text is never highlighted twice."""

    def __init__(self, limit: int = HIGHLIGHT_LIMIT) -> None:
        self.limit = limit
        self._formatter = HtmlFormatter(nowrap=True)
        self._cache: dict[tuple[str, bytes], Markup] = {}
        self.hits = 0

    def code(self, text: str, language: str | None) -> Markup:
        """Inner HTML for a <pre><code>: highlighted when the language is known and the block small."""
        lexer = _lexer_by_name(language.strip().lower()) if language else None
        if lexer is None or len(text) > self.limit:
            return escape(text)
        key = (lexer.name, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
        cached = self._cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        html = Markup(pygments_highlight(text, lexer, self._formatter))
        # pygments appends a newline the source did not have; keep the block's own ending.
        if not text.endswith("\n") and html.endswith("\n"):
            html = Markup(html[:-1])
        self._cache[key] = html
        return html

    def file(self, text: str, path: str) -> Markup:
        return self.code(text, lexer_name_for_path(path))
