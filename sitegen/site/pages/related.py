"""Related sessions: TF-IDF over user and assistant text, cosine similarity, five per session; their lists
written beside the pages."""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import orjson

from sitegen import __version__
from sitegen.fileio import open_regular, replace_file
from sitegen.site.state.details import KeptPart, lost_reads
from sitegen.site.state.jobs import related_script, relative_url
from sitegen.site.state.records import SessionRecord
from sitegen.site.state.shape import conforms
from sitegen.transcript.model import Transcript
from sitegen.visible import visible

__all__ = ["RELATED_COUNT", "related_sessions", "remembered_related", "session_terms", "terms_digest", "write_related"]

RELATED_COUNT = 5
# Bump when what a <page>.related.js holds changes: every list file is then written again.
RELATED_SCRIPT_FORMAT = 1
# Terms kept per session: enough to tell sessions apart, small enough to keep in the manifest.
TERMS_PER_SESSION = 120
# Words in more sessions than this (or a quarter of them, if more) are not used to relate sessions.
COMMON_MIN_SESSIONS = 8
# Words per session that its similarity is computed over (its highest-weighted ones).
INDEXED_TERMS = 32
# A word shared by more sessions than this does not propose candidates (it would propose most of them).
CANDIDATE_POSTINGS = 64
# Below this cosine similarity two sessions are not called related.
MIN_SIMILARITY = 0.02
# Text read per session; the start of a long session says what it is about.
TEXT_LIMIT = 400_000

_WORD = re.compile(r"[a-z][a-z0-9_]{2,30}")
_STOP = frozenset(
    (
        "the",
        "and",
        "for",
        "that",
        "this",
        "with",
        "you",
        "are",
        "not",
        "but",
        "have",
        "was",
        "can",
        "all",
        "will",
        "use",
        "from",
        "what",
        "when",
        "there",
        "their",
        "them",
        "then",
        "than",
        "which",
        "would",
        "should",
        "could",
        "about",
        "into",
        "just",
        "like",
        "also",
        "only",
        "some",
        "more",
        "most",
        "other",
        "been",
        "being",
        "were",
        "has",
        "had",
        "does",
        "did",
        "doing",
        "done",
        "its",
        "here",
        "where",
        "how",
        "why",
        "who",
        "whom",
        "your",
        "yours",
        "our",
        "out",
        "over",
        "under",
        "again",
        "very",
        "each",
        "few",
        "both",
        "any",
        "such",
        "same",
        "own",
        "too",
        "now",
        "let",
        "lets",
        "okay",
        "yes",
        "sure",
        "thanks",
        "please",
        "need",
        "want",
        "make",
        "made",
        "get",
        "got",
        "see",
        "look",
        "file",
        "files",
        "line",
        "lines",
        "code",
        "run",
        "running",
        "using",
        "used",
    )
)


def session_terms(transcript: Transcript) -> dict[str, int]:
    """The session's most frequent meaningful words in user and assistant text (no tool output)."""
    counts: Counter[str] = Counter()
    budget = TEXT_LIMIT
    for node in transcript.nodes:
        if node.kind not in ("user", "assistant") or budget <= 0:
            continue
        for part in node.parts:
            if part.kind == "text" and part.text:
                text = part.text[:budget].lower()
                budget -= len(text)
                counts.update(word for word in _WORD.findall(text) if word not in _STOP)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TERMS_PER_SESSION]
    return dict(ranked)


Vectors = dict[str, dict[str, float]]


def related_sessions(terms: Mapping[str, Mapping[str, int]], count: int = RELATED_COUNT) -> dict[str, list[str]]:
    """For each session key, the keys of the most similar other sessions, best first.

    Vectors are TF-IDF over each session's kept terms; candidates come from an inverted index,
    so only sessions that share a term are ever compared."""
    return _most_similar(_vectors(terms), count)


def _vectors(terms: Mapping[str, Mapping[str, int]]) -> Vectors:
    """Each session's most telling words (at most INDEXED_TERMS), with their normalised TF-IDF
    weights, by session key in sorted order; sessions without such a word are left out."""
    documents = len(terms)
    frequency: Counter[str] = Counter()
    for words in terms.values():
        frequency.update(words.keys())
    # A word in a quarter of all sessions tells little about any pair and makes every pair a
    # candidate (quadratic work): leave such words out.
    common = max(COMMON_MIN_SESSIONS, documents // 4)
    # Each word's idf and each count's tf factor once, not once per session that has them.
    idf = {word: math.log((1 + documents) / (1 + df)) for word, df in frequency.items() if df <= common}
    tf_factor: dict[int, float] = {}
    top: Vectors = {}
    for key in sorted(terms):
        weights = {}
        for word, tf in terms[key].items():
            word_idf = idf.get(word)
            if word_idf is not None:
                factor = tf_factor.get(tf)
                if factor is None:
                    factor = tf_factor[tf] = 1 + math.log(tf)
                weights[word] = factor * word_idf
        norm = math.sqrt(sum(w * w for w in weights.values()))
        if norm == 0:
            continue
        # Cosine similarity over each session's most telling words: rare words carry the weight,
        # and an inverted index over them only ever compares sessions that share one.
        best = sorted(((w / norm, word) for word, w in weights.items() if w > 0), reverse=True)[:INDEXED_TERMS]
        top[key] = {word: weight for weight, word in best}
    return top


def _most_similar(top: Vectors, count: int) -> dict[str, list[str]]:
    """By cosine similarity of the vectors, through an inverted index of their words."""
    postings: dict[str, list[tuple[str, float]]] = {}
    for key, vector in top.items():
        for word, weight in vector.items():
            postings.setdefault(word, []).append((key, weight))
    # A word shared by too many sessions says little about which are alike: it proposes none.
    useful = {word: listed for word, listed in postings.items() if len(listed) <= CANDIDATE_POSTINGS}
    related: dict[str, list[str]] = {}
    for key, vector in top.items():
        scores: dict[str, float] = {}
        for word, weight in vector.items():
            for other, other_weight in useful.get(word, ()):
                scores[other] = scores.get(other, 0.0) + weight * other_weight
        scores.pop(key, None)
        ranked = sorted((-score, other) for other, score in scores.items() if score > MIN_SIMILARITY)
        related[key] = [other for _, other in ranked[:count]]
    return related


def _digest(value: object) -> str:
    return hashlib.sha256(orjson.dumps(value)).hexdigest()


def terms_digest(terms: dict[str, int]) -> str:
    """A session's terms as the related lists' input (SessionRecord.terms_digest), in sorted order as
    its details file keeps them."""
    return hashlib.blake2b(orjson.dumps(terms, option=orjson.OPT_SORT_KEYS), digest_size=16).hexdigest()


def remembered_related(state: Path, terms: Mapping[str, dict[str, int]]) -> dict[str, list[str]]:
    """related_sessions(terms), kept in the state file with digests of the terms and of the vectors
    it came from: a build that changed no session's terms reads the lists back, and so does one
    whose changes left every vector as it was (a line appended to a session mostly adds to counts
    of words too common to be weighed), without comparing every session with every other again."""
    return _remembered(state, {key: terms_digest(words) for key, words in terms.items()}, lambda: terms)


def _remembered(
    state: Path, digests: Mapping[str, str], read_terms: Callable[[], Mapping[str, Mapping[str, int]]]
) -> dict[str, list[str]]:
    """remembered_related, given each session's terms_digest: the terms are read only when one changed."""
    inputs_digest = _digest(sorted(digests.items()))
    try:
        with open_regular(state) as handle:
            kept = orjson.loads(handle.read())
    except (OSError, orjson.JSONDecodeError):
        kept = None
    if not (isinstance(kept, dict) and conforms(kept.get("related"), dict[str, list[str]])):
        kept = {}
    if kept.get("digest") == inputs_digest:
        related: dict[str, list[str]] = kept["related"]
        return related
    # Vectors in sorted key order, each in its words' order: the digest covers all the scores read.
    lost_before = lost_reads()
    top = _vectors(read_terms())
    vectors_digest = _digest(top)
    if kept.get("vectors") == vectors_digest:
        related = kept["related"]
    else:
        related = _most_similar(top, RELATED_COUNT)
    # A terms file lost (damaged, missing) gave its session none: lists made without them are not kept
    # under the digests of the terms the records name, or the next build would take them as made from those.
    whole = lost_reads() == lost_before
    state_json = {
        "digest": inputs_digest if whole else None,
        "vectors": vectors_digest if whole else None,
        "related": related,
    }
    replace_file(state, orjson.dumps(state_json, option=orjson.OPT_SORT_KEYS))
    return related


def write_related(
    state_dir: Path, site_dir: Path, session_records: Iterable[SessionRecord], keep: bool = False
) -> list[str]:
    """Each session's <page>.related.js, rewritten only where its list (or a listed title) changed;
    returns the files written, relative to site_dir. keep: this process builds again (watch), so the
    terms read are held for its next build, which reads again only the sessions that changed."""
    records = {record.key: record for record in session_records}
    digests = {key: record.terms_digest for key, record in records.items()}
    if all(digests.values()):
        # No file is read while no session's terms changed (most lines an agent appends change none).
        related = _remembered(state_dir / "related.json", digests, lambda: _read_terms(site_dir, records, keep))
    else:  # a record made without the digest (a test's, that holds its details)
        related = remembered_related(state_dir / "related.json", _read_terms(site_dir, records, keep))
    # What each file was written with, by digest and size: a file still of that size is not read back to
    # compare (reading them all was a fifth of a one-session rebuild's related phase); and a digest of all
    # the files are made of, the lists and the listed pages' titles: while it is the same, and each file is
    # still a file of its size, no list is made again.
    state_path = state_dir / "related-pages.json"
    kept_inputs, kept = _load_pages_state(state_path)
    listed = [
        [key, record.page, record.title, record.project, related.get(key, [])]
        for key, record in sorted(records.items())
    ]
    inputs = _digest([__version__, RELATED_SCRIPT_FORMAT, listed])
    if inputs == kept_inputs and all(_size_of(site_dir / relative) == size for relative, (_, size) in kept.items()):
        return []
    files: dict[str, tuple[str, int]] = {}
    written = []
    for key, record in records.items():
        items = [
            {
                # Shown as text by the page: as the listings show them (sitegen.visible).
                "title": visible(records[other].title),
                "url": relative_url(record.page, records[other].page),
                "project": visible(records[other].project),
            }
            for other in related.get(key, [])
        ]
        data = b"window.sitegen.related(" + orjson.dumps(items) + b");\n"
        relative = related_script(record.page)
        files[relative] = (hashlib.blake2b(data, digest_size=8).hexdigest(), len(data))
        target = site_dir / relative
        if kept.get(relative) == files[relative] and _size_of(target) == len(data):
            continue
        replace_file(target, data)
        written.append(relative)
    replace_file(state_path, orjson.dumps({"inputs": inputs, "files": files}, option=orjson.OPT_SORT_KEYS))
    return written


# By site folder: the terms the last build of this process read, for its next (keep).
_KEPT: dict[str, KeptPart] = {}


def _read_terms(site_dir: Path, records: Mapping[str, SessionRecord], keep: bool) -> dict[str, dict[str, int]]:
    kept = _KEPT.pop(str(site_dir), None)
    if not keep:
        return {key: record.read_details("terms").terms for key, record in records.items()}
    kept = kept or KeptPart("terms")
    # A record that holds its details (a test's) has no file to read.
    on_file = {
        key: Path(record.details_base)
        for key, record in records.items()
        if record.details is None and record.details_base
    }
    read = dict(zip(on_file, kept.read(on_file.values()), strict=True))
    _KEPT[str(site_dir)] = kept
    return {key: (read[key] if key in read else record.read_details("terms")).terms for key, record in records.items()}


def _load_pages_state(path: Path) -> tuple[str, dict[str, tuple[str, int]]]:
    """The related-pages state: the inputs' digest, and (digest, size) per file written."""
    try:
        with open_regular(path) as handle:
            kept = orjson.loads(handle.read())
    except (OSError, orjson.JSONDecodeError):
        return "", {}
    if not (isinstance(kept, dict) and isinstance(kept.get("inputs"), str) and isinstance(kept.get("files"), dict)):
        return "", {}
    files = {}
    for relative, entry in kept["files"].items():
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and type(entry[1]) is int):
            return "", {}
        files[relative] = (entry[0], entry[1])
    return kept["inputs"], files


def _size_of(path: Path) -> int:
    """The size of a regular file (links followed); -1 for anything else, or nothing."""
    try:
        status = os.stat(path)
    except OSError:
        return -1
    return status.st_size if stat.S_ISREG(status.st_mode) else -1
