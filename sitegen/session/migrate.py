"""Session format migrations v1 -> v2 -> v3: an ordered list of small pure steps, applied in memory."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from sitegen.session.entries import CURRENT_VERSION, Entry, Header

__all__ = ["MIGRATIONS", "MigrationReport", "chain_entries_without_ids", "header_version", "migrate"]


@dataclass(slots=True)
class MigrationReport:
    """What migrating a session changed, for `sitegen migrate` to report."""

    from_version: int
    to_version: int = CURRENT_VERSION
    steps: list[str] = field(default_factory=list)
    ids_added: int = 0
    compactions_relinked: int = 0
    hook_messages_renamed: int = 0
    # Entries of a v2 or v3 file that had no id, given one in memory (never written).
    ids_chained: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.steps)


def header_version(header: Header) -> int:
    """The header's version; absent (or unreadable) means v1."""
    version = header.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def _stable_entry_id(session_id: str, index: int, taken: set[str]) -> str:
    """An 8-hex id derived from the session id and position, so migrating twice gives the same ids."""
    salt = 0
    while True:
        digest = hashlib.sha256(f"{session_id}:{index}:{salt}".encode()).hexdigest()[:8]
        if digest not in taken:
            taken.add(digest)
            return digest
        salt += 1


def migrate_v1_to_v2(header: Header, entries: list[Entry], report: MigrationReport) -> None:
    """Give every entry an id and a parent in file order; firstKeptEntryIndex -> firstKeptEntryId."""
    session_id = str(header.get("id", ""))
    taken = {entry["id"] for entry in entries if isinstance(entry.get("id"), str)}
    previous: str | None = None
    for index, entry in enumerate(entries):
        entry_id = entry.get("id")
        if not isinstance(entry_id, str):
            entry_id = _stable_entry_id(session_id, index, taken)
            entry["id"] = entry_id
            report.ids_added += 1
        entry["parentId"] = previous
        previous = entry_id
    for entry in entries:
        if entry.get("type") != "compaction" or "firstKeptEntryIndex" not in entry:
            continue
        index = entry.pop("firstKeptEntryIndex")
        # The index counts records with the header as record 0, so entry k is entries[k - 1].
        if isinstance(index, int) and not isinstance(index, bool) and 1 <= index <= len(entries):
            entry["firstKeptEntryId"] = entries[index - 1]["id"]
            report.compactions_relinked += 1
    header["version"] = 2


def migrate_v2_to_v3(header: Header, entries: list[Entry], report: MigrationReport) -> None:
    """Rename the legacy message role hookMessage to custom."""
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
            report.hook_messages_renamed += 1
    header["version"] = 3


def chain_entries_without_ids(header: Header, entries: list[Entry]) -> int:
    """Give each entry without a string id one, its parent being the entry before it in file order
    (what the v1 migration does to a whole file); returns how many were given one. Files other tools
    wrote as v3 can lack ids; pi and omp would show only their last entry."""
    if all(isinstance(entry.get("id"), str) for entry in entries):
        return 0
    session_id = str(header.get("id", ""))
    taken = {entry["id"] for entry in entries if isinstance(entry.get("id"), str)}
    chained = 0
    previous: str | None = None
    for index, entry in enumerate(entries):
        entry_id = entry.get("id")
        if not isinstance(entry_id, str):
            entry_id = entry["id"] = _stable_entry_id(session_id, index, taken)
            entry["parentId"] = previous
            chained += 1
        previous = entry_id
    return chained


Step = Callable[[Header, list[Entry], MigrationReport], None]

# (version a file must be below for the step to run, step): applied in this order.
MIGRATIONS: list[tuple[int, str, Step]] = [
    (2, "v1 -> v2", migrate_v1_to_v2),
    (3, "v2 -> v3", migrate_v2_to_v3),
]


def migrate(header: Header, entries: list[Entry]) -> MigrationReport:
    """Bring header and entries to the current version in place; report what changed."""
    report = MigrationReport(from_version=header_version(header))
    for below, name, step in MIGRATIONS:
        if header_version(header) < below:
            step(header, entries, report)
            report.steps.append(name)
    return report
