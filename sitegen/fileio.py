"""Replace a file in one step, so readers never see half a file; read one without waiting on a pipe."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from sitegen.undo import active_journal

__all__ = [
    "is_disk_full",
    "open_regular",
    "read_regular_file",
    "remove_file",
    "remove_tree",
    "replace_file",
    "replace_file_if_changed",
    "replacing",
    "set_aside",
]


# Out of space, or out of the user's quota: no write can succeed until some is freed.
_DISK_FULL = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def is_disk_full(error: OSError) -> bool:
    return error.errno in _DISK_FULL


@contextmanager
def replacing(path: Path, undoable: bool = True, self_checking: bool = False) -> Iterator[BinaryIO]:
    """A file to write that takes path's place only when the block ends without an error; within a
    rebuild that can be undone (sitegen.undo) the file it replaces is kept, unless not undoable (a
    cache the build keeps for itself). A self_checking file (one whose reader finds it damaged, as
    the manifest's does) is given its blocks before the rename (_allocate).

    No fsync: pages and indexes can be rebuilt, and syncing thousands of them would dominate a build
    (session files use sitegen.session.storage.atomic_write_bytes, which does sync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A short name: the target's own name may already be as long as the file system allows. os.urandom,
    # not secrets: the name needs no more than uniqueness, and secrets' imports cost a rebuild 5 ms.
    temp = path.with_name(f".sitegen-{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        with open(temp, "wb") as handle:
            yield handle
            if self_checking:
                _allocate(handle)
        journal = active_journal() if undoable else None
        if journal is not None:
            journal.keep(path)
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()


def _allocate(handle: BinaryIO) -> None:
    """Give the written file its blocks now. Renamed over an older file, a file whose blocks the
    kernel has not yet placed makes ext4 place and start writing them inside the rename (its guard
    for programs that replace files without fsync): 2 ms for a 2 MB manifest, a tenth of that once
    placed. A full disk is found here, before the rename, rather than by a later write-back.

    Only for files that check themselves: after a power loss, ext4's guard leaves the old or the new
    file, where a file placed this way can read as zeros; a page would stay so until its session
    changed, while the manifest is then found not to be JSON and the site is built again."""
    handle.flush()
    size = handle.tell()
    if size and hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(handle.fileno(), 0, size)
        except OSError as error:
            if is_disk_full(error):
                raise
            # A file system without it (EOPNOTSUPP, EINVAL): the rename does as it would have.


def replace_file(path: Path, data: bytes | str, undoable: bool = True, self_checking: bool = False) -> int:
    """Write data beside path under a temporary name and rename it over path (see replacing); returns
    the byte count."""
    payload = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    with replacing(path, undoable, self_checking) as handle:
        handle.write(payload)
    return len(payload)


def replace_file_if_changed(path: Path, data: bytes | str) -> bool:
    """replace_file, unless path already holds exactly data; whether it wrote. A page left alone
    keeps its time, and `watch` does not reload it in the reader's browser."""
    payload = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        with open_regular(path) as handle:
            if handle.read(len(payload) + 1) == payload:
                return False
    except OSError:
        pass
    replace_file(path, payload)
    return True


def open_regular(path: str | os.PathLike[str], buffering: int = -1, follow_links: bool = True) -> BinaryIO:
    """A regular file (or a link to one, unless not follow_links where the system can refuse links)
    opened for reading; OSError for anything else, which a read could wait on forever (a FIFO without a
    writer, a socket) or never finish (a device)."""
    # Non-blocking: opening a FIFO for reading would already wait.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags if follow_links else flags | getattr(os, "O_NOFOLLOW", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fsdecode(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fsdecode(path))
        os.set_blocking(fd, True)
        return open(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_regular_file(path: Path, limit: int, follow_links: bool = True) -> bytes:
    """A regular file's bytes (or a link's to one, see open_regular), at most limit + 1 of them, so a
    caller can tell it was longer (see open_regular for what else is refused)."""
    with open_regular(path, buffering=0, follow_links=follow_links) as handle:
        size = os.fstat(handle.fileno()).st_size
        # Sized by the file, not the limit: a read of limit + 1 bytes would reserve that much each time.
        return handle.read() if size <= limit else handle.read(limit + 1)


def set_aside(path: Path) -> Path:
    """Move a broken file (or whatever took its name) out of the way, to <name>.broken beside it,
    replacing the one set aside before; returns where it went."""
    target = path.with_name(path.name + ".broken")
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    journal = active_journal()
    if journal is not None:
        journal.keep(target)
        journal.keep(path)
    os.replace(path, target)
    return target


def remove_file(path: Path) -> None:
    """Remove a file the build wrote (a missing one is no error); within a rebuild that can be undone
    (sitegen.undo), it is kept until the rebuild is done."""
    journal = active_journal()
    if journal is not None:
        journal.remove(path)
    else:
        path.unlink(missing_ok=True)


def remove_tree(folder: Path) -> None:
    """Remove a folder the build wrote and everything in it, file by file (see remove_file)."""
    for current, dirs, names in os.walk(folder, topdown=False):
        for name in names:
            remove_file(Path(current) / name)
        for name in dirs:
            inner = Path(current) / name
            if inner.is_symlink():  # a link to a folder is listed with the folders
                remove_file(inner)
            else:
                with contextlib.suppress(OSError):
                    inner.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()
