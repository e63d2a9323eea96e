"""Output folders under bench/out: a run's output moved aside for the next run, deleted once all are timed."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

__all__ = ["OUT", "ROOT", "TRASH", "emptied", "empty_trash", "tree_bytes"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
# Where a run's output goes when the next run needs its folder empty (emptied below).
TRASH = OUT / "build" / "trash"


def emptied(folder: Path) -> Path:
    """folder, made empty for the next run by moving the last run's output aside instead of deleting
    it. On an ext4 file system without a journal (this machine's), every file created within a few
    minutes of many deletions makes the kernel step over the deleted inodes one by one (ext4's
    recently_deleted check when it picks an inode): a cold build right after deleting the last one's
    3,580 files spent 3.5-4.0 s in the kernel instead of 1.1 s, 17 % of its CPU samples in that check
    (perf). Journaled ext4, what users have, skips the check. The outputs go at the end (empty_trash)."""
    if folder.exists():
        TRASH.mkdir(parents=True, exist_ok=True)
        folder.rename(TRASH / f"{folder.name}-{time.monotonic_ns()}")
    return folder


def empty_trash() -> None:
    """The outputs moved aside by emptied, deleted once every run is timed."""
    if TRASH.exists():
        shutil.rmtree(TRASH, ignore_errors=True)
        print("removed the runs' outputs: on a file system without a journal, give the next run a few minutes")


def tree_bytes(path: Path) -> int:
    """The bytes of every file under path (0 when there is none)."""
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
