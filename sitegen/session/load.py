"""Read a session file line by line into a header and plain entry dicts, never writing to it."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn

import orjson

from sitegen.errors import NotASession, SessionNotFound
from sitegen.fileio import open_regular
from sitegen.session.entries import MAX_NESTING, Entry, Header, is_header

__all__ = [
    "HEADER_PREFIX_BYTES",
    "MAX_LINE_BYTES",
    "LongLine",
    "RawSession",
    "load_raw",
    "parse_json_leniently",
    "read_header",
    "session_lines",
]

# The seed reads a 4096-byte prefix for metadata; the omp title slot (a padded line before the
# header) pushes the header further down, so we read a little more.
HEADER_PREFIX_BYTES = 8192
# A line longer than this is skipped unread (and listed): memory stays a small multiple of it
# whatever the file holds (a line that never ends, of gigabytes). The agents keep images in blobs.
MAX_LINE_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class LongLine:
    """A line longer than MAX_LINE_BYTES: where it starts, and its length without the newline."""

    offset: int
    size: int
    ended: bool

    def describe(self) -> str:
        end = "" if self.ended else " (it never ends)"
        return (
            f"a line of {self.size / (1 << 20):,.0f} MB at byte {self.offset:,}{end} is longer than the "
            f"{MAX_LINE_BYTES >> 20} MB sitegen reads of one line: not shown"
        )


def session_lines(handle: IO[bytes], long_lines: list[LongLine], limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The file's lines as `for line in handle` gives them, but a line longer than `limit` is read
    past in 1 MB steps, not yielded, and appended to long_lines."""
    try:
        size = os.fstat(handle.fileno()).st_size
    except (OSError, ValueError):
        size = limit + 1
    # A size-limited readline costs half as much again as iterating: only a file that can hold a
    # long line pays for it.
    return iter(handle) if size <= limit else _bounded_lines(handle, long_lines, limit)


def _bounded_lines(handle: IO[bytes], long_lines: list[LongLine], limit: int) -> Iterator[bytes]:
    readline = handle.readline
    cap = limit + 1
    while line := readline(cap):
        if len(line) < cap or line.endswith(b"\n"):
            yield line
            continue
        offset = handle.tell() - len(line)
        size = len(line)
        ended = False
        del line  # not kept while the rest is read
        while part := readline(1 << 20):
            size += len(part)
            if part.endswith(b"\n"):
                size, ended = size - 1, True
                break
        long_lines.append(LongLine(offset, size, ended))


@dataclass(slots=True)
class RawSession:
    """A session file as written: header, entries in file order, and what could not be read."""

    path: Path
    header: Header
    entries: list[Entry]
    title_slot: dict[str, Any] | None = None
    malformed_lines: int = 0
    truncated_tail: bool = False
    # Lines kept verbatim so a rewrite (migrate --write) never loses bytes it could not parse:
    # (index of the entry the line came before, -1 for before the header; raw line).
    unparsed: list[tuple[int, bytes]] = field(default_factory=list)
    size: int = 0
    mtime_ns: int = 0
    # Lines too long to read (session_lines): a rewrite would lose them.
    long_lines: list[LongLine] = field(default_factory=list)
    # What was read but cannot be shown, one line each (a line too long to render): the problems page.
    defects: list[str] = field(default_factory=list)


_BOM = b"\xef\xbb\xbf"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return parse_json_leniently(line)


def parse_json_leniently(data: bytes) -> Any:
    """JSON orjson refuses but the agents' own readers (JSON.parse, Go's encoding/json) accept: a
    lone UTF-16 surrogate escape ("\\ud83d", half an emoji cut by a truncating tool) or bytes that are
    not UTF-8. Such strings come back with U+FFFD in place of what cannot be encoded; None when not JSON."""
    text = data.removeprefix(_BOM).decode("utf-8", "replace")
    try:
        record = json.loads(text, parse_int=_integer, parse_constant=_not_json)
    except ValueError:
        return None
    except RecursionError:
        try:
            record = json.loads(_clip_nesting_in_text(text), parse_int=_integer, parse_constant=_not_json)
        except (ValueError, RecursionError):
            return None
    return _without_surrogates(record)


def _not_json(name: str) -> NoReturn:
    """NaN and Infinity, which the json module reads but JSON.parse (and so every agent) refuses."""
    raise ValueError(f"{name} is not JSON")


def _integer(text: str) -> int | float:
    """An integer as orjson reads it: a double past 64 bits, which orjson.dumps can write again."""
    if len(text) < 19:
        return int(text)
    number = float(text)
    return int(text) if abs(number) < 2**63 else number


# A JSON string (escapes included) or a bracket: what nesting is counted by, without parsing.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def _clip_nesting_in_text(text: str, limit: int = MAX_NESTING) -> str:
    """JSON text with each list or object nested deeper than limit replaced by "…", as json_text shows
    it: a line the agents read (JSON.parse has no depth limit) but that is past the stack's reach here."""
    pieces: list[str] = []
    depth = 0
    kept_from = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            if depth == limit + 1:
                pieces.append(text[kept_from : match.start()])
                pieces.append('"…"')
        else:
            if depth == limit + 1:
                kept_from = match.end()
            depth -= 1
    pieces.append(text[kept_from:] if depth <= limit else "")
    return "".join(pieces)


def _clean(text: str) -> str:
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _without_surrogates(value: Any) -> Any:
    """The value with lone surrogates in its strings (keys included) made U+FFFD; no recursion,
    so a deeply nested line cannot exhaust the stack."""
    if isinstance(value, str):
        return _clean(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [value]
    pending: list[tuple[Any, Any]] = [(root, 0)]
    while pending:
        container, key = pending.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = _clean(item)
        elif isinstance(item, list):
            pending.extend((item, index) for index in range(len(item)))
        elif isinstance(item, dict):
            if any(not k.isascii() for k in item):
                item = container[key] = {_clean(k): v for k, v in item.items()}
            pending.extend((item, k) for k in item)
    return root[0]


def load_raw(path: str | os.PathLike[str]) -> RawSession:
    """Load a session file; raise SessionNotFound or NotASession, skip and count bad lines."""
    file_path = Path(path)
    try:
        if stat.S_ISFIFO(os.stat(file_path).st_mode):  # opening it would wait for a writer forever
            raise NotASession(f"Not a session file: {file_path} is a pipe")
    except OSError:
        pass  # the open below says what is wrong
    try:
        handle = open_regular(file_path)
    except FileNotFoundError:
        raise SessionNotFound(f"File not found: {file_path}") from None
    except IsADirectoryError:
        raise NotASession(f"Not a session file: {file_path} is a directory") from None
    except PermissionError:
        raise NotASession(f"Cannot read {file_path}: permission denied") from None
    except OSError as error:
        if error.errno != errno.EINVAL:
            raise
        # Made a pipe, a socket or a device since the check above.
        raise NotASession(f"Not a session file: {file_path} is not a regular file") from None
    with handle:
        info = os.fstat(handle.fileno())
        header: Header | None = None
        title_slot: dict[str, Any] | None = None
        entries: list[Entry] = []
        append = entries.append
        unparsed: list[tuple[int, bytes]] = []
        malformed = 0
        truncated = False
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        long_lines: list[LongLine] = []
        for line in session_lines(handle, long_lines):
            if header is not None:
                # Hot loop: most lines are well-formed entries.
                try:
                    record = loads(line)
                except decode_error:
                    record = parse_json_leniently(line) if line.endswith(b"\n") else None
                if type(record) is dict:
                    append(record)
                    continue
                if not line.strip():
                    continue
                if not line.endswith(b"\n"):
                    truncated = True  # an agent is writing this line right now
                else:
                    malformed += 1
                unparsed.append((len(entries), line))
                continue
            if not line.strip():
                continue
            record = _parse(line)
            if record is None or not isinstance(record, dict):
                if not line.endswith(b"\n"):
                    truncated = True
                else:
                    malformed += 1
                unparsed.append((-1, line))  # before the header
                continue
            if title_slot is None and record.get("type") == "title":
                title_slot = record
                continue
            if not is_header(record):
                raise NotASession(f"Not a session file: {file_path} (first record is not a session header)")
            header = record
    if header is None:
        raise NotASession(f"Not a session file: {file_path} (no session header)")
    return RawSession(
        path=file_path,
        header=header,
        entries=entries,
        title_slot=title_slot,
        malformed_lines=malformed,
        truncated_tail=truncated,
        unparsed=unparsed,
        size=info.st_size,
        mtime_ns=info.st_mtime_ns,
        long_lines=long_lines,
        defects=[line.describe() for line in long_lines],
    )


def read_header(path: str | os.PathLike[str]) -> tuple[Header, dict[str, Any] | None] | None:
    """Header and title slot from the file's first bytes only; None when it is not a session."""
    try:
        with open(path, "rb") as handle:
            prefix = handle.read(HEADER_PREFIX_BYTES)
    except OSError:
        return None
    title_slot: dict[str, Any] | None = None
    for line in prefix.split(b"\n"):
        if not line.strip():
            continue
        record = _parse(line)
        if not isinstance(record, dict):
            # Malformed or cut off by the prefix: the seed's lenient parser skips such lines.
            continue
        if title_slot is None and record.get("type") == "title":
            title_slot = record
            continue
        return (record, title_slot) if is_header(record) else None
    if len(prefix) < HEADER_PREFIX_BYTES:
        return None
    return _read_header_lines(path)


def _read_header_lines(path: str | os.PathLike[str]) -> tuple[Header, dict[str, Any] | None] | None:
    """Slow path for a header line longer than the prefix: read whole lines until the header."""
    title_slot: dict[str, Any] | None = None
    with open(path, "rb") as handle:
        for line in session_lines(handle, []):
            record = _parse(line) if line.strip() else None
            if not isinstance(record, dict):
                continue
            if title_slot is None and record.get("type") == "title":
                title_slot = record
                continue
            return (record, title_slot) if is_header(record) else None
    return None
