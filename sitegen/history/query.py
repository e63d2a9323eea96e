"""Find prompts: every word of a query, case-insensitive, through history_fts where it can answer."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.history.store import Prompt, read_store

__all__ = [
    "HistoryMatches",
    "StoredPrompt",
    "in_project",
    "newest_first",
    "prompt_matcher",
    "query_words",
    "search_history",
    "unheld_prompts",
]

# A word is a run of letters and digits, as FTS5's unicode61 tokenizer and the site's search cut them.
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f]")


@dataclass(frozen=True, slots=True)
class StoredPrompt:
    store: Path  # the history store, or the session file of a prompt found in a session only
    prompt: Prompt
    entry_id: str | None = None  # a session's prompt: its entry


# A session's prompt and a store's of the same words this close in time are one prompt (omp writes
# the prompt to its store as it sends it): sitegen.site.prompts.links.MATCH_WINDOW_MS in seconds.
_SAME_PROMPT_S = 10 * 60


@dataclass(slots=True)
class HistoryMatches:
    prompts: list[StoredPrompt] = field(default_factory=list)
    problems: list[tuple[Path, str]] = field(default_factory=list)
    readable: int = 0  # stores that could be read
    fts: int = 0  # stores whose history_fts narrowed the search


def query_words(query: str) -> list[str]:
    return _WORD.findall(query.lower())


def prompt_matcher(words: list[str]) -> re.Pattern[str] | None:
    """One pattern per query: each word at the start of a word of the prompt (lowercased), in any
    order; Chinese, Japanese and Korean words anywhere, as they are written without spaces."""
    if not words:
        return None
    parts = [
        f"(?=.*?{re.escape(word)})" if _CJK.search(word) else f"(?=.*?(?<![^\\W_]){re.escape(word)})" for word in words
    ]
    return re.compile("".join(parts), re.DOTALL)


def in_project(cwd: str | None, project: str | None) -> bool:
    """Whether a prompt typed in cwd belongs to the project folder (the folder itself or below it)."""
    if project is None:
        return True
    if cwd is None:
        return False
    base = project.rstrip("/") or "/"
    return cwd == base or cwd.startswith(base if base.endswith("/") else base + "/")


def newest_first(prompts: Iterable[StoredPrompt]) -> list[StoredPrompt]:
    """By time, newest first; undated prompts last; ties by store and id, newest id first."""
    ordered = sorted(prompts, key=lambda item: (str(item.store), -item.prompt.id))
    return sorted(ordered, key=lambda item: (item.prompt.created_s is None, -(item.prompt.created_s or 0)))


def _words(text: str) -> str:
    return " ".join(text.split())


def unheld_prompts(typed: Iterable[StoredPrompt], held: Iterable[Prompt]) -> list[StoredPrompt]:
    """The prompts found in sessions that no store prompt is: of a session no store names (a store that
    names a session holds what was typed in it, as typed), and with no prompt of the same words
    stored within minutes of it."""
    typed = list(typed)
    if not typed:
        return []
    held = list(held)
    known = {prompt.session_id for prompt in held if prompt.session_id}
    typed = [item for item in typed if item.prompt.session_id not in known]
    moments = sorted(item.prompt.created_s for item in typed if item.prompt.created_s is not None)
    undated = len(moments) < len(typed)
    # Only a stored prompt near the time of a session's (or undated) can be one: the words of the
    # others (most of a large store) are not worked out.
    times: dict[str, list[int | None]] = {}
    for prompt in held:
        when = prompt.created_s
        if not undated and when is not None:
            at = bisect_left(moments, when - _SAME_PROMPT_S)
            if at == len(moments) or moments[at] > when + _SAME_PROMPT_S:
                continue
        times.setdefault(_words(prompt.text), []).append(when)
    found = []
    for item in typed:
        prompt = item.prompt
        stored = times.get(_words(prompt.text), [])
        if any(t is None or prompt.created_s is None or abs(t - prompt.created_s) <= _SAME_PROMPT_S for t in stored):
            continue
        found.append(item)
    return found


def search_history(
    stores: Iterable[Path], query: str = "", project: str | None = None, typed: Iterable[StoredPrompt] = ()
) -> HistoryMatches:
    """The prompts of every store, and those typed in sessions that no store holds (typed: see
    unheld_prompts), that match the query's words and lie in the project."""
    result = HistoryMatches()
    words = query_words(query)
    pattern = prompt_matcher(words)
    # history_fts cannot find a word inside a run of CJK text (its tokens are whole runs): scanned.
    fts_words = [word for word in words if not _CJK.search(word)] or None
    found: list[StoredPrompt] = []
    held: list[Prompt] = []
    for store in stores:
        read = read_store(store, fts_words)
        result.problems.extend((store, problem) for problem in read.problems)
        if not read.readable:
            continue
        result.readable += 1
        held.extend(read.prompts)
        if read.matched is not None:
            result.fts += 1
        for prompt in read.prompts:
            if read.matched is not None and prompt.id not in read.matched:
                continue
            if not in_project(prompt.cwd, project):
                continue
            if pattern is not None and not pattern.match(prompt.text.lower()):
                continue
            found.append(StoredPrompt(store, prompt))
    for item in unheld_prompts(typed, held):
        if in_project(item.prompt.cwd, project) and (pattern is None or pattern.match(item.prompt.text.lower())):
            found.append(item)
    result.prompts = newest_first(found)
    return result
