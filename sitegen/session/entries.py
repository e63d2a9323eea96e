"""The pi-family entry model: type names, roles and small accessors over plain entry dicts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sitegen.jsontext import MAX_NESTING, clip_nesting, json_text
from sitegen.titles import clip

__all__ = [
    "CURRENT_VERSION",
    "EXTRA_ENTRY_TYPES",
    "KNOWN_ROLES",
    "MAX_NESTING",
    "SEED_ENTRY_TYPES",
    "Entry",
    "Header",
    "clip_nesting",
    "entry_time_ms",
    "is_header",
    "iso_to_ms",
    "json_text",
    "message_text",
    "shorten",
]

# Entries stay the dicts orjson gives us: they are passed through untouched, unknown keys
# included, and building objects per entry would double the cost of loading large files.
Entry = dict[str, Any]
Header = dict[str, Any]

CURRENT_VERSION = 3

SEED_ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "ttsr_injection",
        "session_init",
        "mode_change",
    }
)

# Types real files carry beside the seed's eleven (FORMAT-NOTES.md).
EXTRA_ENTRY_TYPES = frozenset(
    {
        "session_info",
        "context_edit",
        "title_change",
        "model_usage",
        "service_tier_change",
        "credential_pin",
        "reset_boundary",
    }
)

KNOWN_ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "hookMessage",
        "branchSummary",
        "compactionSummary",
        "developer",
        "jsExecution",
        "pythonExecution",
        "fileMention",
    }
)


def is_header(record: object) -> bool:
    """The seed's header rule: type "session" with a string id."""
    return isinstance(record, dict) and record.get("type") == "session" and isinstance(record.get("id"), str)


_FIRST_MS = int(datetime(1, 1, 1, tzinfo=UTC).timestamp() * 1000)
_END_MS = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp() * 1000) + 1000


def iso_to_ms(value: object) -> int | None:
    """Epoch milliseconds of an ISO-8601 timestamp (or a number already in ms); None if unreadable."""
    if type(value) is str:
        # The form the agents write (2025-03-04T05:06:07.891Z) parses as it is: a 50 MB session's
        # 40,000 timestamps took 35 ms through the checks below first, 14 ms this way.
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass  # spaces around it, a lower-case z: tidied below
        else:
            return _epoch_ms(moment)
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        # Only a time a calendar can show (years 1-9999): 1e30 or inf is no time, and cannot be stored.
        return int(value) if _FIRST_MS <= value < _END_MS else None
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        return _epoch_ms(datetime.fromisoformat(text))
    except ValueError:
        return None


def _epoch_ms(moment: datetime) -> int:
    """A parsed time in epoch milliseconds; one without a zone is in UTC."""
    return int((moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp() * 1000)


def entry_time_ms(entry: Entry) -> int | None:
    """When an entry was written, in epoch milliseconds."""
    return iso_to_ms(entry.get("timestamp"))


def message_text(content: object) -> str:
    """The plain text of message content: a string, or the text blocks of a block list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def shorten(text: str, limit: int) -> str:
    """Text on one line, at most limit characters, with "…" (the titles module's clip)."""
    return clip(text, limit)
