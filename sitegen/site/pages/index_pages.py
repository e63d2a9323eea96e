"""The index pages as generators: stats, problems, the project pages, all sessions and home, in that
order (home last: it links to the rest)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from sitegen.gcpause import imports_settled
from sitegen.site.pages.generator import SiteContext, SiteGenerator
from sitegen.site.state.records import SessionRecord

if TYPE_CHECKING:
    # The pages' module imports jinja and the renderers: a build with no index page to write skips it.
    from sitegen.site.pages.indexes import IndexWriter, Listing

__all__ = [
    "AllSessionsPage",
    "HomePage",
    "IndexPages",
    "ProblemsPage",
    "ProjectPages",
    "PromptsSummary",
    "StatsPage",
    "index_generators",
]


@dataclass(slots=True)
class PromptsSummary:
    """What the index pages say of the prompt history (sitegen.site.prompts.page)."""

    count: int = 0
    latest: str = ""  # the newest prompt, one line
    problems: list[tuple[str, str]] = field(default_factory=list)  # (store, message)
    changed: bool = False  # the prompts page was made again: what the index pages say of it may have changed


class IndexPages:
    """What the index pages of one build share: the writer (one jinja environment) and the listing,
    made once per context; `prompts` gives what they say of the prompt history (its generator's result)."""

    def __init__(self, prompts: Callable[[], PromptsSummary]) -> None:
        self.prompts = prompts
        self._writer: IndexWriter | None = None
        self._listing: tuple[SiteContext, Listing] | None = None

    def stale(self, context: SiteContext) -> bool:
        """Anything an index page shows changed: the sessions, the files with no page (counted in every
        page's navigation), the prompts; or a long build's progress is to be shown."""
        changed = context.sessions_changed or context.unnamed_changed or self.prompts().changed
        return changed or bool(context.building)

    def writer(self, context: SiteContext) -> IndexWriter:
        if self._writer is None:
            with imports_settled():
                from sitegen.site.pages.indexes import IndexWriter

            self._writer = IndexWriter(context.out, context.assets)
        return self._writer

    def forget_listing(self) -> None:
        """Sessions were rendered again since the listing was made (their records changed): made anew."""
        self._listing = None

    def listing(self, context: SiteContext) -> Listing:
        if self._listing is None or self._listing[0] is not context:
            with imports_settled():
                from sitegen.site.pages.indexes import Listing

            self._listing = (context, Listing(context.manifest, self.prompts()))
        return self._listing[1]


class _IndexPage(ABC):
    """An index page's generator, made with what the index pages of the build share."""

    name: ClassVar[str]

    def __init__(self, pages: IndexPages) -> None:
        self.pages = pages

    def write(self, context: SiteContext) -> list[str]:
        """The page's files, when anything an index page shows changed (IndexPages.stale); else none."""
        return self._made(context) if self.pages.stale(context) else []

    @abstractmethod
    def _made(self, context: SiteContext) -> list[str]:
        """Write the page's files (it is stale); their site-relative paths."""


class StatsPage(_IndexPage):
    """stats.html: the figures of every session, all time and the last 30 and 7 days, with charts."""

    name: ClassVar[str] = "stats"

    def _made(self, context: SiteContext) -> list[str]:
        return self.pages.writer(context).write_stats(self.pages.listing(context))


class ProblemsPage(_IndexPage):
    """problems.html: the session files with no page, the parts pages could not show, the repairs."""

    name: ClassVar[str] = "problems"

    def _made(self, context: SiteContext) -> list[str]:
        return self.pages.writer(context).write_problems(self.pages.listing(context))


class ProjectPages(_IndexPage):
    """projects/<slug>.html: those of the projects whose sessions, or whose figures, changed."""

    name: ClassVar[str] = "projects"

    def _made(self, context: SiteContext) -> list[str]:
        writer, listing = self.pages.writer(context), self.pages.listing(context)
        by_project: dict[str, list[SessionRecord]] = {}
        for record in listing.records:
            by_project.setdefault(record.project_slug, []).append(record)
        touched, kept = context.touched_projects, context.manifest.projects
        written: list[str] = []
        for project in listing.projects:
            unchanged = kept.get(project.slug) == listing.shown[project.slug]
            # A long build's pages list every project: the previous build's pages list none of its new sessions.
            if touched is not None and project.slug not in touched and unchanged and not context.building:
                continue
            written += writer.write_project(project, by_project[project.slug], listing.problem_count)
        if not context.building:
            context.manifest.projects = listing.shown  # saved with the manifest, for the next build
        return written


class AllSessionsPage(_IndexPage):
    """sessions.html and its data file, which the palette and the session pages' keys read too."""

    name: ClassVar[str] = "all-sessions"

    def _made(self, context: SiteContext) -> list[str]:
        listing = self.pages.listing(context)
        return self.pages.writer(context).write_all_sessions(listing.records, listing.names, listing.problem_count)


class HomePage(_IndexPage):
    """index.html; then the pages of projects that are gone, which it linked to."""

    name: ClassVar[str] = "home"

    def _made(self, context: SiteContext) -> list[str]:
        writer = self.pages.writer(context)
        written = writer.write_home(self.pages.listing(context), context.building)
        if not context.building:
            # Only now does no page link to them (a long build's pages link to every project's).
            writer.remove_stale_projects(self.pages.listing(context))
        return written


def index_generators(pages: IndexPages, *, building: bool = False) -> list[SiteGenerator]:
    """The index pages in the order they are written: the home page last, after every page it links
    to. A long build's (`building`) has only the pages that list the sessions written so far."""
    listings: list[SiteGenerator] = [ProjectPages(pages), AllSessionsPage(pages), HomePage(pages)]
    return listings if building else [StatsPage(pages), ProblemsPage(pages), *listings]
