"""Persist a migrated session: the whole file rewritten atomically, unreadable lines kept verbatim."""

from __future__ import annotations

import os

import orjson

from sitegen.errors import MigrationError
from sitegen.session.load import load_raw
from sitegen.session.migrate import MigrationReport, migrate
from sitegen.session.storage import atomic_write_bytes

__all__ = ["migrate_file"]


def migrate_file(path: str | os.PathLike[str], *, write: bool) -> MigrationReport:
    """Migrate a session file in memory; with write, replace it atomically when anything changed."""
    raw = load_raw(path)
    report = migrate(raw.header, raw.entries)
    if not write or not report.changed:
        return report
    if raw.long_lines:
        raise MigrationError(f"{raw.path} holds a line too long to read ({raw.defects[0]}); it is left as it is")
    if raw.truncated_tail:
        raise MigrationError(f"{raw.path} is being written (its last line is incomplete); try again later")
    stat = os.stat(raw.path)
    if stat.st_size != raw.size or stat.st_mtime_ns != raw.mtime_ns:
        raise MigrationError(f"{raw.path} changed while it was read; try again")
    lines: list[bytes] = []
    if raw.title_slot is not None:
        lines.append(orjson.dumps(raw.title_slot))
    # Lines we could not parse are kept where they were: a rewrite must never lose bytes.
    before: dict[int, list[bytes]] = {}
    for index, line in raw.unparsed:
        before.setdefault(index, []).append(line.rstrip(b"\r\n"))
    lines.extend(before.get(-1, ()))
    lines.append(orjson.dumps(raw.header))
    for index, entry in enumerate(raw.entries):
        lines.extend(before.get(index, ()))
        lines.append(orjson.dumps(entry))
    lines.extend(before.get(len(raw.entries), ()))
    # Through a symlink, the file it points at is the session: rewrite that, keep the link.
    atomic_write_bytes(os.path.realpath(raw.path), b"\n".join(lines) + b"\n")
    return report
