"""The Prompts page: every prompt of the agents' history stores, linked to its session, searchable."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from sitegen import __version__
from sitegen.fileio import remove_file, replace_file
from sitegen.gcpause import collector_paused
from sitegen.history.session_index import SessionIndex, read_session_index
from sitegen.history.store import OnBatch, Snapshot, StoreRead, read_store, store_fingerprint
from sitegen.site.prompts.data import (
    CHUNK_PROMPTS,
    DATA_DIR,
    SEGMENT_CHUNKS,
    PromptRow,
    SegmentJob,
    build_segment,
    data_script,
    day_of,
    index_payload,
    linked,
    prompt_search_key,
)
from sitegen.site.prompts.kept import KEPT, PRIMERS, STATE, Kept, Primer, kept_lock, load_state
from sitegen.site.prompts.rows import PAGE, Chunk, ChunkMaker, KeptRows
from sitegen.site.prompts.session_prompts import session_prompt_rows
from sitegen.site.search.index import SearchDocInfo, has_search_entries
from sitegen.site.search.prompt_store import keep_prompt_chunks
from sitegen.site.state.details import lost_reads
from sitegen.site.state.records import SessionRecord
from sitegen.titles import clip, snippet

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["PAGE", "PromptsResult", "update_prompts"]

# What a build keeps for the next (kept.py), by its older name here (tests and bench/ read it).
_KEPT = KEPT

_CACHE_DIR = ".sitegen/prompts"
# Bump when the data or the state change shape: the next build then writes the page again.
# 4: term shards exported from FTS5; only prompts not linked to a session's entry searched.
FORMAT = 4
# The newest prompts are in the page itself: readable without JavaScript, and at once.
FIRST_SHOWN = 100
# A prompt folds when it is longer than this many lines or characters.
FOLD_LINES = 6
FOLD_CHARS = 600
SEARCH_TITLE = "Prompt history"
# Below this many segments to build, worker processes cost more to start than they save.
PARALLEL_FROM = 3
# The prompts typed in sessions that no history store holds are listed as one more store of this name.
SESSIONS_STORE = Path("sessions")


@dataclass(slots=True)
class PromptsResult:
    """What the build needs back: files written, problems, and the prompts' search documents."""

    written: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (store path, message)
    documents: dict[str, SearchDocInfo] = field(default_factory=dict)
    indexed: set[str] = field(default_factory=set)  # search keys whose entries were stored again
    count: int = 0
    latest: str = ""  # the newest prompt, one line of plain text (the home page shows it)
    changed: bool = False


def _document(newest_s: int | None) -> SearchDocInfo:
    """A chunk's search document, dated by its newest prompt (the search's date filter reads it)."""
    time_ms = newest_s * 1000 if newest_s is not None else None
    return SearchDocInfo(SEARCH_TITLE, "", PAGE, time_ms=time_ms, title_searched=False)


def _documents(searched: list[str], names: list[str], newest: list[int | None]) -> dict[str, SearchDocInfo]:
    """The search documents of the chunks that hold prompts the search finds nowhere else (_searched)."""
    wanted = set(searched)
    return {prompt_search_key(n): _document(t) for n, t in zip(names, newest, strict=True) if n in wanted}


def _searched(rows: list[list[Any]], typed: bool) -> tuple[bool, bool]:
    """Whether a chunk is a document of the site's search, and whether each of its prompts is an entry
    of it: not when it lists prompts typed in sessions, and not of a prompt linked to a session's
    entry, which the search finds as that entry (a second result of the same words is noise)."""
    if typed:
        return False, False
    links = sum(map(linked, rows))
    return links < len(rows), links == 0


def _read(
    site_dir: Path, store: Path, previous: Snapshot | None, last: list[str] | None, on_batch: OnBatch | None = None
) -> tuple[StoreRead, Any]:
    """A store's prompts (only the changed rows fetched, given the snapshot of the last read); while
    it is locked, those of the last build: from its snapshot, else its rows from the chunk files."""
    read = read_store(store, previous=previous, on_batch=on_batch)
    if not read.busy:
        return read, None
    locked = "locked by another process: the prompts the last build read are shown"
    if previous is not None:
        read.prompts, read.readable, read.snapshot = list(previous.prompts.values()), True, previous
        read.problems = [locked]
        return read, None
    chunks = [_chunk_rows(site_dir, name) for name in last or []]
    if last is None or any(rows is None for rows in chunks):
        return read, None
    read.readable, read.problems = True, [locked]
    return read, chunks


def _chunk_rows(site_dir: Path, name: str) -> list[list[Any]] | None:
    """The rows of a chunk file the last build wrote (data_script's payload), or None."""
    head = data_script("c:" + name, b"")[:-3]
    try:
        data = (site_dir / DATA_DIR / "c" / f"{name}.js").read_bytes()
        rows = orjson.loads(data[len(head) : -3]) if data.startswith(head) and data.endswith(b");\n") else None
    except (OSError, orjson.JSONDecodeError):
        return None
    return rows if isinstance(rows, list) and all(isinstance(row, list) and len(row) == 9 for row in rows) else None


class _Restart(Exception):
    """A store's read began again after some of its prompts were handed on: build without streaming."""


# A history store takes about this many bytes a prompt (its FTS index included): a guess of the
# segments of a first build, before the stores are read.
_BYTES_PER_PROMPT = 400


def _segments_guess(stores: Sequence[Path]) -> int:
    size = sum(max(0, number) for store in stores for number in store_fingerprint(store)[::2])
    return size // (_BYTES_PER_PROMPT * CHUNK_PROMPTS * SEGMENT_CHUNKS)


class _Feed:
    """A store's prompts handed on in whole chunks while it is read (OnBatch)."""

    def __init__(self, maker: ChunkMaker, take: Callable[[Iterable[Chunk]], None], store: Path) -> None:
        self.maker, self.take, self.store = maker, take, store
        self.started: Snapshot | None = None
        self.fed = 0

    def __call__(self, snapshot: Snapshot) -> None:
        if self.started is None:
            self.started = snapshot
            self.take(self.maker.begin(self.store, None, []))
        elif snapshot is not self.started:
            raise _Restart
        whole = (len(snapshot.prompts) - self.fed) // CHUNK_PROMPTS * CHUNK_PROMPTS
        if whole:
            prompts = list(islice(snapshot.prompts.values(), self.fed, self.fed + whole))
            self.fed += whole
            self.take(self.maker.chunks(prompts))


def _links_digest(records: Sequence[SessionRecord], problem_count: int, assets: dict[str, str]) -> str:
    """What the page depends on besides the stores: every session's prompts, page and title, the
    projects, the assets, and the problem count the navigation shows."""
    # Sorted: the manifest keeps sessions in the order a build finished them, which says nothing the page shows.
    ordered = sorted(records, key=lambda r: (r.session_id, r.key))  # a copied file repeats its id
    parts = [[r.session_id, r.page, r.title, r.project, r.project_slug, r.prompts, r.typed_digest] for r in ordered]
    payload = orjson.dumps([__version__, FORMAT, problem_count, sorted(assets.items()), parts])
    return hashlib.blake2b(payload, digest_size=16).hexdigest()


def _newest_first(times: dict[int, int | None]) -> list[int]:
    """Slots by time, newest first, undated last; ties newest id first."""
    slots = sorted(times, reverse=True)  # the sort below keeps this order among equal times
    slots.sort(key=lambda slot: -t if (t := times[slot]) is not None else float("inf"))
    return slots


@contextmanager
def _pool(jobs: int, work: int) -> Iterator[Executor | None]:
    """Worker processes for a first build of a large history, else None (the work runs here)."""
    if work < PARALLEL_FROM or jobs <= 1:
        yield None
        return
    # Imported here: a build that adds a prompt or two never loads multiprocessing.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork is cheapest, but unsafe once the live server's threads exist.
    context = multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
    with ProcessPoolExecutor(max_workers=min(jobs, work), mp_context=context) as pool:
        yield pool


def _folded(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def _first_days(rows: list[PromptRow]) -> list[tuple[str, list[PromptRow]]]:
    days: list[tuple[str, list[PromptRow]]] = []
    for row in rows:
        day = day_of(row.time_s) or "No date"
        if not days or days[-1][0] != day:
            days.append((day, []))
        days[-1][1].append(row)
    return days


def _remove_unlisted(folder: Path, keep: set[str]) -> None:
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file() and path.name not in keep:
                remove_file(path)  # kept until a rebuild in watch is done (sitegen.undo)


@dataclass(slots=True)
class _Page:
    """What the page's HTML shows besides the data files."""

    index_script: str
    shown: list[PromptRow]
    total: int
    reads: Sequence[StoreRead]
    counts: dict[str, int]  # prompts shown per store
    looked: Sequence[Path]
    recaps: list[tuple[int | None, str, str, str]]  # (time, session title, its page or "", text), newest first


def _render(site_dir: Path, assets: dict[str, str], problem_count: int, page: _Page) -> None:
    # Jinja and the page renderer's imports: only a build whose prompts changed pays for them.
    from sitegen.render.entries import format_time
    from sitegen.render.templates import template_environment

    html = (
        template_environment()
        .get_template("prompts.html.j2")
        .render(
            root="",
            assets=assets,
            problem_count=problem_count,
            version=__version__,
            days=_first_days(page.shown),
            shown=len(page.shown),
            total=page.total,
            index_script=page.index_script,
            stores=[(str(read.path), page.counts.get(str(read.path), 0), read.readable) for read in page.reads],
            typed=page.counts.get(str(SESSIONS_STORE), 0),
            recaps=page.recaps,
            looked=[str(path) for path in page.looked],
            folded=_folded,
            fmt_time=format_time,
            clock=lambda seconds: format_time(seconds * 1000)[11:16] if seconds is not None else "",
        )
    )
    replace_file(site_dir / PAGE, html)


def _unchanged(site_dir: Path, state: dict[str, Any], fingerprints: dict[str, list[int]], links: object) -> bool:
    return (
        state.get("stores") == fingerprints
        and state.get("links") == links
        and (site_dir / PAGE).is_file()
        and all(has_search_entries(site_dir, prompt_search_key(name)) for name in state["searched"])
    )


def update_prompts(
    site_dir: Path,
    stores: Sequence[Path],
    records: Sequence[SessionRecord],
    assets: dict[str, str],
    *,
    problem_count: int,
    sessions_changed: bool,
    looked: Sequence[Path] = (),
    jobs: int = 1,
    keep: bool = True,
) -> PromptsResult:
    """Bring prompts.html and its data up to date with the stores and the sessions' records.

    Unchanged stores (size and mtime of the database and its WAL) and sessions cost a stat each;
    problem_count is the sessions' problems, which the page's navigation adds its own to; keep: what
    was read and made stays in this process for its next build (watch)."""
    # Hundreds of thousands of rows, lists and strings, none in a cycle: the collector would walk
    # them again and again for nothing.
    update = partial(
        _update_prompts, site_dir, stores, records, assets, problem_count, sessions_changed, looked, jobs, keep
    )
    with kept_lock, collector_paused():
        try:
            result = update()
        except _Restart:
            result = update(stream=False)
        if not keep:
            KEPT.pop(str(site_dir), None)
    return result


def _update_prompts(
    site_dir: Path,
    stores: Sequence[Path],
    records: Sequence[SessionRecord],
    assets: dict[str, str],
    problem_count: int,
    sessions_changed: bool,
    looked: Sequence[Path],
    jobs: int,
    keep: bool,
    stream: bool = True,
) -> PromptsResult:
    result = PromptsResult()
    state = load_state(site_dir)
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        state = {}
    fingerprints = {str(store): store_fingerprint(store) for store in stores}
    links = _links_digest(records, problem_count, assets) if sessions_changed or not state else state.get("links")
    if _unchanged(site_dir, state, fingerprints, links):
        result.problems = [(str(path), str(message)) for path, message in state["problems"]]
        result.documents = _documents(state["searched"], state["chunks"], state["newest"])
        result.count, result.latest = state["count"], state["latest"]
        held = KEPT.get(str(site_dir))
        if keep and stores and (held is None or held.token != state["token"]):
            # Nothing read: what the next build would reuse is made later, if asked (prime_prompts).
            PRIMERS[str(site_dir)] = Primer(tuple(stores), tuple(records), state["token"])
        return result
    result.changed = True
    lost_before = lost_reads()
    PRIMERS.pop(str(site_dir), None)
    kept = KEPT.pop(str(site_dir), None)
    if kept is not None and kept.token != state.get("token"):
        kept = None  # another process built the site since
    last_chunks = state.get("store_chunks", {})
    old_segments = state.get("segments", {})
    # A first build of a large history reads each store as it hands its segments to workers.
    guess = _segments_guess(stores) if kept is None and not old_segments else 0
    streaming = jobs > 1 and guess >= PARALLEL_FROM and stream
    reads: list[StoreRead] = []
    locked: dict[str, Any] = {}
    if not streaming:
        for store in stores:
            previous = kept.snapshots.get(str(store)) if kept is not None else None
            read, rows = _read(site_dir, store, previous, last_chunks.get(str(store)))
            reads.append(read)
            if rows is not None:
                locked[str(store)] = rows
        total = sum(len(read.prompts) for read in reads)
        guess = -(-total // (CHUNK_PROMPTS * SEGMENT_CHUNKS)) if not old_segments else 0
    chunks: list[list[list[Any]]] = []
    names: list[str] = []
    searched: list[bool] = []
    whole: list[bool] = []
    typed_phase = False
    segments: dict[str, list[Any]] = {}
    waiting: list[tuple[str, Future[Any] | SegmentJob]] = []
    made = KeptRows()
    index = read_session_index(stores)
    maker = ChunkMaker(records, kept.rows if kept is not None else None, made, index.titles, keep)
    with _pool(jobs, guess) as pool:
        payloads: list[bytes] = []

        def take(made_chunks: Iterable[Chunk]) -> None:
            nonlocal payloads
            for chunk in made_chunks:
                chunks.append(chunk.rows)
                payloads.append(chunk.payload)
                names.append(chunk.name)
                some, every = _searched(chunk.rows, typed_phase)
                searched.append(some)
                whole.append(every)
                if len(payloads) == SEGMENT_CHUNKS:
                    segment(len(names) - SEGMENT_CHUNKS, payloads)
                    payloads = []

        def segment(start: int, segment_payloads: list[bytes]) -> None:
            members = ",".join(names[start:])
            known = old_segments.get(members)
            members_built = zip(names[start:], searched[start:], strict=True)
            if known is not None and all(_built(site_dir, name, wanted) for name, wanted in members_built):
                segments[members] = known
                return
            job = SegmentJob(str(site_dir), segment_payloads, searched[start:], whole[start:])
            waiting.append((members, pool.submit(build_segment, job) if pool is not None else job))

        for number, store in enumerate(stores):
            if streaming:
                feed = _Feed(maker, take, store)
                read, rows = _read(site_dir, store, None, last_chunks.get(str(store)), feed)
                if feed.started is not None and read.snapshot is not feed.started:
                    raise _Restart  # the read began again after prompts of it were handed on
                reads.append(read)
                if rows is not None:
                    locked[str(store)] = rows
            else:
                read, feed = reads[number], None
            if feed is None or feed.started is None:
                take(maker.begin(read.path, read.changed, locked.get(str(store), [])))
            take(maker.chunks(read.prompts[feed.fed :] if feed is not None else read.prompts))
        # Then what was typed in sessions and no store holds (pi keeps no store at all).
        known = {prompt.session_id for read in reads for prompt in read.prompts if prompt.session_id}
        typed = session_prompt_rows(records, _linked_entries(chunks), known)
        while batch := list(islice(typed, CHUNK_PROMPTS)):  # whole chunks: made as one list would make them
            if not typed_phase:
                typed_phase = True
                take(maker.begin(SESSIONS_STORE, None, []))
            take(maker.chunks(batch))
        maker.finish()
        if payloads:
            segment(len(names) - len(payloads), payloads)
        # While the workers index: the order of the prompts and the newest of them for the page.
        payload, shown = _layout(chunks, names)
        for members, work in waiting:
            _, shards, indexed = work.result() if isinstance(work, Future) else build_segment(work)
            segments[members] = shards
            result.indexed.update(indexed)
    result.problems = [(str(read.path), problem) for read in reads for problem in read.problems]
    starts = range(0, len(names), SEGMENT_CHUNKS)
    index_script = _write_index(site_dir, payload, [segments[",".join(names[s : s + SEGMENT_CHUNKS])] for s in starts])
    newest = [max((row[1] for row in rows if row[1] is not None), default=None) for rows in chunks]
    searched_names = [name for name, wanted in zip(names, searched, strict=True) if wanted]
    result.documents = _documents(searched_names, names, newest)
    result.count = sum(len(rows) for rows in chunks)
    result.latest = snippet(shown[0].text) if shown else ""
    counts = {store: sum(len(chunk.ids) for chunk in listed) for store, listed in made.chunks.items()}
    page = _Page(index_script, shown, result.count, reads, counts, looked, _recaps(index, records))
    _render(site_dir, assets, problem_count + len(result.problems), page)
    result.written.append(PAGE)
    shard_names = {f"{name}.js" for _, shards in segments.values() for name in shards if name}
    _remove_unlisted(site_dir / DATA_DIR / "c", {f"{name}.js" for name in names})
    _remove_unlisted(site_dir / DATA_DIR / "t", shard_names)
    _remove_unlisted(site_dir / DATA_DIR, {index_script.rsplit("/", 1)[-1]})
    token = hashlib.blake2b(orjson.dumps([fingerprints, links, names, result.problems]), digest_size=8).hexdigest()
    new_state = {
        "format": FORMAT,
        "token": token,
        "stores": fingerprints,
        # A session's details lost while the page was made: its prompts are missing from it, and the next
        # build, which renders that session again, must not find the page up to date.
        "links": links if lost_reads() == lost_before else None,
        "problems": result.problems,
        "chunks": names,
        "searched": searched_names,
        "store_chunks": {store: [chunk.name for chunk in listed] for store, listed in made.chunks.items()},
        "newest": newest,
        "segments": segments,
        "count": result.count,
        "latest": result.latest,
    }
    # watch's later builds delete the chunks the last one listed and this one does not; a first build
    # in a process, or the first after priming, looks at every stored chunk (one a stopped build
    # stored and never listed too).
    keep_prompt_chunks(site_dir, names, state.get("chunks") if kept is not None and kept.looked else None)
    replace_file(site_dir / STATE, orjson.dumps(new_state))
    for stale in (site_dir / _CACHE_DIR).glob("store-*.json"):
        remove_file(stale)  # where an older version kept every prompt of a store
    snapshots = {str(read.path): read.snapshot for read in reads if read.snapshot is not None}
    KEPT[str(site_dir)] = Kept(token, snapshots, made)
    return result


def _recaps(index: SessionIndex, records: Sequence[SessionRecord]) -> list[tuple[int | None, str, str, str]]:
    """Each idle recap with its session's title and page (the page's own title when the site has it)."""
    pages = {record.session_id: record for record in sorted(records, key=lambda r: r.key, reverse=True)}
    found = []
    for recap in index.all_recaps():
        record = pages.get(recap.session_id)
        title = record.title if record is not None else index.titles.get(recap.session_id, recap.session_id)
        found.append((recap.created_s, clip(title, 80), record.page if record is not None else "", recap.text))
    return found


def _linked_entries(chunks: Iterable[list[list[Any]]]) -> set[str]:
    """The entry ids the rows so far link to (PromptRow's session_url ends "#entry-<id>")."""
    found: set[str] = set()
    for rows in chunks:
        for row in rows:
            url = row[4]
            if "#entry-" in url:
                found.add(url.rsplit("#entry-", 1)[1])
    return found


def _layout(chunks: list[list[list[Any]]], names: list[str]) -> tuple[dict[str, Any], list[PromptRow]]:
    """The index's payload but its shards, and the newest prompts, for the page itself."""
    times: dict[int, int | None] = {}
    folders: dict[int, str] = {}
    urls: dict[str, str] = {}
    for number, rows in enumerate(chunks):
        base = number * CHUNK_PROMPTS
        for place, row in enumerate(rows):
            times[base + place] = row[1]
            folders[base + place] = row[2]
            urls.setdefault(row[2], row[3])
    order = _newest_first(times)
    projects = [[folder, urls[folder]] for folder in sorted(folder for folder in urls if folder)]
    firsts = [[rows[0][0].rsplit("-", 1)[0], int(rows[0][0].rsplit("-", 1)[1])] for rows in chunks]
    payload = index_payload(names, firsts, order, times, folders, projects, segments=[])
    shown = [PromptRow.from_json(chunks[slot // CHUNK_PROMPTS][slot % CHUNK_PROMPTS]) for slot in order[:FIRST_SHOWN]]
    return payload, shown


def _write_index(site_dir: Path, payload: dict[str, Any], segments: list[list[Any]]) -> str:
    """The index script, named by its content; returns its site-relative path."""
    payload["segments"] = segments
    data = orjson.dumps(payload)
    name = f"index-{hashlib.blake2b(data, digest_size=8).hexdigest()}.js"
    target = site_dir / DATA_DIR / name
    if not target.exists():
        replace_file(target, data_script("index", data))
    return f"{DATA_DIR}/{name}"


def _built(site_dir: Path, name: str, searched: bool) -> bool:
    """Whether a chunk's file is there and, if the site's search holds it, its entries."""
    if not (site_dir / DATA_DIR / "c" / f"{name}.js").is_file():
        return False
    return not searched or has_search_entries(site_dir, prompt_search_key(name))
