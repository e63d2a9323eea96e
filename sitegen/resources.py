"""Locate the bundled templates/, static/ and demo/ folders, and the user's cache folder for sitegen."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

__all__ = ["cache_folder", "resource_dir"]

_PACKAGE = Path(__file__).resolve().parent


@cache
def resource_dir(name: str) -> Path:
    """The folder `name`: inside the installed package (wheel), else at the top of the checkout."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"sitegen resource folder {name!r} is missing from the installation")


def cache_folder(name: str) -> Path | None:
    """sitegen's folder `name` in the user's cache folder ($XDG_CACHE_HOME or ~/.cache), made if need
    be; None when it cannot be made or written (what is cached there is then made each time)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "sitegen", name)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return Path(folder) if os.access(folder, os.W_OK) else None
