"""The Prompts page's words in the site's search database: each chunk's prompts stored once, terms from FTS5."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import orjson

from sitegen.site.search.fts import indexed_text
from sitegen.site.search.store import connection, export_terms, storable, write_remade

__all__ = ["export_prompt_terms", "keep_prompt_chunks", "store_prompt_chunks", "stored_prompt_chunks"]

# A chunk of prompts (named by its rows' hash, so its rows never change: a changed prompt makes a new
# chunk) is in the database once: as the site search's document where each of its prompts is one of
# that document's entries, in order (store.py's entries table: the text FTS5 indexes, by key and
# number); else its prompts are here, the text FTS5 indexes of each by chunk and place. Made where
# missing, so that a database of the site search's layout gains it without being made again.
_TABLE = (
    "CREATE TABLE IF NOT EXISTS prompt_rows (chunk TEXT NOT NULL, n INTEGER NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY (chunk, n)) WITHOUT ROWID"
)


def _prompts_db(site_dir: Path) -> sqlite3.Connection:
    db = connection(site_dir)
    db.execute(_TABLE)
    return db


def stored_prompt_chunks(site_dir: Path, names: Collection[str]) -> set[str]:
    """Which of the chunks have their prompts stored."""
    if not names:
        return set()
    query = "SELECT DISTINCT chunk FROM prompt_rows WHERE chunk IN (SELECT value FROM json_each(?))"
    rows = _prompts_db(site_dir).execute(query, (orjson.dumps(list(names)).decode(),))
    return {name for (name,) in rows}


def store_prompt_chunks(site_dir: Path, chunks: Mapping[str, Sequence[str]]) -> None:
    """Store each chunk's prompts (its texts, in place order) for FTS5, in one transaction; a damaged
    database is made again first (with a one-line warning) and they are stored in the new one."""
    if not chunks:
        return
    rows = [
        (name, number, storable(indexed_text(text)))
        for name, texts in chunks.items()
        for number, text in enumerate(texts, 1)
    ]
    write_remade(site_dir, lambda db: _insert(db, rows), _prompts_db)


def _insert(db: sqlite3.Connection, rows: list[tuple[str, int, str]]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        # OR REPLACE: another process may have stored the same chunk since it was looked up.
        db.executemany("INSERT OR REPLACE INTO prompt_rows (chunk, n, body) VALUES (?, ?, ?)", rows)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def keep_prompt_chunks(site_dir: Path, names: Collection[str], dropped: Collection[str] | None = None) -> None:
    """Delete the prompts of every chunk not among names (the page no longer lists it): of those
    dropped, when the caller knows which (the last build's chunks), else of every other chunk."""
    names = set(names)  # looked up once per dropped chunk
    db = _prompts_db(site_dir)
    db.execute("BEGIN IMMEDIATE")
    try:
        if dropped is None:
            keep = orjson.dumps(sorted(names)).decode()
            db.execute("DELETE FROM prompt_rows WHERE chunk NOT IN (SELECT value FROM json_each(?))", (keep,))
        else:
            db.executemany(
                "DELETE FROM prompt_rows WHERE chunk = ?", [(name,) for name in dropped if name not in names]
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def export_prompt_terms(site_dir: Path, places: Sequence[tuple[str, str | None]], stride: int) -> list[tuple[str, str]]:
    """The terms of a segment's prompts with the numbers of the prompts holding each ("3,17,40"): the
    chunk at place p numbers its prompts from p * stride + 1. A place is (chunk name, the key of the
    site search's document that holds each of its prompts, or None: stored by store_prompt_chunks).
    Filled in an FTS5 table in memory, every term the specification keeps."""
    _prompts_db(site_dir)  # made (or made again) before it is read
    db = sqlite3.connect(":memory:", uri=True, isolation_level=None, timeout=60)
    own = "INSERT INTO segment (rowid, body) SELECT ? + n, body FROM source.prompt_rows WHERE chunk = ?"
    searched = "INSERT INTO segment (rowid, body) SELECT ? + n, body FROM source.entries WHERE key = ?"
    fills = [
        (own, (place * stride, name)) if key is None else (searched, (place * stride, key))
        for place, (name, key) in enumerate(places)
    ]

    def fill(db: sqlite3.Connection) -> None:
        for statement, parameters in fills:
            db.execute(statement, parameters)

    return export_terms(db, site_dir, fill)
