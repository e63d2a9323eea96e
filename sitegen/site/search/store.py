"""The site's search index in SQLite FTS5: entries stored per document, segments exported from fts5vocab."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import count, repeat
from pathlib import Path
from typing import Any

import orjson

from sitegen.site.search.fts import TOKENIZER, indexed_text, is_damage, open_database, remove_database
from sitegen.site.search.spec import spec

__all__ = [
    "DB_FILE",
    "StoredDocument",
    "close_connections",
    "connection",
    "delete_documents",
    "entry_weight",
    "export_segment",
    "export_terms",
    "kept_terms",
    "prepare",
    "raise_disk_full",
    "record_segment",
    "record_segments",
    "reopen_damaged",
    "segment_path",
    "segment_state",
    "storable",
    "store_document",
    "stored_documents",
    "write_remade",
]

log = logging.getLogger("sitegen.site")

DB_FILE = ".sitegen/search/index.db"
# Bump when the tables or what goes in them change: the database is then made again (and every
# session's entries stored again, as after a deleted .sitegen/).
VERSION = 1
# Posting weights are base64 digits 1..31, one per entry (static/search-index.js reads them).
_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _create(db: sqlite3.Connection) -> None:
    # docs: per document (a session, a subagent page, a chunk of prompts), a digest of what its
    # entries give the index, their number, one weight digit per entry, and its snippet files.
    db.execute(
        "CREATE TABLE docs (key TEXT PRIMARY KEY, digest TEXT NOT NULL, entries INTEGER NOT NULL,"
        " weights TEXT NOT NULL, chunks TEXT NOT NULL)"
    )
    # The entries' indexed text (CJK runs cut as the specification says), by document and number.
    db.execute("CREATE TABLE entries (key TEXT NOT NULL, n INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (key, n))")
    # Per segment of the index: what its FTS5 table holds ([[key, digest], ...]) and its shard files.
    db.execute("CREATE TABLE segments (number INTEGER PRIMARY KEY, members TEXT NOT NULL, shards TEXT NOT NULL)")


_open: dict[tuple[int, str], sqlite3.Connection] = {}


def connection(site_dir: Path) -> sqlite3.Connection:
    """This process's connection to the site's search database (made, or made again when damaged)."""
    path = site_dir / DB_FILE
    key = (os.getpid(), str(path))  # a worker forked from the main process makes its own
    db = _open.get(key)
    if db is not None and not path.exists():  # deleted by hand since: made again
        db.close()
        db = None
    if db is None:
        db = _open[key] = open_database(path, VERSION, _create, log.warning, wal=False)
    return db


def close_connections() -> None:
    """Close this process's connections (the next use opens the database again)."""
    for key in [key for key in _open if key[0] == os.getpid()]:
        _open.pop(key).close()
    _open.clear()


def prepare(site_dir: Path) -> None:
    """Make the database (or make it again) before worker processes start, and leave no connection
    open for them to inherit: a connection must not cross a fork."""
    connection(site_dir)
    close_connections()


def reopen_damaged(site_dir: Path) -> sqlite3.Connection:
    """The connection, after a damaged database was set aside: the next use makes it again."""
    path = site_dir / DB_FILE
    for key in [key for key in _open if key[1] == str(path)]:
        _open.pop(key).close()
    log.warning("The site's search database %s is damaged: it is made again", path)
    remove_database(path)
    return connection(site_dir)


def entry_weight(kind: str, characters: int) -> str:
    """An entry's weight digit: BM25's weight of a term found once (the length, in characters, counted
    against an average), times the kind's weight, as 1..31."""
    k1, b, average, scales = _weighing()
    base = k1 * (1 - b + b * characters / average)
    return _DIGITS[min(31, max(1, round(scales[kind] / (1 + base))))]


@cache
def _weighing() -> tuple[float, float, float, dict[str, float]]:
    """entry_weight's constants, read from the specification once (it weighs every entry): BM25's k1
    and b, the average length, and each kind's scale."""
    values = spec()
    k1 = values["bm25_k1"]
    scales = {kind: weight * (k1 + 1) * values["weight_scale"] for kind, weight in values["kind_weight"].items()}
    return k1, values["bm25_b"], values["average_characters"], scales


@dataclass(frozen=True, slots=True)
class StoredDocument:
    digest: str
    entries: int
    weights: str
    chunks: list[Any]


def store_document(site_dir: Path, key: str, kinds: Sequence[str], texts: Sequence[str], chunks: list[Any]) -> None:
    """Replace a document's entries (one transaction): what a build stopped after it has stored is
    kept, and the index pages are not changed until the next export."""
    if len(kinds) != len(texts):
        raise ValueError(f"{len(kinds)} kinds for {len(texts)} texts")
    # map, not generator expressions: this runs once per entry, tens of thousands per build.
    bodies = list(map(indexed_text, texts))
    weights = "".join(map(entry_weight, kinds, map(len, bodies)))
    digest = hashlib.blake2b(weights.encode(), digest_size=16)
    for body in bodies:
        digest.update(len(body).to_bytes(8, "little"))
        digest.update(body.encode("utf-8", "surrogatepass"))
    write_remade(site_dir, lambda db: _store(db, key, digest.hexdigest(), weights, bodies, chunks))


def write_remade(
    site_dir: Path,
    write: Callable[[sqlite3.Connection], None],
    open_db: Callable[[Path], sqlite3.Connection] = connection,
) -> None:
    """write(db) on the site's search database (open_db's connection to it); a damaged database is made
    again first (with a one-line warning) and written in the new one; a full disk is the OSError the
    build stops on."""
    try:
        write(open_db(site_dir))
    except sqlite3.DatabaseError as error:
        raise_disk_full(error)
        if not is_damage(error):
            raise
        reopen_damaged(site_dir)
        write(open_db(site_dir))


def raise_disk_full(error: sqlite3.Error) -> None:
    """SQLite's "database or disk is full" as the OSError the build stops on (not a document's problem)."""
    if "disk is full" in str(error):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)) from error


def _store(db: sqlite3.Connection, key: str, digest: str, weights: str, bodies: list[str], chunks: list[Any]) -> None:
    chunks_json = orjson.dumps(chunks).decode()
    db.execute("BEGIN IMMEDIATE")
    try:
        held = db.execute("SELECT digest FROM docs WHERE key = ?", (key,)).fetchone()
        if held is None or held[0] != digest:
            db.execute("DELETE FROM entries WHERE key = ?", (key,))
            db.executemany(
                "INSERT INTO entries (key, n, body) VALUES (?, ?, ?)",
                zip(repeat(key), count(1), map(storable, bodies)),
            )
        db.execute(
            "INSERT OR REPLACE INTO docs (key, digest, entries, weights, chunks) VALUES (?, ?, ?, ?, ?)",
            (key, digest, len(bodies), weights, chunks_json),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def storable(text: str) -> str:
    """Lone surrogates cannot be stored as text: they become U+FFFD, as on the page."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def stored_documents(site_dir: Path) -> dict[str, StoredDocument]:
    db = connection(site_dir)
    return {
        key: StoredDocument(digest, entries, weights, orjson.loads(chunks))
        for key, digest, entries, weights, chunks in db.execute(
            "SELECT key, digest, entries, weights, chunks FROM docs"
        )
    }


def has_document(site_dir: Path, key: str) -> bool:
    return connection(site_dir).execute("SELECT 1 FROM docs WHERE key = ?", (key,)).fetchone() is not None


def delete_documents(site_dir: Path, keys: Sequence[str]) -> None:
    """A removed document's entries deleted."""
    if not keys:
        return
    db = connection(site_dir)
    db.execute("BEGIN IMMEDIATE")
    for key in keys:
        db.execute("DELETE FROM entries WHERE key = ?", (key,))
        db.execute("DELETE FROM docs WHERE key = ?", (key,))
    db.execute("COMMIT")


def segment_state(site_dir: Path, number: int) -> tuple[Any, Any] | None:
    row = connection(site_dir).execute("SELECT members, shards FROM segments WHERE number = ?", (number,)).fetchone()
    return (orjson.loads(row[0]), orjson.loads(row[1])) if row is not None else None


def kept_terms(terms: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The terms the specification keeps: token_min to token_max characters long, or one CJK character.
    Picked here from the grouped terms: in SQL the test ran on every (term, entry) row, before the
    GROUP BY (SQLite moves it there even from HAVING), and took 40 % of the export."""
    values = spec()
    low, high = int(values["token_min"]), int(values["token_max"])
    ranges = [(int(first), int(last)) for first, last in values["cjk_ranges"]]
    return [
        pair
        for pair in terms
        if low <= len(pair[0]) <= high
        or (len(pair[0]) == 1 and any(first <= ord(pair[0]) <= last for first, last in ranges))
    ]


def segment_path(site_dir: Path, number: int) -> Path:
    """Segment `number`'s FTS5 database: a file of its own, so that two processes fill two at once."""
    return site_dir / DB_FILE.replace("index.db", f"segment-{int(number)}.db")


def export_segment(site_dir: Path, number: int, members: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Fill segment `number`'s FTS5 table (made anew: it is derived from the entries) with its
    members' entries, numbered one after another in member order (from 1), and give each term with
    the numbers of the entries holding it ("3,17,40")."""
    counts = dict(
        connection(site_dir).execute(
            f"SELECT key, entries FROM docs WHERE key IN ({','.join('?' * len(members))})", [key for key, _ in members]
        )
    )
    path = segment_path(site_dir, number)
    remove_database(path)
    db = sqlite3.connect(path, isolation_level=None, uri=True)
    rows = []
    offset = 0
    for position, (key, _) in enumerate(members):
        rows.append((position, offset, key))
        offset += counts.get(key, 0)

    def fill(db: sqlite3.Connection) -> None:
        # One statement for the whole segment: FTS5 writes what it holds in memory to a new segment
        # of its own at each statement's start (a savepoint), and a statement per member made a dozen
        # small ones to merge and to read back (13 % of the export's SQLite time). The members'
        # entries come in number order (members by position, each one's entries by n): no sort.
        db.execute("CREATE TEMP TABLE members (position INTEGER PRIMARY KEY, base INTEGER NOT NULL, key TEXT NOT NULL)")
        db.executemany("INSERT INTO temp.members (position, base, key) VALUES (?, ?, ?)", rows)
        db.execute(
            "INSERT INTO segment (rowid, body) SELECT members.base + entries.n, entries.body"
            " FROM temp.members JOIN source.entries ON entries.key = members.key"
            " ORDER BY members.position, entries.n"
        )

    # Made again whenever it changes, from the entries: a crash loses nothing that is not there.
    return export_terms(db, site_dir, fill, "PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF")


def export_terms(
    db: sqlite3.Connection, site_dir: Path, fill: Callable[[sqlite3.Connection], None], *pragmas: str
) -> list[tuple[str, str]]:
    """Fill db's FTS5 table `segment` by fill(db), whose statements read the site's search database
    (attached read-only as `source`), and give each term the specification keeps with the numbers of
    the rows holding it ("3,17,40"). db is closed after; a full disk is the OSError the build stops on."""
    try:
        for pragma in pragmas:
            db.execute(pragma)
        db.execute("ATTACH DATABASE ? AS source", (f"{(site_dir / DB_FILE).resolve().as_uri()}?mode=ro",))
        db.execute("BEGIN")
        # Only its vocabulary is read: no positions (detail), and no lengths for ranking (columnsize).
        db.execute(
            "CREATE VIRTUAL TABLE segment USING"
            f" fts5(body, content='', detail=none, columnsize=0, tokenize='{TOKENIZER}')"
        )
        db.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, segment, instance)")
        fill(db)
        db.execute("COMMIT")
        return kept_terms(db.execute("SELECT term, group_concat(doc) FROM temp.terms GROUP BY term").fetchall())
    except sqlite3.OperationalError as error:
        raise_disk_full(error)
        raise
    finally:
        db.close()


def record_segment(site_dir: Path, number: int, members: Any, shards: Any) -> None:
    db = connection(site_dir)
    db.execute(
        "INSERT OR REPLACE INTO segments (number, members, shards) VALUES (?, ?, ?)",
        (number, orjson.dumps(members).decode(), orjson.dumps(shards).decode()),
    )


def record_segments(site_dir: Path, rows: Sequence[tuple[int, Any, Any]]) -> None:
    """record_segment for each (number, members, shards), in one transaction."""
    db = connection(site_dir)
    db.execute("BEGIN IMMEDIATE")
    try:
        for number, members, shards in rows:
            record_segment(site_dir, number, members, shards)
        db.execute("COMMIT")
    except BaseException as error:
        if db.in_transaction:  # a full disk or damage may have rolled it back already
            db.execute("ROLLBACK")
        if isinstance(error, sqlite3.DatabaseError):
            raise_disk_full(error)
        raise


def drop_segments_from(site_dir: Path, count: int) -> None:
    """Segments numbered count and above (the index has fewer now): their tables and records."""
    db = connection(site_dir)
    for (number,) in db.execute("SELECT number FROM segments WHERE number >= ?", (count,)).fetchall():
        remove_database(segment_path(site_dir, number))
    db.execute("DELETE FROM segments WHERE number >= ?", (count,))
