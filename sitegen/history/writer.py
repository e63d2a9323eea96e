"""Write a history.db as omp 18 does (WAL, UNIQUE prompts, an FTS5 content table): for the demo and tests."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

__all__ = ["OMP18_SCHEMA", "HistoryRow", "add_prompt", "write_history"]

# omp 18's store: a reused prompt moves to its latest time, folder and session, and counts its uses.
OMP18_SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    prompt TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    cwd TEXT,
    session_id TEXT,
    use_count INTEGER NOT NULL DEFAULT 1
);
CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(prompt, content='history', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS history_ai AFTER INSERT ON history BEGIN
    INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
END;
CREATE TRIGGER IF NOT EXISTS history_ad AFTER DELETE ON history BEGIN
    INSERT INTO history_fts(history_fts, rowid, prompt) VALUES ('delete', old.id, old.prompt);
END;
CREATE TRIGGER IF NOT EXISTS history_au AFTER UPDATE ON history BEGIN
    INSERT INTO history_fts(history_fts, rowid, prompt) VALUES ('delete', old.id, old.prompt);
    INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
END;
"""

_ADD = """
INSERT INTO history (prompt, created_at, cwd, session_id) VALUES (?, ?, ?, ?)
ON CONFLICT (prompt) DO UPDATE SET
    created_at = excluded.created_at, cwd = excluded.cwd, session_id = excluded.session_id,
    use_count = use_count + 1
"""


class HistoryRow(NamedTuple):
    prompt: str
    created_at: int  # Unix seconds
    cwd: str | None
    session_id: str | None


def add_prompt(connection: sqlite3.Connection, row: HistoryRow) -> None:
    """Record one prompt as omp does (the caller commits)."""
    connection.execute(_ADD, tuple(row))


def write_history(path: Path, rows: Iterable[HistoryRow]) -> None:
    """A new history.db at path from the rows, oldest first; the file is complete when it appears
    (written beside it and renamed), in WAL mode with no -wal or -shm left over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    for leftover in (temp, Path(f"{temp}-wal"), Path(f"{temp}-shm")):
        leftover.unlink(missing_ok=True)
    connection = sqlite3.connect(temp)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(OMP18_SCHEMA)
        with connection:
            for row in sorted(rows, key=lambda r: (r.created_at, r.prompt)):
                add_prompt(connection, row)
    finally:
        connection.close()  # the last connection checkpoints and removes the -wal and -shm
    os.replace(temp, path)
