"""The demo's prompt history: a history.db made from the demo sessions' own prompts, made again when they change."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson

from sitegen.history.store import HISTORY_FILE
from sitegen.history.writer import HistoryRow, write_history
from sitegen.session.discover import session_files
from sitegen.session.entries import is_header, iso_to_ms, message_text

__all__ = ["demo_history", "session_prompts"]

# Bump when the rows made from the sessions change: the demo's store is then written again.
_FORMAT = 1


def session_prompts(path: Path) -> Iterator[HistoryRow]:
    """The prompts of one session file, as the agent would have recorded them: each user message's
    text, time, the session's folder and id (lines that are not JSON are skipped)."""
    session_id = cwd = None
    with open(path, "rb") as handle:
        for line in handle:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            if is_header(record):
                session_id = record.get("id") if isinstance(record.get("id"), str) else None
                cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else None
                continue
            message = record.get("message")
            if record.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "user":
                continue
            text = message_text(message.get("content")).strip()
            time_ms = iso_to_ms(record.get("timestamp"))
            if text and time_ms is not None:
                yield HistoryRow(text, time_ms // 1000, cwd, session_id)


def _inputs(files: Sequence[Path]) -> str:
    parts = []
    for path in files:
        try:
            info = path.stat()
        except OSError:
            continue
        parts.append([str(path), info.st_size, info.st_mtime_ns])
    return hashlib.blake2b(orjson.dumps([_FORMAT, parts]), digest_size=16).hexdigest()


def demo_history(agent_dirs: Sequence[Path], folder: Path) -> Path:
    """<folder>/history.db holding the prompts of the sessions under agent_dirs (omp 18's schema),
    written again only when a session file changed, so an unchanged demo costs no rebuild."""
    files = sorted(path for path, _ in session_files(agent_dirs, []))
    store = folder / HISTORY_FILE
    stamp = folder / "inputs.txt"
    inputs = _inputs(files)
    try:
        if store.is_file() and stamp.read_text(encoding="utf-8") == inputs:
            return store
    except OSError:
        pass
    rows = [row for path in files for row in session_prompts(path)]
    write_history(store, rows)
    temp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
    temp.write_text(inputs, encoding="utf-8")
    os.replace(temp, stamp)
    return store
