"""Syntax highlighting with pygments: lexers by name or file name only, a size limit, and a content cache."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import pygments
from markupsafe import Markup
from pygments.token import STANDARD_TYPES, Name, Punctuation, Text, Whitespace

from sitegen.render.base._internals import TokenType, lexer_mapping
from sitegen.render.base.fragments import FragmentStore, fragment_key
from sitegen.render.base.text import escape_text
from sitegen.render.highlight.priority import PRIORITIES, PYGMENTS_VERSION

if TYPE_CHECKING:
    from pygments.lexer import Lexer

# pygments' lexer machinery (pygments.lexer, pygments.lexers, and through their plugin support
# importlib.metadata) is imported only when something must be highlighted: a session that grew by a
# message takes its highlighted code, and which lexer each file name gets, from the fragment store.


__all__ = ["CACHE_CHARS", "HIGHLIGHT_LIMIT", "Highlighter", "lexer_name_for_path"]

# Past this many characters a block is shown as plain text: pygments is slow on huge inputs
# and colour adds little to a 200 KB log.
HIGHLIGHT_LIMIT = 16_000
# Highlighted HTML kept in memory for reuse by later pages, at most (a build's worker renders
# hundreds of sessions: unbounded, the cache made a worker's memory grow with the corpus).
CACHE_CHARS = 8_000_000


@cache
def _builtin_aliases() -> frozenset[str]:
    return frozenset(alias for _module, _name, aliases, _files, _mimes in lexer_mapping().values() for alias in aliases)


@lru_cache(maxsize=512)
def lexer_class_by_name(name: str) -> type[Lexer] | None:
    """pygments' built-in lexer class for an alias, or ours in its place where pygments' is code the
    page's highlighter cannot run (JSON). Plugin lexers are left out: looking for them scans every
    installed package, and a page should not depend on what else is installed."""
    from pygments.lexers import find_lexer_class_by_name

    from sitegen.render.highlight.rule_lexers import rule_lexer

    alias = name.lower()
    if alias not in _builtin_aliases():
        return None
    cls: type[Lexer] = rule_lexer(find_lexer_class_by_name(alias))
    return cls


@lru_cache(maxsize=512)
def _lexer_by_name(name: str) -> Lexer | None:
    """A ready lexer for an alias, its rules compiled as they are first tried."""
    from sitegen.render.highlight.lexing import prepare_lexer_class

    cls = lexer_class_by_name(name)
    if cls is None:
        return None
    prepare_lexer_class(cls)
    return cls(stripnl=False, ensurenl=False)


# Token types the page's themes draw in the plain text colour: spans for them would only add bytes
# (identifiers and punctuation are most of the tokens in code).
_PLAIN = frozenset({Text, Whitespace, Name, Name.Other, Punctuation})


def css_class_of(token: TokenType) -> str:
    """pygments' short class for a token type (its nearest styled ancestor); "" for plain text."""
    while token not in STANDARD_TYPES and token.parent is not None:
        token = token.parent
    if token in _PLAIN or token.parent is Text:
        return ""
    return STANDARD_TYPES.get(token, "")


_classes: dict[TokenType, str] = {}

# Marks for where a span opens and closes, while the text is escaped in one pass: Unicode
# noncharacters, which no interchange text should hold (text that does is formatted run by run).
_OPEN, _CLASS_END, _CLOSE = "\ufdd0", "\ufdd1", "\ufdd2"


def format_tokens(lexer: Lexer, text: str) -> str:
    """Class-based HTML like pygments' HtmlFormatter, but leaner: plain text and whitespace get no
    span and runs of one class are merged, which halves the size of highlighted pages."""
    from sitegen.render.highlight.lexing import lex

    if _OPEN in text or _CLASS_END in text or _CLOSE in text:
        return _format_runs(lex(lexer, text))
    out: list[str] = []
    append = out.append
    current = ""
    classes = _classes
    for token, value in lex(lexer, text):
        css = classes.get(token)
        if css is None:
            css = classes[token] = css_class_of(token)
        # Whitespace joins the run it is in, whatever its class.
        if css != current and value and not value.isspace():
            if current:
                append(_CLOSE)
            if css:
                append(f"{_OPEN}{css}{_CLASS_END}")
            current = css
        append(value)
    if current:
        append(_CLOSE)
    html = "".join(out).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return html.replace(_OPEN, "<span class=").replace(_CLASS_END, ">").replace(_CLOSE, "</span>")


def _format_runs(tokens: Iterable[tuple[TokenType, str]]) -> str:
    """format_tokens, one run at a time."""
    out: list[str] = []
    current = ""
    run: list[str] = []
    classes = _classes
    for token, value in tokens:
        if value.isspace() or not value:
            css = current
        else:
            css = classes.get(token)  # type: ignore[assignment]
            if css is None:
                css = classes[token] = css_class_of(token)
        if css != current:
            if run:
                chunk = escape_text("".join(run))
                out.append(f"<span class={current}>{chunk}</span>" if current else chunk)
            current, run = css, []
        run.append(value)
    if run:
        chunk = escape_text("".join(run))
        out.append(f"<span class={current}>{chunk}</span>" if current else chunk)
    return "".join(out)


def lexer_name_for_path(path: str) -> str | None:
    """A lexer alias chosen from a file name (never by guessing from content)."""
    lookup = lexer_lookup_name(path)
    return _lexer_for_name(lookup) if lookup else None


def lexer_lookup_name(path: str) -> str:
    """The name a file's lexer is looked up by: "file.<extension>", or the whole name for the file
    names lexers claim whole (Makefile, CMakeLists.txt, .bashrc); pygments scans every lexer's
    patterns per lookup, so most names share one lookup per extension."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    return f"file.{extension}" if dot and stem and name not in _whole_names() else name


@cache
def _whole_names() -> frozenset[str]:
    return frozenset(
        pattern
        for _module, _name, _aliases, patterns, _mimetypes in lexer_mapping().values()
        for pattern in patterns
        if not any(c in pattern for c in "*?[")
    )


@dataclass(frozen=True, slots=True)
class _NameIndex:
    """pygments' file name patterns by kind: exact names, "*.suffix", and the few real globs.
    fnmatch compiles a regex per pattern on first use, 40 ms for all 900: only the globs need one."""

    exact: dict[str, list[str]]
    by_suffix: dict[str, list[str]]
    globs: list[tuple[str, str]]
    class_names: dict[str, str]  # alias -> lexer class name


@cache
def _name_index() -> _NameIndex:
    index = _NameIndex({}, {}, [], {})
    for class_name, (_module, _name, aliases, patterns, _mimes) in lexer_mapping().items():
        if not aliases:
            continue
        index.class_names.setdefault(aliases[0], class_name)
        for pattern in patterns:
            if not any(c in pattern for c in "*?["):
                index.exact.setdefault(pattern, []).append(aliases[0])
            elif pattern.startswith("*.") and not any(c in pattern[1:] for c in "*?["):
                index.by_suffix.setdefault(pattern[1:], []).append(aliases[0])
            else:
                index.globs.append((pattern, aliases[0]))
    return index


@lru_cache(maxsize=1024)
def _lexer_for_name(name: str) -> str | None:
    """pygments' choice for a file name without its slow parts (plugin scan, loading every lexer)."""
    index = _name_index()
    matches = {(alias, True) for alias in index.exact.get(name, [])}
    dot = name.find(".")
    while dot != -1:
        matches.update((alias, False) for alias in index.by_suffix.get(name[dot:], []))
        dot = name.find(".", dot + 1)
    matches.update((alias, False) for pattern, alias in index.globs if fnmatch.fnmatchcase(name, pattern))
    if not matches:
        return None
    if len({alias for alias, _ in matches}) == 1:
        return next(iter(matches))[0]
    # Several lexers claim the name (*.h, *.m, *.pl): rank them as pygments does without content,
    # by priority, a bonus for a pattern naming the file exactly, then class name.
    ranked = []
    if pygments.__version__ == PYGMENTS_VERSION:
        for alias, exact in matches:
            class_name = index.class_names[alias]
            ranked.append((PRIORITIES.get(class_name, 0) + (0.5 if exact else 0), class_name, alias))
        return max(ranked)[2]
    # Another pygments: classes, not instances (some lexers, sql+jinja, build others and compile
    # all their rules).
    for alias, exact in matches:
        cls = lexer_class_by_name(alias)
        if cls is not None:
            ranked.append((getattr(cls, "priority", 0) + (0.5 if exact else 0), cls.__name__, alias))
    return max(ranked)[2] if ranked else None


@lru_cache(maxsize=256)
def _browser_lexer(alias: str) -> str | None:
    """The name the page's highlighter knows a lexer by (its first alias), when it can run it. The name
    comes from pygments' table of lexers, as lexer_class_by_name finds the class, without importing the
    lexer's module: code past the first screen needs only the table (cached: tables.lexer_table)."""
    from sitegen.render.highlight.tables import lexer_table

    name = _first_aliases().get(alias.lower())
    return name if name is not None and lexer_table(name) is not None else None


@cache
def _first_aliases() -> dict[str, str]:
    """Each alias of a built-in lexer -> that lexer's first alias, the first lexer in pygments' table
    that has the alias winning (as pygments.lexers.find_lexer_class_by_name looks them up)."""
    first: dict[str, str] = {}
    for _module, _name, aliases, _files, _mimes in lexer_mapping().values():
        for alias in aliases:
            first.setdefault(alias, aliases[0])
    return first


# Fragment-store key prefixes for the lexer chosen for a file name, and for the name the page's
# highlighter knows a lexer by ("@" starts no lexer alias).
_LEXER_FOR = "@lexer-for:"
_BROWSER_LEXER = "@browser-lexer:"


class Highlighter:
    """Highlights code to class-based HTML; the same text is never highlighted twice, and with a
    fragment store not even in the next build."""

    def __init__(self, limit: int = HIGHLIGHT_LIMIT, fragments: FragmentStore | None = None) -> None:
        self.limit = limit
        self.fragments = fragments
        self._cache: dict[str, Markup] = {}
        self._cached_chars = 0
        self.hits = 0
        # While set, code whose lexer the page's highlighter can run is left plain for it (a long page's
        # later entries); the lexers so left are gathered in later_languages for the page to ship.
        self.later = False
        self.later_languages: set[str] = set()

    def code(self, text: str, language: str | None) -> Markup:
        """Inner HTML for a <pre><code>: highlighted when the language is known and the block small."""
        alias = language.strip().lower() if language else ""
        if not alias or len(text) > self.limit:
            return escape_text(text)
        if self.later and (portable := self._browser_lexer(alias)) is not None:
            from sitegen.render.highlight.tables import fenced_languages

            also = fenced_languages(portable, text)
            if also is not None:
                self.later_languages.add(portable)
                self.later_languages.update(also)
                return Markup(f'<span class=hl-later data-lang="{portable}">') + escape_text(text) + Markup("</span>")
        # Stored fragments were made by a known lexer: look them up before pygments' tables.
        key = fragment_key(alias, text)
        html = self._cache.get(key)
        if html is None and self.fragments is not None and (stored := self.fragments.get(key)) is not None:
            html = self._remember(key, Markup(stored))
        if html is not None:
            self.hits += 1
        else:
            if alias not in _builtin_aliases():
                return escape_text(text)
            lexer = _lexer_by_name(alias)
            if lexer is None:
                return escape_text(text)
            html = self._remember(key, Markup(format_tokens(lexer, text)))
        if self.fragments is not None:
            self.fragments.keep(key, html)
        return html

    def _remember(self, key: str, html: Markup) -> Markup:
        """html, kept for later pages while the cache has room (CACHE_CHARS)."""
        if self._cached_chars + len(html) <= CACHE_CHARS:
            self._cache[key] = html
            self._cached_chars += len(html)
        return html

    def prepare(self, languages: Iterable[str | None]) -> None:
        """Ahead of use (before a page's render forks): the tables of the lexers the page's highlighter
        runs, and the lexers of the languages it cannot, which are coloured here wherever they are. A
        lexer the page runs is loaded only if the first screen needs it (its module's import, 1-3 ms)."""
        for language in languages:
            if language and _browser_lexer(language) is None:
                _lexer_by_name(language)

    def file(self, text: str, path: str) -> Markup:
        return self.code(text, self.lexer_for_path(path))

    def _browser_lexer(self, alias: str) -> str | None:
        """_browser_lexer, remembered in the fragment store: a rebuild leaves code to the page's
        highlighter without loading pygments' lexer machinery to ask."""
        if self.fragments is None:
            return _browser_lexer(alias)
        return self._remembered(_BROWSER_LEXER + alias, lambda: _browser_lexer(alias))

    def lexer_for_path(self, path: str) -> str | None:
        """lexer_name_for_path, remembered in the fragment store by file name: a rebuild finds a
        file's lexer there without loading pygments' lexer tables."""
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        if self.fragments is None or not name:
            return lexer_name_for_path(path)
        return self._remembered(_LEXER_FOR + name, lambda: lexer_name_for_path(path))

    def _remembered(self, key: str, find: Callable[[], str | None]) -> str | None:
        """find(), or what it gave in the build before, from the fragment store ("" stands for None)."""
        assert self.fragments is not None
        value = self.fragments.get(key)
        if value is None:
            value = find() or ""
        self.fragments.keep(key, value)
        return value or None
