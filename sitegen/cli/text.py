"""What the CLI prints of a session: its control characters shown, not obeyed; JSON a terminal can show."""

from __future__ import annotations

from typing import Any

from sitegen.visible import BIDI_MARKS

__all__ = ["json_line", "json_text", "printable", "visible"]

# Control characters from a session would drive the terminal (colours are the least of it: OSC
# sequences set titles, write the clipboard, make links): printed as their visible symbols instead.
_CONTROLS: dict[int, int | str] = {code: 0x2400 + code for code in range(32) if chr(code) not in "\t\n"}
_CONTROLS.update({0x7F: 0x2421, **{code: 0xFFFD for code in range(0x80, 0xA0)}})
# Bidirectional overrides would reorder the rest of the line (a title, a path): shown by name (⟨RLO⟩).
_CONTROLS.update(BIDI_MARKS)


# JSON escapes only C0 controls; DEL and C1 (U+009B is a one-character CSI) get the same escape, which
# keeps the value and, as raw controls can only be inside strings, the JSON valid.
_JSON_CONTROLS = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def visible(text: str) -> str:
    return text.translate(_CONTROLS)


def printable(value: Any) -> Any:
    """JSON-safe text: file names that are not UTF-8 carry surrogates, which JSON cannot hold."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {key: printable(item) for key, item in value.items()}
    return value


def json_text(value: Any) -> str:
    """Indented JSON; the standard library takes over for nesting deeper than orjson allows, with what
    is nested past the stack's reach shown as "…"."""
    import json

    import orjson

    from sitegen.session.entries import clip_nesting

    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        try:
            text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
        except RecursionError:
            text = json.dumps(clip_nesting(value), indent=2, ensure_ascii=False, default=str)
    return text.translate(_JSON_CONTROLS)


def json_line(value: dict[str, Any]) -> str:
    """One JSON object on one line (JSON Lines), with the same care as json_text."""
    import orjson

    return orjson.dumps(printable(value)).decode().translate(_JSON_CONTROLS)
