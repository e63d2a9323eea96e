"""The build's sessions stage: render every planned session in worker processes, saving progress as it goes."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from sitegen.fileio import replace_file
from sitegen.gcpause import imports_settled
from sitegen.site.build.config import POOL_MIN_JOBS, BuildConfig, BuildResult, DiskFull, ProgressCallback
from sitegen.site.build.plan import BuildPlan, SiteState
from sitegen.site.build.unreadable import write_unreadable
from sitegen.site.pages.early import EARLY_MIN_JOBS, EarlyPages
from sitegen.site.state.jobs import NEWEST_FIRST, RenderJob, RenderOutcome, related_script
from sitegen.site.state.manifest import ManifestEntry
from sitegen.timings import PhaseClock
from sitegen.undo import active_journal

__all__ = ["render_sessions", "run_jobs", "worker_count"]


def run_jobs(
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


class _Finished:
    """What the build does with each rendered session as it comes back from its worker."""

    def __init__(self, site: SiteState, plan: BuildPlan, result: BuildResult, clock: PhaseClock) -> None:
        self.site, self.plan, self.result, self.clock = site, plan, result, clock
        self.by_source = {job.source: job for job in plan.jobs}
        self.early: EarlyPages | None = None

    def __call__(self, outcome: RenderOutcome) -> None:
        site, plan, result = self.site, self.plan, self.result
        if outcome.disk_full:
            raise DiskFull(site.out, outcome.disk_full)
        stamp_json, digest = plan.pending[outcome.source]
        digest = digest or outcome.content_hash
        job = self.by_source[outcome.source]
        plan.current[outcome.source] = ManifestEntry(
            stamp_json, digest, job.key, job.project_slug, job.page, outcome.record, outcome.problem, site.made_by
        )
        result.written.extend(outcome.written)
        self.clock.add(outcome.seconds)
        plan.indexed.update(outcome.indexed)
        if outcome.record is not None:
            result.rendered.append(outcome.key)
            _related_placeholder(site.out, job.page)
        elif outcome.problem:
            write_unreadable(site.out, site.assets, job.page, outcome.source, outcome.problem)
        if site.checkpoints.due():
            self.save()
        if self.early is not None:
            self.early.finished(plan.current, outcome.source, outcome.written)

    def save(self) -> None:
        self.site.checkpoints.save(self.plan.current, [*self.result.rendered, *self.plan.indexed])


def render_sessions(
    config: BuildConfig,
    site: SiteState,
    plan: BuildPlan,
    result: BuildResult,
    on_progress: ProgressCallback | None,
    clock: PhaseClock,
) -> None:
    """Render the plan's jobs, newest first; a long first build in `watch` shows its pages as it goes."""
    jobs = plan.jobs
    workers = worker_count(config)
    result.processes = 1 + (min(workers, len(jobs)) if workers > 1 and len(jobs) >= POOL_MIN_JOBS else 0)
    finished = _Finished(site, plan, result, clock)
    if config.live is not None and len(jobs) >= EARLY_MIN_JOBS:
        newest = [job.source for job in jobs[:NEWEST_FIRST]]
        finished.early = EarlyPages(site.out, site.assets, site.manifest.sessions, len(jobs), newest, config.live)
        finished.early.start(plan.current)
    try:
        run_jobs(jobs, workers, on_progress, finished, finished.early.ready if finished.early is not None else None)
    except BaseException:
        # Stopped (Ctrl-C, SIGTERM) or failed: what is finished is kept for the next build.
        if jobs:
            with contextlib.suppress(Exception):
                finished.save()
        raise
    finally:
        site.checkpoints.done()


def worker_count(config: BuildConfig) -> int:
    return config.jobs or os.cpu_count() or 1
