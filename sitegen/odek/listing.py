"""odek sessions as listing rows, in the same shape as pi-family ones (for `sitegen ls --all`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from sitegen.errors import NotASession, SessionNotFound
from sitegen.odek.store import OdekStore, default_odek_dirs, load_odek_file
from sitegen.session.discover import SessionInfo

__all__ = ["odek_session_infos"]

log = logging.getLogger(__name__)


def _iso(ms: int | None) -> str:
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def odek_session_infos(extra_dirs: Iterable[Path] = ()) -> list[SessionInfo]:
    """Every session of every odek store; odek sessions have no cwd, so cwd is empty."""
    infos: list[SessionInfo] = []
    for folder in default_odek_dirs(extra_dirs):
        for entry in OdekStore(folder).list():
            try:
                session = load_odek_file(entry.path)
                stat = entry.path.stat()
            except (SessionNotFound, NotASession, OSError) as error:
                log.warning("Skipping odek session %s: %s", entry.path, error)
                continue
            messages = [m for m in session.messages if m.get("role") in ("user", "assistant")]
            infos.append(
                SessionInfo(
                    path=entry.path,
                    id=session.id,
                    cwd="",
                    title=session.task or None,
                    created=_iso(entry.created_ms),
                    modified=stat.st_mtime_ns // 1_000_000,
                    message_count=len(messages),
                    first_message=session.task,
                    parent_session=None,
                    size=stat.st_size,
                    agent_dir=None,
                )
            )
    return infos
