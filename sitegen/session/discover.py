"""Find pi-family sessions on disk: agent dirs, cheap per-file metadata, breadcrumbs, SESSION arguments."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from sitegen import titles
from sitegen.errors import AmbiguousSession, NotASession, SessionNotFound
from sitegen.fileio import open_regular
from sitegen.session.breadcrumbs import TERMINAL_ID_ENV, SameDir, breadcrumb_session, terminal_id
from sitegen.session.entries import Header, iso_to_ms, message_text
from sitegen.session.load import parse_json_leniently, read_header
from sitegen.session.places import (
    AGENT_DIR_ENV,
    SESSION_DIR_ENV,
    agent_dirs,
    default_agent_dirs,
    env_session_dirs,
    given_dirs,
    registered_sessions,
)
from sitegen.session.places import expand as _expand
from sitegen.session.session import session_title

__all__ = [
    "AGENT_DIR_ENV",
    "SESSION_DIR_ENV",
    "TERMINAL_ID_ENV",
    "SessionInfo",
    "agent_dirs",
    "breadcrumb_session",
    "default_agent_dirs",
    "encode_cwd",
    "env_session_dirs",
    "given_dirs",
    "list_all",
    "list_sessions",
    "most_recent",
    "not_a_file",
    "read_session_info",
    "resolve_session",
    "session_files",
    "terminal_id",
]


# The record type when it is the line's first key (how every agent writes it); other lines are parsed.
_TYPE_AT_START = re.compile(rb'\{\s*"type"\s*:\s*"([A-Za-z0-9_]*)"')
_USER_ROLE = re.compile(rb'"role"\s*:\s*"user"')
# An entry's own time, near the start of its line (past it, the text is the entry's content).
_TIME = re.compile(rb'"timestamp"\s*:\s*"([0-9T:.+\-Z]{10,40})"')
_TIME_REACH = 400
# Records that are not the session's activity (as sitegen.transcript.model.activity_times): the
# header and title slot, names, labels, and omp's session_exit written when the terminal closed.
_NOT_ACTIVITY = frozenset({b"session", b"title", b"session_info", b"title_change", b"label"})
_SESSION_EXIT = re.compile(rb'"customType"\s*:\s*"session_exit"')
_AMBIGUOUS_SHOWN = 3


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What a session listing shows, read without parsing the whole file."""

    path: Path
    id: str
    cwd: str
    title: str | None
    created: str  # the header's ISO timestamp, as written
    modified: int  # file mtime, epoch ms
    message_count: int
    first_message: str
    parent_session: str | None
    size: int
    agent_dir: Path | None  # None for a file found in a flat sessions folder
    # The first user text that is not only a slash command ("/mode"): what titles the session.
    first_prompt: str = ""
    # The last entry that is the session's activity (epoch ms): not a session_exit, title or label
    # written later. None when no entry has a time (then the file's mtime stands for it).
    last_activity: int | None = None

    @property
    def active(self) -> int:
        """When the session was last active (epoch ms): what listings show and sort by."""
        return self.last_activity if self.last_activity is not None else self.modified

    @property
    def order(self) -> tuple[int, int, str]:
        """Listings' order: the last active first; at equal times (entries copied, or written within a
        millisecond) the file written last."""
        return (-self.active, -self.modified, str(self.path))

    @property
    def display_title(self) -> str:
        """The title every listing shows (sitegen.titles.session_title)."""
        return titles.session_title(self.title, [self.first_prompt], fallback=self.path.name)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "id": self.id,
            "cwd": self.cwd,
            "title": self.title,
            "created": self.created,
            "modified": self.modified,
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
            "parentSession": self.parent_session,
        }


# ---------------------------------------------------------------------------------------------
# Where the files are


def encode_cwd(cwd: str) -> str:
    """The classic session folder name: leading slash dropped, / \\ : turned into -, wrapped in --."""
    body = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + re.sub(r"[/\\:]", "-", body) + "--"


def _scan(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a link loop: is_dir() raises where Path.is_dir() says False
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a link loop, or a file the user may not stat
        return False


def not_a_file(path: Path) -> str | None:
    """What a path named like a session is when it is no file to read ("a pipe", "a link loop", ...);
    None for a regular file (or a link to one) and for nothing at all. A FIFO is never opened: that
    would wait for a writer forever."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a link loop"
        if path.is_symlink():
            return "a link to a file that does not exist"
        return None if error.errno == errno.ENOENT else f"unreadable ({error.strerror or error})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a pipe" if stat.S_ISFIFO(mode) else "not a regular file"


def session_files(
    dirs: Sequence[Path],
    flat_dirs: Sequence[Path],
    *,
    non_files: bool = False,
    env: Mapping[str, str] = os.environ,
) -> list[tuple[Path, Path | None]]:
    """Every *.jsonl under <agent dir>/sessions/<project>/ and directly in the flat folders, and the
    files omp registered as kept elsewhere (sitegen.session.places.registered_sessions); non_files
    adds what is named so but is no file to read (the site lists those as problems)."""
    seen: set[str] = set()
    found: list[tuple[Path, Path | None]] = []

    def add(entry: os.DirEntry[str], agent_dir: Path | None) -> None:
        # Leftovers of an interrupted write (<name>.jsonl.tmp-<uuid>) end otherwise.
        if not entry.name.endswith(".jsonl"):
            return
        # A folder, a FIFO (reading it would hang), a dangling link or a link loop.
        if not non_files and not _is_file(entry):
            return
        key = os.path.realpath(entry.path)
        if key not in seen:
            seen.add(key)
            found.append((Path(entry.path), agent_dir))

    for agent_dir in dirs:
        for project in _scan(agent_dir / "sessions"):
            if _is_dir(project):
                for entry in _scan(Path(project.path)):
                    add(entry, agent_dir)
    for flat in flat_dirs:
        for entry in _scan(flat):
            add(entry, None)
    for path, agent_dir in registered_sessions(dirs, env):
        # Any name omp was given (`--session PATH`), but a file: the marker of a deleted one stays.
        key = os.path.realpath(path)
        if key not in seen and (non_files or path.is_file()) and os.path.lexists(path):
            seen.add(key)
            found.append((path, agent_dir))
    return found


# ---------------------------------------------------------------------------------------------
# One file's metadata


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return parse_json_leniently(line)


def _first_user_text(record: Any) -> str:
    if not isinstance(record, dict):
        return ""
    message = record.get("message")
    if not isinstance(message, dict) or message.get("role") != "user":
        return ""
    return message_text(message.get("content")).strip()


@dataclass(slots=True)
class _Body:
    """What a listing reads of a file's lines."""

    count: int = 0
    first: str = ""  # the first user text
    prompt: str = ""  # the first that is not a slash command
    names: list[dict[str, Any]] = field(default_factory=list)  # session_info / title_change records
    # The first and last time of the session's activity (sitegen.transcript.model.activity_times).
    start_ms: int | None = None
    end_ms: int | None = None

    def user(self, text: str) -> None:
        self.first = self.first or text
        self.prompt = "" if titles.is_slash_command(text) else text

    def moment(self, line: bytes, kind: bytes) -> None:
        if kind in _NOT_ACTIVITY or (kind == b"custom" and _SESSION_EXIT.search(line, 0, _TIME_REACH)):
            return
        found = _TIME.search(line, 0, _TIME_REACH)
        when = iso_to_ms(found.group(1).decode("ascii")) if found is not None else None
        if when is not None:
            self.start_ms = when if self.start_ms is None else min(self.start_ms, when)
            self.end_ms = when if self.end_ms is None else max(self.end_ms, when)


def _scan_body(path: Path) -> _Body:
    """Message count, first user text, first prompt that is not a slash command, the name records and
    the span of activity, parsing only the lines that need it."""
    body = _Body()
    match_type = _TYPE_AT_START.match
    with open_regular(path) as handle:
        for line in handle:
            typed = match_type(line)
            if typed is not None:
                kind = typed.group(1)
                body.moment(line, kind)
                if kind == b"message":
                    # A line cut off by a writer (or by a crash) does not end its object.
                    if not line.rstrip().endswith(b"}"):
                        continue
                    body.count += 1
                    if not body.prompt and _USER_ROLE.search(line):
                        body.user(_first_user_text(_parse(line)))
                elif kind in (b"session_info", b"title_change"):
                    record = _parse(line)
                    if isinstance(record, dict):
                        body.names.append(record)
                continue
            if not line.strip():
                continue
            # Rare: "type" is not the first key. Only these lines are parsed whole.
            record = _parse(line)
            if not isinstance(record, dict):
                continue
            kind_str = record.get("type")
            if isinstance(kind_str, str) and kind_str != "session":
                body.moment(line, kind_str.encode())
            if kind_str == "message":
                body.count += 1
                if not body.prompt:
                    body.user(_first_user_text(record))
            elif kind_str in ("session_info", "title_change"):
                body.names.append(record)
    return body


def _iso_from_ms(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _header_cwd(header: Header) -> str:
    cwd = header.get("cwd")
    return cwd if isinstance(cwd, str) else ""


def _info(path: Path, header: Header, title_slot: dict[str, Any] | None, agent_dir: Path | None) -> SessionInfo | None:
    try:
        stat = path.stat()
        body = _scan_body(path)
    except OSError:
        return None
    modified = stat.st_mtime_ns // 1_000_000
    created = header.get("timestamp")
    opened = iso_to_ms(created)
    # A forked or resumed file's header is written after the entries it copies: the earlier wins.
    if body.start_ms is not None and (opened is None or body.start_ms < opened):
        created = _iso_from_ms(body.start_ms)
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=_header_cwd(header),
        title=session_title(header, title_slot, body.names),
        created=created if isinstance(created, str) and created else _iso_from_ms(modified),
        modified=modified,
        message_count=body.count,
        first_message=body.first,
        # v1 headers name their origin branchedFrom.
        parent_session=_str_or_none(header.get("parentSession")) or _str_or_none(header.get("branchedFrom")),
        size=stat.st_size,
        agent_dir=agent_dir,
        first_prompt=body.prompt,
        last_activity=body.end_ms,
    )


def read_session_info(path: str | os.PathLike[str], agent_dir: Path | None = None) -> SessionInfo | None:
    """Listing metadata of one session file; None when it is not a session. Never parses every line."""
    file_path = Path(path)
    found = read_header(file_path)
    if found is None:
        return None
    header, title_slot = found
    return _info(file_path, header, title_slot, agent_dir)


# ---------------------------------------------------------------------------------------------
# Listing


@dataclass(frozen=True, slots=True)
class _Candidate:
    path: Path
    agent_dir: Path | None
    header: Header
    title_slot: dict[str, Any] | None
    mtime_ns: int

    @property
    def id(self) -> str:
        return str(self.header["id"])


def _candidates(dirs: Sequence[Path], flat_dirs: Sequence[Path] | None, env: Mapping[str, str]) -> list[_Candidate]:
    """Every session file with its header (a prefix read), newest first."""
    flat = env_session_dirs(env) if flat_dirs is None else flat_dirs
    found: list[_Candidate] = []
    for path, agent_dir in session_files(dirs, flat, env=env):
        header = read_header(path)
        if header is None:
            continue
        try:
            mtime_ns = path.stat().st_mtime_ns
        except OSError:
            continue
        found.append(_Candidate(path, agent_dir, header[0], header[1], mtime_ns))
    found.sort(key=lambda c: (-c.mtime_ns, str(c.path)))
    return found


def _infos(candidates: Iterable[_Candidate]) -> list[SessionInfo]:
    """Listing metadata of each candidate, the last active first."""
    infos = (_info(c.path, c.header, c.title_slot, c.agent_dir) for c in candidates)
    return sorted((info for info in infos if info is not None), key=lambda i: i.order)


def list_sessions(
    cwd: str,
    dirs: Sequence[Path],
    *,
    session_dirs: Sequence[Path] | None = None,
    env: Mapping[str, str] = os.environ,
) -> list[SessionInfo]:
    """Sessions whose header cwd is cwd, newest first; session_dirs None reads PI_CODING_AGENT_SESSION_DIR."""
    same = SameDir(cwd)
    return _infos(c for c in _candidates(dirs, session_dirs, env) if same(_header_cwd(c.header)))


def list_all(
    dirs: Sequence[Path], *, session_dirs: Sequence[Path] | None = None, env: Mapping[str, str] = os.environ
) -> list[SessionInfo]:
    """Sessions of every project, newest first."""
    return _infos(_candidates(dirs, session_dirs, env))


def most_recent(
    cwd: str,
    dirs: Sequence[Path],
    *,
    session_dirs: Sequence[Path] | None = None,
    env: Mapping[str, str] = os.environ,
) -> Path | None:
    """The most recently modified session of cwd, reading headers only."""
    same = SameDir(cwd)
    for candidate in _candidates(dirs, session_dirs, env):
        if same(_header_cwd(candidate.header)):
            return candidate.path
    return None


# ---------------------------------------------------------------------------------------------
# SESSION arguments


def _matches(candidate: _Candidate, wanted: str) -> bool:
    if candidate.id.lower().startswith(wanted):
        return True
    stem = candidate.path.name[: -len(".jsonl")].lower()
    if stem.startswith(wanted):
        return True
    _, sep, file_id = stem.rpartition("_")
    return bool(sep) and file_id.startswith(wanted)


def _pick(matches: list[_Candidate], arg: str) -> Path:
    if len(matches) == 1:
        return matches[0].path
    exact = [c for c in matches if c.id.lower() == arg.lower()]
    if len(exact) == 1:
        return exact[0].path
    shown = ", ".join(f"{c.id} ({c.path})" for c in matches[:_AMBIGUOUS_SHOWN])
    more = f" and {len(matches) - _AMBIGUOUS_SHOWN} more" if len(matches) > _AMBIGUOUS_SHOWN else ""
    raise AmbiguousSession(f"'{arg}' matches {len(matches)} sessions: {shown}{more}; give more of the id")


def _looks_like_path(arg: str) -> bool:
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


def resolve_session(
    arg: str | None,
    *,
    cwd: str,
    dirs: Sequence[Path],
    session_dirs: Sequence[Path] | None = None,
    env: Mapping[str, str] = os.environ,
) -> Path:
    """A SESSION argument as a file: a path, an id or file-name prefix, or (None) this terminal's latest."""
    if arg is None:
        found = breadcrumb_session(cwd, dirs, env=env) or most_recent(cwd, dirs, session_dirs=session_dirs, env=env)
        if found is None:
            if not dirs and not (env_session_dirs(env) if session_dirs is None else session_dirs):
                raise SessionNotFound(
                    "No agent directory found (~/.pi/agent, ~/.omp/agent, ~/.xcsh/agent); "
                    "pass a session file or --agent-dir"
                )
            raise SessionNotFound(f"No sessions found for {cwd}; pass a session file or id")
        return found
    if _looks_like_path(arg):
        path = _expand(arg, env)
        if path.is_dir():
            raise NotASession(f"Not a session file: {path} is a directory")
        if not path.is_file():
            what = not_a_file(path)
            if what is not None:
                raise NotASession(f"Not a session file: {path} is {what}")
            raise SessionNotFound(f"File not found: {path}")
        return path
    wanted = arg.strip().lower()
    if not wanted:
        raise SessionNotFound("Empty session id; pass a session file or id")
    candidates = _candidates(dirs, session_dirs, env)
    same = SameDir(cwd)
    local = [c for c in candidates if same(_header_cwd(c.header)) and _matches(c, wanted)]
    if local:
        return _pick(local, arg)
    everywhere = [c for c in candidates if _matches(c, wanted)]
    if everywhere:
        return _pick(everywhere, arg)
    raise SessionNotFound(f"No session found matching '{arg}' (searched {len(candidates)} sessions)")
