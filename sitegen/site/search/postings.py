"""Search postings: how text is cut into terms, and how a document's entries are posted under them
(static/search.js reads them and splits queries the same way)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from sitegen.site.search.spec import cjk_class, spec

__all__ = [
    "KIND_WEIGHT",
    "MAX_TOKEN",
    "MIN_TOKEN",
    "Indexed",
    "Postings",
    "encode_number",
    "lower",
    "postings_of",
    "tokenize",
]

# Tokens longer than this are hashes, base64 or minified code: nobody types them.
MAX_TOKEN: int = spec()["token_max"]
# Shorter tokens (one letter or digit) match too much to be worth a posting; a CJK character is a word.
MIN_TOKEN: int = spec()["token_min"]
# BM25 term-frequency saturation, folded into each posting at build time with a fixed average length
# (the corpus-wide average would change with every session and force rewriting every shard); 100 tokens
# is about the average entry of bench/corpus.py's sessions.
BM25_K1: float = spec()["bm25_k1"]
BM25_B: float = spec()["bm25_b"]
AVERAGE_TOKENS: int = spec()["average_tokens"]
# How much a match counts by where it is: what the user wrote ranks above what tools printed.
KIND_WEIGHT: dict[str, float] = spec()["kind_weight"]
# Posting weights are stored as integers 1..31: one character each in the index.
WEIGHT_SCALE: float = spec()["weight_scale"]

# A token is a whole run of letters and digits (underscores split identifiers), 2 to MAX_TOKEN long;
# except that Chinese, Japanese and Korean text, written without spaces, is cut into overlapping
# pairs of characters (a lone one stays whole), so a word inside a sentence can be found; entries are
# also indexed by each such character alone, for one-character words.
_RUN = re.compile(r"[^\W_]+")
_CJK_CHARACTERS = cjk_class()
# Text with no letter or digit beyond ASCII is tokenised as bytes: letters lowercased and every byte
# that is not [a-z0-9] (punctuation, and each byte of a non-ASCII character: dashes, arrows, box
# drawing, the snippets' "…") a space, in one translate.
_TOKEN_BYTES = bytes(
    byte + 32 if 65 <= byte <= 90 else byte if 48 <= byte <= 57 or 97 <= byte <= 122 else 32 for byte in range(256)
)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# Base64 digits for the variable-length numbers of the postings (5 bits per digit, 32 = "more follows").
_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DIGIT_VALUES = {digit: value for value, digit in enumerate(_DIGITS)}


class Indexed(Protocol):
    """What the postings read of an entry (sitegen.site.search.index.SearchEntry)."""

    @property
    def kind(self) -> str: ...  # a key of KIND_WEIGHT

    @property
    def text(self) -> str: ...

    @property
    def terms(self) -> str: ...  # all of the entry's text where text was cut, else ""


@dataclass(slots=True)
class Postings:
    """A document's postings: term -> entry count, then encoded (entry number delta, weight) pairs
    (entry numbers start at 1); with how many entries they cover and a digest of those entries, so
    that the next build of a document that only grew reads only its new entries."""

    terms: dict[str, str]
    entries: int
    digest: str


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
    one-character word (锁, 写) is found inside a sentence; a longer query is looked up by its pairs."""
    return _lowered_terms(lower(text), singles=True)


def _term_counts(text: str) -> Counter[str]:
    """_indexed_terms(text), counted; text without non-ASCII letters takes a faster path (most of the indexing time)."""
    if text.isascii():
        data = text.encode("ascii")
    else:
        for char in set(_NON_ASCII.findall(text)):
            if char.isalnum():  # a letter or digit beyond ASCII: the general path
                return Counter(_lowered_terms(lower(text), singles=True))
        data = text.encode("utf-8", "surrogatepass")
    counts = Counter(data.translate(_TOKEN_BYTES).decode("ascii").split())
    if counts and not MIN_TOKEN <= min(map(len, counts)) <= max(map(len, counts)) <= MAX_TOKEN:
        for token in [token for token in counts if not MIN_TOKEN <= len(token) <= MAX_TOKEN]:
            del counts[token]
    return counts


def encode_number(value: int) -> str:
    """A number as the postings write it: base64 digits of 5 bits, 32 meaning "more follows"."""
    if value < 32:
        return _DIGITS[value]
    digits = []
    while value >= 32:
        digits.append(_DIGITS[(value & 31) | 32])
        value >>= 5
    digits.append(_DIGITS[value])
    return "".join(digits)


def _weights(kind: str, counts: Counter[str]) -> dict[int, str]:
    """Posting weight digit per term count of one entry: BM25's saturated term frequency times the
    kind's weight, as an integer 1..31."""
    base = BM25_K1 * (1 - BM25_B + BM25_B * sum(counts.values()) / AVERAGE_TOKENS)
    scale = KIND_WEIGHT[kind] * (BM25_K1 + 1) * WEIGHT_SCALE
    return {count: _DIGITS[min(31, max(1, round(scale * count / (count + base))))] for count in set(counts.values())}


def _read_number(text: str, start: int) -> tuple[int, int]:
    """The number encode_number wrote at start, and where the text goes on after it."""
    value = shift = 0
    while True:
        digit = _DIGIT_VALUES[text[start]]
        start += 1
        value |= (digit & 31) << shift
        if digit < 32:
            return value, start
        shift += 5


def _last_entry(posting: str, entries: int) -> int:
    """The number of the last entry a term's posting lists (the sum of its deltas), one of 1..entries."""
    _, at = _read_number(posting, 0)
    number = 0
    while at < len(posting):
        delta, at = _read_number(posting, at)
        number += delta
        at += 1  # the weight digit
    if not 0 < number <= entries:
        raise ValueError(f"a posting ends at entry {number} of {entries}")
    return number


def _feed(digest: Any, entries: Sequence[Indexed]) -> None:
    """What the postings are made of, entry by entry: the kind and the indexed text, each sized."""
    for entry in entries:
        text = entry.terms or entry.text
        digest.update(f"{entry.kind}:{len(text)}:".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))


def postings_of(entries: Sequence[Indexed], kept: Postings | None = None) -> Postings:
    """The postings of a document's entries. With kept (the same document's postings from the last
    build) covering the first of these entries unchanged, as when a session only grew, only the
    entries after them are read, and their codes are added to the kept ones."""
    digest = hashlib.sha256()
    if kept is not None and 0 < kept.entries <= len(entries):
        _feed(digest, entries[: kept.entries])
        if digest.hexdigest() == kept.digest:
            if kept.entries == len(entries):
                return kept  # nothing new
            try:
                return _posted(entries, kept.entries, kept.terms, digest)
            except (KeyError, IndexError, ValueError):
                pass  # kept postings that do not decode (a damaged cache): read every entry
        digest = hashlib.sha256()
    return _posted(entries, 0, {}, digest)


def _posted(entries: Sequence[Indexed], start: int, earlier: dict[str, str], digest: Any) -> Postings:
    """The postings of entries[start:] added to those of the entries before them (earlier), whose
    digest has been fed. The loop runs once per (term, entry) pair of the whole corpus, hence the
    lookup tables."""
    digest = digest.copy()
    _feed(digest, entries[start:])
    numbers = [encode_number(value) for value in range(len(entries) + 1)]
    codes: dict[str, list[Any]] = {}  # term -> [last entry number, code, code, ...]
    for number, entry in enumerate(entries[start:], start + 1):
        counts = _term_counts(entry.terms or entry.text)
        weights = _weights(entry.kind, counts)
        for term, count in counts.items():
            codes_of = codes.get(term)
            if codes_of is None:
                posted = earlier.get(term)
                before = _last_entry(posted, start) if posted is not None else 0
                codes[term] = [number, numbers[number - before] + weights[count]]
            else:
                codes_of.append(numbers[number - codes_of[0]] + weights[count])
                codes_of[0] = number
    terms = dict(earlier)
    for term, parts in codes.items():
        posted = terms.get(term)
        if posted is None:
            terms[term] = numbers[len(parts) - 1] + "".join(parts[1:])
        else:
            count, at = _read_number(posted, 0)
            if not 0 < count <= start:
                raise ValueError(f"a posting of {count} entries among {start}")
            terms[term] = numbers[count + len(parts) - 1] + posted[at:] + "".join(parts[1:])
    return Postings(terms, len(entries), digest.hexdigest())
