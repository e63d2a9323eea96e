"""Which session entry a history prompt was sent as: by the store's session id, else by its text and time."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sitegen.history.store import Prompt
from sitegen.site.state.records import SessionRecord
from sitegen.transcript.model import Transcript

__all__ = ["MATCH_WINDOW_MS", "PromptLinker", "SessionLink", "prompt_key", "user_prompts"]

# A user message this close in time to a prompt of the same text is where it was sent (omp writes
# the prompt to its history as it sends it; the window allows for slow disks and clock steps).
MATCH_WINDOW_MS = 10 * 60 * 1000


def prompt_key(text: str) -> str:
    """What a prompt and a user message are matched by: their words, whitespace aside."""
    # Most prompts are one line with single spaces: nothing to collapse.
    plain = "  " not in text and "\n" not in text and "\t" not in text and "\r" not in text and text.strip() == text
    words = text if plain and text.isprintable() else " ".join(text.split())
    return hashlib.blake2b(words.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def user_prompts(transcript: Transcript) -> list[list[Any]]:
    """[entry id, time ms or None, prompt_key] of each user message with text, in file order (kept
    in the session's record, so prompts are linked without reading the sessions again)."""
    found: list[list[Any]] = []
    for node in transcript.nodes:
        if node.kind != "user":
            continue
        text = "\n".join(part.text for part in node.parts if part.kind == "text")
        if text.strip():
            found.append([node.id, node.time_ms, prompt_key(text)])
    return found


@dataclass(frozen=True, slots=True)
class SessionLink:
    page: str  # site-relative page of the session
    entry: str | None  # the user message's entry id, when found
    title: str


class PromptLinker:
    """Links prompts to the sessions of the site (built once per build from the records)."""

    def __init__(self, records: Iterable[SessionRecord]) -> None:
        # The original before its /fork copies (the same entries, copied verbatim): oldest first.
        ordered = sorted(records, key=lambda r: (r.created_ms is None, r.created_ms or 0, r.key))
        self._by_session: dict[str, SessionRecord] = {}
        self._by_text: dict[str, list[tuple[int | None, str, SessionRecord]]] = {}
        for record in ordered:
            if record.session_id:
                self._by_session.setdefault(record.session_id, record)
            for entry_id, time_ms, key in record.prompts:
                self._by_text.setdefault(key, []).append((time_ms, entry_id, record))

    @property
    def matches_text(self) -> bool:
        """Whether any session has a user message to match a prompt's text against (prompt_key)."""
        return bool(self._by_text)

    def link(self, prompt: Prompt, key: str | None = None) -> SessionLink | None:
        """The session (and entry) the prompt was sent in; None when no session of the site has it.
        key: prompt_key(prompt.text), when the caller has it."""
        key = key if key is not None else prompt_key(prompt.text)
        moment = prompt.created_s * 1000 if prompt.created_s is not None else None
        record = self._by_session.get(prompt.session_id) if prompt.session_id else None
        if record is not None:
            entries = [(t, e, r) for t, e, r in self._by_text.get(key, []) if r is record]
            best = _closest(entries, moment, window=None)
            return SessionLink(record.page, best[1] if best else None, record.title)
        candidates = self._by_text.get(key, [])
        if prompt.cwd is not None:
            candidates = [c for c in candidates if c[2].project == prompt.cwd] or candidates
        best = _closest(candidates, moment, window=MATCH_WINDOW_MS)
        if best is None:
            return None
        return SessionLink(best[2].page, best[1], best[2].title)


def _closest(
    entries: list[tuple[int | None, str, SessionRecord]], moment: int | None, window: int | None
) -> tuple[int | None, str, SessionRecord] | None:
    """The entry nearest in time (the first of equals); without a time, the latest one; within window."""
    if not entries:
        return None
    if moment is None:
        return max(entries, key=lambda e: e[0] or 0)
    best = min(entries, key=lambda e: abs(e[0] - moment) if e[0] is not None else float("inf"))
    if window is not None and (best[0] is None or abs(best[0] - moment) > window):
        return None
    return best
