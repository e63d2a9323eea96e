"""open_session: load, migrate in memory, rehydrate blobs and index the tree of one session file."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitegen.gcpause import collector_paused
from sitegen.session.blobs import BlobStore, rehydrate_entries, store_dirs_for_session
from sitegen.session.entries import Entry, Header
from sitegen.session.load import RawSession, load_raw
from sitegen.session.migrate import MigrationReport, chain_entries_without_ids, migrate
from sitegen.session.rules import context_rules
from sitegen.session.tree import SessionTree

__all__ = ["Session", "open_session", "session_title"]


@dataclass(slots=True)
class Session:
    """A loaded pi-family session: the file's records made current, plus its tree."""

    raw: RawSession
    migration: MigrationReport
    tree: SessionTree
    blobs: BlobStore
    by_id: dict[str, Entry]

    @property
    def path(self) -> Path:
        return self.raw.path

    @property
    def header(self) -> Header:
        return self.raw.header

    @property
    def entries(self) -> list[Entry]:
        return self.raw.entries

    @property
    def id(self) -> str:
        return str(self.raw.header["id"])

    @property
    def cwd(self) -> str:
        cwd = self.raw.header.get("cwd")
        return cwd if isinstance(cwd, str) else ""

    @property
    def title(self) -> str | None:
        return session_title(self.raw.header, self.raw.title_slot, self.raw.entries)

    @property
    def context_rules(self) -> str:
        """Whose rules the model's context follows: omp 18's for a file omp wrote, else pi 0.73's."""
        return context_rules(self.raw.path, self.raw.title_slot, self.raw.entries)


def session_title(header: Header, title_slot: dict[str, Any] | None, entries: Iterable[Entry]) -> str | None:
    """The current name: the latest session_info/title_change, else the title slot, else the header's."""
    latest: str | None = None
    for entry in entries:
        kind = entry.get("type")
        if kind == "session_info":
            name = entry.get("name")
            if isinstance(name, str) and name.strip():
                latest = name.strip()
        elif kind == "title_change":
            name = entry.get("title")
            if isinstance(name, str) and name.strip():
                latest = name.strip()
    if latest:
        return latest
    for holder in (title_slot, header):
        if holder is not None:
            name = holder.get("title")
            if isinstance(name, str) and name.strip():
                return name.strip()
    return None


def open_session(
    path: str | os.PathLike[str],
    *,
    default_agent_dirs: Iterable[Path] = (),
    rehydrate: bool = True,
) -> Session:
    """Read a session the way the agents do, without ever writing to it."""
    with collector_paused():
        return _open(path, default_agent_dirs, rehydrate)


def _open(path: str | os.PathLike[str], default_agent_dirs: Iterable[Path], rehydrate: bool) -> Session:
    raw = load_raw(path)
    report = migrate(raw.header, raw.entries)
    # Entries another tool wrote without ids are chained in file order, as the v1 migration does.
    report.ids_chained = chain_entries_without_ids(raw.header, raw.entries)
    store = BlobStore(store_dirs_for_session(raw.path, default_agent_dirs))
    if rehydrate:
        rehydrate_entries(raw.entries, store)
    # A repeated id names its last record, as in pi's and omp's session index.
    by_id = {entry["id"]: entry for entry in raw.entries if isinstance(entry.get("id"), str)}
    return Session(raw=raw, migration=report, tree=SessionTree.build(raw.entries), blobs=store, by_id=by_id)
