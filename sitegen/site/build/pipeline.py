"""sitegen build: every session of every project to a static site, rendering only what changed.

build_site runs the build's stages in order, named as `--profile` names its phases: plan (which
sessions changed), sessions (render them in worker processes), site pages (prompts, related, search,
then the index pages that link to them all) and save (the manifest; what is gone, removed last)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from sitegen import __version__
from sitegen.fileio import is_disk_full, remove_file, remove_tree
from sitegen.gcpause import imports_settled
from sitegen.history.store import HISTORY_FILE, history_stores, is_note
from sitegen.session.entries import shorten
from sitegen.session.output_guard import refused_output
from sitegen.site.build.assets import remove_stale_assets
from sitegen.site.build.config import (
    OWNER_MARK,
    BuildConfig,
    BuildResult,
    DiskFull,
    ProgressCallback,
    SiteError,
)
from sitegen.site.build.plan import BuildPlan, SiteState, input_dirs, open_site, parent_session, plan_sessions
from sitegen.site.build.sessions import render_sessions, run_jobs, worker_count
from sitegen.site.pages.placeholders import INDEX_PAGES, write_placeholders
from sitegen.site.pages.related import write_related
from sitegen.site.search.index import SearchDocInfo, SearchIndexResult, update_search_index
from sitegen.site.state.jobs import RenderJob, fragments_path, link_parents, related_script, subagent_search_key
from sitegen.site.state.lock import Holder, site_lock
from sitegen.site.state.manifest import ManifestEntry, SiteManifest
from sitegen.site.state.records import SessionRecord
from sitegen.timings import PhaseClock
from sitegen.transcript.load import family_of

if TYPE_CHECKING:
    from sitegen.site.prompts.page import PromptsResult

__all__ = [
    "BuildConfig",
    "BuildResult",
    "DiskFull",
    "ProgressCallback",
    "SiteError",
    "build_site",
    "claim_site",
    "search_documents",
]

log = logging.getLogger("sitegen.site")


def _check_output(out: Path, inputs: Iterable[Path]) -> None:
    """Refuse an output folder where sitegen never writes (sitegen.session.output_guard): the agents' dirs
    (inside or holding one), `/`, the home folder, a session file."""
    reason = refused_output(out, inputs)
    if reason is not None:
        raise SiteError(f"Refusing to write the site {reason}; choose another --out")


def _check_ours(out: Path) -> None:
    """Refuse a folder with files sitegen did not write: a build deletes the pages it no longer needs."""
    if out.exists() and not out.is_dir():
        raise SiteError(f"Output {out} is a file; choose a folder for the site")
    if out.is_dir() and not (out / OWNER_MARK).exists() and any(out.iterdir()):
        raise SiteError(f"Output folder {out} is not empty and was not made by sitegen; choose an empty folder")


def _remove_page(site_dir: Path, entry: ManifestEntry) -> None:
    page = site_dir / entry.page
    remove_file(page)
    remove_file(site_dir / related_script(entry.page))
    remove_file(fragments_path(site_dir, entry.key))
    # Subagent pages live in a folder named like the page.
    remove_tree(page.with_suffix(""))
    # The project's folder goes with its last page (rmdir refuses a folder that still holds one).
    with contextlib.suppress(OSError):
        page.parent.rmdir()


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


def claim_site(
    config: BuildConfig,
    command: str = "sitegen build",
    *,
    wait: bool = True,
    on_wait: Callable[[Holder | None], None] | None = None,
) -> AbstractContextManager[None]:
    """Check the output folder, mark it as ours and hold its lock for the block (see site_lock);
    checked first, so that no lock file goes into a folder that is not the site's."""
    pi_dirs, odek_dirs = input_dirs(config)
    _check_output(config.out, [*pi_dirs, *odek_dirs])
    _check_ours(config.out)
    # Marked as ours before anything else is written, so a build stopped half way can be resumed.
    (config.out / OWNER_MARK).mkdir(parents=True, exist_ok=True)
    return site_lock(config.out, command, wait=wait, on_wait=on_wait)


def _update_prompts(
    config: BuildConfig, pi_dirs: list[Path], manifest: SiteManifest, assets: dict[str, str], *, changed: bool
) -> PromptsResult:
    """The Prompts page, from each agent dir's history.db (for --demo, one made from the demo's sessions)."""
    from sitegen.site.prompts.page import update_prompts

    if config.demo:
        from sitegen.site.prompts.demo_history import demo_history

        stores = [demo_history(config.out / OWNER_MARK / "demo")]
    else:
        stores = history_stores(pi_dirs)
    return update_prompts(
        config.out,
        stores,
        manifest.records(),
        assets,
        problem_count=len(manifest.problems()) + len(manifest.defects()),
        sessions_changed=changed,
        looked=[folder / HISTORY_FILE for folder in pi_dirs],
        jobs=worker_count(config),
    )


def build_site(config: BuildConfig, on_progress: ProgressCallback | None = None) -> BuildResult:
    """Build or update the site in config.out, holding its lock; never writes anywhere else."""
    clock = PhaseClock()
    clock.enter("plan")
    with claim_site(config):
        try:
            return _build_site(config, on_progress, clock)
        except OSError as error:
            if is_disk_full(error):
                raise DiskFull(config.out, error.strerror or str(error)) from None
            raise


def _build_site(config: BuildConfig, on_progress: ProgressCallback | None, clock: PhaseClock) -> BuildResult:
    site = open_site(config)
    result = BuildResult(full=site.full)
    plan = plan_sessions(config, site, result)
    clock.leave()
    render_sessions(config, site, plan, result, on_progress, clock)
    if write_site_pages(config, site, plan, result, on_progress, clock):
        with clock.phase("write"):
            save_site(site, plan)
    result.seconds = clock.seconds
    return result


def write_site_pages(
    config: BuildConfig,
    site: SiteState,
    plan: BuildPlan,
    result: BuildResult,
    on_progress: ProgressCallback | None,
    clock: PhaseClock,
) -> bool:
    """The pages made of every session: prompts, related lists, the search index, then the index pages
    that link to them all (home last). False when nothing but the prompts needed writing."""
    out, manifest = site.out, site.manifest
    manifest.sessions = plan.current
    if not (out / "index.html").exists():
        # A first build stopped from here on (prompts, search, the index pages) leaves no link to a
        # page not written yet: each is there first, saying the build writes it.
        projects = sorted({f"projects/{record.project_slug}.html" for record in manifest.records()})
        write_placeholders(out, site.assets, [*projects, *INDEX_PAGES])
    result.problems = [f"{source}: {message}" for source, message in [*manifest.problems(), *manifest.defects()]]
    touched = bool(plan.jobs or plan.removed or plan.new_problems)
    with clock.phase("prompts"):
        # A session that became a problem takes its prompts (and their links) with it.
        changed = touched or site.full or not manifest.complete
        prompts = _update_prompts(config, site.pi_dirs, manifest, site.assets, changed=changed)
    for store, message in prompts.problems:
        (result.notes if is_note(message) else result.problems).append(f"{store}: {message}")
    result.written.extend(prompts.written)
    # A build stopped half way (manifest.complete False) left the indexes as they were before it.
    if not (touched or site.full or plan.unnamed_changed or not manifest.complete or prompts.changed):
        return False
    resumed = not manifest.complete
    with imports_settled():
        from sitegen.site.pages.indexes import IndexWriter, PromptsSummary

    records = manifest.records()
    with clock.phase("related"):
        result.written.extend(write_related(out / OWNER_MARK, out, records))
    search = _search_index(config, site, plan, result, prompts, on_progress, clock)
    result.written.extend(search.written)
    # The index pages last: the home page's note that the build is under way stays until the
    # search, related lists and prompts it promises are there.
    writer = IndexWriter(out, site.assets)
    with clock.phase("stats"):
        summary = PromptsSummary(prompts.count, prompts.latest, prompts.problems)
        only = None if site.full or resumed else plan.touched_projects
        result.written.extend(writer.write_all(manifest, only, summary))
    return True


def _search_index(
    config: BuildConfig,
    site: SiteState,
    plan: BuildPlan,
    result: BuildResult,
    prompts: PromptsResult,
    on_progress: ProgressCallback | None,
    clock: PhaseClock,
) -> SearchIndexResult:
    """The search index of every session, subagent page and prompt; documents whose stored entries are
    gone (.sitegen/ deleted by hand) are rendered again first."""
    out, manifest = site.out, site.manifest
    workers = worker_count(config)
    clock.enter("search")
    documents = search_documents(manifest.records())
    documents.update(prompts.documents)
    changed_documents = {*result.rendered, *plan.indexed, *manifest.indexed, *prompts.indexed}
    search = update_search_index(out, documents, changed_documents, workers)
    clock.leave()
    if not search.missing:
        return search
    by_key = {entry.key: (path, entry) for path, entry in plan.current.items()}
    # A subagent's entries are stored by its session's render.
    owners = sorted({documents[key].owner for key in search.missing})
    retry = [
        RenderJob(
            path,
            family_of(Path(path)),
            e.key,
            e.project_slug,
            e.page,
            str(out),
            site.assets,
            tuple(str(d) for d in site.pi_dirs),
            config.profile,
            agent_profile=e.record.agent_profile if e.record is not None else "",
            history_stores=site.stores,
        )
        for path, e in (by_key[key] for key in owners if key in by_key)
    ]
    retry = link_parents(retry, plan.pages, parent_session, plan.titles)
    for outcome in run_jobs(retry, workers, on_progress):
        entry = plan.current[outcome.source]
        entry.record, entry.problem = outcome.record, outcome.problem
        result.written.extend(outcome.written)
        clock.add(outcome.seconds)
    with clock.phase("search"):
        return update_search_index(out, documents, set(search.missing))


def save_site(site: SiteState, plan: BuildPlan) -> None:
    """The manifest saved, then the pages of sessions that are gone removed: no index links to them now."""
    manifest = site.manifest
    manifest.version, manifest.templates, manifest.static = __version__, site.templates_hash, site.static_hash
    manifest.complete, manifest.indexed = True, []
    for entry in plan.removed:
        if entry.page:
            _remove_page(site.out, entry)
    manifest.save(site.out)
    remove_stale_assets(site.out, site.assets)
