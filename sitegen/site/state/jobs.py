"""What the build hands a worker and gets back, and the site's URL arithmetic: light to import."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from sitegen.site.state.records import SessionRecord

__all__ = [
    "NEWEST_FIRST",
    "RenderJob",
    "RenderOutcome",
    "fragments_path",
    "link_parents",
    "related_script",
    "relative_url",
    "render_order",
]

# The home page lists this many of the newest sessions (sitegen.site.pages.indexes.RECENT_SESSIONS); a
# build renders them first, newest first.
NEWEST_FIRST = 20


@dataclass(frozen=True, slots=True)
class RenderJob:
    """Everything a worker needs; plain values so it pickles cheaply."""

    source: str
    family: str
    key: str
    project_slug: str
    page: str  # site-relative path of the session page
    site_dir: str
    assets: dict[str, str]  # asset name -> site-relative path
    default_agent_dirs: tuple[str, ...] = ()
    profile: bool = False  # time the phases (sitegen build --profile)
    # A forked session's parent, when the site has a page for it: its file and its page.
    parent_source: str = ""
    parent_page: str = ""
    parent_title: str = ""  # when the manifest already knows it; else the worker reads the parent's start
    agent_profile: str = ""  # the agent profile whose dir holds the session ("" for none)
    history_stores: tuple[str, ...] = ()  # their session index (titles, idle recaps) goes on the page


@dataclass(slots=True)
class RenderOutcome:
    key: str
    source: str
    record: SessionRecord | None = None
    problem: str | None = None
    written: list[str] = field(default_factory=list)
    content_hash: str = ""  # of the session file, taken just before it was read for this render
    indexed: list[str] = field(default_factory=list)  # search keys whose entries were stored again
    seconds: dict[str, float] = field(default_factory=dict)  # per phase, when the job asked for a profile
    # What a worker process logged while rendering it (logger name, level, message), for the build to
    # log in its own process, where the command line shows it.
    logged: list[tuple[str, int, str]] = field(default_factory=list)
    # Set when a write failed for want of space: the build stops (every other render would fail too).
    disk_full: str | None = None


def subagent_search_key(session_key: str, qualified_id: str) -> str:
    """A subagent page's key in the search index (its own document, linked to its own page)."""
    return f"{session_key}/{qualified_id}"


def relative_url(from_page: str, to_path: str) -> str:
    """A URL from one site-relative page to another site-relative file (both plain paths, without
    "." or ".." parts, as the build makes them). String work, not os.path.relpath: the related lists
    make a thousand of these on every build."""
    folders = from_page.split("/")[:-1]
    target = to_path.split("/")
    shared = 0
    while shared < len(folders) and shared < len(target) - 1 and folders[shared] == target[shared]:
        shared += 1
    # Quoted: a file name from a session folder may hold "#", "?" or ":" (which would start a scheme).
    return "/".join([".."] * (len(folders) - shared) + [quote(part) for part in target[shared:]])


def fragments_path(site_dir: Path, key: str) -> Path:
    """Where a session's highlighted fragments wait for its next render (sitegen.render.base.fragments)."""
    return site_dir / ".sitegen" / "fragments" / f"{key}.json"


def related_script(page: str) -> str:
    """Site-relative path of the script that lists a session's related sessions."""
    return str(PurePosixPath(page).with_suffix(".related.js"))


def link_parents(
    jobs: list[RenderJob],
    pages: Mapping[str, str],
    parent_of: Callable[[str], str | None],
    titles: Mapping[str, str] | None = None,
) -> list[RenderJob]:
    """The jobs, those of forked sessions told their parent's page when the site has one.

    `pages` maps every session file of the site to its page; `parent_of` reads the parent a session
    names (its header's parentSession), which may be another spelling of the same path."""
    by_real: dict[str, str] | None = None
    linked = []
    for job in jobs:
        parent = parent_of(job.source) if job.family == "pi" else None
        if parent:
            if by_real is None:
                by_real = {os.path.realpath(path): path for path in pages}
            source = by_real.get(os.path.realpath(parent))
            if source is not None and source != job.source:
                title = (titles or {}).get(source, "")
                job = replace(job, parent_source=source, parent_page=pages[source], parent_title=title)
        linked.append(job)
    return linked


def render_order(jobs: list[RenderJob], stamps: Mapping[str, Sequence[int]]) -> list[RenderJob]:
    """The order to render in: the NEWEST_FIRST newest sessions, newest first, so the sessions the
    home page lists are there first (a reader opens those); then the rest biggest first, so that one
    huge session does not end the build alone on one worker while the others idle.

    `stamps` maps each job's source to its fingerprint (size, mtime_ns, ...): a session file's mtime
    is its last activity, as the agent appends to it, read without opening the file."""

    def stamp(job: RenderJob, index: int) -> int:
        found = stamps.get(job.source)
        return found[index] if found is not None and len(found) > index else 0

    by_age = sorted(jobs, key=lambda job: (-stamp(job, 1), job.source))
    newest, rest = by_age[:NEWEST_FIRST], by_age[NEWEST_FIRST:]
    return newest + sorted(rest, key=lambda job: (-stamp(job, 0), job.source))
