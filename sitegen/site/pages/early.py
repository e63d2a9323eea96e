"""A long build shown as it goes (the first build of `sitegen watch`): home and project pages of the
sessions written so far, with the build's progress in a note."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from sitegen.site.pages.generator import SiteContext, run_generators
from sitegen.site.pages.index_pages import IndexPages, PromptsSummary, index_generators
from sitegen.site.state.manifest import ManifestEntry, SiteManifest
from sitegen.site.state.progress import progress_text

__all__ = ["EARLY_MIN_JOBS", "EarlyPages", "LiveHooks"]

# A build with fewer sessions to render is over in about a second: it is shown when it is done.
EARLY_MIN_JOBS = 10
# The home and project pages are written again at most this often while the build runs (each time
# every open copy reloads)...
LISTING_S = 2.0
# ...but this soon after one of the newest sessions, which the home page lists, is written.
NEWEST_S = 0.3


@dataclass(frozen=True, slots=True)
class LiveHooks:
    """How a build tells `sitegen watch` what it can show before the build ends."""

    # The home page is written and the worker processes started (forked before any thread of the
    # server exists): the site can be served from now on.
    ready: Callable[[], None]
    # Files just written (site-relative), and the progress in words (None when the build is done).
    published: Callable[[Sequence[str], str | None], None]


class EarlyPages:
    """The index pages of a long build, written as sessions finish. They list the sessions whose
    pages are written (and those of the previous build, whose pages are still there), so that no
    link on them leads to a page that is not there; the build's end writes the real ones."""

    def __init__(
        self,
        site_dir: Path,
        assets: dict[str, str],
        before: dict[str, ManifestEntry],
        total: int,
        newest: Collection[str],
        hooks: LiveHooks,
    ) -> None:
        self.site_dir = site_dir
        self.assets = assets
        self.before = dict(before)  # the build goes on to change the manifest's own
        self.total = total
        self.newest = set(newest)
        self.hooks = hooks
        self.done = 0
        # The build's own generators of the pages that list sessions (the prompts are not read yet).
        self._generators = index_generators(IndexPages(PromptsSummary), building=True)
        self._last = 0.0
        self._newest_waiting = False

    def start(self, current: dict[str, ManifestEntry]) -> None:
        """The home page before any session is rendered (with what the site has already)."""
        self.hooks.published(self._write(current), progress_text(0, self.total))

    def ready(self) -> None:
        self.hooks.ready()

    def finished(self, current: dict[str, ManifestEntry], source: str, written: Sequence[str]) -> None:
        """A session's pages are written (`current` has its entry): show them, and now and then the
        index pages that list it."""
        self.done += 1
        self._newest_waiting |= source in self.newest
        wait = NEWEST_S if self._newest_waiting else LISTING_S
        listed: list[str] = []
        # The last one is listed by the build's own index pages, written next.
        if self.done < self.total and time.monotonic() - self._last >= wait:
            listed = self._write(current)
        self.hooks.published([*written, *listed], progress_text(self.done, self.total))

    def _write(self, current: dict[str, ManifestEntry]) -> list[str]:
        shown = SiteManifest(sessions={**self.before, **current})
        building = progress_text(self.done, self.total)
        context = SiteContext(self.site_dir, self.assets, shown, sessions_changed=True, building=building)
        written = run_generators(self._generators, context)
        self._last = time.monotonic()
        self._newest_waiting = False
        return written
