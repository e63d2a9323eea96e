"""Prompt-history stores for tests: the documented schema, omp 18's, and a writer in another process."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from sitegen.history.writer import HistoryRow, write_history

__all__ = [
    "DOCUMENTED_SCHEMA",
    "HistoryRow",
    "documented_store",
    "folder_state",
    "omp_store",
    "start_writer",
]

# The seeds' schema: id, prompt, created_at, cwd, and an FTS5 table kept in sync by triggers.
DOCUMENTED_SCHEMA = """
CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT, created_at INTEGER, cwd TEXT);
CREATE VIRTUAL TABLE history_fts USING fts5(prompt);
CREATE TRIGGER history_ai AFTER INSERT ON history BEGIN
    INSERT INTO history_fts(rowid, prompt) VALUES (new.id, new.prompt);
END;
"""


def documented_store(path: Path, rows: list[tuple[str | None, int | None, str | None]], *, wal: bool = False) -> Path:
    """A store in the documented schema (rows: prompt, created_at, cwd), closed cleanly."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(DOCUMENTED_SCHEMA)
    with connection:
        connection.executemany("INSERT INTO history (prompt, created_at, cwd) VALUES (?, ?, ?)", rows)
    connection.close()
    return path


def omp_store(path: Path, rows: list[HistoryRow]) -> Path:
    write_history(path, rows)
    return path


def folder_state(folder: Path) -> dict[str, str]:
    """Every file of a folder by name, with a checksum of its bytes (the -shm is shared memory, not data)."""
    return {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
        for name in sorted(os.listdir(folder))
        if (folder / name).is_file() and not name.endswith("-shm")
    }


# The agent as the tests play it: prompts committed one by one in WAL mode, each id printed once
# committed; it keeps the database open (so -wal and -shm stay) until told to stop on stdin.
_WRITER = r"""
import sqlite3, sys, time
sys.path.insert(0, sys.argv[4])
from sitegen.history.writer import OMP18_SCHEMA, HistoryRow, add_prompt
path, count, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
connection = sqlite3.connect(path, timeout=5)
connection.execute("PRAGMA journal_mode=WAL")
connection.executescript(OMP18_SCHEMA)
print("ready", flush=True)
for number in range(count):
    text = f"ZZ_PROMPT_{number:05d}_ZZ concurrent prompt"
    add_prompt(connection, HistoryRow(text, 1760000000 + number, "/work/app", None))
    connection.commit()
    print(number, flush=True)
    time.sleep(pause)
print("done", flush=True)
sys.stdin.readline()
connection.close()
"""


def start_writer(path: Path, count: int, pause: float = 0.002) -> subprocess.Popen[str]:
    """The writer process; read its stdout up to "ready" before reading, and "done" when finished."""
    root = str(Path(__file__).resolve().parent.parent)
    process = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(count), str(pause), root],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process
