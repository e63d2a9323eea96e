"""How many of a page's entries its first screen can show: their code is coloured on the server, the
rest by the page's highlighter as the reader comes near them (static/highlight.js)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sitegen.render.base.text import shown_lines
from sitegen.render.tools import result_text
from sitegen.transcript.model import Node, Part

__all__ = ["FIRST_SCREEN_LINES", "MAX_FIRST_SCREEN_ENTRIES", "first_screen_nodes"]

# Lines of the first shown entries whose code the server colours. A 2160-pixel window shows about 110
# lines of code (prose lines are taller); counted this way (low), the demo's and the real fixtures'
# pages needed up to 90 on a 4K screen, a tall window and a phone (at 70, code was waiting on 2 of
# the 24 screens looked at; tests/test_browser_highlight.py looks at such screens with scripts off).
# Past them the page's highlighter colours an entry as it comes within a screen of view.
FIRST_SCREEN_LINES = 150
# ... and never more shown entries than this (what the first screen was before it was measured in lines).
MAX_FIRST_SCREEN_ENTRIES = 64
# Kinds the page hides until the reader picks another view (static/views.css, the default filter).
_HIDDEN_KINDS = frozenset(("custom", "label"))
# Kinds whose parts are their body (sitegen.render.entries): every other kind shows a line or a few.
_PARTS_KINDS = frozenset(("user", "assistant", "custom_message"))
# The widest conversation column holds about this many characters of prose in a line.
_PROSE_LINE_CHARACTERS = 160


def first_screen_nodes(nodes: Sequence[Node], paired: Collection[str], on_path: Collection[str]) -> int:
    """How many of nodes (in display order) reach through the first screen: shown entries are
    counted until their lines reach FIRST_SCREEN_LINES or they number MAX_FIRST_SCREEN_ENTRIES.
    Entries the page hides at first take no room (a branch off the shown path, a display:false
    message, extension state) and lines are counted low (a paragraph by its length in the widest
    column, an output by the preview before its fold), so a screen is never thought fuller than it is."""
    lines = shown = 0
    for place, node in enumerate(nodes):
        if node.id in paired or node.id not in on_path or node.hidden or node.kind in _HIDDEN_KINDS:
            continue  # counted in its call's card, or hidden until the reader asks
        lines += _least_lines(node, on_path)
        shown += 1
        if lines >= FIRST_SCREEN_LINES or shown >= MAX_FIRST_SCREEN_ENTRIES:
            return place + 1
    return len(nodes)


def _least_lines(node: Node, on_path: Collection[str]) -> int:
    """The fewest lines an entry takes: its head, then what its body shows."""
    kind = node.kind
    if kind in _PARTS_KINDS:
        return 1 + sum(_part_lines(part, on_path) for part in node.parts)
    if kind == "tool_result":  # a result without its call: each part's output, folded
        return 1 + sum(shown_lines(part.text) for part in node.parts if part.kind != "image")
    return 1  # a marker, a summary, a command: its head at least


def _part_lines(part: Part, on_path: Collection[str]) -> int:
    kind = part.kind
    if kind == "text":
        return _markdown_lines(part.text)
    if kind == "tool_call" and part.call is not None:
        result = part.call.result
        if result is None or result.node_id not in on_path:
            return 1  # the card's head; a result off the shown path is hidden in it
        return 1 + shown_lines(result_text(result))
    return 1 if part.text.strip() else 0  # folded thinking, an image's caption, an unknown block


def _markdown_lines(text: str) -> int:
    """Lines of rendered markdown, counted low: each line of a fenced block, and each paragraph (lines
    joined by soft breaks) by its length in the widest column, at least one."""
    lines = 0
    fenced = False
    paragraph = 0  # characters of the paragraph being read
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            lines += 1
        elif fenced:
            lines += 1
        elif stripped:
            paragraph += len(stripped) + 1
            continue
        if paragraph:
            lines += max(1, paragraph // _PROSE_LINE_CHARACTERS)
            paragraph = 0
    if paragraph:
        lines += max(1, paragraph // _PROSE_LINE_CHARACTERS)
    return lines
