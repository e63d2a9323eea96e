"""The Prompts page's rows and chunks: each prompt linked to its session, made again only where something changed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sitegen.history.store import Prompt
from sitegen.site.prompts.data import CHUNK_PROMPTS, chunk_name
from sitegen.site.prompts.links import PromptLinker, prompt_key
from sitegen.site.state.jobs import relative_url
from sitegen.site.state.records import SessionRecord
from sitegen.site.state.sources import project_slug
from sitegen.titles import clip
from sitegen.visible import visible

__all__ = ["DISPLAY_CHARS", "PAGE", "Chunk", "ChunkMaker", "KeptRows", "store_tag"]

PAGE = "prompts.html"
# Characters of a prompt the page shows; the rest is left in the store (the page says how much).
DISPLAY_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Chunk:
    """CHUNK_PROMPTS rows of one store in id order, their JSON and its name (the file's)."""

    ids: list[int]
    rows: list[list[Any]]
    payload: bytes
    name: str


@dataclass(slots=True)
class KeptRows:
    """What one build made, kept by a process that builds again (watch): the next build remakes
    only the rows of prompts that changed or whose session's entries changed, and their chunks."""

    links: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # session key -> what linking reads
    projects: dict[str, str] = field(default_factory=dict)  # folder -> its project page ("" none)
    rows: dict[str, dict[int, tuple[str, list[Any]]]] = field(default_factory=dict)  # store -> id -> key, row
    chunks: dict[str, list[Chunk]] = field(default_factory=dict)  # store -> its chunks in order
    keyed: bool = True  # False: no session had a message to match, so rows hold no prompt_key


def store_tag(path: Path) -> str:
    return hashlib.blake2b(str(path).encode("utf-8", "surrogatepass"), digest_size=3).hexdigest()


def _link_view(record: SessionRecord) -> tuple[Any, ...]:
    """What PromptLinker and the rows read of a session; the session id first, its prompts last."""
    return (record.session_id, record.created_ms, record.project, record.page, record.title, record.prompts)


class _RowMaker:
    """Prompts to rows (PromptRow's fields as a list); what repeats (folders, sessions) is worked out once."""

    def __init__(self, records: Sequence[SessionRecord], titles: Mapping[str, str]) -> None:
        self.linker = PromptLinker(records)
        self.titles = titles  # session id -> its title in history.db, for a prompt of no session here
        self.live_projects = {record.project_slug for record in records}
        self.projects: dict[str, str] = {}
        self.sessions: dict[tuple[str, str | None], tuple[str, str]] = {}
        # Folders and titles repeat across thousands of prompts: each made visible once.
        self.shown_folders: dict[str, str] = {}
        self.shown_titles: dict[str, str] = {}

    def project_url(self, cwd: str) -> str:
        url = self.projects.get(cwd)
        if url is None:
            slug = project_slug(cwd) if cwd else ""
            url = self.projects[cwd] = f"projects/{slug}.html" if slug in self.live_projects else ""
        return url

    def shown_folder(self, cwd: str) -> str:
        """The folder as text: no control character or bidi override raw (sitegen.visible)."""
        shown = self.shown_folders.get(cwd)
        if shown is None:
            shown = self.shown_folders[cwd] = visible(cwd)
        return shown

    def shown_title(self, title: str) -> str:
        shown = self.shown_titles.get(title)
        if shown is None:
            shown = self.shown_titles[title] = visible(clip(title, 80))
        return shown

    def row(self, tag: str, prompt: Prompt, key: str) -> list[Any]:
        cwd = prompt.cwd or ""
        link = self.linker.link(prompt, key)
        session_url = session_title = ""
        if link is not None:
            known = self.sessions.get((link.page, link.entry))
            if known is None:
                url = relative_url(PAGE, link.page) + (f"#entry-{link.entry}" if link.entry else "")
                known = self.sessions[(link.page, link.entry)] = (url, visible(clip(link.title, 80)))
            session_url, session_title = known
        elif prompt.session_id is not None and prompt.session_id in self.titles:
            session_title = self.shown_title(self.titles[prompt.session_id])
        text = prompt.text
        shown = text if len(text) <= DISPLAY_CHARS else text[:DISPLAY_CHARS]
        uses = prompt.use_count
        return [
            f"{tag}-{prompt.id}",
            prompt.created_s,
            self.shown_folder(cwd),
            self.project_url(cwd),
            session_url,
            session_title,  # made visible() where it was made
            uses,
            visible(shown),
            len(text),
        ]


def _affected(
    kept: KeptRows, links: dict[str, tuple[Any, ...]], maker: _RowMaker
) -> tuple[set[str], set[str], set[str]]:
    """The session ids, prompt keys and folders whose prompts may link elsewhere than last time."""
    sessions: set[str] = set()
    keys: set[str] = set()
    for key in kept.links.keys() | links.keys():
        old, new = kept.links.get(key), links.get(key)
        if old != new:
            for view in (old, new):
                if view is not None:
                    sessions.add(view[0])
                    keys.update(entry[2] for entry in view[-1])
    folders = {cwd for cwd, url in kept.projects.items() if maker.project_url(cwd) != url}
    return sessions, keys, folders


class ChunkMaker:
    """Each store's chunks in id order (a chunk holds one store's prompts, so a store that grows
    changes only its last chunk), made as the prompts come so the caller can hand them on.

    With kept (the last build's, in this process), a store read from its snapshot (StoreRead.changed)
    remakes only the rows of changed prompts and of prompts whose session changed; fresh gets what
    this build made, for the next (keep)."""

    def __init__(
        self,
        records: Sequence[SessionRecord],
        kept: KeptRows | None,
        fresh: KeptRows,
        titles: Mapping[str, str] | None = None,
        keep: bool = True,
    ) -> None:
        self.maker = maker = _RowMaker(records, titles or {})
        # Without a next build to read fresh, it gets each chunk's ids and name only: its rows and JSON
        # were another 70 MB at the Prompts page's peak at 2,000 sessions.
        self.keep = keep
        # Without a user message in any session, no prompt is matched by text: its key is not worked out.
        keyed = self.keyed = fresh.keyed = maker.linker.matches_text
        self.kept = kept if kept is None or kept.keyed or not keyed else None
        self.fresh = fresh
        fresh.links = {record.key: _link_view(record) for record in records}
        affected = _affected(self.kept, fresh.links, maker) if self.kept is not None else (set(), set(), set())
        self.sessions, self.keys, self.folders = affected
        self.relink = bool(self.sessions or self.keys or self.folders)
        self._store = ""
        self._tag = ""
        self._old_rows: dict[int, tuple[str, list[Any]]] | None = None
        self._old_chunks: list[Chunk] = []
        self._changed: set[int] = set()

    def begin(self, path: Path, changed: set[int] | None, locked: list[list[list[Any]]]) -> Iterator[Chunk]:
        """Start a store (changed: StoreRead.changed); its chunks from the last build when it is
        locked (locked: their rows)."""
        kept = self.kept
        self._store = store = str(path)
        self._tag = "p" + store_tag(path)
        self._old_rows = kept.rows.get(store) if kept is not None and changed is not None else None
        self._old_chunks = kept.chunks.get(store, []) if kept is not None and self._old_rows is not None else []
        self._changed = changed or set()
        self.fresh.rows[store] = {}
        made = self.fresh.chunks[store] = []
        for listed in locked:
            payload = orjson.dumps(listed)
            made.append(Chunk([int(row[0].rsplit("-", 1)[1]) for row in listed], listed, payload, chunk_name(payload)))
            yield made[-1]

    def chunks(self, prompts: Sequence[Prompt]) -> Iterator[Chunk]:
        """The store's next chunks: of whole CHUNK_PROMPTS but at the store's end."""
        maker, tag, old_rows, changed, keyed = self.maker, self._tag, self._old_rows, self._changed, self.keyed
        relink, sessions, keys, folders = self.relink, self.sessions, self.keys, self.folders
        rows = self.fresh.rows[self._store]
        made = self.fresh.chunks[self._store]
        for start in range(0, len(prompts), CHUNK_PROMPTS):
            ids: list[int] = []
            remade = False
            for prompt in prompts[start : start + CHUNK_PROMPTS]:
                held = old_rows.get(prompt.id) if old_rows is not None else None
                if (
                    held is None
                    or prompt.id in changed
                    or (relink and (prompt.session_id in sessions or held[0] in keys or (prompt.cwd or "") in folders))
                ):
                    key = prompt_key(prompt.text) if keyed else ""
                    held = (key, maker.row(tag, prompt, key))
                    remade = True
                rows[prompt.id] = held
                ids.append(prompt.id)
            number = len(made)
            old = self._old_chunks[number] if number < len(self._old_chunks) else None
            if old is not None and not remade and old.ids == ids:
                chunk = old
            else:
                listed = [rows[prompt_id][1] for prompt_id in ids]
                payload = orjson.dumps(listed)
                chunk = Chunk(ids, listed, payload, chunk_name(payload))
            made.append(chunk if self.keep else Chunk(ids, [], b"", chunk.name))
            if not self.keep:
                rows.clear()
            yield chunk

    def finish(self) -> None:
        self.fresh.projects = self.maker.projects
