"""A session's bulky record fields (typed prompts, tool calls, terms, activity), in files of their own."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from sitegen.fileio import open_regular, remove_file, replace_file
from sitegen.site.state.shape import conforms

__all__ = [
    "DETAILS_DIR",
    "PARTS",
    "KeptPart",
    "Part",
    "SessionDetails",
    "details_base",
    "details_paths",
    "details_present",
    "has_details",
    "lost_reads",
    "part_path",
    "read_details",
    "remove_details",
    "write_details",
]

log = logging.getLogger("sitegen.site")

# Files per session (its key), beside the manifest: the build process reads a session's details
# only while a page that needs them is made, so its memory does not grow with the number of sessions
# (at 2,000 sessions they were 100 MB of the manifest's 146).
DETAILS_DIR = ".sitegen/details"

# Which page reads what: a file per reader, so that a build parses each file once and each page only
# what it needs (the Prompts page's typed prompts are three quarters of the bytes).
Part = Literal["prompts", "terms", "activity"]
PARTS: dict[Part, tuple[str, ...]] = {
    "prompts": ("typed_prompts",),  # sitegen.site.prompts.session_prompts
    "terms": ("terms",),  # sitegen.site.pages.related
    "activity": ("tools", "active", "speed"),  # sitegen.site.pages.analytics
}


@dataclass(slots=True)
class SessionDetails:
    """What the Prompts, related and stats pages read of a session (sitegen.site.state.records.SessionRecord)."""

    # [entry id, time ms, text key, text] per prompt the user typed (sitegen.site.prompts.session_prompts).
    typed_prompts: list[list[Any]] = field(default_factory=list)
    # Most frequent words of user and assistant text, for related sessions.
    terms: dict[str, int] = field(default_factory=dict)
    # Tool calls (issue 34): {"names": [tool], "days": [YYYY-MM-DD], "rows": [[message (its position in
    # usage.keys, -1 without usage), day, name (positions in those lists), failed (0/1), output bytes,
    # duration ms (-1: unknown)], ...]}: numbers only, a row per call; {} for none.
    tools: dict[str, Any] = field(default_factory=dict)
    # Runs of activity, [start ms, end ms]: entries no more than ACTIVE_GAP_MS apart.
    active: list[list[int]] = field(default_factory=list)
    # Output tokens and the ms the model took to write them, per model and day: [model, day, output, ms].
    speed: list[list[Any]] = field(default_factory=list)


def details_base(site_dir: Path, key: str) -> Path:
    """The session's details files, without their part's suffix (details_paths)."""
    return site_dir / DETAILS_DIR / key


def part_path(base: Path, part: Part) -> Path:
    """The part's file: <key>.<part>.json."""
    return base.with_name(f"{base.name}.{part}.json")


def details_paths(base: Path) -> dict[Part, Path]:
    return {part: part_path(base, part) for part in PARTS}


def details_present(site_dir: Path) -> set[str]:
    """The names in the details folder, listed once: a rebuild asks after every session's parts."""
    try:
        return set(os.listdir(site_dir / DETAILS_DIR))
    except OSError:
        return set()


def has_details(present: set[str], key: str) -> bool:
    """Whether every part of the session's details is among `present` (details_present)."""
    return all(f"{key}.{part}.json" in present for part in PARTS)


def write_details(base: Path, details: SessionDetails) -> None:
    """Each part's file; sorted keys: the same session always gives the same bytes."""
    for part, path in details_paths(base).items():
        fields = {name: getattr(details, name) for name in PARTS[part]}
        replace_file(path, orjson.dumps(fields, option=orjson.OPT_SORT_KEYS), self_checking=True)
    # The whole file (<key>.json) of a site an older version built: the new manifest format renders
    # every session again, so each goes with its first render.
    remove_file(base.with_name(f"{base.name}.json"))


def remove_details(base: Path) -> None:
    for path in details_paths(base).values():
        remove_file(path)


def read_details(base: Path, part: Part) -> SessionDetails:
    """The session's details of that part (the others left empty); a file that is missing or damaged
    reads as none, and a damaged one is removed (with a warning), so the next build renders the session
    again (sitegen.site.build.plan checks that every part is there)."""
    global _lost_reads
    path = part_path(base, part)
    try:
        with open_regular(path) as handle:
            data = orjson.loads(handle.read())
        if conforms(data, SessionDetails) and data.keys() <= set(PARTS[part]):
            return SessionDetails(**data)
        problem = "has a wrong value"
    except FileNotFoundError:
        _lost_reads += 1
        return SessionDetails()  # removed as damaged by an earlier read (said then), or by hand
    except orjson.JSONDecodeError:
        problem = "is not whole JSON"
    except OSError as error:
        problem = f"cannot be read ({error.strerror or error})"
    _lost_reads += 1
    log.warning("The session details %s %s; the session is rendered again by the next build", path, problem)
    with contextlib.suppress(OSError):
        path.unlink()
    return SessionDetails()


# Reads that found no whole file, in this process: a page made from them lacks that session's part, and the
# session rendered again gives the same record, so such a page must not be trusted as up to date.
_lost_reads = 0


def lost_reads() -> int:
    """How many details reads found no whole file so far in this process (compare before and after)."""
    return _lost_reads


class KeptPart:
    """One part of the sessions' details, held by a process that builds again (watch) with the
    (mtime_ns, size, inode) each file had when it was read: its next build parses again only the files that
    changed (a session rendered again writes its files anew). Only for a part small enough to hold:
    the terms are about 5.5 KB a session (1.2 MB at 200 sessions); the tool rows and the typed prompts
    four and five times that."""

    def __init__(self, part: Part) -> None:
        self.part = part
        self._held: dict[Path, tuple[int, int, int, SessionDetails]] = {}

    def read(self, bases: Iterable[Path]) -> list[SessionDetails]:
        """Each session's part, in order; what is held afterwards is theirs alone."""
        part, held, fresh = self.part, self._held, {}
        found = []
        for base in bases:
            path = part_path(base, part)
            try:
                status = os.stat(path)
            except OSError:
                found.append(read_details(base, part))  # gone: said and counted there
                continue
            # The inode too: a session rendered again renames a new file into place, and a file system
            # with coarse times can give it the old one's time and size.
            stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
            kept = held.get(path)
            if kept is not None and kept[:3] == stamp:
                details = kept[3]
            else:
                lost_before = _lost_reads
                details = read_details(base, part)
                if _lost_reads != lost_before:
                    found.append(details)
                    continue
            fresh[path] = (*stamp, details)
            found.append(details)
        self._held = fresh
        return found
