"""What the build keeps about each session: enough for index pages, stats and search without re-reading it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from sitegen.site.state.details import Part, SessionDetails, read_details

__all__ = ["UNKNOWN_PROJECT", "SessionRecord", "UsageGroup", "UsageLog", "UsageRecord"]

# How a session without a working directory is listed.
UNKNOWN_PROJECT = "(unknown)"


class UsageRecord(NamedTuple):
    """One assistant message's usage; `key` (entry id + timestamp) is shared by fork copies."""

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


class UsageGroup(NamedTuple):
    """A session's usage of one model on one day, summed in row order."""

    model: str
    day: str
    messages: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float


@dataclass(slots=True)
class UsageLog:
    """A session's usage rows as the index and stats pages read them: summed per (model, day), the
    rows' keys, and the rows themselves as JSON text, parsed only for a session that shares rows
    with an older one (/fork copies). Sums and keys are all most builds need, and the manifest
    loads them without building an object per row."""

    keys: list[str] = field(default_factory=list)
    # Each key counted once: a row that repeats an earlier row's key is left out of the sums.
    groups: list[UsageGroup] = field(default_factory=list)
    # [[pair number, input, output, cache_read, cache_write, cost], ...]: numbers only, so the text
    # needs no escapes inside the manifest (with its days and models quoted, it was half the file).
    rows_json: str = "[]"
    pairs: list[list[str]] = field(default_factory=list)  # [day, model] by pair number

    @classmethod
    def of(cls, rows: Sequence[UsageRecord]) -> UsageLog:
        sums: dict[tuple[str, str], list[Any]] = {}
        seen: set[str] = set()
        for row in rows:
            if row.key in seen:
                continue
            seen.add(row.key)
            total = sums.get((row.model, row.day))
            if total is None:
                total = sums[(row.model, row.day)] = [row.model, row.day, 0, 0, 0, 0, 0, 0.0]
            total[2] += 1
            total[3] += row.input
            total[4] += row.output
            total[5] += row.cache_read
            total[6] += row.cache_write
            total[7] += row.cost
        numbers: dict[tuple[str, str], int] = {}
        packed = [[numbers.setdefault((row.day, row.model), len(numbers)), *row[3:]] for row in rows]
        return cls(
            keys=[row.key for row in rows],
            groups=[UsageGroup(*total) for total in sums.values()],
            rows_json=orjson.dumps(packed).decode(),
            pairs=[list(pair) for pair in numbers],
        )

    def rows(self) -> list[UsageRecord]:
        rows = []
        for key, row in zip(self.keys, orjson.loads(self.rows_json), strict=True):
            if type(row[0]) is int:
                day, model = self.pairs[row[0]]
                rows.append(UsageRecord(key, day, model, *row[1:]))
            else:  # a row as an earlier version kept it: [day, model, input, ...]
                rows.append(UsageRecord(key, *row))
        return rows

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UsageLog:
        return cls(
            keys=data["keys"],
            groups=[UsageGroup(*group) for group in data["groups"]],
            rows_json=data["rows_json"],
            pairs=data.get("pairs", []),
        )


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
    usage: UsageLog = field(default_factory=UsageLog)
    # agent id -> page path, for subagent transcripts rendered as their own pages.
    subagents: dict[str, str] = field(default_factory=dict)
    parent_session: str | None = None
    malformed_lines: int = 0
    # What the page could not show, one line each (a refused blob, a line too long): the problems page.
    defects: list[str] = field(default_factory=list)
    # Entries without an id, chained in file order (the problems page names the file).
    ids_chained: int = 0
    # Turns sitegen's audit flags (issue 6): [{turn, user_node_id, first_suspicious_node_id, ...}].
    flagged_turns: list[dict[str, Any]] = field(default_factory=list)
    size: int = 0  # bytes of the session file when it was rendered
    # [entry id, time ms, text key] per user message: links the prompt history to its entries.
    prompts: list[list[Any]] = field(default_factory=list)
    agent_profile: str = ""  # the agent profile whose dir holds the session ("" for none)
    # What history.db's session index said of it when its page was made (SessionIndex.digest).
    index_digest: str = ""
    # What the typed prompts were (a digest of SessionDetails.typed_prompts): the Prompts page's inputs.
    typed_digest: str = ""
    # What the related terms were (sitegen.site.pages.related.terms_digest): the related lists' inputs.
    terms_digest: str = ""
    # The typed prompts, terms, tool calls, activity and speed (sitegen.site.state.details): held by a
    # record the worker has just made (or a test), else read from the details files (details_base and
    # the part's suffix) each time they are needed; neither is in the manifest.
    details: SessionDetails | None = None
    details_base: str = ""

    def read_details(self, part: Part) -> SessionDetails:
        """The session's details of that part (the others empty): those held, else its part's file's
        (read each time: not kept)."""
        if self.details is not None:
            return self.details
        return read_details(Path(self.details_base), part) if self.details_base else SessionDetails()

    def to_json(self) -> dict[str, Any]:
        """The record as the manifest keeps it: without its details."""
        return {name: getattr(self, name) for name in _STORED}

    @property
    def usage_known(self) -> bool:
        """Whether any message of the session recorded its usage (odek sessions record none)."""
        return bool(self.usage.keys)

    @property
    def project_name(self) -> str:
        """The project as listings name it: its folder, after its profile's name when it has one."""
        folder = self.project or UNKNOWN_PROJECT
        return f"{self.agent_profile} › {folder}" if self.agent_profile else folder

    @property
    def duration_ms(self) -> int:
        """From the first entry to the last (0 when either time is unknown)."""
        if self.created_ms is None or self.modified_ms is None:
            return 0
        return max(0, self.modified_ms - self.created_ms)

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecord:
        """The record orjson wrote (it serialises the dataclasses natively, usage groups as arrays)."""
        values = dict(data)
        values["usage"] = UsageLog.from_json(values["usage"])
        return cls(**values)


# The fields the manifest keeps of a record.
_STORED = tuple(f.name for f in fields(SessionRecord) if f.name not in ("details", "details_base"))
