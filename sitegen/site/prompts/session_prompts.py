"""The prompts the user typed in each session, as prompt rows: what the Prompts page shows for any agent."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sitegen.history.store import Prompt
from sitegen.site.prompts.links import prompt_key
from sitegen.site.state.records import SessionRecord
from sitegen.transcript.model import Node, Transcript

__all__ = ["KEPT_CHARS", "is_typed", "session_prompt_rows", "typed_prompts"]

# Characters of a typed prompt kept in the session's record: what the Prompts page shows of one.
KEPT_CHARS = 20_000


def is_typed(node: Node) -> bool:
    """A user message the user typed: not one the agent injected (omp 18's attribution "agent", or
    synthetic), and with text (a tool result is never a user node)."""
    if node.kind != "user":
        return False
    return node.meta.get("attribution") != "agent" and node.meta.get("synthetic") is not True


def typed_prompts(transcript: Transcript) -> list[list[Any]]:
    """[entry id, time ms or None, prompt_key, text (at most KEPT_CHARS)] of each prompt the
    user typed, in file order; untimed ones (odek's) take the session's start."""
    found: list[list[Any]] = []
    for node in transcript.nodes:
        if not is_typed(node):
            continue
        text = "\n".join(part.text for part in node.parts if part.kind == "text")
        if not text.strip():
            continue
        when = node.time_ms if node.time_ms is not None else transcript.created_ms
        found.append([node.id, when, prompt_key(text), text[:KEPT_CHARS]])
    return found


def session_prompt_rows(
    records: Sequence[SessionRecord], held: Iterable[str] = (), known_sessions: Iterable[str] = ()
) -> Iterator[Prompt]:
    """Every prompt typed in the sessions, oldest session first, as rows of a prompt store, as they are
    read (a session's details at a time, not all of them held: sitegen.site.state.details): each once
    (a /fork copy repeats its original's entries, ids and times), none whose entry id is in held (the
    entries a history store's prompts are linked to), and none of a session in known_sessions (a store
    that names a session holds what was typed in it: as typed, where the session has it expanded, a
    /template or an @mention). Ids number them in that order."""
    taken = set(held)
    known = set(known_sessions)
    number = 0
    for record in sorted(records, key=lambda r: (r.created_ms is None, r.created_ms or 0, r.key)):
        if record.session_id in known:
            continue
        for entry_id, time_ms, key, text in record.read_details("prompts").typed_prompts:
            copy = f"{entry_id}\0{time_ms}\0{key}"
            if entry_id in taken or copy in taken:
                continue
            taken.add(copy)
            seconds = time_ms // 1000 if isinstance(time_ms, int) else None
            number += 1
            yield Prompt(number, text, seconds, record.project or None, record.session_id or None, None)
