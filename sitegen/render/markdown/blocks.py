"""markdown-it's block and inline rules, short-cut for the markdown most messages are made of.

Assistant messages are mostly paragraphs, headings, fenced code and tight lists, and markdown-it spends
half its time finding those blocks, line by line, through every block rule. For text made only of
them (written the plain way: no indentation but a nested list's, one space after a marker), the
tokens are built here in one pass, exactly as markdown-it builds them; anything else (tables, quotes,
loose lists, setext headings, a line that could be read two ways) goes to markdown-it's own rules,
whole. Inline text without any inline syntax is one text token, as markdown-it's inline rules make it.
tests/test_markdown_blocks.py compares the result with markdown-it's for every case and many mixes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from markdown_it.token import Token

from sitegen.render.base._internals import markdown_it_block_rule, markdown_trim_chars
from sitegen.render.base.text import INTRAWORD_UNDERSCORES, markdown_escape

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from sitegen.render.base._internals import StateCore

__all__ = [
    "inline_html",
    "inline_pieces",
    "install",
    "quick_block_tokens",
    "quick_html",
    "quick_inline_tokens",
]

# A character any of markdown-it's inline rules starts at (text, newline, escape, backticks,
# strikethrough, emphasis, link, image, autolink, html_inline, entity): inline content without one
# is a single text token.
_INLINE_SYNTAX = re.compile(r"[\n\\`~*_\[\]!<&]")
# Text this parser leaves to markdown-it at once: tabs and other control whitespace (indentation
# rules), table pipes, and what markdown-it's normaliser would change.
_NOT_HANDLED = re.compile(r"[\t\r\x0b\x0c\x00|]")
_HEADING = re.compile(r"(#{1,6}) (.*)")
_FENCE_OPEN = re.compile(r"```([A-Za-z0-9_+.#-]*)")
_FENCE_LIKE = re.compile(r" {0,3}(?:`{3,}|~{3,})")
_BULLET = re.compile(r"([-*+]) (?=\S)")
_ORDERED = re.compile(r"(\d{1,9})([.)]) (?=\S)")
# The start of a line that opens a block (or, "[", may: a reference definition): a heading, a fence,
# a quote, a list item; and lines that are a thematic break or a setext heading's underline.
_OPENS_BLOCK = re.compile(r" {0,3}(?:#{1,6}(?: |$)|`{3}|~{3}|>|[-*+](?: |$)|\d{1,9}[.)](?: |$)|\[)")
_LIST_MARKER = re.compile(r" *(?:[-*+]|\d{1,9}[.)])(?: |$)")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?: *\1){2,} *")
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+) *")
# Lists nested deeper than this are left to markdown-it (and its nesting limit).
_MAX_LIST_DEPTH = 6
# What markdown-it strips from an inline token's content.
_TRIM_CHARS = markdown_trim_chars()


def install(md: MarkdownIt) -> None:
    """Put the short cuts in place of markdown-it's core "block" and "inline" rules."""
    md.core.ruler.at("block", _block_rule)
    md.core.ruler.at("inline", _inline_rule)


def _block_rule(state: StateCore) -> None:
    tokens = None if state.inlineMode else quick_block_tokens(state.src)
    if tokens is None:
        markdown_it_block_rule(state)
    else:
        state.tokens.extend(tokens)


def _inline_rule(state: StateCore) -> None:
    md = state.md
    for token in state.tokens:
        if token.type == "inline":
            if token.children is None:
                token.children = []
            content = token.content
            if content and not _INLINE_SYNTAX.search(content):
                token.children.append(Token("text", "", 0, content=content))
            elif (quick := quick_inline_tokens(content)) is not None:
                token.children.extend(quick)
            else:
                md.inline.parse(content, md, state.env, token.children)


# Inline code in single backticks, or strong emphasis in two asterisks around plain words, opened at the
# start or after a space and closed before the end, a space or closing punctuation: where markdown-it's
# delimiter rules can read them in one way only. Both branches start with their character (the "**"
# looked behind once matched), so the regex engine jumps from one "`" or "*" to the next.
_CODE_OR_STRONG = re.compile(
    r"`([^`\n]+)`|\*\*(?:(?<=^\*\*)|(?<= \*\*))([A-Za-z0-9](?:[^*`\\\[\]!<&~\n]*[A-Za-z0-9])?)\*\*(?=$|[ .,:;?)])"
)


def inline_pieces(content: str) -> list[tuple[str, str]] | None:
    """Text whose only syntax is inline code, strong words (see _CODE_OR_STRONG) and line breaks
    between lines that neither end nor start with a space, as ("text" | "code" | "strong" |
    "softbreak", text) pieces; None for any other text."""
    pieces: list[tuple[str, str]] = []
    for number, line in enumerate(content.split("\n")):
        if number:
            if line[:1] in (" ", "\t") or (pieces and pieces[-1][1][-1:].isspace()):
                return None  # a hard break, or spaces markdown-it trims
            pieces.append(("softbreak", ""))
        at = 0
        for match in _CODE_OR_STRONG.finditer(line):
            if not _plain(line[at : match.start()], pieces):
                return None
            code, strong = match.groups()
            if code is not None:
                if "``" in line[match.start() - 1 : match.end() + 1]:
                    return None  # next to another backtick: a longer run
                if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
                    code = code[1:-1]
                pieces.append(("code", code))
            elif _plain(strong, []):
                pieces.append(("strong", strong))
            else:
                return None
            at = match.end()
        if not _plain(line[at:], pieces):
            return None
    return pieces


def _plain(text: str, pieces: list[tuple[str, str]]) -> bool:
    """Add text as a text piece, if it holds no inline syntax."""
    if not text:
        return True
    if _INLINE_SYNTAX.search(INTRAWORD_UNDERSCORES.sub("", text) if "_" in text else text):
        return False
    pieces.append(("text", text))
    return True


def quick_inline_tokens(content: str) -> list[Token] | None:
    """markdown-it's inline tokens for text inline_pieces reads; None for any other text."""
    pieces = inline_pieces(content)
    if pieces is None:
        return None
    tokens = []
    for kind, text in pieces:
        if kind == "text":
            tokens.append(Token("text", "", 0, content=text))
        elif kind == "code":
            tokens.append(Token("code_inline", "code", 0, markup="`", content=text))
        elif kind == "strong":
            tokens.append(Token("strong_open", "strong", 1, markup="**"))
            tokens.append(Token("text", "", 0, content=text))
            tokens.append(Token("strong_close", "strong", -1, markup="**"))
        else:
            tokens.append(Token("softbreak", "br", 0))
    return tokens


def inline_html(content: str) -> str | None:
    """markdown-it's HTML for text inline_pieces reads; None for any other text."""
    if not _INLINE_SYNTAX.search(content):
        return markdown_escape(content)
    pieces = inline_pieces(content)
    if pieces is None:
        return None
    html = []
    for kind, text in pieces:
        if kind == "text":
            html.append(markdown_escape(text))
        elif kind == "code":
            html.append(f"<code>{markdown_escape(text)}</code>")
        elif kind == "strong":
            html.append(f"<strong>{markdown_escape(text)}</strong>")
        else:
            html.append("\n")
    return "".join(html)


class _Unhandled(Exception):
    """The text has something this parser leaves to markdown-it."""


class _Tokens:
    """What the block parser finds, as markdown-it's block tokens (StateBlock.push's nesting levels)."""

    def __init__(self) -> None:
        self.tokens: list[Token] = []
        self.level = 0

    def _push(self, kind: str, tag: str, nesting: int, **fields: object) -> None:
        if nesting < 0:
            self.level -= 1
        self.tokens.append(Token(kind, tag, nesting, level=self.level, block=True, **fields))  # type: ignore[arg-type]
        if nesting > 0:
            self.level += 1

    def paragraph(self, content: str, hidden: bool = False) -> None:
        self._push("paragraph_open", "p", 1, hidden=hidden)
        self._push("inline", "", 0, content=content.strip(_TRIM_CHARS), children=[])
        self._push("paragraph_close", "p", -1, hidden=hidden)

    def heading(self, markup: str, content: str) -> None:
        tag = f"h{len(markup)}"
        self._push("heading_open", tag, 1, markup=markup)
        self._push("inline", "", 0, content=content.strip(_TRIM_CHARS), children=[])
        self._push("heading_close", tag, -1, markup=markup)

    def fence(self, info: str, content: str) -> None:
        self._push("fence", "code", 0, info=info, content=content, markup="```")

    def list_open(self, delimiter: str, start: int | None) -> None:
        if start is None:
            self._push("bullet_list_open", "ul", 1, markup=delimiter)
        else:
            self._push("ordered_list_open", "ol", 1, markup=delimiter, attrs={"start": start} if start != 1 else {})

    def list_close(self, delimiter: str, start: int | None) -> None:
        kind, tag = ("bullet_list_close", "ul") if start is None else ("ordered_list_close", "ol")
        self._push(kind, tag, -1, markup=delimiter)

    def item_open(self, delimiter: str, number: str) -> None:
        self._push("list_item_open", "li", 1, markup=delimiter, info=number)

    def item_close(self, delimiter: str) -> None:
        self._push("list_item_close", "li", -1, markup=delimiter)


class _Html:
    """What the block parser finds, as the HTML markdown-it's renderer writes for those tokens (its
    line ends: after every block but an item's opening tag, and before a list that follows an item's
    text). Inline text inline_html cannot read is left to markdown-it (_Unhandled)."""

    def __init__(self, highlight: Callable[[str, str], str]) -> None:
        self.highlight = highlight
        self.html: list[str] = []
        self.after_item_text = False

    def _inline(self, content: str) -> str:
        html = inline_html(content.strip(_TRIM_CHARS))
        if html is None:
            raise _Unhandled
        return html

    def paragraph(self, content: str, hidden: bool = False) -> None:
        if hidden:
            self.html.append(self._inline(content))
            self.after_item_text = True
            return
        self.html.append(f"<p>{self._inline(content)}</p>\n")
        self.after_item_text = False

    def heading(self, markup: str, content: str) -> None:
        self.html.append(f"<h{len(markup)}>{self._inline(content)}</h{len(markup)}>\n")
        self.after_item_text = False

    def fence(self, info: str, content: str) -> None:
        code = self.highlight(content, info) or markdown_escape(content)
        if code.startswith("<pre"):
            self.html.append(f"{code}\n")
        elif info:
            self.html.append(f'<pre><code class="language-{markdown_escape(info)}">{code}</code></pre>\n')
        else:
            self.html.append(f"<pre><code>{code}</code></pre>\n")
        self.after_item_text = False

    def list_open(self, delimiter: str, start: int | None) -> None:
        before = "\n" if self.after_item_text else ""
        tag = "<ul>" if start is None else "<ol>" if start == 1 else f'<ol start="{start}">'
        self.html.append(f"{before}{tag}\n")
        self.after_item_text = False

    def list_close(self, delimiter: str, start: int | None) -> None:
        self.html.append("</ul>\n" if start is None else "</ol>\n")
        self.after_item_text = False

    def item_open(self, delimiter: str, number: str) -> None:
        self.html.append("<li>")
        self.after_item_text = False

    def item_close(self, delimiter: str) -> None:
        self.html.append("</li>\n")
        self.after_item_text = False


_Out = _Tokens | _Html


def quick_block_tokens(src: str) -> list[Token] | None:
    """markdown-it's block tokens for src (inline content not yet parsed), or None where src holds
    something only markdown-it's own rules should read."""
    out = _Tokens()
    return out.tokens if _parse(src, out) else None


def quick_html(src: str, highlight: Callable[[str, str], str]) -> str | None:
    """The HTML markdown-it renders for src, where this parser and inline_html read all of it; else
    None. highlight(code, language) is markdown-it's highlight option."""
    out = _Html(highlight)
    return "".join(out.html) if _parse(src, out) else None


def _parse(src: str, out: _Out) -> bool:
    """Read src into out; False where src holds something only markdown-it's own rules should read."""
    if _NOT_HANDLED.search(src):
        return False
    lines = src.split("\n")
    try:
        at = 0
        while at < len(lines):
            line = lines[at]
            if not line.strip(" "):
                at += 1
            elif line[0] == " ":
                return False  # indented: code, or a continuation this parser does not follow
            elif (heading := _HEADING.fullmatch(line)) is not None:
                _heading(out, heading)
                at += 1
            elif (fence := _FENCE_OPEN.fullmatch(line)) is not None:
                at = _fence(out, lines, at, fence.group(1))
            elif _BULLET.match(line) or _ORDERED.match(line):
                at = _list(out, lines, at, 0)
            elif _opens_block(line):
                return False
            else:
                at = _paragraph(out, lines, at)
    except _Unhandled:
        return False
    return True


def _heading(out: _Out, match: re.Match[str]) -> None:
    content = match.group(2).strip(" ")
    if not content or content.endswith("#"):
        raise _Unhandled  # a closing sequence, or none at all
    out.heading(match.group(1), content)


def _fence(out: _Out, lines: list[str], at: int, info: str) -> int:
    """A fence at the first column, closed by a bare ``` line; returns the line after it."""
    for end in range(at + 1, len(lines)):
        if _FENCE_LIKE.match(lines[end]):
            if lines[end] != "```":
                raise _Unhandled  # a longer fence, a tilde fence, an indented close: not ours
            content = "".join(f"{line}\n" for line in lines[at + 1 : end])
            out.fence(info, content)
            return end + 1
    raise _Unhandled  # closed by the end of the text


def _paragraph(out: _Out, lines: list[str], at: int) -> int:
    """Lines up to a blank one, or to a heading, fence or list that may interrupt a paragraph."""
    end = at + 1
    while end < len(lines):
        line = lines[end]
        stripped = line.lstrip(" ")
        if not stripped:
            break
        if len(line) - len(stripped) < 4 and _opens_block(stripped):
            if line[0] == " ":
                raise _Unhandled
            if _HEADING.fullmatch(line) or _FENCE_OPEN.fullmatch(line) or _BULLET.match(line):
                break
            if (ordered := _ORDERED.match(line)) is not None and int(ordered.group(1)) == 1:
                break
            raise _Unhandled  # a setext underline, a break, a quote, a list that cannot interrupt
        end += 1
    out.paragraph("\n".join(lines[at:end]))
    return end


def _list(out: _Out, lines: list[str], at: int, indent: int, depth: int = 1) -> int:
    """A tight list whose markers stand `indent` spaces in, items of one line each, maybe with lists
    nested under them; returns the first line after it."""
    if depth > _MAX_LIST_DEPTH:
        raise _Unhandled
    first = lines[at][indent:]
    bullet = _BULLET.match(first)
    ordered = None if bullet is not None else _ORDERED.match(first)
    if ordered is not None:
        delimiter, start = ordered.group(2), int(ordered.group(1))
    else:
        assert bullet is not None
        delimiter, start = bullet.group(1), None
    out.list_open(delimiter, start)
    while True:
        item = lines[at][indent:]
        marker = _ORDERED.match(item) if ordered is not None else _BULLET.match(item)
        if marker is None or marker.group(marker.lastindex or 0) != delimiter:
            raise _Unhandled  # another kind of list
        if _THEMATIC_BREAK.fullmatch(item):
            raise _Unhandled  # "* **" is a break, not an item
        content = item[marker.end() :]
        if _opens_block(content):
            raise _Unhandled  # a heading, quote, list or break inside the item
        out.item_open(delimiter, marker.group(1) if ordered is not None else "")
        out.paragraph(content, hidden=True)
        at += 1
        column = indent + marker.end()  # where the item's content starts
        at = _nested(out, lines, at, column, depth)
        out.item_close(delimiter)
        if at >= len(lines):
            break
        line = lines[at]
        stripped = line.lstrip(" ")
        spaces = len(line) - len(stripped)
        if not stripped:
            # Blank lines end the list when what follows is no part of it (else the item goes on,
            # or the list is loose).
            after = next((other for other in lines[at:] if other.strip(" ")), "")
            after_depth = len(after) - len(after.lstrip(" "))
            if after and (after_depth >= column or (after_depth >= indent and _LIST_MARKER.match(after))):
                raise _Unhandled
            break
        if spaces == indent and (_BULLET.match(stripped) or _ORDERED.match(stripped)):
            continue  # the next item (another kind of marker is refused above)
        if spaces < indent and _opens_block(stripped):
            break  # the end of a nested list: the parent list reads the line
        if spaces == 0 and (_HEADING.fullmatch(line) or _FENCE_OPEN.fullmatch(line)):
            break
        raise _Unhandled  # a lazy continuation line, or something indented unlike this parser's lists
    out.list_close(delimiter, start)
    return at


def _nested(out: _Out, lines: list[str], at: int, column: int, depth: int) -> int:
    """A list nested under an item whose content starts at `column`: its marker at most three spaces
    further in (further is the item's own indented code). An ordered one must start at 1 (else it
    cannot interrupt the item's paragraph, and continues it)."""
    if at >= len(lines):
        return at
    line = lines[at]
    stripped = line.lstrip(" ")
    spaces = len(line) - len(stripped)
    if not stripped or spaces < column:
        return at
    if spaces > column + 3:
        raise _Unhandled
    ordered = _ORDERED.match(stripped)
    if ordered is not None and int(ordered.group(1)) != 1:
        raise _Unhandled
    if ordered is None and not _BULLET.match(stripped):
        raise _Unhandled  # a continuation of the item's paragraph
    return _list(out, lines, at, spaces, depth + 1)


def _opens_block(line: str) -> bool:
    return bool(_OPENS_BLOCK.match(line) or _THEMATIC_BREAK.fullmatch(line) or _UNDERLINE.fullmatch(line))
