"""Find pi-family sessions on disk: agent dirs, cheap per-file metadata, breadcrumbs, SESSION arguments."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from sitegen import titles
from sitegen.errors import AmbiguousSession, NotASession, SessionNotFound
from sitegen.fileio import open_regular, read_regular_file
from sitegen.session.entries import Header, message_text
from sitegen.session.load import parse_json_leniently, read_header, session_lines
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
    "list_all",
    "list_sessions",
    "most_recent",
    "not_a_file",
    "read_session_info",
    "resolve_session",
    "session_files",
    "terminal_id",
]

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"
TERMINAL_ID_ENV = "SITEGEN_TERMINAL_ID"
_DEFAULT_AGENT_DIRS = (".pi/agent", ".omp/agent", ".xcsh/agent")

# The record type when it is the line's first key (how every agent writes it); other lines are parsed.
_TYPE_AT_START = re.compile(rb'\{\s*"type"\s*:\s*"([A-Za-z0-9_]*)"')
_USER_ROLE = re.compile(rb'"role"\s*:\s*"user"')
# A breadcrumb inside a subagent's folder points back at its parent after this many levels at most.
_MAX_NESTING = 8
_AMBIGUOUS_SHOWN = 3
# A breadcrumb is a cwd and a path: more than this is not one.
_MAX_CRUMB_BYTES = 64 << 10


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


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path.home()


def _expand(value: str, env: Mapping[str, str]) -> Path:
    if value == "~" or value.startswith(("~/", "~\\")):
        return _home(env) / value[2:] if len(value) > 1 else _home(env)
    return Path(value).expanduser()


def default_agent_dirs(env: Mapping[str, str] = os.environ) -> list[Path]:
    """PI_CODING_AGENT_DIR when set, then ~/.pi/agent, ~/.omp/agent and ~/.xcsh/agent that exist."""
    found: list[Path] = []
    override = env.get(AGENT_DIR_ENV, "").strip()
    if override:
        found.append(_expand(override, env))
    home = _home(env)
    found.extend(home / rel for rel in _DEFAULT_AGENT_DIRS if (home / rel).is_dir())
    return _unique(found)


def agent_dirs(extra: Sequence[Path] = (), env: Mapping[str, str] = os.environ) -> list[Path]:
    """Agent dirs given on the command line first, then the defaults; each once, order kept."""
    return _unique([*(_expand(str(d), env) for d in extra), *default_agent_dirs(env)])


def given_dirs(paths: Sequence[Path]) -> list[Path]:
    """Folders named on the command line, made absolute (without following links): the same
    folder spelled two ways ("agent", "./agent", "/home/me/agent") must give the same pages."""
    return [Path(os.path.abspath(path.expanduser())) for path in paths]


def env_session_dirs(env: Mapping[str, str] = os.environ) -> list[Path]:
    """The flat sessions folder PI_CODING_AGENT_SESSION_DIR names, when set."""
    value = env.get(SESSION_DIR_ENV, "").strip()
    return [_expand(value, env)] if value else []


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[str] = set()
    out: list[Path] = []
    for path in paths:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def encode_cwd(cwd: str) -> str:
    """The classic session folder name: leading slash dropped, / \\ : turned into -, wrapped in --."""
    body = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + re.sub(r"[/\\:]", "-", body) + "--"


def _scan(folder: Path, unreadable: list[tuple[Path, str]] | None = None) -> list[os.DirEntry[str]]:
    """The folder's entries; one that is there but cannot be read is added to `unreadable` with why."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError as error:
        if unreadable is not None and error.errno not in (errno.ENOENT, errno.ENOTDIR):
            unreadable.append((folder, error.strerror or str(error)))
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
    unreadable: list[tuple[Path, str]] | None = None,
) -> list[tuple[Path, Path | None]]:
    """Every *.jsonl under <agent dir>/sessions/<project>/ and directly in the flat folders;
    non_files adds what is named so but is no file to read (the site lists those as problems), and
    `unreadable` gets each folder that is there but cannot be listed, with why."""
    seen: set[str] = set()
    found: list[tuple[Path, Path | None]] = []

    def add(entry: os.DirEntry[str], agent_dir: Path | None) -> None:
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
        for project in _scan(agent_dir / "sessions", unreadable):
            if _is_dir(project):
                for entry in _scan(Path(project.path), unreadable):
                    add(entry, agent_dir)
    for flat in flat_dirs:
        for entry in _scan(flat, unreadable):
            add(entry, None)
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


def _scan_body(path: Path) -> tuple[int, str, str, list[dict[str, Any]]]:
    """Message count, first user text, first prompt that is not a slash command, and the name records,
    parsing only the lines that need it."""
    count = 0
    first = ""
    prompt = ""
    names: list[dict[str, Any]] = []
    match_type = _TYPE_AT_START.match
    with open_regular(path) as handle:
        for line in session_lines(handle, []):
            typed = match_type(line)
            if typed is not None:
                kind = typed.group(1)
                if kind == b"message":
                    # A line cut off by a writer (or by a crash) does not end its object.
                    if not line.rstrip().endswith(b"}"):
                        continue
                    count += 1
                    if not prompt and _USER_ROLE.search(line):
                        text = _first_user_text(_parse(line))
                        first = first or text
                        prompt = "" if titles.is_slash_command(text) else text
                elif kind in (b"session_info", b"title_change"):
                    record = _parse(line)
                    if isinstance(record, dict):
                        names.append(record)
                continue
            if not line.strip():
                continue
            # Rare: "type" is not the first key. Only these lines are parsed whole.
            record = _parse(line)
            if not isinstance(record, dict):
                continue
            kind_str = record.get("type")
            if kind_str == "message":
                count += 1
                if not prompt:
                    text = _first_user_text(record)
                    first = first or text
                    prompt = "" if titles.is_slash_command(text) else text
            elif kind_str in ("session_info", "title_change"):
                names.append(record)
    return count, first, prompt, names


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
        count, first, prompt, names = _scan_body(path)
    except OSError:
        return None
    modified = stat.st_mtime_ns // 1_000_000
    created = header.get("timestamp")
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=_header_cwd(header),
        title=session_title(header, title_slot, names),
        created=created if isinstance(created, str) and created else _iso_from_ms(modified),
        modified=modified,
        message_count=count,
        first_message=first,
        # v1 headers name their origin branchedFrom.
        parent_session=_str_or_none(header.get("parentSession")) or _str_or_none(header.get("branchedFrom")),
        size=stat.st_size,
        agent_dir=agent_dir,
        first_prompt=prompt,
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
    for path, agent_dir in session_files(dirs, flat):
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


class _SameDir:
    """cwd equality: as written, normalised, or through symlinks (macOS /tmp is /private/tmp)."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.norm = os.path.normpath(cwd) if cwd else ""
        self._real: str | None = None

    def __call__(self, other: str) -> bool:
        if not other or not self.cwd:
            return False
        if other == self.cwd or os.path.normpath(other) == self.norm:
            return True
        if "\x00" in other or "\x00" in self.cwd:
            return False  # not a path (a NUL from a hostile header): realpath would raise
        if self._real is None:
            self._real = os.path.realpath(self.cwd)
        return os.path.realpath(other) == self._real


def _infos(candidates: Iterable[_Candidate]) -> list[SessionInfo]:
    infos = (_info(c.path, c.header, c.title_slot, c.agent_dir) for c in candidates)
    return [info for info in infos if info is not None]


def list_sessions(
    cwd: str,
    dirs: Sequence[Path],
    *,
    session_dirs: Sequence[Path] | None = None,
    env: Mapping[str, str] = os.environ,
) -> list[SessionInfo]:
    """Sessions whose header cwd is cwd, newest first; session_dirs None reads PI_CODING_AGENT_SESSION_DIR."""
    same = _SameDir(cwd)
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
    same = _SameDir(cwd)
    for candidate in _candidates(dirs, session_dirs, env):
        if same(_header_cwd(candidate.header)):
            return candidate.path
    return None


# ---------------------------------------------------------------------------------------------
# Terminal breadcrumbs


def _stdin_tty() -> str | None:
    try:
        if not os.isatty(0):
            return None
        ttyname: Callable[[int], str] | None = getattr(os, "ttyname", None)
        return ttyname(0) if ttyname is not None else None
    except OSError:
        return None


def terminal_id(env: Mapping[str, str] = os.environ, *, tty: Callable[[], str | None] = _stdin_tty) -> str | None:
    """This terminal's breadcrumb name, derived the way omp does; SITEGEN_TERMINAL_ID overrides it."""
    override = env.get(TERMINAL_ID_ENV, "").strip()
    if override:
        return re.sub(r"[/\\]", "-", override)
    # The stdin TTY device is unique per terminal tab: /dev/pts/3 becomes pts-3.
    device = tty()
    if device and device.startswith("/dev/"):
        return device[5:].replace("/", "-")
    pane = env.get("ZELLIJ_PANE_ID")
    if pane:
        session = re.sub(r"[/\\]", "-", env.get("ZELLIJ_SESSION_NAME", ""))
        return f"zellij-{session}-{pane}" if session else f"zellij-{pane}"
    for name, prefix in (
        ("TMUX_PANE", "tmux"),
        ("CMUX_SURFACE_ID", "cmux"),
        ("KITTY_WINDOW_ID", "kitty"),
        ("WEZTERM_PANE", "wezterm"),
        ("TERM_SESSION_ID", "apple"),
        ("WT_SESSION", "wt"),
    ):
        value = env.get(name)
        if value:
            return f"{prefix}-{value}"
    return None


def _interactive_root(session_file: Path) -> Path:
    """A subagent transcript (<parent>/<agent>.jsonl) stands for the session that owns the folder."""
    current = session_file
    for _ in range(_MAX_NESTING):
        parent_file = Path(str(current.parent) + ".jsonl")
        if current.parent == current or not parent_file.is_file():
            break
        current = parent_file
    return current


def breadcrumb_session(cwd: str, dirs: Sequence[Path], *, env: Mapping[str, str] = os.environ) -> Path | None:
    """The session this terminal last used in cwd, from <agent dir>/terminal-sessions/<terminal id>."""
    ident = terminal_id(env)
    if not ident:
        return None
    same = _SameDir(cwd)
    for agent_dir in dirs:
        try:
            data = read_regular_file(agent_dir / "terminal-sessions" / ident, _MAX_CRUMB_BYTES)
        except OSError:
            continue
        text = data.decode("utf-8", errors="replace")
        lines = text.strip().split("\n")
        if len(lines) < 2:
            continue
        crumb_cwd, recorded = lines[0].rstrip("\r"), lines[1].rstrip("\r")
        if not recorded or not same(crumb_cwd):
            continue
        # A relative session path was recorded relative to the breadcrumb's cwd.
        session_file = Path(crumb_cwd) / recorded
        if session_file.is_file():
            return _interactive_root(session_file)
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
    same = _SameDir(cwd)
    local = [c for c in candidates if same(_header_cwd(c.header)) and _matches(c, wanted)]
    if local:
        return _pick(local, arg)
    everywhere = [c for c in candidates if _matches(c, wanted)]
    if everywhere:
        return _pick(everywhere, arg)
    raise SessionNotFound(f"No session found matching '{arg}' (searched {len(candidates)} sessions)")
