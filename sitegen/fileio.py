"""Replace a file in one step (temporary name, then rename), so readers never see half a file."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["replace_file"]


def replace_file(path: Path, data: bytes | str) -> int:
    """Write data beside path under a temporary name and rename it over path; returns the byte count.

    No fsync: pages and indexes can be rebuilt, and syncing thousands of them would dominate a build
    (session files use sitegen.session.storage.atomic_write_bytes, which does sync)."""
    payload = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    # A short name: the target's own name may already be as long as the file system allows.
    temp = path.with_name(f".sitegen-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with open(temp, "wb") as handle:
            handle.write(payload)
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()
    return len(payload)
