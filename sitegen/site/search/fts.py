"""SQLite FTS5: whether Python has it, text and queries cut by the specification, damaged databases redone."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import stat
import unicodedata
from collections.abc import Callable
from functools import cache
from pathlib import Path

from sitegen.errors import SitegenError
from sitegen.site.search.postings import lower, tokenize
from sitegen.site.search.spec import cjk_class

__all__ = [
    "FIX",
    "TOKENIZER",
    "FtsUnavailable",
    "fts5_status",
    "has_cjk",
    "indexed_text",
    "is_damage",
    "match_expression",
    "open_database",
    "query_terms",
    "remove_database",
    "require_fts5",
]

# unicode61 cuts runs of letters and digits (underscores and punctuation separate), folds case and,
# with remove_diacritics 0, keeps accents as the page's query parser does. CJK runs are cut into
# pairs and single characters before they reach it (indexed_text).
TOKENIZER = "unicode61 remove_diacritics 0"
FIX = (
    "install a Python whose sqlite3 module is built with FTS5 (python.org installers, Debian/Ubuntu's "
    "python3, Homebrew and uv's Pythons all have it)"
)


class FtsUnavailable(SitegenError):
    """This Python's SQLite has no FTS5."""


@cache
def fts5_status() -> tuple[str, bool]:
    """The SQLite library version this Python uses, and whether it has FTS5."""
    try:
        db = sqlite3.connect(":memory:")
        try:
            db.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
        finally:
            db.close()
    except sqlite3.Error:
        return sqlite3.sqlite_version, False
    return sqlite3.sqlite_version, True


def require_fts5() -> None:
    version, available = fts5_status()
    if not available:
        raise FtsUnavailable(f"Search needs SQLite's FTS5, which this Python's SQLite {version} lacks: {FIX}")


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Non-ASCII characters, runs of what is no letter or digit, and CJK runs."""
    return re.compile(r"[^\x00-\x7f]"), re.compile(r"[\W_]+"), re.compile(f"[{cjk_class()}]+")


def _cjk_terms(match: re.Match[str]) -> str:
    """A CJK run as the index holds it: its overlapping pairs, then each character alone."""
    run = match.group()
    if len(run) == 1:
        return f" {run} "
    pairs = " ".join(run[start : start + 2] for start in range(len(run) - 1))
    return f" {pairs} {' '.join(run)} "


def indexed_text(text: str) -> str:
    """The text FTS5 indexes, so that unicode61 finds the specification's terms: ASCII text as it is
    (and text whose other characters are only spaces, punctuation and symbols, which both split on);
    else lowercased and folded as the specification says, everything but letters and digits (as
    Python's str.isalnum has them: combining marks and private-use characters too) made a space, and
    CJK runs, written without spaces, cut into their character pairs and single characters."""
    if text.isascii():
        return text
    wordy, _, _ = _patterns()
    if not any(map(_is_wordy, set(wordy.findall(text)))):
        return text
    _, separators, runs = _patterns()
    spaced = separators.sub(" ", lower(text))
    return runs.sub(_cjk_terms, spaced)


def _is_wordy(char: str) -> bool:
    """Whether unicode61 or Python may take the character for part of a word."""
    return unicodedata.category(char)[0] in "LNM" or unicodedata.category(char) == "Co"


def query_terms(words: str) -> list[str]:
    """The terms a query asks for, by the specification: lowercased runs of letters and digits of
    token_min to token_max characters (shorter and longer ones are dropped); CJK runs as their pairs
    (a lone character whole)."""
    return tokenize(words)


def has_cjk(text: str) -> bool:
    return _patterns()[2].search(text) is not None


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: list[str], *, last_is_prefix: bool) -> str:
    """An FTS5 MATCH for entries holding every term (the last may be a prefix); terms are quoted, so
    nothing a user types is read as FTS5 syntax."""
    parts = [_quoted(term) for term in terms]
    _, _, cjk = _patterns()
    if parts and last_is_prefix and not cjk.search(terms[-1]):
        parts[-1] += "*"
    return " AND ".join(parts)


def is_damage(error: sqlite3.DatabaseError) -> bool:
    """Whether an error says the database file is damaged (not locked, full or unreachable)."""
    if type(error) is sqlite3.DatabaseError:
        return True
    text = str(error).lower()
    return "malformed" in text or "not a database" in text or "no such table" in text or "corrupt" in text


def _settled(db: sqlite3.Connection, version: int, create: Callable[[sqlite3.Connection], None]) -> bool:
    """Whether the database is of this layout, made here if it is new (empty). Under a write lock, so
    that of two processes opening a new database at once one makes it and the other finds it made."""
    db.execute("BEGIN IMMEDIATE")
    try:
        found = db.execute("PRAGMA user_version").fetchone()[0]
        if found == version:
            db.execute("SELECT count(*) FROM sqlite_schema").fetchone()
            db.execute("COMMIT")
            return True
        if found == 0 and db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0] == 0:
            create(db)
            db.execute(f"PRAGMA user_version = {int(version)}")
            db.execute("COMMIT")
            return True
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("ROLLBACK")
    return False


def open_database(
    path: Path,
    version: int,
    create: Callable[[sqlite3.Connection], None],
    warn: Callable[[str], None],
    *,
    wal: bool = True,
) -> sqlite3.Connection:
    """The database at path, made with create() when missing, of another layout, or damaged (then
    warn() is told in one line and it is made again: an index is never trusted into wrong results)."""
    require_fts5()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not stat.S_ISREG(path.lstat().st_mode):
        # A pipe would block the open, a link would write elsewhere: not ours to read, made again.
        warn(f"search database {path} is not a regular file: rebuilding it")
        remove_database(path)
    db: sqlite3.Connection | None = None
    try:
        db = _connect(path, wal)
        if _settled(db, version, create):
            return db
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            raise
        warn(f"search database {path} is damaged ({error}): rebuilding it")
    if db is not None:
        db.close()
    # Damaged or of another layout: made again from nothing.
    remove_database(path)
    db = _connect(path, wal)
    if not _settled(db, version, create):
        raise sqlite3.DatabaseError(f"{path} was changed while it was made")
    return db


def _connect(path: Path, wal: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit). With wal, readers never wait for
    a writer; without it no -wal and -shm files stay beside the database, and opening it to find
    nothing changed writes nothing (a site's no-op rebuild must not touch its files)."""
    db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
    db.execute(f"PRAGMA journal_mode = {'WAL' if wal else 'DELETE'}")
    # No fsync, as for every file sitegen can make again (sitegen.fileio.replace_file): the index is
    # made from the sessions, and one that a power loss damaged is found so and made again. Syncing
    # each document's transaction took a cold build's 748 documents 17 s of waiting (1.2 s without).
    db.execute("PRAGMA synchronous = OFF")
    return db


def remove_database(path: Path) -> None:
    """The database and its WAL and shared-memory files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()
