"""The prompts page's data: rows in chunks, the filter's term shards by segment (from FTS5), the index, as scripts."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson

from sitegen.fileio import replace_file
from sitegen.site.search.index import SearchEntry, has_search_entries, sharded_terms, store_search_entries
from sitegen.site.search.prompt_store import export_prompt_terms, store_prompt_chunks, stored_prompt_chunks

__all__ = [
    "CHUNK_PROMPTS",
    "DATA_DIR",
    "SEGMENT_CHUNKS",
    "PromptRow",
    "SegmentJob",
    "build_segment",
    "chunk_name",
    "data_script",
    "day_of",
    "index_payload",
    "linked",
    "prompt_search_key",
]

# <site>/prompts/ holds scripts that call window.sitegen.prompts.add(id, data) (static/prompts.js):
#   index-<hash>.js  the order (newest first), times, projects, chunk and shard names
#   c/<hash>.js      a chunk: CHUNK_PROMPTS rows of one store, in id order, as the page shows them
#   t/<hash>.js      a term shard of one segment (SEGMENT_CHUNKS chunks): {term: "3,17,40"}, the numbers
#                    of the segment's prompts holding it (chunk place * CHUNK_PROMPTS + place in the chunk + 1)
# Named by content, so a store that grew rewrites its last chunk and segment only. The terms are
# exported from SQLite FTS5 (sitegen/site/search/prompt_store.py), tokenised as the site search is.
DATA_DIR = "prompts"
CHUNK_PROMPTS = 256
SEGMENT_CHUNKS = 16
# A segment's term shards are sized to about this (one is loaded per word and segment while filtering).
SHARD_TARGET_BYTES = 64_000
# Characters of a prompt the site's search keeps to show (every word of it is indexed).
SEARCH_CHARS = 4000


@dataclass(frozen=True, slots=True)
class PromptRow:
    """One prompt as the page shows it; every URL is relative to the site's root. In the chunk
    files it is the list of its fields in this order (to_json)."""

    anchor: str  # the element id after "entry-": p<store tag>-<id>
    time_s: int | None
    cwd: str
    project_url: str
    session_url: str
    session_title: str
    uses: int | None
    text: str  # cut to what the page shows
    length: int  # characters of the whole prompt

    @classmethod
    def from_json(cls, row: Sequence[Any]) -> PromptRow:
        return cls(*row)


def day_of(seconds: int | None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds)) if seconds is not None else ""


def data_script(data_id: str, payload: bytes) -> bytes:
    """A data file: a script handing its JSON to prompts.js (no fetch, so it works from file://)."""
    return b'window.sitegen.prompts.add("' + data_id.encode() + b'",' + payload + b");\n"


def chunk_name(payload: bytes) -> str:
    """A chunk's file name: the hash of its rows, so an unchanged chunk keeps its file and index."""
    return hashlib.blake2b(payload, digest_size=8).hexdigest()


def prompt_search_key(chunk: str) -> str:
    """The site search's document for one chunk of prompts (named like the chunk's file). "/2/": the
    documents of older builds held the prompts linked to a session's entry too (see search_entries),
    and are other documents, made again."""
    return f"{DATA_DIR}/2/{chunk}"


def linked(row: Sequence[Any]) -> bool:
    """Whether a prompt row links to the entry of a session page, where the site's search finds its text."""
    return "#entry-" in row[4]


def _write_data(site_dir: Path, folder: str, prefix: str, name: str, payload: bytes) -> None:
    target = site_dir / DATA_DIR / folder / f"{name}.js"
    if not target.exists():
        replace_file(target, data_script(prefix + name, payload))


def search_entries(rows: Sequence[Sequence[Any]]) -> list[SearchEntry]:
    """A chunk's prompts for the site's search: kind "prompt", labelled by day and folder; not those
    linked to a session's entry, which the search finds there (a second result of the same words is noise)."""
    entries = []
    labels: dict[tuple[int | None, str], str] = {}
    for row in rows:
        if linked(row):
            continue
        anchor, time_s, cwd, _, _, _, _, text, _ = row
        day = time_s // 86400 if time_s is not None else None
        label = labels.get((day, cwd))
        if label is None:
            folder = cwd.rstrip("/").rsplit("/", 1)[-1]
            label = labels[(day, cwd)] = " · ".join(part for part in (day_of(time_s), folder) if part)[:80]
        shown = text
        if len(text) > SEARCH_CHARS or "  " in text or "\n" in text or "\t" in text or "\r" in text:
            shown = " ".join(text[: SEARCH_CHARS * 2].split())[:SEARCH_CHARS]
        entries.append(SearchEntry(anchor, "prompt", label, shown, text if len(text) > SEARCH_CHARS else ""))
    return entries


def write_shards(site_dir: Path, places: Sequence[tuple[str, str | None]]) -> list[Any]:
    """A segment's term shards, exported from FTS5 over its chunks' stored prompts (export_prompt_terms's
    places) and sized to about SHARD_TARGET_BYTES: [bucket count, [shard name or "" per bucket]]."""
    terms = export_prompt_terms(site_dir, places, CHUNK_PROMPTS)
    shards = sharded_terms(terms, SHARD_TARGET_BYTES)
    written = []
    for shard in shards:
        if not shard:
            written.append("")
            continue
        payload = orjson.dumps(shard, option=orjson.OPT_SORT_KEYS)
        name = chunk_name(payload)
        _write_data(site_dir, "t", "t:", name, payload)
        written.append(name)
    return [len(shards), written]


@dataclass(frozen=True, slots=True)
class SegmentJob:
    """One segment's chunks, as JSON payloads, whether each is a document of the site's search and
    whether each of its prompts is one of that document's entries (plain values: it pickles)."""

    site_dir: str
    payloads: list[bytes]
    searched: list[bool]
    whole: list[bool]


def build_segment(job: SegmentJob) -> tuple[list[str], list[Any], list[str]]:
    """Write a segment's chunk files, store the prompts of each chunk that the database lacks (as the
    site search's document, or for the page alone), and write the segment's term shards: (chunk
    names, [bucket count, shard names], search keys indexed anew). Runs in a worker process when
    many segments are new (a first build)."""
    site_dir = Path(job.site_dir)
    names = [chunk_name(payload) for payload in job.payloads]
    stored = stored_prompt_chunks(site_dir, [name for name, whole in zip(names, job.whole, strict=True) if not whole])
    places: list[tuple[str, str | None]] = []
    new: dict[str, list[str]] = {}
    indexed = []
    for name, payload, searched, whole in zip(names, job.payloads, job.searched, job.whole, strict=True):
        _write_data(site_dir, "c", "c:", name, payload)
        key = prompt_search_key(name)
        places.append((name, key if whole else None))
        if searched and not has_search_entries(site_dir, key):
            store_search_entries(site_dir, key, search_entries(orjson.loads(payload)))
            indexed.append(key)
        if not whole and name not in stored:
            new[name] = [row[7] for row in orjson.loads(payload)]
    store_prompt_chunks(site_dir, new)
    return names, write_shards(site_dir, places), indexed


def _deltas(values: Sequence[int]) -> list[int]:
    return [values[0], *(b - a for a, b in pairwise(values))] if values else []


def index_payload(
    chunks: list[str],
    firsts: list[list[Any]],
    order: list[int],
    times: Mapping[int, int | None],
    folders: Mapping[int, str],
    projects: list[list[str]],
    segments: list[list[Any]],
) -> dict[str, Any]:
    """What prompts.js loads first: per prompt in newest-first order, its slot (chunk * CHUNK_PROMPTS +
    place), time and project (times and folders are by slot); as differences, since prompts are in
    time order and mostly in slot order. Undated prompts come last and have no time."""
    project_numbers = {name: number for number, (name, _) in enumerate(projects)}
    dated = [time_s for time_s in (times[slot] for slot in order) if time_s is not None]
    return {
        "format": 2,
        "size": CHUNK_PROMPTS,
        "segment": SEGMENT_CHUNKS,
        "chunks": chunks,
        "firsts": firsts,
        "order": _deltas(order),
        "times": _deltas(dated),
        "projects": projects,
        "project": [project_numbers.get(folders[slot], -1) for slot in order],
        "segments": segments,
    }
