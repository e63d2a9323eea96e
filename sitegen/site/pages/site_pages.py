"""The build's site pages stage as a list of generators: prompts, the search index (related lists and
the index pages made while its processes work), then the home page; prompts, related and search are
adapters on their own packages."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, ClassVar

from sitegen.gcpause import heap_trimmed
from sitegen.session.entries import shorten
from sitegen.site.pages.generator import SiteContext, SiteGenerator, run_generators
from sitegen.site.pages.index_pages import HomePage, IndexPages, PromptsSummary, index_generators
from sitegen.site.pages.related import write_related
from sitegen.site.search.index import SearchDocInfo, update_search_index
from sitegen.site.state.jobs import subagent_search_key
from sitegen.site.state.records import SessionRecord
from sitegen.timings import PhaseClock

if TYPE_CHECKING:
    from sitegen.site.prompts.page import PromptsResult

__all__ = ["PromptsPage", "RelatedLists", "RenderAgain", "SearchExport", "search_documents", "site_generators"]

# Given the keys of sessions, render them again (their stored search entries are gone); the files written.
RenderAgain = Callable[[Sequence[str]], list[str]]


class PromptsPage:
    """prompts.html and its data, from the agents' history stores and every session's prompts
    (sitegen.site.prompts.page.update_prompts, which skips what did not change)."""

    name: ClassVar[str] = "prompts"

    def __init__(self, stores: Sequence[Path], looked: Sequence[Path] = (), jobs: int = 1, keep: bool = True) -> None:
        self.stores, self.looked, self.jobs, self.keep = stores, looked, jobs, keep
        self.result: PromptsResult | None = None

    def write(self, context: SiteContext) -> list[str]:
        from sitegen.site.prompts.page import update_prompts

        manifest = context.manifest
        self.result = update_prompts(
            context.out,
            self.stores,
            context.records(),
            context.assets,
            problem_count=len(manifest.problems()) + len(manifest.defects()),
            sessions_changed=context.sessions_changed,
            looked=self.looked,
            jobs=self.jobs,
            keep=self.keep,
        )
        if not self.keep:
            heap_trimmed()  # what the page made and freed, given back before the search export forks
        return self.result.written

    def summary(self) -> PromptsSummary:
        """What the index pages say of the prompts (nothing before write)."""
        result = self.result
        if result is None:
            return PromptsSummary()
        return PromptsSummary(result.count, result.latest, result.problems, result.changed)


class RelatedLists:
    """Each session page's <page>.related.js: the five sessions most like it (sitegen.site.pages.related);
    keep: the terms read are held for this process's next build (watch's)."""

    name: ClassVar[str] = "related"

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep

    def write(self, context: SiteContext) -> list[str]:
        if not context.sessions_changed:
            return []
        return write_related(context.state_dir, context.out, context.records(), self.keep)


def search_documents(records: Iterable[SessionRecord]) -> dict[str, SearchDocInfo]:
    """What the search index lists: every session, and every subagent page as its own document."""
    documents: dict[str, SearchDocInfo] = {}
    for record in records:
        documents[record.key] = SearchDocInfo(
            record.title, record.project, record.page, record.key, time_ms=record.modified_ms
        )
        for agent_id, page in record.subagents.items():
            # subagents also maps plain agent ids to their nested pages: each page once, by its own id.
            if PurePosixPath(page).stem == agent_id:
                key = subagent_search_key(record.key, agent_id)
                # Titled by its id alone: "subagent" in every title would make every page match it.
                context = f"subagent of {shorten(record.title, 80)}"
                documents[key] = SearchDocInfo(agent_id, record.project, page, record.key, context, record.modified_ms)
    return documents


class SearchExport:
    """The search index of every session, subagent page and prompt (sitegen.site.search.index
    update_search_index: the FTS5 store's segments exported as the page's shards), and search.html.

    `meanwhile` are the generators that neither read the search index nor write what it reads (the
    related lists, the index pages but home): they run while the segments are filled in worker
    processes, so that the build's two cores stay busy to its end, each timed under its own phase."""

    name: ClassVar[str] = "search"

    def __init__(
        self,
        prompts: PromptsPage,
        pages: IndexPages,
        render_again: RenderAgain,
        jobs: int = 1,
        meanwhile: Sequence[SiteGenerator] = (),
        clock: PhaseClock | None = None,
    ) -> None:
        self.prompts, self.pages, self.render_again, self.jobs = prompts, pages, render_again, jobs
        self.meanwhile, self.clock = meanwhile, clock

    def write(self, context: SiteContext) -> list[str]:
        others: list[str] = []

        def run_others() -> None:
            for generator in self.meanwhile:
                others.extend(run_generators([generator], context, self.clock))
                if not self.prompts.keep:
                    # What it made and freed given back while the segments' processes hold theirs
                    # (at 2,000 sessions the related lists and the stats leave 18 MB otherwise).
                    heap_trimmed()

        if not self.pages.stale(context):
            run_others()
            return others
        out, prompts = context.out, self.prompts.result
        documents = search_documents(context.records())
        changed = {*context.rendered, *context.manifest.indexed}
        if prompts is not None:
            documents.update(prompts.documents)
            changed.update(prompts.indexed)
        search = update_search_index(out, documents, changed, self.jobs, meanwhile=run_others)
        written = list(search.written)
        if search.missing:
            # Documents whose stored entries are gone (.sitegen/ deleted by hand): their sessions are
            # rendered again (a subagent's entries are stored by its session's render), then indexed.
            written += self.render_again(sorted({documents[key].owner for key in search.missing}))
            written += update_search_index(out, documents, set(search.missing)).written
            # The index pages were made meanwhile from their records before this (one may have failed
            # since, a problem they must list): made again from the records as they are now.
            self.pages.forget_listing()
            run_others()
        problem_count = self.pages.listing(context).problem_count
        return list(dict.fromkeys(others + written + self.pages.writer(context).write_search_page(problem_count)))


def site_generators(
    prompts: PromptsPage, render_again: RenderAgain, jobs: int = 1, clock: PhaseClock | None = None
) -> list[SiteGenerator]:
    """The build's site pages in the order they are written: the prompts first (the search indexes
    them, the index pages count them), the search index with the related lists and the index pages
    made meanwhile (SearchExport), then the home page, last: it links to the rest. `clock` times the
    generators run meanwhile, as run_generators times the others."""
    pages = IndexPages(prompts.summary)
    listings = [generator for generator in index_generators(pages) if not isinstance(generator, HomePage)]
    related = RelatedLists(prompts.keep)
    search = SearchExport(prompts, pages, render_again, jobs, [related, *listings], clock)
    return [prompts, search, HomePage(pages)]
