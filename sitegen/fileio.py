"""Replace a file in one step, so readers never see half a file; read one without waiting on a pipe."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["read_regular_file", "replace_file", "replacing"]


@contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A file to write that takes path's place only when the block ends without an error.

    No fsync: pages and indexes can be rebuilt, and syncing thousands of them would dominate a build
    (session files use sitegen.session.storage.atomic_write_bytes, which does sync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A short name: the target's own name may already be as long as the file system allows.
    temp = path.with_name(f".sitegen-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with open(temp, "wb") as handle:
            yield handle
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()


def replace_file(path: Path, data: bytes | str) -> int:
    """Write data beside path under a temporary name and rename it over path; returns the byte count."""
    payload = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    with replacing(path) as handle:
        handle.write(payload)
    return len(payload)


def read_regular_file(path: Path, limit: int) -> bytes:
    """A regular file's bytes (or a link's to one), at most limit + 1 of them, so a caller can tell it
    was longer: a FIFO would wait for a writer forever and a device may never end. OSError otherwise."""
    # Non-blocking: opening a FIFO for reading would already wait.
    with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb", buffering=0) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        # Sized by the file, not the limit: a read of limit + 1 bytes would reserve that much each time.
        return handle.readall() if info.st_size <= limit else handle.read(limit + 1)
