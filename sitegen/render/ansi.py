"""ANSI escape sequences in terminal output turned into classed spans; everything else stripped."""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup

from sitegen.render.base.text import escape_text

__all__ = ["ansi_to_html", "has_ansi", "strip_ansi"]

# CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) and lone escapes.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_OTHER_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-ln-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def has_ansi(text: str) -> bool:
    return "\x1b" in text


def strip_ansi(text: str) -> str:
    return _ESCAPES.sub("", text)


def _classes(state: dict[str, str]) -> str:
    return " ".join(value for value in state.values() if value)


# What a parameter too long to be any code stands for (int() refuses 4,300 digits): nothing.
_NO_CODE = 999_999_999


def _code(digits: str) -> int:
    if not digits:
        return 0
    return int(digits) if len(digits) <= 9 else _NO_CODE


def _apply(codes: list[int], state: dict[str, str]) -> None:
    index = 0
    while index < len(codes):
        code = codes[index]
        if code == 0:
            state.clear()
        elif code == 1:
            state["bold"] = "ansi-bold"
        elif code == 2:
            state["dim"] = "ansi-dim"
        elif code == 3:
            state["italic"] = "ansi-italic"
        elif code == 4:
            state["underline"] = "ansi-underline"
        elif code in (22, 23, 24):
            state.pop({22: "bold", 23: "italic", 24: "underline"}[code], None)
            if code == 22:
                state.pop("dim", None)
        elif 30 <= code <= 37:
            state["fg"] = f"ansi-fg{code - 30}"
        elif 90 <= code <= 97:
            state["fg"] = f"ansi-fg{code - 90 + 8}"
        elif code == 39:
            state.pop("fg", None)
        elif 40 <= code <= 47:
            state["bg"] = f"ansi-bg{code - 40}"
        elif 100 <= code <= 107:
            state["bg"] = f"ansi-bg{code - 100 + 8}"
        elif code == 49:
            state.pop("bg", None)
        elif code in (38, 48) and index + 1 < len(codes):
            # 256-colour and true-colour forms: map the basic 16 and skip the rest's arguments.
            mode = codes[index + 1]
            if mode == 5 and index + 2 < len(codes):
                value = codes[index + 2]
                if value < 16:
                    state["fg" if code == 38 else "bg"] = f"ansi-{'fg' if code == 38 else 'bg'}{value}"
                index += 2
            elif mode == 2:
                index += 4
        index += 1


@lru_cache(maxsize=4096)
def _transition(state: tuple[tuple[str, str], ...], params: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """The style after an SGR sequence's parameters, and its classes ("" for none); a log repeats the
    same few sequences thousands of times."""
    codes = [_code(c) for c in params.split(";")] if params else [0]
    styles = dict(state)
    _apply(codes, styles)
    return tuple(styles.items()), _classes(styles)


def ansi_to_html(text: str) -> Markup:
    """Escaped text with SGR colours as <span class="ansi-…">; other control sequences removed."""
    if "\x1b" not in text:
        return escape_text(text)
    # Escaped in one pass before the split: an SGR sequence holds none of &, < and >, and their
    # escapes make none (the split alternates text and each SGR sequence's parameters).
    text = _OTHER_ESCAPES.sub("", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    pieces = _SGR.split(text)
    out = [pieces[0]]
    state: tuple[tuple[str, str], ...] = ()
    open_span = False
    for index in range(1, len(pieces), 2):
        state, classes = _transition(state, pieces[index])
        if open_span:
            out.append("</span>")
        open_span = bool(classes)
        if open_span:
            out.append(f'<span class="{classes}">')
        out.append(pieces[index + 1])
    if open_span:
        out.append("</span>")
    return Markup("".join(out))
