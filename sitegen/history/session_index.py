"""omp 18's session index in history.db: each session's title (session_titles) and its idle recaps
(session_recaps, their only lasting copy), read from one snapshot without changing the store."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.history.store import query_snapshot

__all__ = ["Recap", "SessionIndex", "read_session_index"]


@dataclass(frozen=True, slots=True)
class Recap:
    """One idle recap: what the agent summed up when the session went quiet."""

    session_id: str
    cwd: str
    text: str
    created_s: int | None


@dataclass(slots=True)
class SessionIndex:
    titles: dict[str, str] = field(default_factory=dict)  # session id -> title
    recaps: dict[str, list[Recap]] = field(default_factory=dict)  # session id -> its recaps, oldest first

    def merge(self, other: SessionIndex) -> None:
        for session_id, title in other.titles.items():
            self.titles.setdefault(session_id, title)
        for session_id, recaps in other.recaps.items():
            self.recaps.setdefault(session_id, []).extend(recaps)

    def digest(self, session_id: str) -> str:
        """What the index says of one session, as a short digest ("" for nothing): its page shows it."""
        title, recaps = self.titles.get(session_id), self.recaps.get(session_id, [])
        if title is None and not recaps:
            return ""
        text = repr((title, [(recap.created_s, recap.text) for recap in recaps]))
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()

    def all_recaps(self) -> list[Recap]:
        """Every recap, newest first (undated last)."""
        flat = [recap for recaps in self.recaps.values() for recap in recaps]
        return sorted(flat, key=lambda r: (r.created_s is None, -(r.created_s or 0), r.session_id))


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def _seconds(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _read(connection: sqlite3.Connection, index: SessionIndex) -> None:
    tables = {_text(name) for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "session_titles" in tables:
        for session_id, title in connection.execute("SELECT session_id, title FROM session_titles ORDER BY 1"):
            if _text(title).strip():
                index.titles[_text(session_id)] = _text(title).strip()
    if "session_recaps" in tables:
        query = "SELECT session_id, cwd, recap, created_at FROM session_recaps ORDER BY created_at, rowid"
        for session_id, cwd, recap, created in connection.execute(query):
            text = _text(recap).strip()
            if text:
                key = _text(session_id)
                index.recaps.setdefault(key, []).append(Recap(key, _text(cwd), text, _seconds(created)))


def read_session_index(stores: Iterable[Path]) -> SessionIndex:
    """The titles and recaps of every store (a store that cannot be read gives none: read_store
    reports its problems); a title the first store gives wins."""
    merged = SessionIndex()
    for store in stores:
        index = SessionIndex()

        def work(connection: sqlite3.Connection, index: SessionIndex = index) -> None:
            _read(connection, index)

        if query_snapshot(store, work):
            merged.merge(index)
    return merged
