"""Postings of a document that only grew: its new entries added to the kept postings equal the
postings made from scratch, and a document changed anywhere else is read again whole."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from sessions import SessionBuilder, text
from site_helpers import build

from sitegen.site.search.index import SearchEntry
from sitegen.site.search.postings import Postings, postings_of

WORDS = ["lock", "deadlock", "retry", "timeout", "修复锁", "lock_file", "x", "A" * 40, "404", "naïve"]
KINDS = ["user", "assistant", "tool", "shell"]


def entry(number: int, words: list[str], kind: str, cut: bool = False) -> SearchEntry:
    text = " ".join(words)
    # A cut entry is indexed by all of its text (terms), not by its snippet.
    return SearchEntry(f"e{number}", kind, "", text[:10] if cut else text, text if cut else "")


entries_strategy = st.lists(
    st.tuples(st.lists(st.sampled_from(WORDS), max_size=12), st.sampled_from(KINDS), st.booleans()),
    min_size=1,
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(entries_strategy, st.data())
def test_grown_postings_equal_those_made_from_scratch(
    specs: list[tuple[list[str], str, bool]], data: st.DataObject
) -> None:
    entries = [entry(number, words, kind, cut) for number, (words, kind, cut) in enumerate(specs)]
    kept_count = data.draw(st.integers(min_value=0, max_value=len(entries)))
    kept = postings_of(entries[:kept_count])
    grown = postings_of(entries, kept)
    whole = postings_of(entries)
    assert grown == whole


def test_only_the_new_entries_are_read_when_the_rest_is_unchanged() -> None:
    entries = [entry(0, ["lock", "retry"], "user"), entry(1, ["timeout"], "tool")]
    kept = postings_of(entries[:1])
    # Postings that could not come from these entries, with the right digest: kept as they are.
    planted = Postings({**kept.terms, "planted": "BBC"}, kept.entries, kept.digest)
    assert "planted" in postings_of(entries, planted).terms
    assert postings_of(entries[:1], planted) is planted


def test_a_document_changed_before_its_end_is_read_again_whole() -> None:
    entries = [entry(0, ["lock", "retry"], "user"), entry(1, ["timeout"], "tool")]
    kept = postings_of(entries)
    planted = Postings({**kept.terms, "planted": "BBC"}, kept.entries, kept.digest)
    for changed in (
        [entry(0, ["lock", "retries"], "user"), *entries[1:], entry(2, ["deadlock"], "assistant")],
        [entry(0, ["lock", "retry"], "assistant"), *entries[1:]],  # the same words, another kind
        entries[:1],  # shorter: an entry is gone
    ):
        result = postings_of(changed, planted)
        assert result == postings_of(changed) and "planted" not in result.terms


def test_a_session_that_grew_gets_the_index_a_cold_build_makes(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    session = SessionBuilder(session_id="grow", cwd="/work/g")
    session.user("u1", "why does the deadlock happen")
    session.assistant("a1", [text("the lock is taken twice")])
    path = agent / "sessions" / "--work-g--" / "2026-01-01T00-00-00-000Z_grow.jsonl"
    session.write(path)
    site = tmp_path / "site"
    build(site, agent)
    session.user("u2", "and the retry timeout")
    session.assistant("a2", [text("the deadlock retry waits 30 seconds")])
    session.write(path)
    build(site, agent)
    cold = tmp_path / "cold"
    build(cold, agent)

    def index_files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "search").rglob("*.js"))}

    assert index_files(site) == index_files(cold)


def test_kept_postings_that_do_not_decode_are_read_again() -> None:
    entries = [entry(0, ["lock", "retry"], "user"), entry(1, ["lock", "timeout"], "tool")]
    kept = postings_of(entries[:1])
    # A damaged cache with the right digest: a digit that is none, a number cut short, postings of more
    # entries than it covers or ending past them, none at all.
    for damaged in ("B?", "Bg", "CBBBB", "BCC", "B"):
        planted = Postings({**kept.terms, "lock": damaged}, kept.entries, kept.digest)
        assert postings_of(entries, planted) == postings_of(entries)
