"""Markdown to safe HTML: raw HTML off, a link/image scheme allow-list, fenced code highlighted."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from sitegen.render.base.fragments import FragmentStore, fragment_key
from sitegen.render.base.text import INTRAWORD_UNDERSCORES, markdown_escape
from sitegen.render.highlight.pygments_html import Highlighter

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

__all__ = ["MarkdownRenderer"]

_LINK_SCHEMES = re.compile(r"^(?:https?:|mailto:|#)", re.IGNORECASE)
# Images may only be data: URIs of raster types: anything else would be a request off the page.
_IMAGE_DATA = re.compile(r"^data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$", re.IGNORECASE)
# Text that cannot contain markdown syntax but inline code: no other markup characters, no line that
# could open a block (list, quote, heading, underline, indented code), no hard line break. Such text
# (most messages) skips the parser; test_markdown checks the result equals markdown-it's. The test is
# in parts the regex engine scans fast (a character class alone; a pattern that starts with a
# newline, searched in the text after one) and the hard line break as substrings: as one alternation
# of them all (tests/test_markdown.py keeps it), it was tried at every position of every message.
_MARKUP_CHARACTER = re.compile(
    r"[\\*\[\]<>|~&!\r\t\x00\x0b\x0c\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_BLOCK_START = re.compile(r"\n(?: *(?:[-+*=]|\d{1,9}[.)])| {4}| {0,3}#)")
# Inline code in single backticks on one line. Where every backtick of a text is in such a pair (and
# none is next to another), they pair up left to right as markdown's code spans do.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_BLANK_LINES = re.compile(r"\n[ ]*(?:\n[ ]*)+")
# Code left to the page's highlighter (Highlighter.code), by its lexer's name.
_LATER_LANGUAGE = re.compile(r'<span class=hl-later data-lang="([^"]+)">')

# Blocks (quotes, lists) nested deeper than this are shown as preformatted text: markdown-it drops
# what lies past its limit (commonmark's is 20, which a nested list of ten levels reaches).
MAX_NESTING = 50

# Markdown source whose rendering one renderer keeps for its later pages, in characters.
CACHE_CHARS = 8_000_000

# Past this size markdown is shown as preformatted text: parsing is linear, but a 5 MB
# message is almost always a paste, not prose.
MARKDOWN_LIMIT = 300_000


class MarkdownRenderer:
    """One configured markdown-it instance; code blocks go through the shared Highlighter. With a
    fragment store, a text rendered in the page's previous build is not parsed again."""

    def __init__(self, highlighter: Highlighter, fragments: FragmentStore | None = None) -> None:
        self.highlighter = highlighter
        self.fragments = fragments
        self._parser: MarkdownIt | None = None
        # Rendered texts by key, for every page this renderer makes (a subagent's answer is also the
        # output its parent's task call shows), up to CACHE_CHARS of source text.
        self._cache: dict[str, str] = {}
        self._cached_chars = 0

    @property
    def _md(self) -> MarkdownIt:
        """The parser, made on first use: a rebuilt page whose markdown all comes from the fragment
        store never imports markdown-it (a sizeable part of an incremental build)."""
        if self._parser is None:
            self._parser = self._make_parser()
        return self._parser

    def _make_parser(self) -> MarkdownIt:
        from markdown_it import MarkdownIt

        from sitegen.render.markdown.blocks import install

        md = MarkdownIt(
            "commonmark", {"html": False, "linkify": False, "typographer": False, "maxNesting": MAX_NESTING}
        )
        md.enable(["table", "strikethrough"])
        install(md)  # the same tokens, sooner, for the markdown most messages are made of
        md.validateLink = self._validate_link  # type: ignore[method-assign]
        md.options["highlight"] = self._highlight
        md.add_render_rule("link_open", _render_link_open)
        md.add_render_rule("image", _render_image)
        md.add_render_rule("th_open", _render_cell_open)
        md.add_render_rule("td_open", _render_cell_open)
        return md

    @staticmethod
    def _validate_link(url: str) -> bool:
        url = url.strip()
        return bool(_LINK_SCHEMES.match(url) or _IMAGE_DATA.match(url))

    def _highlight(self, code: str, language: str, _attrs: str) -> str:
        return str(self.highlighter.code(code, language.split()[0] if language else None))

    def _highlight_fence(self, code: str, language: str) -> str:
        return self._highlight(code, language, "")

    def render(self, text: str) -> Markup:
        if len(text) > MARKDOWN_LIMIT:
            return Markup('<pre class="plain">') + escape(text) + Markup("</pre>")
        if _plain_but_code(text):
            return Markup(plain_paragraphs(text))
        # "#" cannot start a lexer alias: markdown fragments never meet highlighted ones.
        # Code left for the page's highlighter makes other HTML: kept apart.
        key = fragment_key("#markdown-later" if self.highlighter.later else "#markdown", text)
        html = self._cache.get(key)
        if html is None and self.fragments is not None:
            html = self.fragments.get(key)
        if html is None:
            html = self._render(text)
            if self._cached_chars + len(text) <= CACHE_CHARS:
                self._cache[key] = html
                self._cached_chars += len(text)
        if self.fragments is not None:
            self.fragments.keep(key, html)
        if self.highlighter.later and "hl-later" in html:
            # Rendered for another page, or by the build before: the lexers it leaves to this page's
            # highlighter must still be shipped with this page.
            self.highlighter.later_languages.update(_LATER_LANGUAGE.findall(html))
        return Markup(html)

    def _render(self, text: str) -> str:
        from sitegen.render.markdown.blocks import quick_html

        md = self._md
        # Most messages' blocks and inline text are read in one pass, to the HTML markdown-it writes.
        quick = quick_html(text, self._highlight_fence)
        if quick is not None:
            return quick
        env: dict[str, object] = {}
        tokens = md.parse(text, env)
        # A block opened at the last level has its content dropped by the parser, unsaid: the text
        # is shown as it is instead (quotes or lists that deep are no prose anyway).
        if any(token.nesting == 1 and token.level >= MAX_NESTING - 1 for token in tokens):
            return f'<pre class="plain">{escape(text)}</pre>'
        return str(md.renderer.render(tokens, md.options, env))


def _plain_but_code(text: str) -> bool:
    """Whether text has no markdown syntax but inline code in single backticks (and underscores
    inside words, which are no syntax)."""
    if "_" in text:
        text = INTRAWORD_UNDERSCORES.sub("x", text)
    if "`" in text:
        if "``" in text:  # a longer backtick string: spans pair otherwise
            return False
        text = _CODE_SPAN.sub("x", text)
    return "`" not in text and "_" not in text and not _maybe_markdown(text)


def _maybe_markdown(text: str) -> bool:
    """Whether a markup character, a line that could open a block, or a hard line break is in text."""
    return bool(
        _MARKUP_CHARACTER.search(text) or _BLOCK_START.search("\n" + text) or "  \n" in text or text.endswith("  ")
    )


def plain_paragraphs(text: str) -> str:
    """What markdown-it renders for text whose only syntax is inline code (_plain_but_code):
    paragraphs split at blank lines."""
    html = []
    for block in _BLANK_LINES.split(text.strip(" \n")):
        lines = [line.strip(" ") for line in block.split("\n")]
        html.append(f"<p>{_inline_code(chr(10).join(lines))}</p>\n")
    return "".join(html) if text.strip(" \n") else ""


def _inline_code(text: str) -> str:
    """Escaped text with its code spans as markdown-it renders them: one space trimmed from each end
    of code that starts and ends with one (and is not all spaces)."""
    if "`" not in text:
        return markdown_escape(text)
    out = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        code = match.group(1)
        if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
            code = code[1:-1]
        out.append(f"{markdown_escape(text[position : match.start()])}<code>{markdown_escape(code)}</code>")
        position = match.end()
    out.append(markdown_escape(text[position:]))
    return "".join(out)


def _render_link_open(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if _IMAGE_DATA.match(href):
        # A data: link would navigate to inline content: keep it as text.
        token.attrSet("href", "#")
    elif not href.startswith("#"):
        token.attrSet("rel", "noopener noreferrer nofollow")
        token.attrSet("target", "_blank")
    return str(self.renderToken(tokens, idx, options, env))


def _render_cell_open(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """Table alignment as a class: the pages' CSP forbids inline style attributes."""
    token = tokens[idx]
    style = str(token.attrGet("style") or "")
    if style:
        token.attrs.pop("style", None)
        align = style.removeprefix("text-align:").strip()
        if align in ("left", "center", "right"):
            token.attrSet("class", f"align-{align}")
    return str(self.renderToken(tokens, idx, options, env))


def _render_image(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    if not _IMAGE_DATA.match(src):
        # An http(s) image would be fetched on open; show it as a plain link instead.
        return f'<span class="md-image-link">[image: {escape(alt)}] {escape(src)}</span>'
    return f'<img src="{escape(src)}" alt="{escape(alt)}" loading="lazy">'
