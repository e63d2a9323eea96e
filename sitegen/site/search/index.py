"""Full-text search: entries extracted per session, and a sharded index of JS data files updated incrementally."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sitegen.fileio import remove_file, replace_file, replace_file_if_changed
from sitegen.gcpause import collector_paused
from sitegen.site.search.postings import tokenize
from sitegen.site.search.store import (
    DB_FILE,
    close_connections,
    delete_documents,
    drop_segments_from,
    export_segment,
    has_document,
    record_segment,
    record_segments,
    segment_path,
    segment_state,
    store_document,
    stored_documents,
)
from sitegen.transcript.model import Node, Transcript
from sitegen.visible import visible

__all__ = [
    "SEARCH_DIR",
    "TEXT_LIMITS",
    "SearchDocInfo",
    "SearchEntry",
    "SearchIndexResult",
    "argument_values",
    "extract_search_entries",
    "fill_order",
    "has_search_entries",
    "shard_bucket",
    "sharded_terms",
    "store_search_entries",
    "tokenize",
    "update_search_index",
]

# <site>/search/ holds scripts that call window.sitegen.search.add(id, data) (static/search.js):
#   index.js     sessions [title, project, page, [[entry count, snippet file], ...], context, time] and segments
#                [[session numbers], bucket count, [term shard name per bucket], weight digit per entry]
#   t/<hash>.js  a term shard of one segment: {term: "3,17,40"}, the numbers of the segment's entries
#                holding the term (its sessions' entries numbered from 1, one session after another)
#   d/<hash>.js  snippet file: {"rows": [[entry id, kind, label], ...], "text": base64 of deflated JSON texts}
# Files are named by content, so unchanged ones are never rewritten, and index.js, replaced last,
# never names a missing file. The shards are exported from the SQLite FTS5 database in
# <site>/.sitegen/search/ (sitegen/site/search/store.py), which keeps every document's entries.
SEARCH_DIR = "search"
CACHE_DIR = ".sitegen/search"
# Bump when the index layout changes. 2: term shards and entry weights exported from SQLite FTS5.
FORMAT = 2
# Characters of snippet text kept per entry kind (after collapsing whitespace). The index stores this
# text to show with results, so it is capped: what people wrote is kept longest; tool output keeps its
# start and its end (where errors and summaries are). Every word is indexed, cut or not.
TEXT_LIMITS = {
    "user": 4000,
    "prompt": 4000,
    "summary": 4000,
    "assistant": 2000,
    "custom": 2000,
    "tool": 1200,
    "shell": 1200,
}
# Of a capped tool output, the share taken from its end.
TAIL_SHARE = 0.3
LABEL_LIMIT = 80
# About this many sessions share a segment; one changed session rewrites only its segment's shards.
SESSIONS_PER_SEGMENT = 16
MAX_SEGMENTS = 64
# Segments filled again at once (a first build) are shared among worker processes from this many.
PARALLEL_SEGMENTS = 8
# A segment's term shards are sized to about this; a query loads one shard per word per segment.
SHARD_TARGET_BYTES = 48_000
MAX_BUCKETS = 256
# Entry text per snippet file: a result page loads only the files of the entries it shows.
CHUNK_TARGET_BYTES = 128_000
# Snippet files are deflated: text is most of the index, and level 3 gets most of level 9's gain in half the time.
ZLIB_LEVEL = 3
_SURROGATE = re.compile("[\ud800-\udfff]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")


@dataclass(frozen=True, slots=True)
class SearchEntry:
    """One searchable entry of a session page."""

    id: str  # entry id: the result links to <page>#entry-<id>
    kind: str  # user, assistant, tool, shell, summary or custom (a key of KIND_WEIGHT)
    label: str  # short context shown with the result: tool names, custom type, summary kind
    text: str  # the snippet source: whitespace collapsed, at most TEXT_LIMITS[kind] characters
    terms: str = ""  # all of the entry's text, where text had to be cut: every word of it is indexed


@dataclass(frozen=True, slots=True)
class SearchDocInfo:
    """What the results list shows about a session; passed for every session on every update."""

    title: str
    project: str
    page: str  # site-relative path of the session page
    owner: str = ""  # the session whose render stores this document's entries (itself, or a subagent's parent)
    context: str = ""  # shown after the title, not searched: the session a subagent page belongs to
    time_ms: int | None = None  # the session's last activity: shown with each result, and filtered by
    # False for documents that are parts of one page (the prompts' chunks): their shared title would
    # list each part whose entries do not match a query that names it.
    title_searched: bool = True


@dataclass(slots=True)
class SearchIndexResult:
    written: list[str] = field(default_factory=list)  # site-relative paths (re)written
    # Sessions with no stored entries (no cache): indexed by title only until they are extracted again.
    missing: list[str] = field(default_factory=list)


# ---- extraction (runs in build workers) -----------------------------------------------------------


def argument_values(value: Any, depth: int = 0) -> Iterator[str]:
    """The strings and numbers inside tool-call arguments; keys are the same in every call and add nothing."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list) and depth < 8:
        for item in value.values() if isinstance(value, dict) else value:
            if isinstance(item, str):  # most arguments are: no generator of their own
                yield item
            else:
                yield from argument_values(item, depth + 1)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def _clean(text: str) -> str:
    """Text as a result shows it: without terminal escapes, control characters and bidirectional
    overrides made visible, lone surrogates as U+FFFD."""
    if text.isprintable():
        # None of those is printable (escapes and controls are Cc, overrides Cf, surrogates Cs), and
        # this check is a tenth of visible()'s regex on text that is not ASCII.
        return text
    text = _ANSI.sub("", text) if "\x1b" in text else text
    text = visible(text)  # no control character or bidi override reaches a result raw
    return _paired(text)


def _paired(text: str) -> str:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: orjson refuses them, browsers show U+FFFD
            text = _SURROGATE.sub("\ufffd", text)
    return text


def _indexable(text: str) -> str:
    """All of an entry's text for the index: as _clean makes it, but for ASCII text control characters
    are left as they are, which FTS5 (and the specification) take for word separators as they do the
    U+FFFD visible() makes of them; no pass over the megabytes of ASCII output to find them."""
    text = _ANSI.sub("", text) if "\x1b" in text else text
    return text if text.isascii() else _paired(visible(text))


def _clip(pieces: Iterable[str], limit: int) -> str:
    """Pieces joined with single spaces, cut at limit characters; huge pieces are cut before splitting."""
    out: list[str] = []
    size = 0
    for piece in pieces:
        room = limit - size
        if room <= 0:
            break
        # Collapsing whitespace only shrinks text, so twice the room is always enough.
        words = " ".join(piece[: room * 2].split())[:room]
        if words:
            out.append(words)
            size += len(words) + 1
    return _clean(" ".join(out))


def _head_tail(text: str, limit: int) -> str:
    """Output cut to its start and its end, joined by an ellipsis."""
    words = " ".join(text[: limit * 2].split())
    if len(words) <= limit or len(text) <= limit:
        return _clean(words[:limit])
    tail_size = int(limit * TAIL_SHARE)
    tail = " ".join(text[-tail_size * 2 :].split())[-tail_size:]
    head = words[: limit - tail_size - 3]
    if "\x1b" in head or "\x1b" in tail:  # an escape begun in the head may run on into the tail
        return _clean(f"{head} … {tail}")
    # Cleaned apart: the ellipsis would take each ASCII half off _clean's quick way.
    return f"{_clean(head)} … {_clean(tail)}"


def _texts(node: Node, kind: str) -> list[str]:
    return [part.text for part in node.parts if part.kind == kind and part.text]


def _entry(node: Node, kind: str, label: str, pieces: list[str], ends: bool = False) -> SearchEntry:
    """The entry's snippet (its start, or with ends its start and end, cut to the kind's limit) and,
    when that had to be cut, all of its text for the index."""
    limit = TEXT_LIMITS[kind]
    cut = sum(map(len, pieces)) + len(pieces) > limit
    if ends:
        text = _head_tail("\n".join(pieces), limit)
    elif cut:
        text = _clip(pieces, limit)
    else:  # what _clip gives when nothing is cut, in one pass over the words
        text = _clean(" ".join(" ".join(pieces).split()))
    # Only the index reads terms (the snippet files keep text): where nothing can have been cut, text will do.
    terms = _indexable(" ".join(pieces)) if cut else ""
    label = label[:LABEL_LIMIT]
    return SearchEntry(node.id, kind, label if label.isprintable() else visible(label), text, terms)


def _entry_of(node: Node) -> SearchEntry | None:
    kind = node.kind
    if kind == "user":
        return _entry(node, "user", "", _texts(node, "text"))
    if kind == "assistant":
        calls = node.tool_calls
        pieces = _texts(node, "text")
        for call in calls:
            pieces.append(call.name)
            pieces.extend(argument_values(call.arguments))
        pieces.extend(_texts(node, "thinking"))
        return _entry(node, "assistant", ", ".join(dict.fromkeys(call.name for call in calls)), pieces)
    if kind == "tool_result" and node.result is not None:
        result = node.result
        label = result.tool_name + (" (error)" if result.is_error else "")
        return _entry(node, "tool", label, _texts(node, "text") + _texts(node, "other"), ends=True)
    if kind == "execution":
        command = str(node.meta.get("command") or node.meta.get("code") or "")
        output = str(node.meta.get("output") or "")
        return _entry(node, "shell", str(node.meta.get("language") or ""), [command, output], ends=True)
    if kind == "custom_message":
        return _entry(node, "custom", str(node.meta.get("customType") or ""), _texts(node, "text"))
    if kind in ("compaction", "branch_summary"):
        summary = node.meta.get("summary")
        label = "compaction" if kind == "compaction" else "branch summary"
        return _entry(node, "summary", label, [summary] if isinstance(summary, str) else [])
    return None  # markers, labels, titles, init and unknown entries: nothing a reader searches for


def extract_search_entries(transcript: Transcript) -> list[SearchEntry]:
    """The searchable entries of a session, in file order; entries without text are left out."""
    entries = []
    for node in transcript.nodes:
        entry = _entry_of(node)
        if entry is not None and entry.text:
            entries.append(entry)
    return entries


def _script(data_id: str, payload: bytes) -> bytes:
    """A data file: a script handing its JSON to search.js (no fetch, so it works from file://)."""
    return b'window.sitegen.search.add("' + data_id.encode() + b'",' + payload + b");\n"


def _data_file(folder: Path, prefix: str, data: object) -> str:
    """Write data as a content-addressed script that registers itself; returns its name (the hash)."""
    payload = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    name = hashlib.blake2b(payload, digest_size=8).hexdigest()
    target = folder / f"{name}.js"
    if not target.exists():
        replace_file(
            target, b'window.sitegen.search.add("' + prefix.encode() + name.encode() + b'",' + payload + b");\n"
        )
    return name


def _chunk_file(folder: Path, entries: Sequence[SearchEntry]) -> str:
    """One snippet file: [id, kind, label] per entry, and their texts as base64 of deflated JSON.

    The text is most of the index and deflates well; search.js inflates it with the browser's
    DecompressionStream, and links to the entries even where that is missing."""
    texts = orjson.dumps([entry.text for entry in entries])
    return _data_file(
        folder,
        "d:",
        {
            "rows": [[entry.id, entry.kind, entry.label] for entry in entries],
            "text": base64.b64encode(zlib.compress(texts, ZLIB_LEVEL)).decode("ascii"),
        },
    )


def _chunks(site_dir: Path, entries: Sequence[SearchEntry]) -> list[list[Any]]:
    """The entries' display data in files of about CHUNK_TARGET_BYTES: [[entry count, file name], ...]."""
    chunks: list[list[Any]] = []
    start = 0
    size = 0
    folder = site_dir / SEARCH_DIR / "d"
    for end, entry in enumerate(entries, 1):
        size += len(entry.text) + len(entry.id) + 16
        if size >= CHUNK_TARGET_BYTES or end == len(entries):
            chunks.append([end - start, _chunk_file(folder, entries[start:end])])
            start, size = end, 0
    return chunks


def has_search_entries(site_dir: Path, key: str) -> bool:
    """Whether a document's entries are stored (store_search_entries) for the next index update."""
    return has_document(site_dir, key)


def store_search_entries(site_dir: Path, key: str, entries: Sequence[SearchEntry]) -> None:
    """Write a document's snippet files and replace its entries in the site's search database (in the
    worker that extracted them). The next update_search_index exports the document's segment again;
    nothing here is visible to readers until then, so a build stopped after this leaves the old index working."""
    chunks = _chunks(site_dir, entries)
    store_document(
        site_dir, key, [entry.kind for entry in entries], [entry.terms or entry.text for entry in entries], chunks
    )


# ---- the index (main process) ---------------------------------------------------------------------


def shard_bucket(term: str, buckets: int) -> int:
    """The shard of a term: from its first two characters only, so every completion of a typed prefix
    lives in the same shard. static/search.js computes the same from code points."""
    second = ord(term[1]) if len(term) > 1 else 0
    return (ord(term[0]) * 31 + second) % buckets


def sharded_terms(terms: Sequence[tuple[str, str]], target_bytes: int) -> list[dict[str, str]]:
    """Terms and their entry numbers dealt into shards of about target_bytes (a power of two of them,
    at most MAX_BUCKETS), each term into its shard_bucket."""
    size = sum(len(term) + len(numbers) + 6 for term, numbers in terms)
    buckets = 1
    while buckets * target_bytes < size and buckets < MAX_BUCKETS:
        buckets *= 2
    shards: list[dict[str, str]] = [{} for _ in range(buckets)]
    for term, numbers in terms:
        # shard_bucket(term, buckets), inlined: this runs once per term of the whole index.
        shards[(ord(term[0]) * 31 + (ord(term[1]) if len(term) > 1 else 0)) % buckets][term] = numbers
    return shards


def _segment_count(sessions: int) -> int:
    count = 1
    while count * SESSIONS_PER_SEGMENT < sessions and count < MAX_SEGMENTS:
        count *= 2
    return count


def _segment_of(key: str, count: int) -> int:
    """A session's segment: stable while the segment count stays the same, whatever else changes."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big") % count


def _write_segment(site_dir: Path, number: int, members: Sequence[tuple[str, str]]) -> list[Any]:
    """A segment's FTS5 table filled again and its vocabulary written as term shards of about
    SHARD_TARGET_BYTES: [bucket count, [shard name or "" per bucket]]. A shard maps each term to the
    numbers of the segment's entries holding it ("3,17,40"; entries numbered from 1 in member order)."""
    with collector_paused():
        terms = export_segment(site_dir, number, members)
    shards = sharded_terms(terms, SHARD_TARGET_BYTES)
    folder = site_dir / SEARCH_DIR / "t"
    return [len(shards), [_data_file(folder, "t:", shard) if shard else "" for shard in shards]]


def _shards_exist(site_dir: Path, shards: list[Any]) -> bool:
    """Whether a segment's shard files are there (search/ may have been deleted by hand)."""
    folder = site_dir / SEARCH_DIR / "t"
    return all((folder / f"{name}.js").is_file() for name in shards[1] if name)


def _write_segment_job(job: tuple[str, int, list[tuple[str, str]]]) -> list[Any]:
    """_write_segment in a worker process (plain arguments: they pickle)."""
    return _write_segment(Path(job[0]), job[1], job[2])


@contextmanager
def _segment_pool(jobs: int, work: int) -> Iterator[Executor | None]:
    """Worker processes when many segments are filled again (a first build), else None."""
    if work < PARALLEL_SEGMENTS or jobs <= 1:
        yield None
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    close_connections()  # not to be inherited: a connection must not cross a fork
    # fork is cheapest, but unsafe once the live server's threads exist.
    context = multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
    pool = ProcessPoolExecutor(max_workers=min(jobs, work), mp_context=context)
    try:
        yield pool
    except BaseException:
        # Stopped (Ctrl-C) or failed meanwhile: the segments not yet started are not waited for.
        pool.shutdown(cancel_futures=True)
        raise
    pool.shutdown()


def fill_order(entries: Mapping[int, int]) -> list[int]:
    """The order worker processes fill segments in, given each one's entry count (its time follows
    it closely): the biggest first, so that no big one is filled alone at the end while the other
    processes idle (the segment with the longest session is a tenth of the work); ties by number."""
    return sorted(entries, key=lambda number: (-entries[number], number))


def _remove_unlisted(folder: Path, keep: set[str]) -> None:
    # scandir: its entries know their type, where a Path would stat each of thousands of files again.
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name not in keep and entry.is_file():
            remove_file(folder / entry.name)


def _session_row(info: SearchDocInfo, chunks: list[Any]) -> list[Any]:
    shown = [visible(info.title), visible(info.project)]  # as the listings show them (sitegen.visible)
    row = [*shown, info.page, chunks, visible(info.context), info.time_ms or 0]
    return row if info.title_searched else [*row, 1]


def update_search_index(
    site_dir: Path,
    sessions: Mapping[str, SearchDocInfo],
    changed: Iterable[str] = (),
    jobs: int = 1,
    meanwhile: Callable[[], None] | None = None,
) -> SearchIndexResult:
    """Bring <site>/search/ up to date with the given sessions (every session of the site, by key).

    Each segment whose members or their stored entries changed since it was exported (the
    database's digests say so; `changed` is not needed) has its FTS5 table filled again and its
    shards written; documents no longer in `sessions` are deleted. index.js is replaced last, so
    until then the old index still works.

    `meanwhile` is called once, while worker processes fill the segments (a first build: the build's
    other site pages are made then, so that this process's own work does not wait for theirs), or
    before the segments are filled here; it must not use the search database."""
    del changed  # the stored digests say what changed, also after a build stopped half way
    result = SearchIndexResult()
    stored = stored_documents(site_dir)
    count = _segment_count(len(sessions))
    keys = sorted(sessions)
    members: dict[int, list[str]] = {}
    for key in keys:
        members.setdefault(_segment_of(key, count), []).append(key)
    segments: dict[int, list[Any]] = {}
    stale: dict[int, list[tuple[str, str]]] = {}
    for number, segment_keys in sorted(members.items()):
        held = [(key, stored[key].digest) for key in segment_keys if key in stored]
        state = segment_state(site_dir, number)
        if state is not None and [tuple(pair) for pair in state[0]] == held and _shards_exist(site_dir, state[1]):
            segments[number] = state[1]
        else:
            stale[number] = held
    with _segment_pool(jobs, len(stale)) as pool:
        if pool is None:
            if meanwhile is not None:
                meanwhile()
            for number, held in stale.items():
                segments[number] = _write_segment(site_dir, number, held)
                record_segment(site_dir, number, held, segments[number])
        else:
            order = fill_order({number: sum(stored[key].entries for key, _ in held) for number, held in stale.items()})
            done = pool.map(_write_segment_job, [(str(site_dir), number, stale[number]) for number in order])
            if meanwhile is not None:
                meanwhile()
            segments.update(zip(order, done, strict=True))
            # Recorded once every segment is filled: a write to the database, whose entries the
            # workers read meanwhile, would wait for their reads and make them wait for it.
            record_segments(site_dir, [(number, held, segments[number]) for number, held in stale.items()])
        for number in stale:
            result.written.extend(f"{SEARCH_DIR}/t/{name}.js" for name in segments[number][1] if name)
    result.missing.extend(key for key in keys if key not in stored)
    drop_segments_from(site_dir, count)
    for number in range(count):
        if number not in members:
            record_segment(site_dir, number, [], [1, [""]])
    delete_documents(site_dir, sorted(set(stored) - set(sessions)))

    numbers = {key: number for number, key in enumerate(keys)}
    chunks = {key: stored[key].chunks if key in stored else [] for key in keys}
    index = {
        "format": FORMAT,
        # [title, project, page, [[entry count, snippet file], ...], context, last activity ms] per
        # session, by key (context: the session a subagent page belongs to, else "")
        "sessions": [_session_row(sessions[key], chunks[key]) for key in keys],
        # [[session numbers], bucket count, [term shard per bucket], weight digit per entry] per segment
        "segments": [
            [
                [numbers[key] for key in members[number] if key in stored],
                *segments[number],
                "".join(stored[key].weights for key in members[number] if key in stored),
            ]
            for number in sorted(members)
        ],
    }
    script = _script("index", orjson.dumps(index, option=orjson.OPT_SORT_KEYS))
    if replace_file_if_changed(site_dir / SEARCH_DIR / "index.js", script):
        result.written.append(f"{SEARCH_DIR}/index.js")
    # Only now does nothing refer to the files of replaced segments and sessions.
    shard_names = {f"{name}.js" for segment in segments.values() for name in segment[1] if name}
    _remove_unlisted(site_dir / SEARCH_DIR / "t", shard_names)
    _remove_unlisted(site_dir / SEARCH_DIR / "d", {f"{chunk[1]}.js" for listed in chunks.values() for chunk in listed})
    databases = [Path(DB_FILE).name, *(segment_path(site_dir, number).name for number in range(count))]
    kept = {f"{name}{end}" for name in databases for end in ("", "-wal", "-shm", "-journal")}
    _remove_unlisted(site_dir / CACHE_DIR, kept)
    return result
