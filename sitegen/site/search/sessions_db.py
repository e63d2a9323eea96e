"""`sitegen search`'s index: every agent's entries in FTS5 in the cache folder, kept current per file."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from sitegen.site.search.fts import TOKENIZER, indexed_text, match_expression, open_database
from sitegen.site.search.index import argument_values
from sitegen.site.state.sources import Source
from sitegen.transcript.model import Node, Transcript

__all__ = ["DB_NAME", "Hit", "Query", "SyncReport", "open_index", "search", "sync"]

log = logging.getLogger("sitegen.search")

DB_NAME = "search.db"
# Bump when the tables or what goes in them change: the database is then made again.
VERSION = 2  # 2: entries without a time dated by their session
# An entry's rowid is its file's id times this plus its place in the file, so a file's rows are one
# rowid range, replaced or deleted without scanning the table.
FILE_SPAN = 1 << 24
ROLES = ("user", "assistant", "thinking", "tool")


def _create(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER, mtime_ns INTEGER,"
        " session TEXT, title TEXT, project TEXT)"
    )
    # body is what FTS5 indexes (CJK runs cut as the specification says); shown is the text as
    # written, kept only where body differs from it.
    db.execute(
        "CREATE VIRTUAL TABLE entries USING fts5(body, entry UNINDEXED, role UNINDEXED, ts UNINDEXED,"
        f" model UNINDEXED, shown UNINDEXED, tokenize='{TOKENIZER}')"
    )


def open_index(path: Path, warn: Callable[[str], None]) -> sqlite3.Connection:
    """The search database at path: made when missing, made again when damaged or of another layout."""
    return open_database(path, VERSION, _create, warn)


@dataclass(frozen=True, slots=True)
class Row:
    entry: str
    role: str
    time_ms: int | None
    model: str
    text: str


def _texts(node: Node, kind: str) -> list[str]:
    return [part.text for part in node.parts if part.kind == kind and part.text]


def _node_rows(node: Node) -> Iterator[tuple[str, str]]:
    """(role, text) of one entry: an assistant message gives its words and calls, and its thinking apart."""
    kind = node.kind
    if kind == "user":
        yield "user", "\n".join(_texts(node, "text"))
    elif kind == "assistant":
        pieces = _texts(node, "text")
        for call in node.tool_calls:
            pieces.append(call.name)
            pieces.extend(argument_values(call.arguments))
        yield "assistant", "\n".join(pieces)
        yield "thinking", "\n".join(_texts(node, "thinking"))
    elif kind == "tool_result" and node.result is not None:
        yield "tool", "\n".join([node.result.tool_name, *_texts(node, "text"), *_texts(node, "other")])
    elif kind == "execution":
        yield "tool", "\n".join(str(node.meta.get(key) or "") for key in ("command", "code", "output"))
    elif kind == "custom_message":
        yield "custom", "\n".join(_texts(node, "text"))
    elif kind in ("compaction", "branch_summary"):
        summary = node.meta.get("summary")
        yield "summary", summary if isinstance(summary, str) else ""


def session_rows(transcript: Transcript) -> list[Row]:
    """Every searchable piece of a session, in file order; a row's model is the last one used by then."""
    rows = []
    model = ""
    # Entries without a time of their own (odek's) are dated by the session.
    fallback = transcript.created_ms if transcript.created_ms is not None else transcript.modified_ms
    for node in transcript.nodes:
        model = node.model or model
        when = node.time_ms if node.time_ms is not None else fallback
        for role, text in _node_rows(node):
            if text.strip():
                rows.append(Row(node.id, role, when, model, text))
    return rows


@dataclass(slots=True)
class SyncReport:
    indexed: int = 0  # files read again (new or changed)
    removed: int = 0  # files gone since the last query
    unreadable: list[str] | None = None


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def sync(db: sqlite3.Connection, sources: Iterable[Source], load: Callable[[Path], Transcript]) -> SyncReport:
    """Bring the database up to date with the session files: a new or changed file's rows replaced
    (one transaction per file), a removed file's deleted. Files are only read."""
    report = SyncReport(unreadable=[])
    known = {
        path: (ident, size, mtime)
        for ident, path, size, mtime in db.execute("SELECT id, path, size, mtime_ns FROM files")
    }
    seen: set[str] = set()
    for source in sources:
        if source.problem is not None:
            continue
        path = str(source.path)
        seen.add(path)
        stat = _stat(source.path)
        held = known.get(path)
        if stat is None or (held is not None and (held[1], held[2]) == stat):
            continue
        try:
            transcript = load(source.path)
        except Exception as error:  # any file an agent left half-written: skipped, said once, tried again next time
            assert report.unreadable is not None
            report.unreadable.append(f"{path}: {error}")
            continue
        _replace(db, held[0] if held is not None else None, path, stat, transcript)
        report.indexed += 1
    gone = [(path, held[0]) for path, held in known.items() if path not in seen]
    if gone:
        db.execute("BEGIN IMMEDIATE")
        for _, ident in gone:
            db.execute(
                "DELETE FROM entries WHERE rowid >= ? AND rowid < ?", (ident * FILE_SPAN, (ident + 1) * FILE_SPAN)
            )
            db.execute("DELETE FROM files WHERE id = ?", (ident,))
        db.execute("COMMIT")
        report.removed = len(gone)
    return report


def _replace(
    db: sqlite3.Connection, ident: int | None, path: str, stat: tuple[int, int], transcript: Transcript
) -> None:
    rows = session_rows(transcript)[: FILE_SPAN - 1]
    project = transcript.cwd or ("odek" if transcript.family == "odek" else "")
    db.execute("BEGIN IMMEDIATE")
    try:
        if ident is None:
            ident = db.execute(
                "INSERT INTO files (path, size, mtime_ns, session, title, project) VALUES (?, ?, ?, ?, ?, ?)",
                (path, *stat, transcript.session_id, transcript.display_title, project),
            ).lastrowid
        else:
            db.execute(
                "DELETE FROM entries WHERE rowid >= ? AND rowid < ?", (ident * FILE_SPAN, (ident + 1) * FILE_SPAN)
            )
            db.execute(
                "UPDATE files SET size = ?, mtime_ns = ?, session = ?, title = ?, project = ? WHERE id = ?",
                (*stat, transcript.session_id, transcript.display_title, project, ident),
            )
        assert ident is not None
        base = ident * FILE_SPAN
        db.executemany(
            "INSERT INTO entries (rowid, body, entry, role, ts, model, shown) VALUES (?, ?, ?, ?, ?, ?, ?)",
            _entry_values(base, rows),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _entry_values(base: int, rows: list[Row]) -> Iterator[tuple[Any, ...]]:
    for number, row in enumerate(rows, 1):
        body = indexed_text(row.text)
        yield base + number, body, row.entry, row.role, row.time_ms, row.model, row.text if body != row.text else None


@dataclass(frozen=True, slots=True)
class Query:
    terms: list[str]
    last_is_prefix: bool = True
    project: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    role: str | None = None
    model: str | None = None
    limit: int = 20


@dataclass(frozen=True, slots=True)
class Hit:
    session: str  # the session file's path
    session_id: str
    title: str
    project: str
    entry: str
    role: str
    time_ms: int | None
    model: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "session_id": self.session_id,
            "title": self.title,
            "project": self.project,
            "entry": self.entry,
            "role": self.role,
            "timestamp": _iso(self.time_ms),
            "time_ms": self.time_ms,
            "model": self.model,
        }


def _iso(time_ms: int | None) -> str | None:
    if time_ms is None:
        return None
    return datetime.fromtimestamp(time_ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def search(db: sqlite3.Connection, query: Query) -> list[Hit]:
    """Entries holding every term (the last may be a prefix), best first by bm25, newest first on ties."""
    where = ["entries MATCH ?"]
    values: list[Any] = [match_expression(query.terms, last_is_prefix=query.last_is_prefix)]
    if query.project is not None:
        project = query.project.rstrip("/") or "/"
        where.append("(f.project = ? OR substr(f.project, 1, ?) = ?)")
        values += [project, len(project) + 1, project + "/" if project != "/" else "/"]
    if query.since_ms is not None:
        where.append("ts >= ?")
        values.append(query.since_ms)
    if query.until_ms is not None:
        where.append("ts <= ?")
        values.append(query.until_ms)
    if query.role is not None:
        where.append("role = ?")
        values.append(query.role)
    if query.model is not None:
        where.append("instr(lower(model), lower(?)) > 0")
        values.append(query.model)
    values.append(query.limit)
    sql = (
        "SELECT f.path, f.session, f.title, f.project, entry, role, ts, model, coalesce(shown, body)"
        " FROM entries JOIN files AS f ON f.id = entries.rowid / ?"
        f" WHERE {' AND '.join(where)} ORDER BY bm25(entries), ts DESC, entries.rowid LIMIT ?"
    )
    rows = db.execute(sql, [FILE_SPAN, *values]).fetchall()
    return [Hit(*row) for row in rows]


def page_urls(site: Path) -> dict[str, str]:
    """Source path -> page (site-relative) from a site's manifest, read only; {} when there is none."""
    try:
        data = orjson.loads((site / ".sitegen" / "manifest.json").read_bytes())
        sessions = data["sessions"]
        return {path: entry["page"] for path, entry in sessions.items() if isinstance(entry.get("page"), str)}
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return {}
