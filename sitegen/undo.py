"""Undo for a rebuild that fails half way: the old version of each file it replaces or removes is kept
(a hard link, no copy) until the rebuild is done, and put back if it fails."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

__all__ = ["UNDO_DIR", "Journal", "active_journal", "undo_unfinished"]

UNDO_DIR = ".sitegen/undo"

_active: ContextVar[Journal | None] = ContextVar("sitegen_undo_journal", default=None)


def active_journal() -> Journal | None:
    """The journal that writes in this thread (or process) go through, if any."""
    return _active.get()


class Journal:
    """What a rebuild of one folder changed, kept in <folder>/.sitegen/undo: `old/<path>`, the file
    as it was before its first change; `new/<path>`, a mark for a file that was not there. Several
    processes (the build's workers) may keep into the same journal: the first version kept wins."""

    def __init__(self, root: Path) -> None:
        self.root = root.absolute()
        self.folder = self.root / UNDO_DIR

    @contextmanager
    def active(self) -> Iterator[Journal]:
        """Writes through sitegen.fileio in this thread keep their old versions here, in the block."""
        token = _active.set(self)
        try:
            yield self
        finally:
            _active.reset(token)

    def _relative(self, path: Path) -> Path | None:
        try:
            relative = path.absolute().relative_to(self.root)
        except ValueError:
            return None  # not in the folder this journal is about
        return None if relative.parts[:2] == (".sitegen", "undo") else relative

    def _kept(self, relative: Path) -> bool:
        return os.path.lexists(self.folder / "old" / relative) or os.path.lexists(self.folder / "new" / relative)

    def keep(self, path: Path) -> None:
        """Before path is replaced: keep the file that is there, or note that there was none."""
        relative = self._relative(path)
        if relative is None or self._kept(relative):
            return
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            mark = self.folder / "new" / relative
            mark.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                open(mark, "xb").close()
            return
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            return  # the replace itself will fail on it
        old = self.folder / "old" / relative
        old.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, old, follow_symlinks=False)
        except FileExistsError:
            pass  # another worker kept it first
        except OSError:
            shutil.copy2(path, old, follow_symlinks=False)  # a file system without hard links

    def remove(self, path: Path) -> None:
        """Remove path (a file), keeping it to be put back; a missing file is no error."""
        relative = self._relative(path)
        if relative is None or self._kept(relative):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
        old = self.folder / "old" / relative
        old.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.replace(path, old)

    def rollback(self) -> None:
        """Put every kept file back and remove the new ones: the folder is as before the rebuild."""
        for relative in _files(self.folder / "new"):
            target = self.root / relative
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
            _remove_empty_parents(target.parent, self.root)
        for relative in _files(self.folder / "old"):
            target = self.root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(self.folder / "old" / relative, target)
        self.commit()

    def commit(self) -> None:
        """Forget what was kept: the rebuild is done."""
        shutil.rmtree(self.folder, ignore_errors=True)


def undo_unfinished(root: Path) -> bool:
    """Undo what a rebuild that never finished (its process was killed) left; whether there was one."""
    journal = Journal(root)
    if not journal.folder.is_dir():
        return False
    journal.rollback()
    return True


def _files(folder: Path) -> Iterator[Path]:
    for current, _dirs, names in os.walk(folder):
        for name in names:
            yield (Path(current) / name).relative_to(folder)


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
