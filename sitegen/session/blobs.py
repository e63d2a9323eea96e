"""Content-addressed blob store and the rehydration of blob refs in loaded entries."""

from __future__ import annotations

import base64
import errno
import hashlib
import logging
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sitegen.session.entries import Entry

__all__ = [
    "BLOB_REF_PREFIX",
    "MAX_BLOB_BYTES",
    "BlobStore",
    "blob_hash",
    "is_blob_ref",
    "rehydrate_entries",
    "store_dirs_for_session",
]

log = logging.getLogger("sitegen.blobs")

BLOB_REF_PREFIX = "blob:sha256:"
_BLOB_REF = re.compile(r"blob:sha256:([0-9a-f]{64})")
# omp may also keep a copy named with an extension.
_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp")
# A blob is an image a page inlines (providers take a few MB): a larger file is refused unread.
MAX_BLOB_BYTES = 50 << 20
# Opened without following a link (a blob that links to /etc/passwd would put it in the page and in a
# share) and without waiting on a pipe.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class _Refused(Exception):
    """A blob file that is there but must not be read; its message says why."""


def _read_blob(path: Path) -> bytes:
    """A regular file's bytes, read through no symbolic link and no larger than MAX_BLOB_BYTES."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _Refused("a symbolic link, not a file of the blob store") from None
        raise
    with os.fdopen(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise _Refused("not a regular file (a pipe, a socket or a device)")
        if info.st_size > MAX_BLOB_BYTES:
            raise _Refused(f"larger than {MAX_BLOB_BYTES >> 20} MB")
        data = handle.read(MAX_BLOB_BYTES + 1)
    if len(data) > MAX_BLOB_BYTES:
        raise _Refused(f"larger than {MAX_BLOB_BYTES >> 20} MB")
    return data


def blob_hash(value: object) -> str | None:
    """The hash of a well-formed blob ref; None for anything else (which is then left alone)."""
    if not isinstance(value, str) or len(value) != 76:
        return None
    match = _BLOB_REF.fullmatch(value)
    return match.group(1) if match else None


def is_blob_ref(value: object) -> bool:
    return blob_hash(value) is not None


class BlobStore:
    """Blobs under one or more folders, read in order; writes go to the first."""

    def __init__(self, dirs: Sequence[str | os.PathLike[str]]) -> None:
        self.dirs = [Path(d) for d in dirs]
        # Blobs that are there but were not read, by hash: why (a link, a pipe, too large, wrong bytes).
        self.refused: dict[str, str] = {}

    def get(self, digest: str) -> bytes | None:
        """The bytes stored under a hash, or None when no folder holds them as a regular file of at
        most MAX_BLOB_BYTES whose bytes hash to that name (`refused` then says why, when it is there)."""
        for folder in self.dirs:
            for name in (digest, *(digest + ext for ext in _EXTENSIONS)):
                path = folder / name
                try:
                    data = _read_blob(path)
                except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                    continue
                except _Refused as refusal:
                    self._refuse(digest, path, str(refusal))
                    continue
                except OSError as error:
                    self._refuse(digest, path, f"cannot be read: {error.strerror or error}")
                    continue
                if hashlib.sha256(data).hexdigest() != digest:
                    self._refuse(digest, path, "its bytes do not hash to its name")
                    continue
                self.refused.pop(digest, None)
                return data
        return None

    def _refuse(self, digest: str, path: Path, reason: str) -> None:
        log.warning("cannot use blob %s: %s", path, reason)
        self.refused.setdefault(digest, reason)

    def put(self, data: bytes) -> str:
        """Store bytes (idempotently, atomically) and return their blob ref."""
        if not self.dirs:
            raise ValueError("a blob store needs a folder to write to")
        digest = hashlib.sha256(data).hexdigest()
        folder = self.dirs[0]
        target = folder / digest
        if not target.exists():
            folder.mkdir(parents=True, exist_ok=True)
            temp = folder / f".{digest}.{os.getpid()}.tmp"
            with open(temp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)
        return BLOB_REF_PREFIX + digest


def store_dirs_for_session(session_path: Path, default_agent_dirs: Iterable[Path]) -> list[Path]:
    """The blobs/ folder of the agent dir holding the session (the folder above sessions/), else defaults."""
    for ancestor in session_path.resolve().parents:
        if ancestor.name == "sessions":
            return [ancestor.parent / "blobs"]
    return [Path(d) / "blobs" for d in default_agent_dirs]


def _rehydrate_image_block(block: dict[str, Any], store: BlobStore, where: str) -> None:
    digest = blob_hash(block.get("data"))
    if digest is None:
        return
    data = store.get(digest)
    if data is None:
        log.warning("missing blob %s (%s); keeping the reference", digest, where)
        return
    block["data"] = base64.b64encode(data).decode("ascii")


def _rehydrate_image_url(holder: dict[str, Any], store: BlobStore, where: str) -> None:
    value = holder.get("image_url")
    target, key = (value, "url") if isinstance(value, dict) else (holder, "image_url")
    digest = blob_hash(target.get(key))
    if digest is None:
        return
    data = store.get(digest)
    if data is None:
        log.warning("missing blob %s (%s); keeping the reference", digest, where)
        return
    # Provider data URLs were stored as their original UTF-8 string.
    target[key] = data.decode("utf-8", errors="replace")


def _rehydrate_content(content: object, store: BlobStore, entry: Entry) -> None:
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "image":
            _rehydrate_image_block(block, store, f"entry {entry.get('id')}")
        elif "image_url" in block:
            _rehydrate_image_url(block, store, f"entry {entry.get('id')}")


def rehydrate_entries(entries: Iterable[Entry], store: BlobStore) -> None:
    """Resolve blob refs in message and custom_message image blocks, in place."""
    for entry in entries:
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict):
                _rehydrate_content(message.get("content"), store, entry)
        elif kind == "custom_message":
            _rehydrate_content(entry.get("content"), store, entry)
