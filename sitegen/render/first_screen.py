"""How many of a page's entries its first screen can show: their code is coloured on the server, the
rest by the page's highlighter as the reader comes near them (static/highlight.js)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sitegen.render.text import FOLD_AFTER_CHARS, FOLD_AFTER_LINES, PREVIEW_CHARS, PREVIEW_LINES
from sitegen.transcript.model import Node, Part

__all__ = ["FIRST_SCREEN_LINES", "MAX_FIRST_SCREEN_NODES", "first_screen_nodes"]

# Lines of the first entries whose code the server colours. A 2160-pixel window shows about 110 lines
# of code (prose lines are taller); counted this way, the demo's and the real fixtures' pages needed
# 90 to 120 for their first screens (tests/test_browser_highlight.py looks at such screens with
# scripts off). Past them the page's highlighter colours an entry as it comes within a screen of view.
FIRST_SCREEN_LINES = 150
# ... and never more entries than this (what the first screen was before it was measured in lines).
MAX_FIRST_SCREEN_NODES = 64


def first_screen_nodes(nodes: Sequence[Node], paired: Collection[str], on_path: Collection[str]) -> int:
    """How many of nodes (in display order) the first screen holds: entries are counted until their
    lines reach FIRST_SCREEN_LINES. Lines are counted low (no wrapping, folded output by its
    preview), so a screen is never thought fuller than it is."""
    lines = 0
    for place, node in enumerate(nodes[:MAX_FIRST_SCREEN_NODES]):
        if node.id in paired or node.id not in on_path:
            continue  # shown inside its call's card (counted there), or on a branch the page hides
        lines += _least_lines(node)
        if lines >= FIRST_SCREEN_LINES:
            return place + 1
    return min(len(nodes), MAX_FIRST_SCREEN_NODES)


def _least_lines(node: Node) -> int:
    """The fewest lines an entry takes: its head, then each part's shown lines."""
    if node.kind == "tool_result":  # a result without its call: its output, folded
        return 1 + sum(_shown_lines(part.text) for part in node.parts)
    return 1 + sum(_part_lines(part) for part in node.parts)


def _part_lines(part: Part) -> int:
    kind = part.kind
    if kind == "text":
        return part.text.count("\n") + 1
    if kind == "tool_call" and part.call is not None:
        result = part.call.result
        shown = sum(_shown_lines(piece.text) for piece in result.parts) if result is not None else 0
        return 1 + shown
    return 1  # thinking (folded away), an image's caption, an unknown block


def _shown_lines(text: str) -> int:
    """The lines of an output shown before its fold (sitegen.render.text.fold_text)."""
    lines = text.count("\n", 0, PREVIEW_CHARS * 4) + 1
    if lines <= FOLD_AFTER_LINES and len(text) <= FOLD_AFTER_CHARS:
        return lines
    return min(PREVIEW_LINES, text.count("\n", 0, PREVIEW_CHARS) + 1)
