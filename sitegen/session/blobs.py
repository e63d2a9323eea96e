"""Content-addressed blob store and the rehydration of blob refs in loaded entries."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sitegen.fileio import read_regular_file
from sitegen.session.entries import Entry

__all__ = [
    "BLOB_REF_PREFIX",
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
# Read at most this much of a blob (as of an artifact): a page inlines it.
MAX_BLOB_BYTES = 256 << 20


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

    def get(self, digest: str) -> bytes | None:
        """The bytes stored under a hash, or None when no folder holds them."""
        for folder in self.dirs:
            for name in (digest, *(digest + ext for ext in _EXTENSIONS)):
                try:
                    data = read_regular_file(folder / name, MAX_BLOB_BYTES)
                except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                    continue
                except OSError as error:
                    log.warning("cannot read blob %s: %s", folder / name, error.strerror or error)
                    continue
                if len(data) > MAX_BLOB_BYTES:
                    log.warning("cannot read blob %s: larger than %d MB", folder / name, MAX_BLOB_BYTES >> 20)
                    continue
                return data
        return None

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
