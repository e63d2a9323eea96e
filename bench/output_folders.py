"""Output folders under bench/out: emptied before each run; the bytes of a tree."""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["OUT", "ROOT", "emptied", "tree_bytes"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"


def emptied(folder: Path) -> Path:
    """folder, emptied for the next run: the last run's output deleted just before it, as a user who
    removes a site and builds it again does. On an ext4 without a journal (this machine's) files made
    within a minute or so of many deletions cost the kernel more; the best of several runs hardly
    shows it (bench/README.md, "Cold builds on both corpora")."""
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def tree_bytes(path: Path) -> int:
    """The bytes of every file under path (0 when there is none)."""
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
