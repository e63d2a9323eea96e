"""Find prompts: every word of a query, case-insensitive, through history_fts where it can answer."""

from __future__ import annotations

import re
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
]

# A word is a run of letters and digits, as FTS5's unicode61 tokenizer and the site's search cut them.
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f]")


@dataclass(frozen=True, slots=True)
class StoredPrompt:
    store: Path
    prompt: Prompt


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


def search_history(stores: Iterable[Path], query: str = "", project: str | None = None) -> HistoryMatches:
    """The prompts of every store that match the query's words and lie in the project."""
    result = HistoryMatches()
    words = query_words(query)
    pattern = prompt_matcher(words)
    # history_fts cannot find a word inside a run of CJK text (its tokens are whole runs): scanned.
    fts_words = [word for word in words if not _CJK.search(word)] or None
    found: list[StoredPrompt] = []
    for store in stores:
        read = read_store(store, fts_words)
        result.problems.extend((store, problem) for problem in read.problems)
        if not read.readable:
            continue
        result.readable += 1
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
    result.prompts = newest_first(found)
    return result
