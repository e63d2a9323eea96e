"""Output folders under bench/out: generated data made once, sites emptied before each run; a tree's bytes."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

__all__ = ["OUT", "ROOT", "emptied", "made_once", "tree_bytes"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"


def made_once(folder: Path, make: Callable[[], object]) -> bool:
    """Fill folder by make() unless a finished earlier run did (its .complete mark); a run stopped half
    way is started again from nothing. True when it was made now (the generators are deterministic)."""
    done = folder / ".complete"
    if done.exists():
        return False
    shutil.rmtree(folder, ignore_errors=True)
    make()
    done.write_text("ok\n")
    return True


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
