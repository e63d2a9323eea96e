"""The build's first stages: open the site (its state, stamps and assets) and plan which sessions to render."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sitegen import __version__
from sitegen.history.session_index import read_session_index
from sitegen.history.store import history_stores
from sitegen.odek.store import default_odek_dirs
from sitegen.resources import resource_dir
from sitegen.session.discover import agent_dirs, given_dirs
from sitegen.session.load import read_header
from sitegen.site.build.assets import folder_hash, publish_assets
from sitegen.site.build.config import BuildConfig, BuildResult
from sitegen.site.build.unreadable import write_unreadable
from sitegen.site.search.fts import require_fts5
from sitegen.site.search.store import prepare as prepare_search
from sitegen.site.state.checkpoint import Checkpoints, sweep_temporaries
from sitegen.site.state.details import details_present, has_details
from sitegen.site.state.jobs import RenderJob, link_parents, render_order
from sitegen.site.state.lock import take_unclean_end
from sitegen.site.state.manifest import ManifestEntry, SiteManifest, build_stamp, content_hash
from sitegen.site.state.sources import (
    Source,
    demo_dirs,
    find_sources,
    fingerprint,
    is_utf8_path,
    project_slug,
    unique_key,
)
from sitegen.undo import active_journal, undo_unfinished

__all__ = ["BuildPlan", "SiteState", "input_dirs", "open_site", "parent_session", "plan_sessions"]


def input_dirs(config: BuildConfig) -> tuple[list[Path], list[Path]]:
    if config.demo:
        return demo_dirs()
    extra, odek_extra = given_dirs(config.agent_dirs), given_dirs(config.odek_dirs)
    if not config.use_default_dirs:
        return extra, odek_extra
    return agent_dirs(extra), default_odek_dirs(odek_extra)


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


def parent_session(source: str) -> str | None:
    """The session a file says it was forked from (v1 headers call it branchedFrom)."""
    found = read_header(source)
    if found is None:
        return None
    header = found[0]
    parent = header.get("parentSession") or header.get("branchedFrom")
    # A NUL cannot be in a path: such a name links nowhere (and path calls would raise on it).
    return parent if isinstance(parent, str) and "\x00" not in parent else None


@dataclass(slots=True)
class SiteState:
    """The site folder as the build opens it: its manifest, the stamp pages are made with, its assets."""

    out: Path
    pi_dirs: list[Path]
    odek_dirs: list[Path]
    manifest: SiteManifest
    templates_hash: str
    static_hash: str
    made_by: str
    assets: dict[str, str]
    # The prompt stores (omp 18's session index, titles and idle recaps, is read from them).
    stores: tuple[str, ...]
    checkpoints: Checkpoints
    # Every page made again: templates, static files or sitegen changed since the last build.
    full: bool = False


@dataclass(slots=True)
class BuildPlan:
    """What the build does to the sessions: the manifest entries kept, the jobs to render, those removed."""

    current: dict[str, ManifestEntry]
    jobs: list[RenderJob]
    # source -> (fingerprint, content hash); a new session's hash is taken by its worker (None here),
    # so a cold build does not read every file once more before rendering starts.
    pending: dict[str, tuple[list[int], str | None]]
    removed: list[ManifestEntry]
    new_problems: list[ManifestEntry]  # entries that became problems (as they were before)
    unnamed_changed: bool
    pages: dict[str, str]  # source -> page, for parents' links
    titles: dict[str, str]
    indexed: set[str] = field(default_factory=set)  # subagent pages whose search entries were stored again

    @property
    def touched_projects(self) -> set[str]:
        return {e.project_slug for e in [*self.removed, *self.new_problems]} | {j.project_slug for j in self.jobs}


def open_site(config: BuildConfig) -> SiteState:
    """Put the site folder back in order after a killed build, then read its manifest and stamps."""
    pi_dirs, odek_dirs = input_dirs(config)
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
    stores = () if config.demo else tuple(str(store) for store in history_stores(pi_dirs))
    made_by = build_stamp(__version__, templates_hash, static_hash)
    return SiteState(
        out,
        pi_dirs,
        odek_dirs,
        manifest,
        templates_hash,
        static_hash,
        made_by,
        publish_assets(out),
        stores,
        Checkpoints(out, manifest),
        full=manifest.stamp != made_by,
    )


def plan_sessions(config: BuildConfig, site: SiteState, result: BuildResult) -> BuildPlan:
    """Every session found, against the manifest: kept as it is, to render, a problem, or removed."""
    out, manifest, made_by = site.out, site.manifest, site.made_by
    unreadable: list[tuple[Path, str]] = []
    use_env = config.use_default_dirs and not config.demo
    found = find_sources(site.pi_dirs, site.odek_dirs, use_env=use_env, unreadable=unreadable)
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
    new_problems: list[ManifestEntry] = []
    pending: dict[str, tuple[list[int], str | None]] = {}
    dirs_for_blobs = tuple(str(d) for d in site.pi_dirs)
    # omp 18's session index (titles, idle recaps): a page it changed for is made again.
    index = read_session_index([Path(store) for store in site.stores])
    details = details_present(out)
    for source in sources:
        stamp = fingerprint(source)
        if stamp is None:
            continue
        path = str(source.path)
        old = previous.get(path)
        digest, problem = None, source.problem
        if old is not None and old.made_by == made_by:
            same_index = old.record is None or old.record.index_digest == index.digest(old.record.session_id)
            # A session with a details file gone (read back damaged, it is removed) is rendered again.
            same_index &= old.record is None or has_details(details, old.key)
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
                write_unreadable(out, site.assets, old.page, path, problem)  # no old content stays reachable
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
                site.assets,
                dirs_for_blobs,
                config.profile,
                agent_profile=source.profile,
                history_stores=site.stores,
            )
        )

    pages = {path: entry.page for path, entry in current.items() if entry.page and entry.record is not None}
    pages.update((job.source, job.page) for job in jobs)
    titles = {path: entry.record.title for path, entry in current.items() if entry.record is not None}
    jobs = render_order(link_parents(jobs, pages, parent_session, titles), {p: s for p, (s, _) in pending.items()})
    # Their pages go once no index links to them (at the end), so a build stopped before then
    # leaves no link to a missing page.
    for path, entry in previous.items():
        if path not in current and path not in pending and _inside(path, unreadable):
            current[path] = entry
    removed = [entry for path, entry in previous.items() if path not in current and path not in pending]
    result.removed.extend(entry.key for entry in removed)
    return BuildPlan(current, jobs, pending, removed, new_problems, unnamed_changed, pages, titles)
