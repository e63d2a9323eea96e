"""sitegen build: every session of every project to a static site, rendering only what changed."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from sitegen import __version__
from sitegen.errors import SitegenError
from sitegen.fileio import is_disk_full, remove_file, remove_tree, replace_file
from sitegen.gcpause import imports_settled
from sitegen.history.session_index import read_session_index
from sitegen.history.store import HISTORY_FILE, history_stores, is_note
from sitegen.odek.store import default_odek_dirs
from sitegen.resources import resource_dir
from sitegen.session.discover import agent_dirs, given_dirs
from sitegen.session.entries import shorten
from sitegen.session.load import read_header
from sitegen.session.output_guard import refused_output
from sitegen.site.build.assets import folder_hash, publish_assets, remove_stale_assets
from sitegen.site.build.unreadable import write_unreadable
from sitegen.site.pages.early import EARLY_MIN_JOBS, EarlyPages, LiveHooks
from sitegen.site.pages.placeholders import INDEX_PAGES, write_placeholders
from sitegen.site.pages.related import write_related
from sitegen.site.search.fts import require_fts5
from sitegen.site.search.index import SearchDocInfo, update_search_index
from sitegen.site.search.store import prepare as prepare_search
from sitegen.site.state.checkpoint import Checkpoints, sweep_temporaries
from sitegen.site.state.jobs import (
    NEWEST_FIRST,
    RenderJob,
    RenderOutcome,
    fragments_path,
    link_parents,
    related_script,
    render_order,
    subagent_search_key,
)
from sitegen.site.state.lock import Holder, site_lock, take_unclean_end
from sitegen.site.state.manifest import ManifestEntry, SiteManifest, build_stamp, content_hash
from sitegen.site.state.records import SessionRecord
from sitegen.site.state.sources import (
    Source,
    demo_dirs,
    find_sources,
    fingerprint,
    is_utf8_path,
    project_slug,
    unique_key,
)
from sitegen.timings import PhaseClock
from sitegen.transcript.load import family_of
from sitegen.undo import active_journal, undo_unfinished

if TYPE_CHECKING:
    from sitegen.site.prompts.page import PromptsResult

__all__ = ["BuildConfig", "BuildResult", "DiskFull", "ProgressCallback", "build_site", "claim_site"]

log = logging.getLogger("sitegen.site")

# The folder every site keeps its build state in; its presence says sitegen made the site.
OWNER_MARK = ".sitegen"
# Below this many sessions to render, a process pool costs more to start than it saves.
POOL_MIN_JOBS = 4

ProgressCallback = Callable[[int, int, str], None]


class SiteError(SitegenError):
    """The site cannot be built where asked (e.g. inside an agent dir)."""


class DiskFull(SiteError):
    """A write to the site failed for want of space: the build stops where it is."""

    def __init__(self, site: Path, reason: str) -> None:
        super().__init__(
            f"Build stopped: {reason} writing {site}. Every page there is whole and the indexes are the "
            "last build's; free some space and build again to finish"
        )


@dataclass(slots=True)
class BuildConfig:
    out: Path
    agent_dirs: list[Path] = field(default_factory=list)
    odek_dirs: list[Path] = field(default_factory=list)
    demo: bool = False
    jobs: int | None = None
    strict: bool = False
    # Read PI_CODING_AGENT_DIR / ~/.pi etc. besides the given dirs (off for --demo and in tests).
    use_default_dirs: bool = True
    profile: bool = False  # time each phase of the build (BuildResult.seconds)
    # sitegen watch's first build: shown as it goes when it is long (sitegen.site.pages.early).
    live: LiveHooks | None = None


@dataclass(slots=True)
class BuildResult:
    sessions: int = 0
    rendered: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    full: bool = False
    # Lines of the problems page that name no defect (a prompt store without history_fts): --strict passes.
    notes: list[str] = field(default_factory=list)
    # With BuildConfig.profile: seconds per phase (sitegen.timings.PHASES), summed over the processes.
    seconds: dict[str, float] = field(default_factory=dict)
    processes: int = 1

    @property
    def changed(self) -> bool:
        return bool(self.rendered or self.removed or self.written)


def _input_dirs(config: BuildConfig) -> tuple[list[Path], list[Path]]:
    if config.demo:
        return demo_dirs()
    extra, odek_extra = given_dirs(config.agent_dirs), given_dirs(config.odek_dirs)
    if not config.use_default_dirs:
        return extra, odek_extra
    return agent_dirs(extra), default_odek_dirs(odek_extra)


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


def _plan_key(source: Source, taken: set[str]) -> tuple[str, str, str] | None:
    """(key, project slug, page) for a session not yet in the manifest; None if not a session."""
    if source.family == "odek":
        project = "odek"
    else:
        header = read_header(source.path)
        if header is None:
            return None
        cwd = header[0].get("cwd")
        project = cwd if isinstance(cwd, str) else ""
    key = unique_key(source.path, taken)
    slug = project_slug(project, source.profile)
    return key, slug, f"sessions/{slug}/{key}.html"


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


def _run_jobs(
    jobs: list[RenderJob],
    workers: int,
    progress: ProgressCallback | None,
    on_outcome: Callable[[RenderOutcome], None] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> list[RenderOutcome]:
    """Render the jobs (in worker processes when there are several); each outcome also goes to
    on_outcome as soon as it is there. on_ready is called once the workers are started."""
    if not jobs:
        return []
    # Rendering imports jinja, markdown-it and pygments, the pool multiprocessing: only a build with
    # work to do pays for the first, and only one with several sessions to render for the second.
    with imports_settled():
        from sitegen.site.build.worker import render_job

    outcomes: list[RenderOutcome] = []
    if len(jobs) < POOL_MIN_JOBS or workers <= 1:
        if on_ready:
            on_ready()
        for index, job in enumerate(jobs, 1):
            outcomes.append(render_job(job))
            if on_outcome:
                on_outcome(outcomes[-1])
            if progress:
                progress(index, len(jobs), job.key)
        return outcomes
    import multiprocessing

    from sitegen.site.build.pool import WorkerPool, forward_logged

    # fork is cheapest, but unsafe once the live server's threads exist.
    context = multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
    with WorkerPool(min(workers, len(jobs)), context, active_journal()) as pool:
        if on_ready:
            pool.start()  # every worker forked before on_ready may start threads
            on_ready()
        for index, outcome in enumerate(pool.run(jobs), 1):
            forward_logged(outcome)
            outcomes.append(outcome)
            if on_outcome:
                on_outcome(outcome)
            if progress:
                progress(index, len(jobs), outcome.key)
    return outcomes


def _related_placeholder(site_dir: Path, page: str) -> None:
    """An empty list of related sessions for a new page until the build's end writes the real one,
    so that a page of a build stopped before then names no missing file."""
    target = site_dir / related_script(page)
    if not target.exists():
        replace_file(target, b"window.sitegen.related([]);\n")


def _shown_path(path: Path) -> str:
    return os.fsdecode(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _inside(source: str, folders: list[tuple[Path, str]]) -> bool:
    """Whether a session file lies in (or below) one of the folders that could not be listed."""
    parents = Path(source).parents
    return any(folder in parents for folder, _ in folders)


def _keep_unreadable(old: ManifestEntry, problem: str | None) -> bool:
    """A session with a page that cannot be read now (permissions, an I/O error), not one gone bad:
    its page stays, listed, and it is read again next time (a fingerprint no file has)."""
    if old.record is None or problem is None:
        return False
    if not problem.startswith(("Cannot read it: ", "Not a session file: it is unreadable")):
        return False
    old.problem = f"{problem}; its page is kept as the last build made it"
    old.fingerprint = [-1, -1, -1]
    return True


def _hash(path: Path) -> tuple[str | None, str | None]:
    """The file's content hash, or None and why it cannot be read (it is then that session's problem)."""
    try:
        return content_hash(path), None
    except OSError as error:
        return None, f"Cannot read it: {error.strerror or error}"


def _parent_session(source: str) -> str | None:
    """The session a file says it was forked from (v1 headers call it branchedFrom)."""
    found = read_header(source)
    if found is None:
        return None
    header = found[0]
    parent = header.get("parentSession") or header.get("branchedFrom")
    # A NUL cannot be in a path: such a name links nowhere (and path calls would raise on it).
    return parent if isinstance(parent, str) and "\x00" not in parent else None


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
    pi_dirs, odek_dirs = _input_dirs(config)
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
        jobs=config.jobs or os.cpu_count() or 1,
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
    pi_dirs, odek_dirs = _input_dirs(config)
    out = config.out
    if take_unclean_end(out):
        sweep_temporaries(out)  # of writes a killed build never finished
    if active_journal() is None:
        undo_unfinished(out)  # a rebuild in `watch` that was killed: back to the site before it
    require_fts5()  # the search index needs it: said before any page is rendered
    # Made (or made again) here, before the workers that store entries in it start.
    prepare_search(out)
    manifest = SiteManifest.load(out)
    templates_hash = folder_hash(resource_dir("templates"))
    static_hash = folder_hash(resource_dir("static"))
    made_by = build_stamp(__version__, templates_hash, static_hash)
    full = manifest.stamp != made_by
    result = BuildResult(full=full)
    checkpoints = Checkpoints(out, manifest)

    unreadable: list[tuple[Path, str]] = []
    found = find_sources(pi_dirs, odek_dirs, use_env=config.use_default_dirs and not config.demo, unreadable=unreadable)
    sources = [source for source in found if is_utf8_path(source.path)]
    # A name that is not UTF-8 cannot go into the manifest, a page or a link: said, not silently dropped.
    unnamed = {
        os.fsdecode(source.path).encode("utf-8", "surrogateescape").decode("utf-8", "replace"): (
            "the file name is not UTF-8, so it has no page (rename it to include it)"
        )
        for source in found
        if not is_utf8_path(source.path)
    }
    # Nothing the user had goes because sitegen could not read it: a folder that cannot be listed
    # keeps its sessions' pages from the last build, and is listed with why.
    unnamed.update(
        (_shown_path(folder), f"Cannot read this folder ({reason}): the pages of its sessions are kept as they were")
        for folder, reason in unreadable
    )
    # The problems page lists them: it is written again when they change.
    unnamed_changed, manifest.unnamed = unnamed != manifest.unnamed, unnamed
    result.sessions = len(sources)
    previous = manifest.sessions
    current: dict[str, ManifestEntry] = {}
    taken = {entry.key for entry in previous.values()}
    jobs: list[RenderJob] = []
    new_problems: list[ManifestEntry] = []  # entries that became problems (as they were before)
    # source -> (fingerprint, content hash); a new session's hash is taken by its worker (None here),
    # so a cold build does not read every file once more before rendering starts.
    pending: dict[str, tuple[list[int], str | None]] = {}
    assets = publish_assets(out)
    dirs_for_blobs = tuple(str(d) for d in pi_dirs)
    # omp 18's session index (titles, idle recaps): a page it changed for is made again.
    stores = () if config.demo else tuple(str(store) for store in history_stores(pi_dirs))
    index = read_session_index([Path(store) for store in stores])
    for source in sources:
        stamp = fingerprint(source)
        if stamp is None:
            continue
        path = str(source.path)
        old = previous.get(path)
        digest, problem = None, source.problem
        if old is not None and old.made_by == made_by:
            same_index = old.record is None or old.record.index_digest == index.digest(old.record.session_id)
            if old.fingerprint == stamp.to_json() and same_index:
                current[path] = old
                continue
            if problem is None:
                digest, problem = _hash(source.path)
                if digest == old.hash and stamp.extra_mtime_ns == old.fingerprint[2] and same_index:
                    old.fingerprint = stamp.to_json()  # touched, not changed
                    if old.record is not None:
                        old.problem = None  # readable again (see _keep_unreadable)
                    current[path] = old
                    continue
        planned = None
        if problem is None and old is not None and old.page:
            planned = old.key, old.project_slug, old.page  # a page keeps its address
        elif problem is None:
            planned = _plan_key(source, taken)
            if planned is None:
                if digest is None:
                    digest, problem = _hash(source.path)
                problem = problem or "Not a session file"
        if old is not None and _keep_unreadable(old, problem):
            current[path] = old
            new_problems.append(old)
            continue
        if planned is None:
            # Listed on the problems page as a broken session is; a page it had keeps its address.
            kept = (old.key, old.project_slug, old.page) if old is not None else ("", "", "")
            current[path] = ManifestEntry(stamp.to_json(), digest or "", *kept, problem=problem, made_by=made_by)
            # The problems page lists it, the index pages no longer do.
            new_problems.append(old or current[path])
            if old is not None and old.page and problem:
                write_unreadable(out, assets, old.page, path, problem)  # no old content stays reachable
            continue
        key, slug, page = planned
        taken.add(key)
        pending[path] = (stamp.to_json(), digest)
        jobs.append(
            RenderJob(
                path,
                source.family,
                key,
                slug,
                page,
                str(out),
                assets,
                dirs_for_blobs,
                config.profile,
                agent_profile=source.profile,
                history_stores=stores,
            )
        )

    pages = {path: entry.page for path, entry in current.items() if entry.page and entry.record is not None}
    pages.update((job.source, job.page) for job in jobs)
    titles = {path: entry.record.title for path, entry in current.items() if entry.record is not None}
    jobs = render_order(link_parents(jobs, pages, _parent_session, titles), {p: s for p, (s, _) in pending.items()})
    # Their pages go once no index links to them (at the end), so a build stopped before then
    # leaves no link to a missing page.
    for path, entry in previous.items():
        if path not in current and path not in pending and _inside(path, unreadable):
            current[path] = entry
    removed = [entry for path, entry in previous.items() if path not in current and path not in pending]
    result.removed.extend(entry.key for entry in removed)

    workers = config.jobs or os.cpu_count() or 1
    result.processes = 1 + (min(workers, len(jobs)) if workers > 1 and len(jobs) >= POOL_MIN_JOBS else 0)
    by_source = {job.source: job for job in jobs}
    early = None
    if config.live is not None and len(jobs) >= EARLY_MIN_JOBS:
        newest = [job.source for job in jobs[:NEWEST_FIRST]]
        early = EarlyPages(out, assets, previous, len(jobs), newest, config.live)
        early.start(current)
    clock.leave()
    indexed: set[str] = set()  # subagent pages whose search entries were stored again

    def finished(outcome: RenderOutcome) -> None:
        if outcome.disk_full:
            raise DiskFull(out, outcome.disk_full)
        stamp_json, digest = pending[outcome.source]
        digest = digest or outcome.content_hash
        job = by_source[outcome.source]
        current[outcome.source] = ManifestEntry(
            stamp_json, digest, job.key, job.project_slug, job.page, outcome.record, outcome.problem, made_by
        )
        result.written.extend(outcome.written)
        clock.add(outcome.seconds)
        indexed.update(outcome.indexed)
        if outcome.record is not None:
            result.rendered.append(outcome.key)
            _related_placeholder(out, job.page)
        elif outcome.problem:
            write_unreadable(out, assets, job.page, outcome.source, outcome.problem)
        if checkpoints.due():
            checkpoints.save(current, [*result.rendered, *indexed])
        if early is not None:
            early.finished(current, outcome.source, outcome.written)

    try:
        _run_jobs(jobs, workers, on_progress, finished, early.ready if early is not None else None)
    except BaseException:
        # Stopped (Ctrl-C, SIGTERM) or failed: what is finished is kept for the next build.
        if jobs:
            with contextlib.suppress(Exception):
                checkpoints.save(current, [*result.rendered, *indexed])
        raise

    manifest.sessions = current
    if not (out / "index.html").exists():
        # A first build stopped from here on (prompts, search, the index pages) leaves no link to a
        # page not written yet: each is there first, saying the build writes it.
        projects = sorted({f"projects/{record.project_slug}.html" for record in manifest.records()})
        write_placeholders(out, assets, [*projects, *INDEX_PAGES])
    result.problems = [f"{source}: {message}" for source, message in [*manifest.problems(), *manifest.defects()]]
    with clock.phase("prompts"):
        # A session that became a problem takes its prompts (and their links) with it.
        changed = bool(jobs or removed or new_problems or full or not manifest.complete)
        prompts = _update_prompts(config, pi_dirs, manifest, assets, changed=changed)
    for store, message in prompts.problems:
        (result.notes if is_note(message) else result.problems).append(f"{store}: {message}")
    result.written.extend(prompts.written)
    # A build stopped half way (manifest.complete False) left the indexes as they were before it.
    if jobs or removed or full or new_problems or unnamed_changed or not manifest.complete or prompts.changed:
        resumed = not manifest.complete
        touched = {e.project_slug for e in [*removed, *new_problems]} | {j.project_slug for j in jobs}
        with imports_settled():
            from sitegen.site.pages.indexes import IndexWriter, PromptsSummary

        records = manifest.records()
        with clock.phase("related"):
            result.written.extend(write_related(out / OWNER_MARK, out, records))
        clock.enter("search")
        documents = search_documents(records)
        documents.update(prompts.documents)
        changed_documents = {*result.rendered, *indexed, *manifest.indexed, *prompts.indexed}
        search = update_search_index(out, documents, changed_documents, workers)
        clock.leave()
        if search.missing:
            # Their cached search entries are gone (.sitegen/ deleted by hand): render them again.
            by_key = {entry.key: (path, entry) for path, entry in current.items()}
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
                    assets,
                    dirs_for_blobs,
                    config.profile,
                    agent_profile=e.record.agent_profile if e.record is not None else "",
                    history_stores=stores,
                )
                for path, e in (by_key[key] for key in owners if key in by_key)
            ]
            retry = link_parents(retry, pages, _parent_session, titles)
            for outcome in _run_jobs(retry, workers, on_progress):
                entry = current[outcome.source]
                entry.record, entry.problem = outcome.record, outcome.problem
                result.written.extend(outcome.written)
                clock.add(outcome.seconds)
            with clock.phase("search"):
                search = update_search_index(out, documents, set(search.missing))
        result.written.extend(search.written)
        # The index pages last: the home page's note that the build is under way stays until the
        # search, related lists and prompts it promises are there.
        writer = IndexWriter(out, assets)
        with clock.phase("stats"):
            summary = PromptsSummary(prompts.count, prompts.latest, prompts.problems)
            result.written.extend(writer.write_all(manifest, None if full or resumed else touched, summary))
        manifest.version, manifest.templates, manifest.static = __version__, templates_hash, static_hash
        manifest.complete, manifest.indexed = True, []
        with clock.phase("write"):
            for entry in removed:
                if entry.page:
                    _remove_page(out, entry)
            manifest.save(out)
            remove_stale_assets(out, assets)
    result.seconds = clock.seconds
    return result
