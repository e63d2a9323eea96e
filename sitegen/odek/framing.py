"""Parse odek's tool-result framing: the TOOL RESULT box, omitted-bytes markers and untrusted wrappers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Segment", "ToolFrame", "has_untrusted", "parse_tool_output"]

_HEADER = re.compile(
    r"┌─+ TOOL RESULT: (?P<name>\S+)(?: \[(?P<nonce>[^\]\s]+)\])? ─+(?: \((?P<label>[^)]*)\) ─+)?┐[ \t]*"
)
_FOOTER = re.compile(r"└─+ END TOOL RESULT: (?P<name>\S+)(?: \[(?P<nonce>[^\]\s]+)\])?[^\n]*┘[ \t]*")
# odek keeps the head and tail of long output around this line (joined by blank lines); a count of
# more digits than any size has is no such line (and int() refuses 4,300 of them).
_OMITTED = re.compile(
    r"(?:\n\n)?\.\.\. \[(?P<omitted>\d{1,18}) bytes omitted (?:—|--?) "
    r"output was (?P<total>\d{1,18}) bytes total\] \.\.\.(?:\n\n)?"
)
_OPEN = re.compile(r"<untrusted_content_(?P<nonce>[0-9A-Za-z]+)(?P<attrs>(?:\s[^<>]*)?)>")
_CLOSE = re.compile(r"</untrusted_content_(?P<nonce>[0-9A-Za-z]+)>")
_SOURCE = re.compile(r"""\bsource\s*=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)')""")


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of the body: trusted text, untrusted content (with its source), or an omission marker."""

    kind: str  # "text", "untrusted" or "omitted"
    text: str = ""
    source: str | None = None
    nonce: str | None = None
    # False when an untrusted block's closing tag is missing (cut off, or forged away).
    closed: bool = True
    omitted_bytes: int | None = None
    total_bytes: int | None = None

    @property
    def trusted(self) -> bool:
        return self.kind != "untrusted"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "trusted": self.trusted, "text": self.text}
        if self.kind == "untrusted":
            data.update(source=self.source, nonce=self.nonce, closed=self.closed)
        if self.kind == "omitted":
            data.update(omittedBytes=self.omitted_bytes, totalBytes=self.total_bytes)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Segment:
        return cls(
            kind=str(data.get("kind") or "text"),
            text=str(data.get("text") or ""),
            source=data.get("source"),
            nonce=data.get("nonce"),
            closed=data.get("closed", True) is not False,
            omitted_bytes=data.get("omittedBytes"),
            total_bytes=data.get("totalBytes"),
        )


@dataclass(frozen=True, slots=True)
class ToolFrame:
    """A tool result as odek framed it; framed is False when no well-formed box surrounds the body."""

    framed: bool
    tool_name: str | None = None
    nonce: str | None = None
    label: str | None = None
    segments: tuple[Segment, ...] = field(default_factory=tuple)

    @property
    def untrusted_sources(self) -> list[str]:
        """Sources of the untrusted blocks, in order, without repeats ("" when a block names none)."""
        seen: dict[str, None] = {}
        for segment in self.segments:
            if segment.kind == "untrusted":
                seen.setdefault(segment.source or "", None)
        return list(seen)

    @property
    def has_untrusted(self) -> bool:
        return any(segment.kind == "untrusted" for segment in self.segments)

    @property
    def omitted_bytes(self) -> int:
        return sum(s.omitted_bytes or 0 for s in self.segments if s.kind == "omitted")

    @property
    def total_bytes(self) -> int | None:
        totals = [s.total_bytes for s in self.segments if s.kind == "omitted" and s.total_bytes is not None]
        return max(totals) if totals else None

    @property
    def recognised(self) -> bool:
        """Whether anything odek-specific was found; plain output needs no structured rendering."""
        return self.framed or any(s.kind != "text" for s in self.segments)

    @property
    def body(self) -> str:
        """The body as plain text: wrappers dropped, omission markers kept as one line."""
        pieces: list[str] = []
        for segment in self.segments:
            if segment.kind == "omitted":
                pieces.append(
                    f"\n... [{segment.omitted_bytes} bytes omitted — output was {segment.total_bytes}"
                    " bytes total] ...\n"
                )
            else:
                pieces.append(segment.text)
        return "".join(pieces)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable form (camelCase keys, like the rest of ToolResult.details)."""
        return {
            "framed": self.framed,
            "toolName": self.tool_name,
            "nonce": self.nonce,
            "label": self.label,
            "segments": [segment.to_json() for segment in self.segments],
            "hasUntrusted": self.has_untrusted,
            "untrustedSources": self.untrusted_sources,
            "omittedBytes": self.omitted_bytes,
            "totalBytes": self.total_bytes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolFrame:
        segments = data.get("segments")
        return cls(
            framed=data.get("framed") is True,
            tool_name=data.get("toolName"),
            nonce=data.get("nonce"),
            label=data.get("label"),
            segments=tuple(Segment.from_json(s) for s in segments if isinstance(s, dict))
            if isinstance(segments, list)
            else (),
        )


def has_untrusted(text: str) -> bool:
    """A cheap test for an untrusted-content wrapper anywhere in the text."""
    return "<untrusted_content_" in text and _OPEN.search(text) is not None


def parse_tool_output(text: str) -> ToolFrame:
    """Split a tool message's content into its frame and body segments; anything malformed stays text."""
    frame = _split_frame(text)
    if frame is None:
        return ToolFrame(framed=False, segments=tuple(_segments(text)))
    name, nonce, label, body = frame
    return ToolFrame(framed=True, tool_name=name, nonce=nonce, label=label, segments=tuple(_segments(body)))


def _split_frame(text: str) -> tuple[str, str | None, str | None, str] | None:
    """(tool name, nonce, label, body) when the text is exactly one well-formed box, else None."""
    stripped = text.strip("\n")
    first_end = stripped.find("\n")
    last_start = stripped.rfind("\n")
    if first_end < 0:
        return None
    header = _HEADER.fullmatch(stripped[:first_end])
    footer = _FOOTER.fullmatch(stripped[last_start + 1 :])
    if header is None or footer is None or header.group("name") != footer.group("name"):
        return None
    if header.group("nonce") != footer.group("nonce"):
        # A footer with another nonce was written by the tool's output, not by odek.
        return None
    body = stripped[first_end + 1 : last_start] if last_start > first_end else ""
    label = header.group("label")
    return header.group("name"), header.group("nonce"), label.strip() if label else None, body


def _source_of(attrs: str) -> str | None:
    match = _SOURCE.search(attrs)
    if match is None:
        return None
    return match.group("dq") if match.group("dq") is not None else match.group("sq")


def _trim_block(text: str) -> str:
    """Untrusted blocks put their content on lines of its own; drop that one newline each side."""
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    return text


def _segments(body: str) -> list[Segment]:
    """Trusted text and untrusted blocks in order, each further split at omission markers."""
    segments: list[Segment] = []
    position = 0
    while position < len(body):
        opening = _OPEN.search(body, position)
        stray = _CLOSE.search(body, position)
        if stray is not None and (opening is None or stray.start() < opening.start()):
            # A closing tag whose opening was cut away by truncation: fail safe and treat the
            # text since the last omission marker as untrusted.
            _add_text(segments, body[position : stray.start()], orphan_close=stray.group("nonce"))
            position = stray.end()
            continue
        if opening is None:
            _add_text(segments, body[position:])
            break
        _add_text(segments, body[position : opening.start()])
        nonce = opening.group("nonce")
        source = _source_of(opening.group("attrs"))
        # Only the closing tag with the same nonce ends the block: content cannot forge it.
        closing = re.compile(f"</untrusted_content_{re.escape(nonce)}>").search(body, opening.end())
        inner_end = closing.start() if closing is not None else len(body)
        inner = _trim_block(body[opening.end() : inner_end])
        for piece in _split_omitted(inner):
            if isinstance(piece, Segment):
                segments.append(piece)
            elif piece:
                segments.append(Segment("untrusted", piece, source, nonce, closed=closing is not None))
        position = closing.end() if closing is not None else len(body)
    return segments


def _add_text(segments: list[Segment], text: str, orphan_close: str | None = None) -> None:
    pieces = _split_omitted(text)
    if orphan_close is not None:
        # Everything after the last omission marker belongs to the block whose opening was lost.
        last = pieces[-1] if pieces else ""
        tail = last if isinstance(last, str) else ""
        if pieces and isinstance(last, str):
            pieces.pop()
        _add_pieces(segments, pieces)
        if tail.strip("\n"):
            segments.append(Segment("untrusted", _trim_block(tail), None, orphan_close))
        return
    _add_pieces(segments, pieces)


def _add_pieces(segments: list[Segment], pieces: list[str | Segment]) -> None:
    for piece in pieces:
        if isinstance(piece, Segment):
            segments.append(piece)
        elif piece:
            segments.append(Segment("text", piece))


def _split_omitted(text: str) -> list[str | Segment]:
    """Text around omission markers, the markers as "omitted" segments."""
    pieces: list[str | Segment] = []
    position = 0
    for match in _OMITTED.finditer(text):
        pieces.append(text[position : match.start()])
        omitted, total = int(match.group("omitted")), int(match.group("total"))
        pieces.append(Segment("omitted", omitted_bytes=omitted, total_bytes=total))
        position = match.end()
    pieces.append(text[position:])
    return pieces
