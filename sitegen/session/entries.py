"""The pi-family entry model: type names, roles and small accessors over plain entry dicts."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson

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
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        # Only a time a calendar can show (years 1-9999): 1e30 or inf is no time, and cannot be stored.
        return int(value) if _FIRST_MS <= value < _END_MS else None
    if not isinstance(value, str) or not value:
        return None
    if len(value) == 24 and (fast := _utc_millis(value)) is not None:
        return fast
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _utc_millis(value: str) -> int | None:
    """iso_to_ms for the form agents write ("2025-09-01T00:09:00.870Z"), without parsing it as a
    datetime (a tenth of loading a long session): the same float arithmetic as datetime.timestamp(),
    so the same result to the millisecond. None for anything else, which takes the general path."""
    if value[23] != "Z" or value[10] != "T" or value[19] != "." or not value.isascii():
        return None
    digits = value[11:13] + value[14:16] + value[17:19] + value[20:23]
    if value[13] != ":" or value[16] != ":" or not digits.isdigit():
        return None
    hours, minutes, seconds, millis = int(digits[:2]), int(digits[2:4]), int(digits[4:6]), int(digits[6:])
    days = _epoch_days(value[:10])
    if days is None or hours > 23 or minutes > 59 or seconds > 59:
        return None
    micros = ((days * 86400 + hours * 3600 + minutes * 60 + seconds) * 10**6) + millis * 1000
    return int(micros / 10**6 * 1000)


@lru_cache(maxsize=4096)
def _epoch_days(date: str) -> int | None:
    """Days from 1970-01-01 to a "YYYY-MM-DD" date; None when it is no date."""
    if date[4] != "-" or date[7] != "-" or not (date[:4] + date[5:7] + date[8:]).isdigit():
        return None
    try:
        return (datetime(int(date[:4]), int(date[5:7]), int(date[8:]), tzinfo=UTC) - _EPOCH).days
    except ValueError:
        return None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def entry_time_ms(entry: Entry) -> int | None:
    """When an entry was written, in epoch milliseconds."""
    return iso_to_ms(entry.get("timestamp"))


# Nesting shown at most (orjson writes 255 levels; a hostile line can hold a thousand).
MAX_NESTING = 200


def json_text(value: Any) -> str:
    """A value as indented JSON for display, nesting past MAX_NESTING shown as "…"; repr() for what
    JSON cannot hold."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(value, option=option).decode()
    except TypeError:
        pass  # too deep, or not JSON
    try:
        return orjson.dumps(clip_nesting(value), option=option).decode()
    except TypeError:
        try:
            return repr(value)
        except RecursionError:
            return "…"


def clip_nesting(value: Any, limit: int = MAX_NESTING) -> Any:
    """A copy of value whose lists and dicts nested deeper than limit are replaced by "…"; made
    without recursion, so any depth is safe."""
    if not isinstance(value, dict | list):
        return value
    top: dict[Any, Any] | list[Any] = {} if isinstance(value, dict) else []
    pending: list[tuple[Any, Any, int]] = [(value, top, 1)]
    while pending:
        source, target, depth = pending.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            copy = item
            if isinstance(item, dict | list):
                if depth >= limit:
                    copy = "…"
                else:
                    copy = {} if isinstance(item, dict) else []
                    pending.append((item, copy, depth + 1))
            if isinstance(target, dict):
                target[key] = copy
            else:
                target.append(copy)
    return top


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
