"""Text from a session made safe to show: control characters and bidirectional overrides as marks."""

from __future__ import annotations

import re

from markupsafe import Markup

__all__ = ["BIDI_MARKS", "hidden_chars", "visible", "visible_utf8", "visible_value"]

# Embeddings, overrides and isolates reorder what follows them on screen ("Trojan source"): each is
# shown by its name instead, so a title or a path reads as it is stored.
_BIDI = {
    0x202A: "LRE",
    0x202B: "RLE",
    0x202C: "PDF",
    0x202D: "LRO",
    0x202E: "RLO",
    0x2066: "LRI",
    0x2067: "RLI",
    0x2068: "FSI",
    0x2069: "PDI",
}
# C0 (but tab, newline and carriage return, which HTML reads as spaces), DEL and C1: U+FFFD, as a
# browser shows a NUL; a NUL in a page's source is a parse error and in a path a ValueError.
_CONTROLS = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, *range(0x80, 0xA0)]
_TABLE: dict[int, str] = {code: "\ufffd" for code in _CONTROLS}
BIDI_MARKS = {code: f"\u27e8{name}\u27e9" for code, name in _BIDI.items()}
_TABLE.update(BIDI_MARKS)
# C0 controls (but tab, newline, carriage return) and DEL as UTF-8 bytes (no other character's encoding
# holds these bytes).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
# Every other ASCII byte (tab, newline, carriage return and the printable ones).
_ASCII_SHOWN = bytes(byte for byte in range(0x80) if byte not in _CONTROL_BYTES)
# Past this many characters hidden_chars looks at a text's bytes (encoding it costs less than it saves).
_LONG_TEXT = 65536
_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hidden_chars(text: str) -> bool:
    """Whether `text` holds a character visible() would replace."""
    if text.isascii():
        # In ASCII only C0 controls and DEL can be hidden: bytes.translate finds them ten times
        # faster than the regex (str.isascii is a flag, encoding ASCII a copy).
        data = text.encode("ascii")
        return len(data.translate(None, _CONTROL_BYTES)) != len(data)
    if len(text) > _LONG_TEXT and _mostly_ascii(text[:4096]):
        # A long text of mostly ASCII (a page's tree of rows, megabytes): the regex scans only what is
        # left of its UTF-8 without the shown ASCII bytes, whole characters as in visible_utf8, 3x as
        # fast. Text mostly in other scripts (an xcsh session in Chinese) is scanned faster as it is.
        rest = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_SHOWN)
        return _HIDDEN.search(rest.decode("utf-8", "surrogatepass")) is not None
    return _HIDDEN.search(text) is not None


def _mostly_ascii(sample: str) -> bool:
    """Whether under an eighth of the sample's characters are not ASCII (each takes 2-4 UTF-8 bytes)."""
    return len(sample.encode("utf-8", "surrogatepass")) - len(sample) < len(sample) // 8


def visible(text: str) -> str:
    """`text` with each control character as U+FFFD and each bidirectional control as its name (⟨RLO⟩)."""
    if not hidden_chars(text):
        return text
    # A substitution per character found: str.translate looks up every character of a long page.
    return _HIDDEN.sub(_mark, text)


def _mark(match: re.Match[str]) -> str:
    return _TABLE[ord(match.group())]


def visible_value(value: object) -> object:
    """jinja's finalize: every value a template shows (titles, paths, names, in text and attributes)
    made visible(); markup stays markup, other values stay as they are."""
    if isinstance(value, str) and hidden_chars(value):
        return Markup(visible(value)) if isinstance(value, Markup) else visible(value)
    return value


def visible_utf8(html: str) -> bytes:
    """A page's text as UTF-8, made visible() (a page is hundreds of kilobytes: done on its bytes)."""
    data = html.encode("utf-8", "surrogatepass")
    # What visible() replaces is a C0 control or DEL (one byte each) or a character of several bytes.
    # Deleting every other ASCII byte leaves those characters whole (no byte of a longer character is
    # ASCII), a few hundredths of a page, which the regex then scans instead of the page.
    rest = data.translate(None, _ASCII_SHOWN)
    if not rest:
        return data
    for char in sorted(set(_HIDDEN.findall(rest.decode("utf-8", "surrogatepass")))):
        # A character's encoding is found in UTF-8 only where that character is (no encoding holds
        # another's), and what replaces it holds none.
        data = data.replace(char.encode("utf-8"), _TABLE[ord(char)].encode("utf-8"))
    return data
