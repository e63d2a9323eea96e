"""sitegen build: every session of every project to a static site, rendering only what changed.

build_site runs the build's stages in order, named as `--profile` names its phases: plan (which
sessions changed), sessions (render them in worker processes), site pages (one generator per output,
each timed under its name: prompts, related, search, stats, problems, projects, all-sessions, home)
and save ("write": the manifest; what is gone, removed last)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path

from sitegen import __version__
from sitegen.fileio import is_disk_full, remove_file, remove_tree
from sitegen.history.store import HISTORY_FILE, history_stores, is_note
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
from sitegen.site.pages.generator import SiteContext, run_generators
from sitegen.site.pages.placeholders import INDEX_PAGES, write_placeholders
from sitegen.site.pages.site_pages import PromptsPage, site_generators
from sitegen.site.state.details import details_base, remove_details
from sitegen.site.state.jobs import RenderJob, fragments_path, link_parents, related_script
from sitegen.site.state.lock import Holder, site_lock
from sitegen.site.state.manifest import ManifestEntry
from sitegen.timings import PhaseClock
from sitegen.transcript.load import family_of

__all__ = [
    "BuildConfig",
    "BuildResult",
    "DiskFull",
    "ProgressCallback",
    "SiteError",
    "build_site",
    "claim_site",
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
    remove_details(details_base(site_dir, entry.key))
    # Subagent pages live in a folder named like the page.
    remove_tree(page.with_suffix(""))
    # The project's folder goes with its last page (rmdir refuses a folder that still holds one).
    with contextlib.suppress(OSError):
        page.parent.rmdir()


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


def _prompt_stores(config: BuildConfig, pi_dirs: list[Path]) -> list[Path]:
    """The history.db stores the Prompts page reads (for --demo, one made from the demo's sessions)."""
    if config.demo:
        from sitegen.site.prompts.demo_history import demo_history

        return [demo_history(config.out / OWNER_MARK / "demo")]
    return history_stores(pi_dirs)


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
    """The pages made of every session, one generator each (sitegen.site.pages.site_pages): prompts,
    related lists, the search index, then the index pages that link to them all (home last). Each
    writes nothing when nothing it reads changed. False when nothing but the prompts needed writing."""
    out, manifest = site.out, site.manifest
    manifest.sessions = plan.current
    if not (out / "index.html").exists():
        # A first build stopped from here on (prompts, search, the index pages) leaves no link to a
        # page not written yet: each is there first, saying the build writes it.
        projects = sorted({f"projects/{record.project_slug}.html" for record in manifest.records()})
        write_placeholders(out, site.assets, [*projects, *INDEX_PAGES])
    # A build stopped half way (manifest.complete False) left the indexes as they were before it.
    resumed = not manifest.complete
    context = SiteContext(
        out,
        site.assets,
        manifest,
        sessions_changed=bool(plan.jobs or plan.removed or plan.new_problems) or site.full or resumed,
        unnamed_changed=plan.unnamed_changed,
        touched_projects=None if site.full or resumed else frozenset(plan.touched_projects),
        rendered=frozenset({*result.rendered, *plan.indexed}),
    )
    workers = worker_count(config)
    looked = [folder / HISTORY_FILE for folder in site.pi_dirs]
    prompts = PromptsPage(_prompt_stores(config, site.pi_dirs), looked, workers, keep=config.keep_for_next)
    render_again = partial(_render_again, config, site, plan, on_progress, clock)
    result.written.extend(run_generators(site_generators(prompts, render_again, workers, clock), context, clock))
    # After the generators: a session rendered again for the search (render_again) may have failed.
    result.problems = [f"{source}: {message}" for source, message in [*manifest.problems(), *manifest.defects()]]
    summary = prompts.summary()
    for store, message in summary.problems:
        (result.notes if is_note(message) else result.problems).append(f"{store}: {message}")
    return context.sessions_changed or context.unnamed_changed or summary.changed


def _render_again(
    config: BuildConfig,
    site: SiteState,
    plan: BuildPlan,
    on_progress: ProgressCallback | None,
    clock: PhaseClock,
    keys: Sequence[str],
) -> list[str]:
    """The sessions of these keys rendered again (the search found their stored entries gone), their
    records updated; the files written. Their time is the workers' own, as in the sessions stage."""
    by_key = {entry.key: (path, entry) for path, entry in plan.current.items()}
    retry = [
        RenderJob(
            path,
            family_of(Path(path)),
            e.key,
            e.project_slug,
            e.page,
            str(site.out),
            site.assets,
            tuple(str(d) for d in site.pi_dirs),
            config.profile,
            agent_profile=e.record.agent_profile if e.record is not None else "",
            history_stores=site.stores,
        )
        for path, e in (by_key[key] for key in keys if key in by_key)
    ]
    retry = link_parents(retry, plan.pages, parent_session, plan.titles)
    written: list[str] = []
    with clock.paused():
        for outcome in run_jobs(retry, worker_count(config), on_progress):
            entry = plan.current[outcome.source]
            entry.record, entry.problem = outcome.record, outcome.problem
            written.extend(outcome.written)
            clock.add(outcome.seconds)
    return written


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
