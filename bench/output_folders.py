"""Output folders under bench/out: emptied before each run; the bytes of a tree."""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["OUT", "ROOT", "emptied", "tree_bytes"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"


def emptied(folder: Path) -> Path:
    """folder, emptied for the next run: the last run's output deleted just before it.

    Measured against the alternative (round 18, cold builds of the team's corpus, three runs each):
    moving the last output aside and deleting every output once all runs were timed made our cold
    build slower, not faster: 6.97-7.16 s (7.13-7.16 s without a sync between runs) against
    6.46-6.57 s, on this machine's ext4 without a journal, with pi-transcript about alike. So the
    runs delete first, as a user who removes a site and builds it again does."""
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def tree_bytes(path: Path) -> int:
    """The bytes of every file under path (0 when there is none)."""
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
