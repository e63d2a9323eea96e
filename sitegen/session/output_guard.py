"""Where sitegen must never write its output: `/`, the home folder, an agent's folders, a session file."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

from sitegen.errors import SitegenError
from sitegen.fileio import open_regular
from sitegen.session.load import read_header

__all__ = ["OutputRefused", "check_output_place", "refused_output"]

log = logging.getLogger("sitegen.places")


class OutputRefused(SitegenError):
    """The output (a site folder or an exported file) would go where sitegen never writes."""


def _resolved(path: Path) -> Path | None:
    try:
        return Path(os.path.abspath(path.expanduser())).resolve()
    except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError for a link loop
        return None


def refused_output(place: Path, inputs: Iterable[Path], sessions: Iterable[Path] = ()) -> str | None:
    """Why `place` must not receive output ("into …" or "over …", to follow "Refusing to write the
    page"), or None: `build --out`'s folder, `export`'s file (any name and format) or the folder it
    goes into are all asked here.

    Refused: the filesystem root and the home folder themselves (a site spreads its files there),
    anything that is, holds or lies inside one of `inputs` (agent dirs, odek stores: the sessions),
    a `.jsonl` name, and an existing file that is a session (one of `sessions`, or one whose first
    line is a session header)."""
    resolved = _resolved(place)
    if resolved is None:
        return f"into {place}: it is a link loop, or lies behind one"
    if resolved == Path(resolved.anchor):
        return f"into the root folder: {place}"
    if resolved == _resolved(Path.home()):
        return f"into the home folder: {place}"
    for given in inputs:
        folder = _resolved(given)
        if folder is None:
            log.warning("Skipping %s: a link loop", given)  # it holds no sessions to write over
            continue
        if resolved == folder or folder in resolved.parents or resolved in folder.parents:
            return f"where it overlaps the session folder {folder}: {place}"
    if resolved.suffix == ".jsonl" or any(resolved == _resolved(session) for session in sessions):
        return f"over a session file: {place}"
    # A session file outside the agents' folders (a copy, a --session path): read its first line only.
    if resolved.is_file() and _starts_like_json(resolved) and read_header(resolved) is not None:
        return f"over a session file: {place}"
    return None


def _starts_like_json(path: Path) -> bool:
    """Whether the file's first byte but spaces opens a JSON object: read_header would otherwise read
    a long page of HTML line by line, looking for a header further down."""
    try:
        with open_regular(path) as handle:
            return handle.read(256).lstrip().startswith(b"{")
    except OSError:
        return False


def check_output_place(
    place: Path, inputs: Iterable[Path], sessions: Iterable[Path] = (), what: str = "the page"
) -> None:
    """Raise OutputRefused, one line naming the place and why, when refused_output refuses it."""
    reason = refused_output(place, inputs, sessions)
    if reason is not None:
        raise OutputRefused(f"Refusing to write {what} {reason}")
