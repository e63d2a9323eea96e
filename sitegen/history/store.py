"""Read an agent's history.db: one snapshot, read-only, never a file created or changed beside it."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from sitegen.gcpause import collector_paused
from sitegen.session.discover import not_a_file

__all__ = [
    "HISTORY_FILE",
    "OnBatch",
    "Prompt",
    "Snapshot",
    "StoreRead",
    "history_stores",
    "is_note",
    "query_snapshot",
    "read_store",
    "store_fingerprint",
]

HISTORY_FILE = "history.db"
_MAGIC = b"SQLite format 3\x00"
# SQLITE_BUSY is retried this many times over about a second, then the store is reported as locked.
_BUSY_RETRIES = 8
_BUSY_WAIT_S = 0.02
# A snapshot read without locks (immutable, or a copy) is read again when the files moved under it.
_CHANGED_RETRIES = 5
_ROWS_PER_FETCH = 4096
# created_at is Unix seconds; a value this large can only be milliseconds.
_MILLISECONDS_FROM = 10**11
_LAST_SECOND = 253402300799  # 9999-12-31T23:59:59Z
# The columns sitegen reads; any other column of the table is left alone.
_KNOWN = ("id", "prompt", "created_at", "cwd", "session_id", "use_count")
# A read after a snapshot fetches the prompts of new and changed rows only, unless this share of
# the rows changed (then it reads them all); ids go to SQLite this many at a time.
_CHANGED_SHARE = 0.25
_IDS_PER_QUERY = 500
# A row's problems in Snapshot.flags: bit 0 empty or NULL, bit 1 no valid time, from bit 2 on the
# count of its values that are not UTF-8.
_EMPTY, _UNDATED, _BAD_ONE = 1, 2, 4


@dataclass(frozen=True, slots=True)
class Prompt:
    """One row of the history table; a column the store does not have is None."""

    id: int
    text: str
    created_s: int | None  # Unix seconds
    cwd: str | None
    session_id: str | None
    use_count: int | None


@dataclass(slots=True)
class Snapshot:
    """The rows one read saw. A process that reads a store again (watch) passes it back: the next
    read scans ids and the small columns only, and fetches the prompts of rows that are new or changed."""

    columns: str  # what was selected: a changed schema reads every row again
    meta: dict[int, tuple[object, ...]] = field(default_factory=dict)  # id -> its other columns as stored
    prompts: dict[int, Prompt] = field(default_factory=dict)  # in id order
    flags: dict[int, int] = field(default_factory=dict)  # id -> its problems (rows with one only)
    unkeyed: int = 0  # rows whose id is no integer: left out, and every read reads all rows
    stamp: Sequence[int] = ()  # the store's fingerprint before the read (store_fingerprint)


@dataclass(slots=True)
class StoreRead:
    """What one read of a store gave: its prompts in id order, and one line per problem met."""

    path: Path
    prompts: list[Prompt] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    readable: bool = False  # False: nothing could be read at all
    busy: bool = False  # unreadable because another process held it locked past the retries
    fts: bool = False  # history_fts answered a query
    # With a query: the ids history_fts matched, or None when it could not be asked (then scan).
    matched: set[int] | None = None
    snapshot: Snapshot | None = None
    # After a read given a snapshot: ids whose prompt is new, changed or gone (None: all read anew).
    changed: set[int] | None = None


# Called during a full read with the snapshot read so far, after each batch of rows (and not after
# the last: read_store's StoreRead has those); a retried read starts a new snapshot.
OnBatch = Callable[["Snapshot"], None]


@dataclass(frozen=True, slots=True)
class _Ask:
    fts_words: Sequence[str] | None
    previous: Snapshot | None
    on_batch: OnBatch | None
    # Another reading of the same snapshot instead of the history table's (query_snapshot).
    work: Callable[[sqlite3.Connection], None] | None = None
    stamp: Sequence[int] = ()  # the store's fingerprint before this read


class _Moved(Exception):
    """The files changed while a lock-free snapshot was read: read again."""


# A store without history_fts is whole: only `sitegen history` reads every prompt instead of asking it.
# Its line is a note (listed with the problems, but no reason for `sitegen build --strict` to fail).
_NO_FTS = "no history_fts index: `sitegen history` searches by reading every prompt"


def is_note(message: str) -> bool:
    """Whether a line of StoreRead.problems only informs: the store is read completely all the same."""
    return message == _NO_FTS


def history_stores(agent_dirs: Iterable[Path]) -> list[Path]:
    """<agent dir>/history.db of each agent dir where something by that name exists, each once."""
    found: dict[str, Path] = {}
    for folder in agent_dirs:
        path = folder / HISTORY_FILE
        if os.path.lexists(path):
            found.setdefault(os.path.realpath(path), path)
    return list(found.values())


def _stat(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, 0)
    return (info.st_size, info.st_mtime_ns)


def store_fingerprint(path: Path) -> list[int]:
    """Size and mtime of the database and of its WAL: what changes whenever the agent commits."""
    return [*_stat(str(path)), *_stat(f"{path}-wal")]


def _header_problem(header: bytes, size: int) -> tuple[str | None, str | None]:
    """(why the file is no database, a note that it is cut short) from its first 100 bytes."""
    if size == 0:
        return None, None
    if len(header) < 100 or not header.startswith(_MAGIC):
        return "not an SQLite database (encrypted, or another kind of file)", None
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count is valid only when its "version-valid-for" matches the change counter.
    if header[92:96] == header[24:28] and pages * page_size > size:
        return None, f"truncated: {size:,} of {pages * page_size:,} bytes are there"
    return None, None


def _uri(path: str, **params: str) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"file:{quote(os.path.abspath(path))}?{query}"


def _text(value: object, bad: list[int]) -> str | None:
    """A TEXT value read as bytes: UTF-8, or with U+FFFD where it is not (counted in bad)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            bad[0] += 1
            return value.decode("utf-8", "replace")
    return str(value)


def _seconds(value: object) -> int | None:
    """created_at as Unix seconds: an integer (milliseconds too), a real, or an ISO time as text."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace").strip()
        try:
            value = float(text)
        except ValueError:
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                return None
            return int(moment.timestamp()) if moment.tzinfo else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    seconds = int(value // 1000 if abs(value) >= _MILLISECONDS_FROM else value)
    return seconds if 0 <= seconds <= _LAST_SECOND else None


def fts_expression(words: Sequence[str]) -> str:
    """An FTS5 query that every word must match as a token prefix (words quoted: no operators)."""
    return " AND ".join('"' + word.replace('"', '""') + '"*' for word in words)


def _read_rows(connection: sqlite3.Connection, read: StoreRead, ask: _Ask) -> None:
    """The history table (and history_fts, when asked) inside one read transaction."""
    connection.execute("BEGIN")
    try:
        tables = {
            name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        }
        if "history" not in tables:
            read.readable = True
            read.problems.append("no history table: not a prompt history, or no prompt written yet")
            return
        columns = {
            (name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)).lower()
            for (name,) in connection.execute("SELECT name FROM pragma_table_info('history')")
        }
        if "prompt" not in columns:
            read.readable = True
            read.problems.append("the history table has no prompt column: nothing to show")
            return
        for missing in ("created_at", "cwd"):
            if missing not in columns:
                read.problems.append(f"the history table has no {missing} column: prompts are shown without it")
        selected = ["id" if "id" in columns else "rowid", "prompt"]
        selected += [name if name in columns else "NULL" for name in _KNOWN[2:]]
        read.readable = True
        if ask.fts_words is not None:
            read.matched = _fts_match(connection, read, "history_fts" in tables, ask.fts_words)
        else:
            _probe_fts(connection, read, "history_fts" in tables)
        snapshot = read.snapshot = Snapshot(", ".join(selected), stamp=ask.stamp)
        damage = None
        if ask.previous is None or not _read_changes(connection, selected, ask.previous, read):
            snapshot = read.snapshot = Snapshot(snapshot.columns, stamp=ask.stamp)
            read.changed = None
            cursor = connection.execute(f"SELECT {snapshot.columns} FROM history ORDER BY 1")
            damage = _fetch(cursor, snapshot, ask.on_batch)
        _tally(read, snapshot, damage)
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")


def _read_changes(connection: sqlite3.Connection, selected: list[str], previous: Snapshot, read: StoreRead) -> bool:
    """Fill read.snapshot from previous and the rows that differ from it: False when it is cheaper
    (or only possible) to read every row."""
    snapshot = read.snapshot
    assert snapshot is not None
    if previous.columns != snapshot.columns or previous.unkeyed:
        return False
    scan = connection.execute(f"SELECT {selected[0]}, {', '.join(selected[2:])} FROM history ORDER BY 1").fetchall()
    known = previous.meta
    changed = [row[0] for row in scan if known.get(row[0]) != row[1:]]
    if not changed and snapshot.stamp != previous.stamp:
        # The store was written, yet no row's other columns changed: a prompt edited in place is
        # found by its text alone (every text read, only in such a read; SQLite has no cheaper
        # witness: no row version, and a text's size costs reading it).
        changed = _edited(connection, selected, previous)
    if len(changed) > _CHANGED_SHARE * len(scan) or any(type(row_id) is not int for row_id in changed):
        return False
    fresh = Snapshot(snapshot.columns)
    for start in range(0, len(changed), _IDS_PER_QUERY):
        ids = changed[start : start + _IDS_PER_QUERY]
        marks = ", ".join("?" * len(ids))
        query = f"SELECT {snapshot.columns} FROM history WHERE {selected[0]} IN ({marks}) ORDER BY 1"
        if _fetch(connection.execute(query, ids), fresh) is not None:
            return False
    meta, prompts, flags = snapshot.meta, snapshot.prompts, snapshot.flags
    for row in scan:
        row_id = row[0]
        source = fresh if row_id in fresh.meta else previous
        meta[row_id] = source.meta[row_id]
        prompt = source.prompts.get(row_id)
        if prompt is not None:
            prompts[row_id] = prompt
        flag = source.flags.get(row_id)
        if flag:
            flags[row_id] = flag
    read.changed = set(changed) | (known.keys() - meta.keys())
    return True


def _edited(connection: sqlite3.Connection, selected: list[str], previous: Snapshot) -> list[int]:
    """The ids whose prompt is not the text the snapshot holds for them, as _fetch_rows decodes it."""
    edited = []
    prompts = previous.prompts
    for row_id, prompt in connection.execute(f"SELECT {selected[0]}, {selected[1]} FROM history ORDER BY 1"):
        held = prompts.get(row_id)  # None: empty (or NULL) when the snapshot was read
        text = prompt.decode("utf-8", "replace") if type(prompt) is bytes else _text(prompt, [0]) or ""
        if text != (held.text if held is not None else ""):
            edited.append(row_id)
    return edited


def _probe_fts(connection: sqlite3.Connection, read: StoreRead, present: bool) -> None:
    if not present:
        read.problems.append(_NO_FTS)
        return
    try:
        connection.execute("SELECT rowid FROM history_fts WHERE history_fts MATCH '\"a\"*' LIMIT 1").fetchall()
        read.fts = True
    except sqlite3.DatabaseError as error:
        read.problems.append(f"history_fts does not answer ({error}): `sitegen history` reads every prompt instead")


def _fts_match(connection: sqlite3.Connection, read: StoreRead, present: bool, words: Sequence[str]) -> set[int] | None:
    _probe_fts(connection, read, present)
    if not read.fts or not words:
        return None
    try:
        rows = connection.execute(
            "SELECT rowid FROM history_fts WHERE history_fts MATCH ?", (fts_expression(words),)
        ).fetchall()
    except sqlite3.DatabaseError as error:
        read.fts = False
        read.problems.append(f"history_fts does not answer ({error}): `sitegen history` reads every prompt instead")
        return None
    return {row[0] for row in rows if isinstance(row[0], int)}


def _fetch(cursor: sqlite3.Cursor, snapshot: Snapshot, on_batch: OnBatch | None = None) -> str | None:
    """The rows of cursor into snapshot; what went wrong half way, if anything."""
    try:
        with collector_paused():  # a few hundred thousand objects, none in a cycle
            _fetch_rows(cursor, snapshot, on_batch)
    except sqlite3.DatabaseError as error:
        if _is_busy(error):
            raise
        return f"damaged ({error}): {len(snapshot.prompts):,} prompts could be read before it"
    return None


def _fetch_rows(cursor: sqlite3.Cursor, snapshot: Snapshot, on_batch: OnBatch | None) -> None:
    # Folders and session ids repeat: each distinct value is decoded once (and 1 when it is not UTF-8).
    names: dict[object, tuple[str | None, int]] = {None: (None, 0)}
    meta, prompts, flags = snapshot.meta, snapshot.prompts, snapshot.flags
    while rows := cursor.fetchmany(_ROWS_PER_FETCH):
        if on_batch is not None and prompts:
            on_batch(snapshot)
        for row in rows:
            row_id, prompt, created, cwd, session_id, use_count = row
            if type(row_id) is not int:
                snapshot.unkeyed += 1
                continue
            meta[row_id] = row[2:]
            flag = 0
            if type(prompt) is bytes:
                try:
                    text = prompt.decode()
                except UnicodeDecodeError:
                    text = prompt.decode("utf-8", "replace")
                    flag = _BAD_ONE
            else:
                bad = [0]
                text = _text(prompt, bad) or ""
                flag = bad[0] * _BAD_ONE
            if not text:
                flags[row_id] = flag | _EMPTY
                continue
            if type(created) is int and 0 <= created < _MILLISECONDS_FROM:
                seconds: int | None = created
            else:
                seconds = _seconds(created)
                if seconds is None and created is not None:
                    flag |= _UNDATED
            place = names.get(cwd)
            if place is None:
                place = names[cwd] = _name(cwd)
            session = names.get(session_id)
            if session is None:
                session = names[session_id] = _name(session_id)
            flag += (place[1] + session[1]) * _BAD_ONE
            if flag:
                flags[row_id] = flag
            count = use_count if type(use_count) is int else None
            prompts[row_id] = Prompt(row_id, text, seconds, place[0], session[0], count)


def _name(value: object) -> tuple[str | None, int]:
    """A folder or session id as text (None when empty), and 1 when it was not UTF-8."""
    bad = [0]
    return _text(value, bad) or None, bad[0]


def _tally(read: StoreRead, snapshot: Snapshot, damage: str | None) -> None:
    """read.prompts from the snapshot, and one line per kind of problem its rows have."""
    read.prompts = list(snapshot.prompts.values())
    if damage is not None:
        read.problems.append(damage)
    empty = snapshot.unkeyed
    undated = bad = 0
    for flag in snapshot.flags.values():
        empty += flag & _EMPTY
        undated += (flag & _UNDATED) >> 1
        bad += flag // _BAD_ONE
    if empty:
        read.problems.append(f"{empty:,} prompt{'s are' if empty != 1 else ' is'} empty or NULL (left out)")
    if undated:
        read.problems.append(f"{undated:,} prompt{'s have' if undated != 1 else ' has'} no valid created_at time")
    if bad:
        read.problems.append(f"{bad:,} value{'s are' if bad != 1 else ' is'} not valid UTF-8 (shown with �)")


def _is_busy(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(error)


def _connect(uri: str) -> sqlite3.Connection:
    # timeout: SQLite's own busy handler waits this long before SQLITE_BUSY reaches the retries.
    connection = sqlite3.connect(uri, uri=True, timeout=0.05, isolation_level=None, check_same_thread=False)
    connection.text_factory = bytes
    return connection


def _read_with(uri: str, read: StoreRead, ask: _Ask) -> None:
    connection = _connect(uri)
    try:
        if ask.work is not None:
            ask.work(connection)
        else:
            _read_rows(connection, read, ask)
    finally:
        connection.close()


def _read_immutable(path: str, read: StoreRead, ask: _Ask) -> None:
    """A WAL database without a -wal file: opening it read-only would create -wal and -shm, so it
    is read as immutable (no locks, no files), and read again if a writer touched it meanwhile."""
    before = _stat(path)
    _read_with(_uri(path, immutable="1"), read, ask)
    if _stat(path) != before or os.path.lexists(f"{path}-wal"):
        raise _Moved


def _read_copy(path: str, read: StoreRead, ask: _Ask) -> None:
    """A -wal without its -shm (left by a crash): a read-only open would create the -shm, so the
    database and its WAL are copied aside and the copy is read (SQLite replays the WAL into it)."""
    before = (_stat(path), _stat(f"{path}-wal"))
    with tempfile.TemporaryDirectory(prefix="sitegen-history-") as folder:
        copy = os.path.join(folder, HISTORY_FILE)
        shutil.copyfile(path, copy)
        shutil.copyfile(f"{path}-wal", f"{copy}-wal")
        if (_stat(path), _stat(f"{path}-wal")) != before or os.path.lexists(f"{path}-shm"):
            raise _Moved
        _read_with(_uri(copy, mode="ro"), read, ask)


def _read_once(path: str, header: bytes, read: StoreRead, ask: _Ask) -> None:
    wal_mode = len(header) >= 20 and header[18] == 2
    if wal_mode and not os.path.lexists(f"{path}-wal"):
        _read_immutable(path, read, ask)
    elif wal_mode and not os.path.lexists(f"{path}-shm"):
        _read_copy(path, read, ask)
    else:
        # The agent has both files (or the database keeps a rollback journal): an ordinary
        # read-only connection, which takes a read lock and sees the last commit.
        _read_with(_uri(path, mode="ro"), read, ask)


def query_snapshot(path: Path, work: Callable[[sqlite3.Connection], None]) -> bool:
    """Run work on one snapshot of the store, opened as read_store opens it (read-only, no file made
    beside it; TEXT comes as bytes); False when it could not be read (missing, locked, damaged)."""
    if not_a_file(path) is not None or not path.is_file():
        return False
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return False
    if size == 0 or _header_problem(header, size)[0] is not None:
        return False
    for _ in range(_CHANGED_RETRIES):
        try:
            _read_once(str(path), header, StoreRead(path), _Ask(None, None, None, work))
        except _Moved:
            continue
        except (sqlite3.Error, OSError):
            return False
        return True
    return False


def read_store(
    path: Path,
    fts_words: Sequence[str] | None = None,
    previous: Snapshot | None = None,
    on_batch: OnBatch | None = None,
) -> StoreRead:
    """Every prompt of a store, read in one transaction; with fts_words, also the ids history_fts
    matches for them (StoreRead.matched). Problems become lines in StoreRead.problems, never errors.

    With previous (the snapshot of an earlier read), only new and changed rows are fetched whole;
    StoreRead.changed names them. on_batch sees a full read's snapshot as it grows (see OnBatch)."""
    read = StoreRead(path)
    what = not_a_file(path)
    if what is not None:
        read.problems.append(f"not a prompt history: it is {what}")
        return read
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
            size = os.fstat(handle.fileno()).st_size
    except OSError as error:
        read.problems.append(f"cannot read it: {error.strerror or error}")
        return read
    if size == 0:
        read.readable = True
        read.problems.append("empty file (0 bytes): no prompt written yet")
        return read
    broken, truncated = _header_problem(header, size)
    if broken is not None:
        read.problems.append(broken)
        return read
    busy = moved = 0
    while True:
        stamp = store_fingerprint(path)  # before the read: a write after it shows in the next
        attempt = StoreRead(path)
        try:
            _read_once(str(path), header, attempt, _Ask(fts_words, previous, on_batch, stamp=stamp))
        except _Moved:
            moved += 1
            if moved < _CHANGED_RETRIES:
                continue
            read.problems.append("it kept changing while being read; try again")
            return read
        except sqlite3.Error as error:
            if _is_busy(error) and busy < _BUSY_RETRIES:
                busy += 1
                time.sleep(_BUSY_WAIT_S * busy)
                continue
            if _is_busy(error):
                read.busy = True
                read.problems.append("locked by another process (SQLITE_BUSY) past the retries")
            elif truncated:
                read.problems.append(f"{truncated}; it cannot be read ({error})")
            else:
                read.problems.append(f"cannot be read: {error}")
            return read
        except OSError as error:
            read.problems.append(f"cannot read it: {error.strerror or error}")
            return read
        if truncated:
            # One line for the one defect: the cut, and what it cost.
            damage = next((line for line in attempt.problems if line.startswith("damaged (")), None)
            if damage is not None:
                attempt.problems.remove(damage)
            attempt.problems.insert(0, f"{truncated}; {damage}" if damage is not None else truncated)
        return attempt
