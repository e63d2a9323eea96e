"""Render one session for the site (in a worker process): its page, its subagents' pages, its record."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import fields
from datetime import UTC, datetime
from functools import cache, lru_cache
from pathlib import Path, PurePosixPath
from typing import ParamSpec, TypeVar

import orjson

from sitegen import __version__
from sitegen.errors import SitegenError
from sitegen.fileio import is_disk_full
from sitegen.history.session_index import SessionIndex, read_session_index
from sitegen.history.store import store_fingerprint
from sitegen.render.base.fragments import FragmentStore
from sitegen.render.page import PageOptions, PageRenderer
from sitegen.resources import resource_dir
from sitegen.session.artifacts import subagent_transcripts
from sitegen.session.discover import read_session_info
from sitegen.session.entries import shorten
from sitegen.site.build.artifact_files import ArtifactFiles
from sitegen.site.build.assets import folder_hash
from sitegen.site.pages.analytics import record_activity
from sitegen.site.pages.related import session_terms, terms_digest
from sitegen.site.prompts.links import user_prompts
from sitegen.site.prompts.session_prompts import typed_prompts
from sitegen.site.search.index import extract_search_entries, has_search_entries, store_search_entries
from sitegen.site.state.details import SessionDetails, details_base, write_details
from sitegen.site.state.jobs import (
    RenderJob,
    RenderOutcome,
    fragments_path,
    related_script,
    relative_url,
    subagent_search_key,
)
from sitegen.site.state.manifest import content_hash
from sitegen.site.state.records import SessionRecord, UsageLog, UsageRecord
from sitegen.site.state.sources import is_utf8_path
from sitegen.timings import PhaseClock
from sitegen.transcript.attachments import resolve_attachments
from sitegen.transcript.audit import analyse_transcript
from sitegen.transcript.load import load_transcript
from sitegen.transcript.model import Node, Transcript

log = logging.getLogger("sitegen.site")

__all__ = ["render_job", "session_record"]

# Fragment-store key prefix for what a subagent page was last rendered from ("@" starts no lexer alias).
_SUBAGENT_INPUTS = "@subagent-page:"


@cache
def _fragments() -> FragmentStore:
    return FragmentStore()


@cache
def _clock() -> PhaseClock:
    return PhaseClock()


@cache
def _renderer(profile: bool) -> PageRenderer:
    """One renderer per worker process, so the highlight cache is shared by all its pages."""
    return PageRenderer(_fragments(), _clock() if profile else None)


P = ParamSpec("P")
R = TypeVar("R")


def _timed(job: RenderJob, phase: str, func: Callable[P, R]) -> Callable[P, R]:
    """func, timed as a phase when the build profiles."""
    return _clock().timed(phase, func) if job.profile else func


@cache
def _templates_hash() -> str:
    return folder_hash(resource_dir("templates"))


def _subagent_inputs(job: RenderJob, sidecar: Path, options: PageOptions, shared: dict[int, str]) -> str | None:
    """A digest of what a subagent page is made from: its file, the folder of its own artifacts,
    the page's links (options) and the code and templates that render it; None if unreadable.
    `shared` holds the text of the options' values every subagent page of the session shares (the
    map of their URLs, the assets'), by id: made once, not once per page (a session of 1,686
    subagents wrote 1,686 entries of that map into each of its 1,686 digests)."""
    try:
        stat = sidecar.stat()
    except OSError:
        return None
    try:
        folder = sidecar.with_suffix("").stat().st_mtime_ns
    except OSError:
        folder = 0
    parts = (__version__, _templates_hash(), stat.st_size, stat.st_mtime_ns, folder, job.default_agent_dirs)
    # repr((*parts, options)), with the options' text as their dataclass repr writes it.
    text = f"{repr(parts)[:-1]}, {_options_repr(options, shared)})"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _options_repr(options: PageOptions, shared: dict[int, str]) -> str:
    """repr(options), with the text of a value found in `shared` (by id) taken from there."""
    pieces = []
    for option in fields(options):
        if option.repr:
            value = getattr(options, option.name)
            text = shared.get(id(value))
            pieces.append(f"{option.name}={repr(value) if text is None else text}")
    return f"{type(options).__qualname__}({', '.join(pieces)})"


@lru_cache(maxsize=64)
def _asset_urls(folder: str, assets: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The assets' URLs from a page in folder: the same for every page there (a session's subagent
    pages share one), and quoting each path was a fifth of a small page's setup."""
    page = f"{folder}/page.html" if folder else "page.html"
    return {name: relative_url(page, path) for name, path in assets}


def _options(job: RenderJob, page: str) -> PageOptions:
    return PageOptions(
        inline_assets=False,
        asset_urls=dict(_asset_urls(page.rpartition("/")[0], tuple(job.assets.items()))),
        home_url=relative_url(page, "index.html"),
        project_url=relative_url(page, f"projects/{job.project_slug}.html"),
        search_url=relative_url(page, "search.html"),
        highlight_later_short=True,
    )


def _day(ms: int | None) -> str:
    if ms is None:
        return "unknown"
    # By the day's number: thousands of messages share a few days, and datetime is slow to make.
    return _day_of(int(ms // 86_400_000))


@lru_cache(maxsize=4096)
def _day_of(number: int) -> str:
    return datetime.fromtimestamp(number * 86_400, UTC).strftime("%Y-%m-%d")


def _usage_key(transcript: Transcript, node: Node) -> str:
    """What a /fork copy shares with its original for one assistant message: the entry id and time;
    in an old file whose ids were made up per copy, the time, model and token counts instead."""
    usage = node.usage
    if transcript.made_up_ids and usage is not None:
        counts = f"{usage.input}/{usage.output}/{usage.cache_read}/{usage.cache_write}"
        return f"v1:{node.time_ms}:{node.model}:{counts}"
    return f"{node.id}@{node.time_ms}"


def session_record(job: RenderJob, transcript: Transcript, subagents: dict[str, str]) -> SessionRecord:
    totals = transcript.totals()
    used = [node for node in transcript.nodes if node.usage is not None]
    usage = [
        UsageRecord(
            key=_usage_key(transcript, node),
            day=_day(node.time_ms),
            model=node.model or "unknown",
            input=node.usage.input,
            output=node.usage.output,
            cache_read=node.usage.cache_read,
            cache_write=node.usage.cache_write,
            cost=round(node.usage.cost, 6),
        )
        for node in used
        if node.usage is not None
    ]
    tree = transcript.tree
    return SessionRecord(
        key=job.key,
        source=job.source,
        family=transcript.family,
        session_id=transcript.session_id,
        # odek sessions have no working directory: they are listed together as the "odek" project.
        project=transcript.cwd or ("odek" if transcript.family == "odek" else ""),
        project_slug=job.project_slug,
        page=job.page,
        agent_profile=job.agent_profile,
        title=transcript.display_title,
        created_ms=transcript.created_ms,
        modified_ms=transcript.modified_ms,
        messages=totals.messages,
        tool_calls=totals.tool_calls,
        branches=sum(1 for kids in tree.children.values() if not kids),
        compactions=sum(1 for node in transcript.nodes if node.kind == "compaction"),
        models=totals.models,
        input=totals.usage.input,
        output=totals.usage.output,
        cache_read=totals.usage.cache_read,
        cache_write=totals.usage.cache_write,
        cost=round(totals.usage.cost, 6),
        usage=UsageLog.of(usage),
        subagents=subagents,
        parent_session=transcript.parent_session,
        malformed_lines=transcript.malformed_lines,
        defects=transcript.defects,
        ids_chained=transcript.ids_chained,
        size=_file_size(job.source),
        details=SessionDetails(**record_activity(transcript, used)),
    )


def _digest_of(value: object) -> str:
    return hashlib.blake2b(orjson.dumps(value), digest_size=16).hexdigest()


def _title_of(source: str) -> str:
    """A session's title as its own page and the listings give it, read from the file's start."""
    info = read_session_info(source)
    return info.display_title if info is not None else Path(source).name


def _file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _render_subagents(job: RenderJob, transcript: Transcript, outcome: RenderOutcome) -> dict[str, str]:
    """Each sidecar transcript gets its own page next to the parent's, linked both ways."""
    pages: dict[str, str] = {}
    if transcript.artifacts_dir is None or not transcript.artifacts_dir.is_dir():
        return pages
    site_dir = Path(job.site_dir)
    stem = PurePosixPath(job.page).with_suffix("")
    sidecars = [s for s in subagent_transcripts(transcript.artifacts_dir) if is_utf8_path(s.path)]
    for sidecar in sidecars:
        page = str(stem / f"{sidecar.qualified_id}.html")
        pages[sidecar.qualified_id] = page
        # agent:// URLs name a top-level output by its plain id.
        pages.setdefault(sidecar.id, page)
    if not sidecars:
        return pages
    fragments = _fragments()
    naming = _agent_results(transcript)
    # Every subagent page is in the same folder (stem): they link to the assets and to each other by
    # the same URLs, made once, not once per page (which was quadratic in the subagents).
    first = pages[sidecars[0].qualified_id]
    urls = {aid: relative_url(first, p) for aid, p in pages.items()}
    assets = _options(job, first).asset_urls
    shared = {id(urls): repr(urls), id(assets): repr(assets)}
    for sidecar in sidecars:
        page = pages[sidecar.qualified_id]
        options = _options(job, page)
        back = relative_url(page, job.page) + _call_anchor(naming, sidecar.id)
        options.parent_link = (f"Started by the task call in {shorten(transcript.display_title, 60)}", back)
        options.asset_urls, options.subagent_urls = assets, urls
        # A session that grew renders its own page again, not its subagents' unchanged transcripts.
        inputs = _subagent_inputs(job, sidecar.path, options, shared)
        stored_key = _SUBAGENT_INPUTS + sidecar.qualified_id
        search_key = subagent_search_key(job.key, sidecar.qualified_id)
        kept = (site_dir / page).is_file() and has_search_entries(site_dir, search_key)
        if inputs is not None and fragments.get(stored_key) == inputs and kept:
            fragments.keep(stored_key, inputs)
            continue
        try:
            sub = _timed(job, "load", load_transcript)(sidecar.path, [Path(d) for d in job.default_agent_dirs])
        except SitegenError as error:
            outcome.problem = f"{sidecar.path}: {error}"
            continue
        _write_page(job, sub, options, site_dir, page)
        outcome.written.append(page)
        _timed(job, "search", _store_search)(site_dir, search_key, sub)
        outcome.indexed.append(search_key)
        if inputs is not None:
            fragments.keep(stored_key, inputs)
    return pages


def _write_page(job: RenderJob, transcript: Transcript, options: PageOptions, site_dir: Path, page: str) -> None:
    """Write a page; outputs over its budget go beside it as scripts, and those it no longer names go."""
    files = ArtifactFiles(site_dir, page)
    options.artifact_writer = files.write
    # Subagents with pages of their own are linked, so their transcripts are not read for this one.
    _timed(job, "load", resolve_attachments)(transcript, linked=frozenset(options.subagent_urls))
    _renderer(job.profile).write(transcript, options, site_dir / page)
    files.prune()


def _agent_results(transcript: Transcript) -> list[tuple[str, list[str]]]:
    """(entry id, texts) of the tool results that name an agent:// URL, in file order: looked through
    once per session rather than once per subagent."""
    naming = []
    for node in transcript.nodes:
        if node.result is not None:
            texts = [part.text for part in node.result.parts]
            if any("agent://" in text for text in texts):
                naming.append((node.id, texts))
    return naming


def _call_anchor(naming: list[tuple[str, list[str]]], agent_id: str) -> str:
    """#entry-<id> of the tool result that names agent://<id>, so the back link lands on the call."""
    needle = f"agent://{agent_id}"
    for entry_id, texts in naming:
        if any(needle in text for text in texts):
            return f"#entry-{entry_id}"
    return ""


def _store_search(site_dir: Path, key: str, transcript: Transcript) -> None:
    store_search_entries(site_dir, key, extract_search_entries(transcript))


def render_job(job: RenderJob) -> RenderOutcome:
    """Load, render and write one session; a broken file becomes a problem, never an exception."""
    if not job.profile:
        return _render_job(job)
    clock = _clock()
    clock.take()
    outcome = clock.timed("other", _render_job)(job)
    outcome.seconds = clock.take()
    return outcome


def _stores_stamp(stores: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(store_fingerprint(Path(store))) for store in stores)


@lru_cache(maxsize=2)
def _session_index(stores: tuple[str, ...], stamp: tuple[tuple[int, ...], ...]) -> SessionIndex:
    """history.db's session index, read once per process while the stores are unchanged (stamp)."""
    return read_session_index([Path(store) for store in stores])


def _add_index(transcript: Transcript, index: SessionIndex) -> None:
    """The session's idle recaps, and its title in history.db where it is not the page's."""
    transcript.recaps = [(recap.created_s, recap.text) for recap in index.recaps.get(transcript.session_id, [])]
    title = index.titles.get(transcript.session_id)
    if title and title != transcript.display_title:
        transcript.session_details.append(("Title in history.db", [title]))


def _render_job(job: RenderJob) -> RenderOutcome:
    outcome = RenderOutcome(key=job.key, source=job.source)
    fragments = _fragments()
    fragments.load(fragments_path(Path(job.site_dir), job.key))
    try:
        outcome.content_hash = content_hash(Path(job.source))
        transcript = _timed(job, "load", load_transcript)(Path(job.source), [Path(d) for d in job.default_agent_dirs])
        index = _session_index(job.history_stores, _stores_stamp(job.history_stores))
        _add_index(transcript, index)
        subagents = _render_subagents(job, transcript, outcome)
        options = _options(job, job.page)
        options.subagent_urls = {aid: relative_url(job.page, page) for aid, page in subagents.items()}
        options.turn_audits = _timed(job, "audit", analyse_transcript)(transcript)
        options.related_script = relative_url(job.page, related_script(job.page))
        if job.parent_page:
            title = job.parent_title or _title_of(job.parent_source)
            options.parent_session_link = (title, relative_url(job.page, job.parent_page))
        _write_page(job, transcript, options, Path(job.site_dir), job.page)
        outcome.written.append(job.page)
        outcome.record = session_record(job, transcript, subagents)
        outcome.record.flagged_turns = [turn.to_json() for turn in options.turn_audits if turn.flagged]
        outcome.record.prompts = user_prompts(transcript)
        details = outcome.record.details or SessionDetails()
        details.terms = _timed(job, "related", session_terms)(transcript)
        details.typed_prompts = typed_prompts(transcript)
        outcome.record.typed_digest = _digest_of(details.typed_prompts)
        outcome.record.terms_digest = terms_digest(details.terms)
        # Written here, not held: the build process reads them only while a page needs them.
        outcome.record.details_base = str(details_base(Path(job.site_dir), job.key))
        write_details(Path(outcome.record.details_base), details)
        outcome.record.details = None
        outcome.record.index_digest = index.digest(transcript.session_id)
        _timed(job, "search", _store_search)(Path(job.site_dir), job.key, transcript)
        fragments.save(fragments_path(Path(job.site_dir), job.key))
    except SitegenError as error:
        outcome.problem = str(error)
    # The problems page and the build's report put the file's path before each message.
    except OSError as error:
        if is_disk_full(error):
            outcome.disk_full = error.strerror or str(error)  # the build's problem, not this session's
        else:
            outcome.problem = f"{type(error).__name__}: {error}"
    except (ValueError, RecursionError, MemoryError) as error:
        outcome.problem = f"{type(error).__name__}: {error}"
    except Exception as error:
        # A bug met by one session must not stop the build: it goes on the problems page.
        log.debug("rendering %s failed", job.source, exc_info=True)
        outcome.problem = f"sitegen could not render it ({type(error).__name__}: {error})"
    return outcome
