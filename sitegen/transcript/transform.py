"""Rewrite every piece of session text in a transcript (used to redact secrets before rendering)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sitegen.transcript.model import Part, Transcript

__all__ = ["map_transcript_text", "map_value"]

TextMap = Callable[[str], str]


def map_value(value: Any, fn: TextMap) -> Any:
    """A copy of a JSON-like value with fn applied to every string (keys included)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {fn(k) if isinstance(k, str) else k: map_value(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [map_value(item, fn) for item in value]
    return value


def _map_parts(parts: list[Part], fn: TextMap) -> None:
    for part in parts:
        if part.text:
            part.text = fn(part.text)
        if part.call is not None:
            part.call.arguments = map_value(part.call.arguments, fn)


def map_transcript_text(transcript: Transcript, fn: TextMap) -> None:
    """Apply fn, in place, to message text, thinking, tool arguments and output, summaries and metadata."""
    for node in transcript.nodes:
        _map_parts(node.parts, fn)
        if node.result is not None and node.result.parts is not node.parts:
            _map_parts(node.result.parts, fn)
        if node.result is not None:
            node.result.details = map_value(node.result.details, fn)
        node.meta = map_value(node.meta, fn)
    if transcript.system_prompt is not None:
        transcript.system_prompt = fn(transcript.system_prompt)
    transcript.tools = map_value(transcript.tools, fn)
    transcript.buffer = [fn(text) for text in transcript.buffer]
    if transcript.title is not None:
        transcript.title = fn(transcript.title)
