"""The site pages stage's one interface: each index-like output is a generator the build runs in turn."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from sitegen.site.state.manifest import MANIFEST_PATH, SiteManifest
from sitegen.site.state.records import SessionRecord
from sitegen.timings import PhaseClock

__all__ = ["SiteContext", "SiteGenerator", "run_generators"]


@dataclass(frozen=True, slots=True)
class SiteContext:
    """What the site pages are made from, the same for every generator of one pass: the site folder,
    the build's sessions (the manifest's entries are this build's) and what changed since the last build.
    Generators read it; the one thing written back is what the project pages show (manifest.projects),
    which the manifest keeps for the next build."""

    out: Path
    assets: dict[str, str]  # asset name -> its published name, as every page links it
    manifest: SiteManifest
    # A session was rendered, removed or became a problem, every page is made again, or the last build
    # stopped half way: whatever reads the sessions is made again.
    sessions_changed: bool
    # The files that have no page (names not UTF-8, folders that cannot be read) changed: every page's
    # count of problems may have.
    unnamed_changed: bool = False
    # The projects whose sessions changed; None: every project.
    touched_projects: frozenset[str] | None = None
    # The search keys whose entries this build stored: the sessions it rendered, their subagent pages.
    rendered: frozenset[str] = frozenset()
    # A long build's progress in words (sitegen.site.pages.early): the pages say it is under way.
    building: str = ""

    @property
    def state_dir(self) -> Path:
        """The build's own files (.sitegen/, where the manifest is)."""
        return self.out / PurePosixPath(MANIFEST_PATH).parent

    def records(self) -> list[SessionRecord]:
        """The records of the sessions that have a page (read again each time: a generator may render
        sessions again, sitegen.site.pages.site_pages.SearchExport)."""
        return self.manifest.records()


class SiteGenerator(Protocol):
    """One index-like output of the site (home, projects, stats, prompts, search, related, ...)."""

    # The phase `sitegen build --profile` times it under (sitegen.timings.PHASES).
    @property
    def name(self) -> str: ...

    def write(self, context: SiteContext) -> list[str]:
        """Bring its files up to date, each written whole (a temporary name renamed) and only when
        changed; nothing when nothing it reads changed. The site-relative paths written (the manifest's
        result, and the files `watch` tells open pages to reload)."""
        ...


def run_generators(
    generators: Iterable[SiteGenerator], context: SiteContext, clock: PhaseClock | None = None
) -> list[str]:
    """Each generator in turn, in the given order (one that reads another's output comes after it),
    each timed under its name; every file written."""
    written: list[str] = []
    for generator in generators:
        if clock is None:
            written += generator.write(context)
            continue
        with clock.phase(generator.name):
            written += generator.write(context)
    return written
