"""Long text made readable: a preview of the first lines with the rest folded, and a size label."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = [
    "FOLD_AFTER_LINES",
    "INTRAWORD_UNDERSCORES",
    "LONG_WORD",
    "PREVIEW_LINES",
    "Folded",
    "break_long_words",
    "escape_text",
    "fold_text",
    "html_escape",
    "human_size",
    "markdown_escape",
    "shown_lines",
]

# Output longer than FOLD_AFTER_LINES shows PREVIEW_LINES and folds the rest behind a control;
# so does output of few but huge lines (minified JSON, a base64 dump), by characters.
FOLD_AFTER_LINES = 40
PREVIEW_LINES = 24
FOLD_AFTER_CHARS = 8000
PREVIEW_CHARS = 3000


# A run of text this long without a space is wrapped in <span class="long-word">, which breaks it
# between any two characters (word-break: break-all): a browser finding where one unbroken
# 200,000-character token may break (overflow-wrap: anywhere) took seconds. One element per run,
# and nothing is added to what is copied.
LONG_WORD = 1000
# A character that ends a run: a space or a tag delimiter; and a tag delimiter.
_BREAK = re.compile(r"[\s<>]")


def _run_start(html: str, at: int) -> int:
    """Where the run of characters without a break that holds position `at` starts."""
    step = LONG_WORD // 2
    while at > 0:
        low = max(0, at - step)
        found = [match.end() for match in _BREAK.finditer(html, low, at)]
        if found:
            return found[-1]
        at = low
    return 0


def break_long_words(html: str) -> str:
    """The markup of entries with each text run longer than LONG_WORD in a span that may break
    anywhere; runs inside a tag (an attribute, an image's data URL) are left alone.

    It looks at windows of LONG_WORD // 2 characters (a run of LONG_WORD covers one whole): in text,
    each search stops at the window's first space, a small fraction of a scan of every run."""
    half = LONG_WORD // 2
    search = _BREAK.search
    pieces: list[str] = []
    done = 0
    window = 0
    # Whether the text at `seen` is inside a tag, followed from the start: a run's own check would
    # look back through the whole of a long <pre> for the last "<".
    seen, in_tag = 0, False
    while window + half <= len(html):
        if search(html, window, window + half) is not None:
            window += half
            continue
        start = _run_start(html, window)
        found = search(html, window + half)
        end = found.start() if found is not None else len(html)
        window = end
        # The last tag edge before the run says whether it is inside a tag (none: as before). Looked
        # for backwards from the run: a walk through every edge since the last run was most of the cost.
        opened, closed = html.rfind("<", seen, start), html.rfind(">", seen, start)
        if opened != closed:  # both -1 when there is no edge
            in_tag = opened > closed
        seen = start
        if end - start < LONG_WORD or in_tag:
            continue  # too short, or inside a tag
        pieces += (html[done:start], '<span class="long-word">', html[start:end], "</span>")
        done = end
    if not pieces:
        return html
    pieces.append(html[done:])
    return "".join(pieces)


def escape_text(text: str) -> Markup:
    """Escape for element content only (never attributes): quotes stay as they are, which keeps
    code-heavy pages a fifth smaller than full escaping."""
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


# Underscores between ASCII letters or digits (snake_case): in markdown they can neither open nor
# close emphasis. Written to start with "_", the regex engine jumps from one underscore to the next;
# as `(?<=[A-Za-z0-9])_+(?=…)` (the same matches) it tried the lookbehind at every position of a message.
INTRAWORD_UNDERSCORES = re.compile(r"_(?<=[A-Za-z0-9]_)_*(?=[A-Za-z0-9])")


def markdown_escape(raw: str) -> str:
    """markdown-it's escapeHtml (&, <, > and ", not '), without importing markdown-it for it."""
    return raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def html_escape(value: object) -> str:
    """markupsafe.escape(value), as a plain string: for a str (most values: ids, kinds, names) by five
    replacements, a quarter of escape's cost, which builds a Markup through two Python calls; a page
    escapes a dozen values per entry."""
    if type(value) is str:
        if value.isalnum():  # most values (entry ids): nothing to replace, found in a tenth of the time
            return value
        return (
            value.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace("'", "&#39;")
            .replace('"', "&#34;")
        )
    return str(escape(value))


@dataclass(slots=True)
class Folded:
    head: Markup
    rest: Markup | None
    lines: int
    rest_lines: int
    rest_chars: int = 0  # set when the preview ends inside a line

    @property
    def summary(self) -> str:
        """What the control that opens the rest says."""
        lines = f"{self.lines:,} line{'' if self.lines == 1 else 's'}"
        if self.rest_chars:
            return f"Show {self.rest_chars:,} more characters ({lines} in all)"
        return f"Show {self.rest_lines:,} more line{'' if self.rest_lines == 1 else 's'} ({lines} in all)"


def fold_text(
    text: str, to_html: Callable[[str], Markup] = escape_text, rest_to_html: Callable[[str], Markup] | None = None
) -> Folded:
    """Split text into a preview and a folded rest, each turned into HTML separately (the rest by
    rest_to_html when given: highlighting only what shows before expanding keeps big pages fast)."""
    lines = _line_count(text)
    if lines <= FOLD_AFTER_LINES and len(text) <= FOLD_AFTER_CHARS:
        return Folded(head=to_html(text), rest=None, lines=lines, rest_lines=0)
    cut = _preview_end(text, lines)
    head, rest = text[:cut], text[cut:]
    head_lines = head.count("\n")
    rest_html = (rest_to_html or to_html)(rest)
    mid_line = not head.endswith("\n")
    return Folded(
        head=to_html(head),
        rest=rest_html,
        lines=lines,
        rest_lines=lines - head_lines,
        rest_chars=len(rest) if mid_line else 0,
    )


def shown_lines(text: str) -> int:
    """How many lines of text fold_text shows before its fold, without making its HTML: an
    estimate of an output's height."""
    lines = _line_count(text)
    if lines <= FOLD_AFTER_LINES and len(text) <= FOLD_AFTER_CHARS:
        return lines
    return _line_count(text[: _preview_end(text, lines)])


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _preview_end(text: str, lines: int) -> int:
    """Where the preview of a text too long to show whole ends: after PREVIEW_LINES lines, or sooner
    by characters (_char_cut)."""
    cut = len(text)
    if lines > FOLD_AFTER_LINES:
        cut = -1
        for _ in range(PREVIEW_LINES):
            cut = text.index("\n", cut + 1)
        cut += 1
    if cut > PREVIEW_CHARS:
        cut = _char_cut(text, PREVIEW_CHARS)
    return cut


def _char_cut(text: str, limit: int) -> int:
    """Where to end a preview of at most limit characters: after a line if one ends in its second
    half, else at the limit, moved back so an ANSI escape sequence is not split in two."""
    newline = text.rfind("\n", 0, limit)
    if newline >= limit // 2:
        return newline + 1
    escape = text.rfind("\x1b", limit - 24, limit)
    return escape if escape > 0 else limit


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
