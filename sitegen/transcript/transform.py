"""Rewrite every piece of session text in a transcript (used to redact secrets before rendering)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sitegen.session.entries import clip_nesting
from sitegen.transcript.model import Part, Transcript

__all__ = ["map_transcript_text", "map_value"]

TextMap = Callable[[str], str]


def map_value(value: Any, fn: TextMap) -> Any:
    """A copy of a JSON-like value with fn applied to every string (keys included); nesting past
    MAX_NESTING becomes "…" (as the page shows it), so no value is too deep."""
    try:
        return _map_value(value, fn)
    except RecursionError:
        return _map_value(clip_nesting(value), fn)


def _map_value(value: Any, fn: TextMap) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {fn(k) if isinstance(k, str) else k: _map_value(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_value(item, fn) for item in value]
    return value


ValueMap = Callable[[Any], Any]


def _map_parts(parts: list[Part], fn: TextMap, values: ValueMap) -> None:
    for part in parts:
        if part.text:
            part.text = fn(part.text)
        if part.call is not None:
            part.call.name = fn(part.call.name)
            part.call.arguments = values(part.call.arguments)


def map_transcript_text(transcript: Transcript, fn: TextMap, values: ValueMap | None = None) -> None:
    """Apply fn, in place, to message text, thinking, tool arguments and output, summaries and metadata.

    values maps structured values (tool arguments, details, metadata) when the mapping needs their keys,
    as redaction does for {"password": ...}; by default fn is applied to every string in them."""
    structured: ValueMap = values if values is not None else (lambda value: map_value(value, fn))
    for node in transcript.nodes:
        _map_parts(node.parts, fn, structured)
        if node.result is not None and node.result.parts is not node.parts:
            _map_parts(node.result.parts, fn, structured)
        if node.result is not None:
            node.result.tool_name = fn(node.result.tool_name)
            node.result.details = structured(node.result.details)
        node.meta = structured(node.meta)
        # Names the page prints beside messages: a session, not sitegen, chose them.
        node.model = fn(node.model)
        node.role = fn(node.role)
    if transcript.system_prompt is not None:
        transcript.system_prompt = fn(transcript.system_prompt)
    transcript.tools = structured(transcript.tools)
    transcript.buffer = [fn(text) for text in transcript.buffer]
    if transcript.title is not None:
        transcript.title = fn(transcript.title)
    # What the header and tree show besides messages: a path, an id or a label can hold a secret too.
    transcript.session_id = fn(transcript.session_id)
    transcript.cwd = fn(transcript.cwd)
    name = transcript.source_path.name
    if (shown := fn(name)) != name:  # the page's footer names the file, which holds the session id
        transcript.source_path = transcript.source_path.with_name(shown)
    if transcript.parent_session is not None:
        transcript.parent_session = fn(transcript.parent_session)
    transcript.tree.labels = {entry_id: fn(label) for entry_id, label in transcript.tree.labels.items()}
    if transcript.audit is not None:
        transcript.audit = structured(transcript.audit)
