"""Read odek's session store (~/.odek/sessions): id checks, the index, listing and loading, never writing."""

from __future__ import annotations

import builtins
import logging
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson

from sitegen.errors import AmbiguousSession, NotASession, SessionNotFound
from sitegen.session.load import parse_json_leniently

__all__ = [
    "INDEX_FILE",
    "MAX_SESSION_BYTES",
    "InvalidSessionId",
    "OdekEntry",
    "OdekSession",
    "OdekStore",
    "count_user_turns",
    "default_odek_dirs",
    "is_session_filename",
    "load_odek_file",
    "ns_to_ms",
    "parse_time_ns",
    "read_bytes_capped",
    "read_json_capped",
    "validate_session_id",
]

log = logging.getLogger(__name__)

# odek's MaxSessionFileBytes: Load refuses anything larger (exactly 32 MiB is still allowed).
MAX_SESSION_BYTES = 32 * 1024 * 1024
INDEX_FILE = "index.json"
# Files in the sessions folder that belong to the index or the vector index, not to a session.
_NOT_SESSIONS = frozenset({INDEX_FILE, "vectors_meta.json"})

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9})\d*)?([Zz]|[+-]\d{2}:\d{2})")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Go's zero time.Time, which odek writes for a time it never set.
_GO_ZERO_SECONDS = (datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(seconds=1)


class InvalidSessionId(SessionNotFound):
    """An id odek's ValidateSessionID rejects: it can never name a session file."""


def validate_session_id(session_id: object) -> str:
    """Return the id when odek would accept it; reject empty, dot names, separators, '..' and NUL."""
    if not isinstance(session_id, str) or session_id == "":
        raise InvalidSessionId(f"Invalid odek session id {session_id!r}: empty")
    if session_id in (".", ".."):
        raise InvalidSessionId(f"Invalid odek session id {session_id!r}: reserved name")
    if "/" in session_id or "\\" in session_id:
        raise InvalidSessionId(f"Invalid odek session id {session_id!r}: path separators not allowed")
    if ".." in session_id:
        raise InvalidSessionId(f"Invalid odek session id {session_id!r}: traversal not allowed")
    if "\x00" in session_id:
        raise InvalidSessionId(f"Invalid odek session id {session_id!r}: null byte not allowed")
    return session_id


def parse_time_ns(value: object) -> int | None:
    """Epoch nanoseconds of an RFC 3339 time; None when unreadable or Go's zero time (unknown)."""
    if not isinstance(value, str):
        return None
    match = _RFC3339.fullmatch(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction, zone = match.group(7) or "", match.group(8)
    if zone in ("Z", "z"):
        tz = UTC
    else:
        sign = -1 if zone[0] == "-" else 1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        return None
    # timedelta floor division is exact integer arithmetic, so nanoseconds survive (floats would not).
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    if seconds == _GO_ZERO_SECONDS and nanos == 0:
        return None
    return seconds * 1_000_000_000 + nanos


def ns_to_ms(ns: int | None) -> int | None:
    return None if ns is None else ns // 1_000_000


def count_user_turns(messages: Iterable[object]) -> int:
    """odek's countUserTurns: every message whose role is "user"."""
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "user")


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class OdekEntry:
    """One listing row: what index.json holds (or the same facts read from the session file)."""

    id: str
    title: str
    created_ns: int | None
    updated_ns: int | None
    turns: int
    path: Path

    @property
    def created_ms(self) -> int | None:
        return ns_to_ms(self.created_ns)

    @property
    def updated_ms(self) -> int | None:
        return ns_to_ms(self.updated_ns)


@dataclass(slots=True)
class OdekSession:
    """A loaded odek session: the JSON document as written (unknown keys kept) and where it came from."""

    id: str
    path: Path
    data: dict[str, Any]
    size: int = 0
    mtime_ns: int = 0

    @property
    def created_ns(self) -> int | None:
        return parse_time_ns(self.data.get("created_at"))

    @property
    def updated_ns(self) -> int | None:
        return parse_time_ns(self.data.get("updated_at"))

    @property
    def model(self) -> str:
        return _str(self.data.get("model"))

    @property
    def task(self) -> str:
        return _str(self.data.get("task"))

    @property
    def sandbox(self) -> bool:
        return self.data.get("sandbox") is True

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.data.get("messages")
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def buffer(self) -> list[str]:
        buffer = self.data.get("buffer")
        return [b for b in buffer if isinstance(b, str)] if isinstance(buffer, list) else []

    @property
    def turns(self) -> int:
        """User messages, counted as odek counts them; the stored field can lag after a direct Save."""
        return count_user_turns(self.messages)

    def entry(self) -> OdekEntry:
        return OdekEntry(self.id, self.task, self.created_ns, self.updated_ns, self.turns, self.path)


def is_session_filename(name: str) -> bool:
    """A <id>.json name that is not the index, the vector metadata, a dotfile or a temp file."""
    if not name.endswith(".json") or name.startswith(".") or name in _NOT_SESSIONS:
        return False
    try:
        validate_session_id(name[: -len(".json")])
    except InvalidSessionId:
        return False
    return True


def read_bytes_capped(path: Path, what: str) -> bytes:
    """A file's bytes when no larger than odek's cap; raise SessionNotFound or NotASession."""
    try:
        # Non-blocking: opening a FIFO for reading would otherwise wait for a writer forever.
        handle = open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise SessionNotFound(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise NotASession(f"Not an {what}: {path} is a directory") from None
    except OSError as error:
        raise NotASession(f"Cannot read {what} {path}: {error.strerror or error}") from None
    with handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise NotASession(f"Not an {what}: {path} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise NotASession(f"Not an {what}: {path} is not a regular file")
        size = info.st_size
        if size > MAX_SESSION_BYTES:
            raise NotASession(f"Refusing {what} {path}: {size} bytes is over the 32 MiB limit")
        try:
            return handle.read()
        except OSError as error:
            raise NotASession(f"Cannot read {what} {path}: {error.strerror or error}") from None


def read_json_capped(path: Path, what: str) -> Any:
    """Parse one JSON file no larger than odek's cap; raise SessionNotFound or NotASession."""
    data = read_bytes_capped(path, what)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        # odek's Go reader takes a lone surrogate escape or bytes that are not UTF-8; orjson does not.
        lenient = parse_json_leniently(data)
        if lenient is None:
            raise NotASession(f"Cannot parse {what} {path}: {error}") from None
        return lenient


def load_odek_file(path: str | os.PathLike[str]) -> OdekSession:
    """Load <id>.json as odek's Load does: valid id from the name, size cap, parse, matching id."""
    file_path = Path(path)
    if not file_path.name.endswith(".json"):
        raise NotASession(f"Not an odek session file: {file_path} (expected <id>.json)")
    session_id = validate_session_id(file_path.name[: -len(".json")])
    data = read_json_capped(file_path, "odek session")
    if not isinstance(data, dict):
        raise NotASession(f"Not an odek session: {file_path} does not hold a JSON object")
    if data.get("id") != session_id:
        raise NotASession(f"Refusing odek session {file_path}: ID mismatch (file contains {data.get('id')!r})")
    info = file_path.stat()
    return OdekSession(session_id, file_path, data, size=info.st_size, mtime_ns=info.st_mtime_ns)


class OdekStore:
    """One odek sessions folder, read-only: list, latest, load and resolve by id."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)

    def __repr__(self) -> str:
        return f"OdekStore({str(self.dir)!r})"

    def path(self, session_id: str) -> Path:
        """Where a session lives; the id is validated before any path is built."""
        return self.dir / f"{validate_session_id(session_id)}.json"

    def load(self, session_id: str) -> OdekSession:
        return load_odek_file(self.path(session_id))

    def list(self) -> builtins.list[OdekEntry]:
        """Every session, most recently updated first; from index.json when readable, else a scan."""
        indexed = self._read_index()
        if indexed is None:
            entries = self._scan(set())
        else:
            # A session saved while the index write failed is still a session: add what the index missed.
            entries = indexed + self._scan({entry.id for entry in indexed})
        # Unknown update times sort last; the id breaks ties so the order is the same on every run.
        entries.sort(key=lambda e: (e.updated_ns is not None, e.updated_ns or 0, e.id), reverse=True)
        return entries

    def latest(self) -> OdekSession:
        """The most recently updated session; SessionNotFound when the store is empty."""
        entries = self.list()
        if not entries:
            raise SessionNotFound(f"No odek sessions in {self.dir}")
        return self.load(entries[0].id)

    def resolve(self, id_or_prefix: str) -> OdekEntry:
        """An exact id, else the one session whose id starts with the prefix (case-insensitive)."""
        entries = self.list()
        for entry in entries:
            if entry.id == id_or_prefix:
                return entry
        wanted = id_or_prefix.lower()
        matches = [entry for entry in entries if entry.id.lower().startswith(wanted)] if wanted else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            listed = ", ".join(f"{entry.id} ({entry.title[:40]})" for entry in matches[:3])
            more = f" and {len(matches) - 3} more" if len(matches) > 3 else ""
            raise AmbiguousSession(f"odek session id {id_or_prefix!r} matches {len(matches)} sessions: {listed}{more}")
        raise SessionNotFound(f"No odek session {id_or_prefix!r} in {self.dir}")

    def _read_index(self) -> builtins.list[OdekEntry] | None:
        """Entries of index.json whose file exists; None when the index is missing, unreadable or empty."""
        try:
            raw = read_json_capped(self.dir / INDEX_FILE, "odek index")
        except (SessionNotFound, NotASession) as error:
            if not isinstance(error, SessionNotFound):
                log.warning("%s; listing by scanning the folder", error)
            return None
        if not isinstance(raw, list):
            log.warning("odek index %s is not a JSON array; listing by scanning", self.dir / INDEX_FILE)
            return None
        by_id: dict[str, OdekEntry] = {}
        for item in raw:
            if not isinstance(item, dict):
                continue
            try:
                session_id = validate_session_id(item.get("id"))
            except InvalidSessionId as error:
                log.warning("Skipping odek index entry: %s", error)
                continue
            path = self.dir / f"{session_id}.json"
            if not path.is_file():
                log.warning("Skipping stale odek index entry %s: %s is gone", session_id, path)
                continue
            # Like odek's map-backed index, a repeated id keeps its last entry.
            by_id[session_id] = OdekEntry(
                id=session_id,
                title=_str(item.get("title")),
                created_ns=parse_time_ns(item.get("created_at")),
                updated_ns=parse_time_ns(item.get("updated_at")),
                turns=_int(item.get("turns")),
                path=path,
            )
        return list(by_id.values()) if raw else None

    def _scan(self, known: set[str]) -> builtins.list[OdekEntry]:
        """Load each session file not in known; unreadable ones are skipped with a warning."""
        try:
            names = sorted(os.listdir(self.dir))
        except FileNotFoundError:
            return []
        except OSError as error:
            raise SessionNotFound(f"Cannot list odek sessions in {self.dir}: {error.strerror}") from None
        entries: builtins.list[OdekEntry] = []
        for name in names:
            if not is_session_filename(name) or name[: -len(".json")] in known:
                continue
            path = self.dir / name
            if not path.is_file():
                continue
            try:
                entries.append(load_odek_file(path).entry())
            except (SessionNotFound, NotASession) as error:
                log.warning("Skipping %s", error)
        return entries


def default_odek_dirs(extra: Iterable[str | os.PathLike[str]] = ()) -> list[Path]:
    """~/.odek/sessions when it exists, then each extra folder (a repeatable --odek-dir), de-duplicated."""
    found: list[Path] = []
    seen: set[Path] = set()
    home = Path.home() / ".odek" / "sessions"
    candidates: list[tuple[Path, bool]] = [(home, False)]
    candidates += [(Path(os.path.expanduser(os.fspath(d))), True) for d in extra]
    for path, required in candidates:
        if not path.is_dir():
            if required:
                raise SessionNotFound(f"odek session folder not found: {path}")
            continue
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            found.append(path)
    return found
