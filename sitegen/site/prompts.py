"""The Prompts page: every prompt of the agents' history stores, linked to its session, searchable."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sitegen import __version__
from sitegen.fileio import replace_file
from sitegen.history.store import Prompt, StoreRead, read_store, store_fingerprint
from sitegen.site.jobs import relative_url
from sitegen.site.prompt_data import (
    CHUNK_PROMPTS,
    DATA_DIR,
    SEGMENT_CHUNKS,
    PromptRow,
    data_script,
    day_of,
    index_payload,
    merge_segment,
    write_data,
)
from sitegen.site.prompt_links import PromptLinker
from sitegen.site.records import SessionRecord
from sitegen.site.search import SearchDocInfo, SearchEntry, has_search_entries, store_search_entries, stored_postings
from sitegen.site.sources import project_slug
from sitegen.titles import clip, snippet

__all__ = ["PAGE", "PromptsResult", "prompt_search_key", "update_prompts"]

PAGE = "prompts.html"
_STATE = ".sitegen/prompts/state.json"
# The last good read of each store, shown while the store is locked.
_CACHE_DIR = ".sitegen/prompts"
# Bump when the data or the state change shape: the next build then writes the page again.
FORMAT = 1
# Characters of a prompt the page shows; the rest is left in the store (the page says how much).
DISPLAY_CHARS = 20_000
# The newest prompts are in the page itself: readable without JavaScript, and at once.
FIRST_SHOWN = 100
# A prompt folds when it is longer than this many lines or characters.
FOLD_LINES = 6
FOLD_CHARS = 600
SEARCH_TITLE = "Prompt history"
SEARCH_CHARS = 4000


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


def prompt_search_key(chunk: str) -> str:
    """The search document of one chunk of prompts (named by its content, like the chunk's file)."""
    return f"{DATA_DIR}/{chunk}"


def _document() -> SearchDocInfo:
    return SearchDocInfo(SEARCH_TITLE, "", PAGE, title_searched=False)


def _store_tag(path: Path) -> str:
    return hashlib.blake2b(str(path).encode("utf-8", "surrogatepass"), digest_size=3).hexdigest()


def _cache_path(site_dir: Path, store: Path) -> Path:
    return site_dir / _CACHE_DIR / f"store-{_store_tag(store)}.json"


def _load_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _read(site_dir: Path, store: Path, changed: bool) -> StoreRead:
    """A store's prompts; while it is locked, those of the last build that read it."""
    read = read_store(store)
    cache = _cache_path(site_dir, store)
    if read.busy:
        data = _load_json(cache)
        if isinstance(data, dict) and data.get("format") == FORMAT and data.get("store") == str(store):
            read.prompts, read.readable = [Prompt(*row) for row in data["prompts"]], True
            read.problems = ["locked by another process: the prompts the last build read are shown"]
    elif read.readable and (changed or not cache.exists()):
        rows = [[p.id, p.text, p.created_s, p.cwd, p.session_id, p.use_count] for p in read.prompts]
        replace_file(cache, orjson.dumps({"format": FORMAT, "store": str(store), "prompts": rows}))
    return read


def _links_digest(records: Sequence[SessionRecord], problem_count: int, assets: dict[str, str]) -> str:
    """What the page depends on besides the stores: every session's prompts, page and title, the
    projects, the assets, and the problem count the navigation shows."""
    parts = [[r.session_id, r.page, r.title, r.project, r.project_slug, r.prompts] for r in records]
    payload = orjson.dumps([__version__, FORMAT, problem_count, sorted(assets.items()), parts])
    return hashlib.blake2b(payload, digest_size=16).hexdigest()


def _prompt_row(tag: str, prompt: Prompt, linker: PromptLinker, live_projects: set[str]) -> PromptRow:
    cwd = prompt.cwd or ""
    slug = project_slug(cwd) if cwd else ""
    link = linker.link(prompt)
    session_url = ""
    if link is not None:
        session_url = relative_url(PAGE, link.page) + (f"#entry-{link.entry}" if link.entry else "")
    return PromptRow(
        anchor=f"p{tag}-{prompt.id}",
        time_s=prompt.created_s,
        cwd=cwd,
        project_url=f"projects/{slug}.html" if slug in live_projects else "",
        session_url=session_url,
        session_title=clip(link.title, 80) if link is not None else "",
        uses=prompt.use_count,
        text=prompt.text[:DISPLAY_CHARS],
        length=len(prompt.text),
    )


def _chunks(reads: Sequence[StoreRead], records: Sequence[SessionRecord]) -> list[list[PromptRow]]:
    """Each store's prompts in id order, in chunks of CHUNK_PROMPTS; a chunk holds one store's
    prompts, so a store that grows changes only its last chunk."""
    linker = PromptLinker(records)
    live_projects = {record.project_slug for record in records}
    chunks: list[list[PromptRow]] = []
    for read in reads:
        tag = _store_tag(read.path)
        rows = [_prompt_row(tag, prompt, linker, live_projects) for prompt in read.prompts]
        chunks.extend(rows[start : start + CHUNK_PROMPTS] for start in range(0, len(rows), CHUNK_PROMPTS))
    return chunks


def _search_entries(rows: Sequence[PromptRow]) -> list[SearchEntry]:
    """A chunk's prompts for the site's search: kind "prompt", labelled by day and folder."""
    entries = []
    for row in rows:
        folder = row.cwd.rstrip("/").rsplit("/", 1)[-1]
        label = " · ".join(part for part in (day_of(row.time_s), folder) if part)
        text = " ".join(row.text[: SEARCH_CHARS * 2].split())[:SEARCH_CHARS]
        terms = row.text if len(row.text) > SEARCH_CHARS else ""
        entries.append(SearchEntry(row.anchor, "prompt", label[:80], text, terms))
    return entries


def _newest_first(chunks: Sequence[Sequence[PromptRow]]) -> list[int]:
    """Slots (chunk * CHUNK_PROMPTS + place) by time, newest first, undated last; ties newest id first."""
    slots = [
        (number * CHUNK_PROMPTS + place, row) for number, rows in enumerate(chunks) for place, row in enumerate(rows)
    ]
    slots.sort(key=lambda item: (item[1].time_s is None, -(item[1].time_s or 0), -item[0]))
    return [slot for slot, _ in slots]


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
                path.unlink(missing_ok=True)


def _render(
    site_dir: Path,
    assets: dict[str, str],
    problem_count: int,
    index_script: str,
    shown: list[PromptRow],
    total: int,
    reads: Sequence[StoreRead],
    looked: Sequence[Path],
) -> None:
    # Jinja and the page renderer's imports: only a build whose prompts changed pays for them.
    from sitegen.render.page import format_time, template_environment

    env = template_environment()
    html = env.get_template("prompts.html.j2").render(
        root="",
        assets=assets,
        problem_count=problem_count,
        version=__version__,
        days=_first_days(shown),
        total=total,
        index_script=index_script,
        stores=[(str(read.path), len(read.prompts), read.readable) for read in reads],
        looked=[str(path) for path in looked],
        folded=_folded,
        fmt_time=format_time,
        clock=lambda seconds: format_time(seconds * 1000)[11:16] if seconds is not None else "",
    )
    replace_file(site_dir / PAGE, html)


def update_prompts(
    site_dir: Path,
    stores: Sequence[Path],
    records: Sequence[SessionRecord],
    assets: dict[str, str],
    *,
    problem_count: int,
    sessions_changed: bool,
    looked: Sequence[Path] = (),
) -> PromptsResult:
    """Bring prompts.html and its data up to date with the stores and the sessions' records.

    Unchanged stores (size and mtime of the database and its WAL) and sessions cost a stat each;
    problem_count is the sessions' problems, which the page's navigation adds its own to."""
    result = PromptsResult()
    state = _load_json(site_dir / _STATE)
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        state = {}
    fingerprints = {str(store): store_fingerprint(store) for store in stores}
    links = _links_digest(records, problem_count, assets) if sessions_changed or not state else state.get("links")
    if (
        state.get("stores") == fingerprints
        and state.get("links") == links
        and (site_dir / PAGE).is_file()
        and all(has_search_entries(site_dir, prompt_search_key(name)) for name in state["chunks"])
    ):
        result.problems = [(str(path), str(message)) for path, message in state["problems"]]
        result.documents = {prompt_search_key(name): _document() for name in state["chunks"]}
        result.count, result.latest = state["count"], state["latest"]
        return result
    result.changed = True
    old_stores = state.get("stores", {})
    reads = [_read(site_dir, store, old_stores.get(str(store)) != fingerprints[str(store)]) for store in stores]
    result.problems = [(str(read.path), problem) for read in reads for problem in read.problems]
    chunks = _chunks(reads, records)
    names = []
    for rows in chunks:
        name = write_data(site_dir, "c", "c:", [row.to_json() for row in rows])
        key = prompt_search_key(name)
        if not has_search_entries(site_dir, key):
            store_search_entries(site_dir, key, _search_entries(rows))
            result.indexed.add(key)
        result.documents[key] = _document()
        names.append(name)
    old_segments = state.get("segments", {})
    segments: dict[str, list[Any]] = {}
    for start in range(0, len(names), SEGMENT_CHUNKS):
        members = ",".join(names[start : start + SEGMENT_CHUNKS])
        segments[members] = old_segments.get(members) or merge_segment(
            site_dir, [stored_postings(site_dir, prompt_search_key(n)) for n in names[start : start + SEGMENT_CHUNKS]]
        )
    order = _newest_first(chunks)
    flat = {number * CHUNK_PROMPTS + place: row for number, rows in enumerate(chunks) for place, row in enumerate(rows)}
    by_slot = [flat[slot] for slot in order]
    folders = sorted({row.cwd for row in by_slot if row.cwd})
    project_urls = {row.cwd: row.project_url for row in by_slot}
    payload = index_payload(
        chunks=names,
        firsts=[[rows[0].anchor.rsplit("-", 1)[0], int(rows[0].anchor.rsplit("-", 1)[1])] for rows in chunks],
        order=order,
        shown=by_slot,
        projects=[[folder, project_urls[folder]] for folder in folders],
        segments=list(segments.values()),
    )
    data = orjson.dumps(payload)
    index_name = f"index-{hashlib.blake2b(data, digest_size=8).hexdigest()}.js"
    index_path = site_dir / DATA_DIR / index_name
    if not index_path.exists():
        replace_file(index_path, data_script("index", data))
    result.count = len(by_slot)
    result.latest = snippet(by_slot[0].text) if by_slot else ""
    page_problems = problem_count + len(result.problems)
    _render(
        site_dir, assets, page_problems, f"{DATA_DIR}/{index_name}", by_slot[:FIRST_SHOWN], len(by_slot), reads, looked
    )
    result.written.append(PAGE)
    shard_names = {f"{name}.js" for _, shards in segments.values() for name in shards if name}
    _remove_unlisted(site_dir / DATA_DIR / "c", {f"{name}.js" for name in names})
    _remove_unlisted(site_dir / DATA_DIR / "t", shard_names)
    _remove_unlisted(site_dir / DATA_DIR, {index_name})
    new_state = {
        "format": FORMAT,
        "stores": fingerprints,
        "links": links,
        "problems": result.problems,
        "chunks": names,
        "segments": segments,
        "count": result.count,
        "latest": result.latest,
    }
    replace_file(site_dir / _STATE, orjson.dumps(new_state))
    return result
