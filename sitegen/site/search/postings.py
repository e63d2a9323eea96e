"""How search text is cut into terms, by the specification: the query parser, and the reference that
FTS5's index (sitegen/site/search/fts.py) and static/search.js follow."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from sitegen.site.search.spec import cjk_class, spec

__all__ = ["lower", "tokenize"]

# Tokens longer than this are hashes, base64 or minified code: nobody types them.
MAX_TOKEN: int = spec()["token_max"]
# Shorter tokens (one letter or digit) match too much to be worth a posting; a CJK character is a word.
MIN_TOKEN: int = spec()["token_min"]

# A token is a whole run of letters and digits (underscores split identifiers), 2 to MAX_TOKEN long;
# except that Chinese, Japanese and Korean text, written without spaces, is cut into overlapping
# pairs of characters (a lone one stays whole), so a word inside a sentence can be found; entries are
# also indexed by each such character alone, for one-character words.
_RUN = re.compile(r"[^\W_]+")
_CJK_CHARACTERS = cjk_class()
_FOLDS = str.maketrans(spec()["folds"])


def lower(text: str) -> str:
    """Text lowercased as the index folds it: str.lower, then the specification's folds (a final
    sigma is a sigma, as SQLite's unicode61 has it)."""
    lowered = text.lower()
    return lowered if lowered.isascii() else lowered.translate(_FOLDS)


@cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A CJK character, and runs of them kept by split(): compiled when first needed (their Unicode
    classes take 4 ms to compile, a tenth of a one-session rebuild's imports)."""
    return re.compile(f"[{_CJK_CHARACTERS}]"), re.compile(f"([{_CJK_CHARACTERS}]+)")


def _run_terms(run: str, singles: bool) -> Iterator[str]:
    """The terms of one run of letters and digits (already lowercased); with singles, each character
    of a CJK run also alone."""
    if run.isascii():
        if MIN_TOKEN <= len(run) <= MAX_TOKEN:
            yield run
        return
    cjk, cjk_split = _cjk_patterns()
    if not cjk.search(run):
        if MIN_TOKEN <= len(run) <= MAX_TOKEN:
            yield run
        return
    for number, piece in enumerate(cjk_split.split(run)):
        if number % 2:  # the split keeps the CJK pieces at odd positions
            if len(piece) == 1:
                yield piece
            else:
                yield from (piece[start : start + 2] for start in range(len(piece) - 1))
                if singles:
                    yield from piece
        elif MIN_TOKEN <= len(piece) <= MAX_TOKEN:
            yield piece


def _lowered_terms(lowered: str, singles: bool = False) -> list[str]:
    return [term for run in _RUN.findall(lowered) for term in _run_terms(run, singles)]


def tokenize(text: str) -> list[str]:
    """Lowercased runs of 2 to MAX_TOKEN letters and digits, longer runs (hashes, base64) dropped;
    CJK text as overlapping character pairs (a lone character whole).

    This is how a query is split: static/search.js splits queries and titles the same way."""
    return _lowered_terms(lower(text))


def _indexed_terms(text: str) -> list[str]:
    """What an entry is indexed by: tokenize(text), and each character of a CJK run alone too, so a
    one-character word (锁, 写) is found inside a sentence; a longer query is looked up by its pairs.
    FTS5's index holds exactly these (fts.indexed_text); the tests hold it to them."""
    return _lowered_terms(lower(text), singles=True)
