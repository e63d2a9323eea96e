"""Locate the bundled templates/, static/ and demo/ folders, in a wheel or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["resource_dir"]

_PACKAGE = Path(__file__).resolve().parent


@cache
def resource_dir(name: str) -> Path:
    """The folder `name`: inside the installed package (wheel), else at the top of the checkout."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"sitegen resource folder {name!r} is missing from the installation")
