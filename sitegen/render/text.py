"""Long text made readable: a preview of the first lines with the rest folded, and a size label."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

__all__ = ["FOLD_AFTER_LINES", "PREVIEW_LINES", "Folded", "escape_text", "fold_text", "human_size"]

# Output longer than FOLD_AFTER_LINES shows PREVIEW_LINES and folds the rest behind a control.
FOLD_AFTER_LINES = 40
PREVIEW_LINES = 24


def escape_text(text: str) -> Markup:
    """Escape for element content only (never attributes): quotes stay as they are, which keeps
    code-heavy pages a fifth smaller than full escaping."""
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


@dataclass(slots=True)
class Folded:
    head: Markup
    rest: Markup | None
    lines: int
    rest_lines: int


def fold_text(
    text: str, to_html: Callable[[str], Markup] = escape_text, rest_to_html: Callable[[str], Markup] | None = None
) -> Folded:
    """Split text into a preview and a folded rest, each turned into HTML separately (the rest by
    rest_to_html when given: highlighting only what shows before expanding keeps big pages fast)."""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines <= FOLD_AFTER_LINES:
        return Folded(head=to_html(text), rest=None, lines=lines, rest_lines=0)
    cut = -1
    for _ in range(PREVIEW_LINES):
        cut = text.index("\n", cut + 1)
    head, rest = text[: cut + 1], text[cut + 1 :]
    rest_html = (rest_to_html or to_html)(rest)
    return Folded(head=to_html(head), rest=rest_html, lines=lines, rest_lines=lines - PREVIEW_LINES)


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
