"""One writer per site: a lock on a file in the site's state folder, held for a build's or a watch's life."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson

from sitegen.errors import SitegenError
from sitegen.fileio import open_regular

__all__ = ["LOCK_PATH", "Holder", "SiteBusy", "close_inherited_locks", "read_holder", "site_lock", "take_unclean_end"]

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; builds are not serialised there
    fcntl = None  # type: ignore[assignment]

LOCK_PATH = ".sitegen/lock"


class SiteBusy(SitegenError):
    """Another process is building or watching the same site, and we were asked not to wait."""


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a site's lock, as it wrote itself into the lock file."""

    pid: int
    command: str
    started: str  # UTC, to the second

    def describe(self) -> str:
        return f"`{self.command}` (process {self.pid}, since {self.started})"


# Locks this process holds, by site folder: a build inside `watch` (or a CLI command that took the
# lock before calling the core) holds the same lock once more rather than waiting for itself.
_held: dict[Path, tuple[int, int]] = {}  # folder -> (file descriptor, depth)
# Sites whose last holder did not say it ended (it was killed, or failed): see take_unclean_end.
_unclean: set[Path] = set()
_held_guard = threading.Lock()


def read_holder(site: Path) -> Holder | None:
    """The holder the lock file names (it may have ended since); None if it names none."""
    try:
        with open_regular(site / LOCK_PATH) as handle:
            data = orjson.loads(handle.read(4096))
        return Holder(int(data["pid"]), str(data["command"]), str(data["started"]))
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def _ended(fd: int) -> bool:
    """Whether the lock file's last holder said it ended (an empty file: there was none)."""
    try:
        data = os.pread(fd, 4096, 0)
        return not data.strip() or orjson.loads(data).get("ended") is True
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return False


def _write_holder(fd: int, command: str, started: str, ended: bool = False) -> None:
    holder = {"pid": os.getpid(), "command": command, "started": started}
    data = orjson.dumps({**holder, "ended": True} if ended else holder)
    # In place, never renamed: the lock belongs to this file, and others wait on it.
    os.ftruncate(fd, 0)
    os.pwrite(fd, data + b"\n", 0)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as error:
        # A file system without locks (some network mounts): build unguarded rather than not at all.
        if error.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
    return True


@contextmanager
def site_lock(
    site: Path, command: str, *, wait: bool = True, on_wait: Callable[[Holder | None], None] | None = None
) -> Iterator[None]:
    """Hold the site's lock for the block. Held by another process: call on_wait and wait for it, or
    raise SiteBusy when not waiting. The kernel drops a lock with its process, so the lock of a build
    that was killed is simply taken."""
    folder = site.resolve()
    with _held_guard:
        held = _held.get(folder)
        if held is not None:
            _held[folder] = (held[0], held[1] + 1)
    if held is not None:
        try:
            yield
        finally:
            with _held_guard:
                fd, depth = _held[folder]
                _held[folder] = (fd, depth - 1)
        return
    if fcntl is None:
        yield
        return
    (folder / LOCK_PATH).parent.mkdir(parents=True, exist_ok=True)
    # Non-blocking: a pipe in its place would make the open wait (the lock file holds a few bytes).
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(folder / LOCK_PATH, flags, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SitegenError(f"{folder / LOCK_PATH} is not a regular file; remove it to build the site")
        if not _try_lock(fd):
            holder = read_holder(folder)
            if not wait:
                who = holder.describe() if holder is not None else "another process"
                raise SiteBusy(f"{site} is being written by {who}; try again when it is done")
            if on_wait is not None:
                on_wait(holder)
            fcntl.flock(fd, fcntl.LOCK_EX)
        started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        clean = _ended(fd)
        _write_holder(fd, command, started)
        with _held_guard:
            _held[folder] = (fd, 1)
            if not clean:
                _unclean.add(folder)
        try:
            yield
            _write_holder(fd, command, started, ended=True)
        finally:
            with _held_guard:
                del _held[folder]
                _unclean.discard(folder)
    finally:
        os.close(fd)  # which releases the lock


def take_unclean_end(site: Path) -> bool:
    """Whether the site's previous writer ended without saying so (killed, or failed), so that what
    it left half done must be cleared up; asked once per holding (the next build is told no)."""
    folder = site.resolve()
    with _held_guard:
        unclean = folder in _unclean
        _unclean.discard(folder)
    return unclean


def close_inherited_locks() -> None:
    """In a forked worker: let go of the build's lock file, so that the lock ends with the build
    (closing a copy does not release the lock; only the last one closed does)."""
    with _held_guard:
        for fd, _depth in _held.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        _held.clear()
