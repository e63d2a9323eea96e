"""What the build keeps about each session: enough for index pages, stats and search without re-reading it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["SessionRecord", "UsageRecord"]


class UsageRecord(NamedTuple):
    """One assistant message's usage; `key` (entry id + timestamp) is shared by fork copies.

    A tuple, so the manifest stores it as a compact JSON array and orjson writes it natively."""

    key: str
    day: str  # YYYY-MM-DD (UTC)
    model: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write


@dataclass(slots=True)
class SessionRecord:
    """A session as the site lists it; stored in the manifest between builds."""

    key: str  # unique and stable: the page's file stem
    source: str  # absolute path of the session file
    family: str  # "pi" or "odek"
    session_id: str
    project: str  # the session's cwd ("" when unknown)
    project_slug: str
    page: str  # path of the session page relative to the site root
    title: str
    created_ms: int | None
    modified_ms: int | None
    messages: int
    tool_calls: int
    branches: int
    compactions: int
    models: list[str]
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float
    usage: list[UsageRecord] = field(default_factory=list)
    # agent id -> page path, for subagent transcripts rendered as their own pages.
    subagents: dict[str, str] = field(default_factory=dict)
    parent_session: str | None = None
    malformed_lines: int = 0
    # Turns sitegen's audit flags (issue 6): [{turn, user_node_id, first_suspicious_node_id, ...}].
    flagged_turns: list[dict[str, Any]] = field(default_factory=list)
    # Most frequent words of user and assistant text, for related sessions.
    terms: dict[str, int] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecord:
        """The record orjson wrote (it serialises the dataclass natively, usage rows as arrays)."""
        values = dict(data)
        values["usage"] = [UsageRecord(*row) for row in values.get("usage", [])]
        return cls(**values)
