"""The prompts page's data: rows in chunks, the newest-first order, the filter's term shards, as scripts."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson

from sitegen.fileio import replace_file
from sitegen.site.search import encode_number, shard_bucket

__all__ = [
    "CHUNK_PROMPTS",
    "DATA_DIR",
    "SEGMENT_CHUNKS",
    "PromptRow",
    "data_script",
    "day_of",
    "index_payload",
    "merge_segment",
    "write_data",
]

# <site>/prompts/ holds scripts that call window.sitegenPrompts.add(id, data) (static/prompts.js):
#   index.<hash>.js  the order (newest first), times, projects, chunk and shard names
#   c/<hash>.js      a chunk: CHUNK_PROMPTS rows of one store, in id order, as the page shows them
#   t/<hash>.js      a term shard of one segment (SEGMENT_CHUNKS chunks): {term: postings}
# Named by content, so a store that grew rewrites its last chunk and segment only.
DATA_DIR = "prompts"
CHUNK_PROMPTS = 256
SEGMENT_CHUNKS = 16
# A segment's term shards are sized to about this (one is loaded per word and segment while filtering).
SHARD_TARGET_BYTES = 64_000
MAX_BUCKETS = 256


@dataclass(frozen=True, slots=True)
class PromptRow:
    """One prompt as the page shows it; every URL is relative to the site's root."""

    anchor: str  # the element id after "entry-": p<store tag>-<id>
    time_s: int | None
    cwd: str
    project_url: str
    session_url: str
    session_title: str
    uses: int | None
    text: str  # cut to what the page shows
    length: int  # characters of the whole prompt

    def to_json(self) -> list[Any]:
        return [
            self.anchor,
            self.time_s or 0,
            self.cwd,
            self.project_url,
            self.session_url,
            self.session_title,
            self.uses or 0,
            self.text,
            self.length,
        ]


def day_of(seconds: int | None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds)) if seconds is not None else ""


def data_script(data_id: str, payload: bytes) -> bytes:
    """A data file: a script handing its JSON to prompts.js (no fetch, so it works from file://)."""
    return b'window.sitegenPrompts.add("' + data_id.encode() + b'",' + payload + b");\n"


def write_data(site_dir: Path, folder: str, prefix: str, data: object) -> str:
    """Write data as a content-addressed script under prompts/<folder>/; returns its name (the hash)."""
    payload = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    name = hashlib.blake2b(payload, digest_size=8).hexdigest()
    target = site_dir / DATA_DIR / folder / f"{name}.js"
    if not target.exists():
        replace_file(target, data_script(prefix + name, payload))
    return name


def merge_segment(site_dir: Path, postings: Sequence[dict[str, str] | None]) -> list[Any]:
    """The term shards of a segment from its chunks' postings: [bucket count, [shard name or ""]].

    A term's value lists, per chunk holding it: the chunk's place in the segment, then the chunk's
    own postings (entry count, then entry number delta and weight pairs), joined, never decoded."""
    merged: dict[str, list[str]] = {}
    size = 0
    for place, chunk in enumerate(postings):
        if chunk is None:
            continue
        head = encode_number(place)
        for term, piece in chunk.items():
            held = merged.get(term)
            if held is None:
                merged[term] = [head + piece]
            else:
                held.append(head + piece)
            size += len(term) + len(piece) + 6
    buckets = 1
    while buckets * SHARD_TARGET_BYTES < size and buckets < MAX_BUCKETS:
        buckets *= 2
    shards: list[dict[str, str]] = [{} for _ in range(buckets)]
    for term, pieces in merged.items():
        shards[shard_bucket(term, buckets)][term] = "".join(pieces)
    return [buckets, [write_data(site_dir, "t", "t:", shard) if shard else "" for shard in shards]]


def _deltas(values: Sequence[int]) -> list[int]:
    return [values[0], *(b - a for a, b in pairwise(values))] if values else []


def index_payload(
    chunks: list[str],
    firsts: list[list[Any]],
    order: list[int],
    shown: Sequence[PromptRow],
    projects: list[list[str]],
    segments: list[list[Any]],
) -> dict[str, Any]:
    """What prompts.js loads first: per prompt in newest-first order (shown), its slot (chunk *
    CHUNK_PROMPTS + place), time and project; as differences, since rows are in time order and
    mostly in slot order. Undated prompts come last and have no time."""
    project_numbers = {name: number for number, (name, _) in enumerate(projects)}
    return {
        "format": 1,
        "size": CHUNK_PROMPTS,
        "segment": SEGMENT_CHUNKS,
        "chunks": chunks,
        "firsts": firsts,
        "order": _deltas(order),
        "times": _deltas([row.time_s for row in shown if row.time_s is not None]),
        "projects": projects,
        "project": [project_numbers.get(row.cwd, -1) for row in shown],
        "segments": segments,
    }
