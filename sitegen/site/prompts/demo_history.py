"""The demo's prompt history: a history.db of the demo sessions' own prompts, written again when they change."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import orjson

from sitegen.history.store import HISTORY_FILE
from sitegen.history.writer import HistoryRow, write_history
from sitegen.site.prompts.demo import demo_prompts

__all__ = ["demo_history"]


def demo_history(folder: Path) -> Path:
    """<folder>/history.db in omp 18's schema, holding each prompt typed in the demo's sessions
    (sitegen.site.prompts.demo), with its time, folder and session; rewritten only when those change, so an
    unchanged demo costs no rebuild of its Prompts page."""
    rows = [HistoryRow(p.prompt, p.created_ms // 1000, p.cwd or None, p.session_id) for p in demo_prompts()]
    digest = hashlib.blake2b(orjson.dumps([list(row) for row in rows]), digest_size=16).hexdigest()
    store, stamp = folder / HISTORY_FILE, folder / "rows.digest"
    try:
        if store.is_file() and stamp.read_text(encoding="utf-8") == digest:
            return store
    except OSError:
        pass
    write_history(store, rows)
    temp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
    temp.write_text(digest, encoding="utf-8")
    os.replace(temp, stamp)
    return store
