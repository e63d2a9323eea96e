"""Find every session the site covers, and name its page: keys, project slugs, fingerprints."""

from __future__ import annotations

import errno
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from sitegen.odek.store import is_session_filename
from sitegen.resources import resource_dir
from sitegen.session.artifacts import artifacts_dir_for
from sitegen.session.discover import env_session_dirs, not_a_file, session_files
from sitegen.session.places import profile_of

__all__ = [
    "Fingerprint",
    "Source",
    "demo_dirs",
    "find_sources",
    "fingerprint",
    "is_utf8_path",
    "project_slug",
    "safe_key",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class Source:
    path: Path
    family: str  # "pi" or "odek"
    # Why a path named like a session is no file to read (a folder, a pipe, a link loop); None for a file.
    problem: str | None = None
    profile: str = ""  # the agent profile whose dir holds it (~/.omp/profiles/<name>/agent), "" for none


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """Cheap change detection: the file's size and mtime, and the mtime of what sits beside it."""

    size: int
    mtime_ns: int
    extra_mtime_ns: int

    def to_json(self) -> list[int]:
        return [self.size, self.mtime_ns, self.extra_mtime_ns]


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def fingerprint(source: Source) -> Fingerprint | None:
    try:
        # What is no file is watched as the name itself (a link loop has nothing else).
        stat = source.path.lstat() if source.problem else source.path.stat()
    except OSError:
        return None
    if source.problem:
        return Fingerprint(stat.st_size, stat.st_mtime_ns, 0)
    if source.family == "odek":
        extra = _mtime(source.path.parent / "audit" / f"{source.path.stem}.json")
    else:
        folder = artifacts_dir_for(source.path)
        extra = _newest_mtime(folder) if folder is not None else 0
    return Fingerprint(stat.st_size, stat.st_mtime_ns, extra)


# Subagents nest: a sidecar's own subagents sit in a folder beside it, a level further down
# (as deep as sitegen.session.artifacts looks for them).
_SIDECAR_DEPTH = 8


def _newest_mtime(folder: Path) -> int:
    """The newest mtime of the artifacts folder and what it holds, nested folders included: a new
    artifact changes the folder's, but a subagent appending to its sidecar transcript in place
    changes only the file's (links are not followed)."""
    newest = _mtime(folder)
    if not newest:
        return 0
    pending = [(str(folder), 0)]
    while pending:
        current, depth = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    try:
                        newest = max(newest, entry.stat(follow_symlinks=False).st_mtime_ns)
                        if depth < _SIDECAR_DEPTH and entry.is_dir(follow_symlinks=False):
                            pending.append((entry.path, depth + 1))
                    except OSError:
                        continue
        except OSError:
            continue
    return newest


def demo_dirs() -> tuple[list[Path], list[Path]]:
    """The bundled sample sessions: a pi-family agent dir and an odek store."""
    demo = resource_dir("demo")
    return [demo / "pi"], [demo / "odek" / "sessions"]


def is_utf8_path(path: Path) -> bool:
    """Names that are not UTF-8 cannot be written to the manifest, a page or a link."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _problem(path: Path) -> str | None:
    what = not_a_file(path)
    return f"Not a session file: it is {what}" if what is not None else None


def find_sources(
    pi_dirs: list[Path],
    odek_dirs: list[Path],
    *,
    use_env: bool = True,
    unreadable: list[tuple[Path, str]] | None = None,
) -> list[Source]:
    """Every session file, pi family and odek, in a stable order, and what is named like one but is no
    file to read, with its problem (see is_utf8_path for the names the site cannot hold); folders that
    are there but cannot be listed go to `unreadable`, with why."""
    flat = env_session_dirs() if use_env else []
    found = [
        Source(path, "pi", _problem(path), profile_of(agent_dir))
        for path, agent_dir in session_files(pi_dirs, flat, non_files=True, unreadable=unreadable)
    ]
    for store in odek_dirs:
        try:
            names = sorted(os.listdir(store))
        except OSError as error:
            if unreadable is not None and error.errno not in (errno.ENOENT, errno.ENOTDIR):
                unreadable.append((store, error.strerror or str(error)))
            continue
        listed = (store / name for name in names if is_session_filename(name))
        found.extend(Source(path, "odek", _problem(path)) for path in listed)
    return sorted(found, key=lambda s: str(s.path))


def _short_hash(text: str, length: int = 6) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def safe_key(text: str, limit: int = 80) -> str:
    """A file-name-safe version of text (never empty, never a dot name)."""
    cleaned = _UNSAFE.sub("-", text).strip("-.")[:limit]
    return cleaned or "session"


def project_slug(cwd: str, profile: str = "") -> str:
    """A readable, unique file name for a project: the path's tail plus a hash of the whole path; a
    profile's projects are apart from the same folder's in other profiles, and named after it first."""
    if profile:
        return f"{safe_key(profile, 30)}-{project_slug(cwd)}-{_short_hash(profile)}"
    if not cwd:
        return "unknown-project"
    tail = safe_key("-".join(Path(cwd).parts[-2:]), 40)
    return f"{tail}-{_short_hash(cwd)}"


def unique_key(source: Path, taken: set[str]) -> str:
    """The session's page name: its file stem, disambiguated when another file has the same stem."""
    key = safe_key(source.stem)
    if key in taken:
        key = f"{key}-{_short_hash(str(source))}"
    return key
