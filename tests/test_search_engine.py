"""The site's index from SQLite FTS5 holds exactly the terms the specification's tokenizer gives
(sitegen/site/search/postings.py, which the page's query parser follows): same hits for the same words."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessions import SessionBuilder, text, tool_call
from test_search import read_index

from sitegen.resources import resource_dir
from sitegen.site.search import postings
from sitegen.site.search.index import SearchDocInfo, extract_search_entries, store_search_entries, update_search_index
from sitegen.transcript.load import load_transcript
from sitegen.transcript.model import Transcript

MIXED = [
    "Plain English with snake_case_names, CamelCase, v2.1.0 and 0x1F; i a x",
    "数据库写入失败，出现死锁。日本語のテキストとカタカナ、한국어 문장도 있습니다 abc中文def",
    "Ünïcödé naïve café Straße ΣΊΣΥΦΟΣ кириллица العربية",
    "emoji 🎉 arrows → box ┌──┐ dashes — ellipsis … check ✓ tab\there",
    "a_token_much_longer_than_thirty_two_characters_is_dropped " + "x" * 40 + " y" * 3,
    "İstanbul combining e\u0301 mark ǅ title case \ue000private ΌΣΟΣ σίσυφος Ⴀ Georgian",
    "CJK 一 alone, 漢字 pair, ㄅ bopomofo, ｶﾀｶﾅ half-width, 𠀀𠀁 extension B",
]


def _sessions(tmp_path: Path) -> dict[str, Transcript]:
    found = sorted((resource_dir("demo") / "pi").rglob("*.jsonl"))
    transcripts = {f"demo-{number}": load_transcript(path) for number, path in enumerate(found)}
    b = SessionBuilder(session_id="mixed", cwd="/work/mixed")
    for number, words in enumerate(MIXED):
        b.user(f"u{number}", words)
        b.assistant(f"a{number}", [text(words.upper()), tool_call(f"c{number}", "grep", pattern=words[:30])])
    transcripts["mixed"] = load_transcript(b.write(tmp_path / "mixed.jsonl"))
    return transcripts


def _expected(transcripts: dict[str, Transcript]) -> dict[str, set[tuple[str, str]]]:
    """term -> {(page, entry id)}, by the Python tokenizer of the specification."""
    expected: dict[str, set[tuple[str, str]]] = {}
    for key, transcript in transcripts.items():
        for entry in extract_search_entries(transcript):
            for term in postings._indexed_terms(entry.terms or entry.text):
                expected.setdefault(term, set()).add((f"sessions/{key}.html", entry.id))
    return expected


def _indexed_hits(site: Path, transcripts: dict[str, Transcript]) -> dict[str, set[tuple[str, str]]]:
    """Each term the FTS5 index exports, with the (page, entry) pairs it is found at."""
    for key, transcript in transcripts.items():
        store_search_entries(site, key, extract_search_entries(transcript))
    infos = {key: SearchDocInfo(t.display_title, t.cwd, f"sessions/{key}.html") for key, t in transcripts.items()}
    update_search_index(site, infos)
    _, found = read_index(site)
    return {term: {(page, entry) for page, entry, _, _ in hits} for term, hits in found.items()}


def test_the_fts5_index_has_the_hits_of_the_specifications_tokenizer(tmp_path: Path) -> None:
    transcripts = _sessions(tmp_path)
    actual = _indexed_hits(tmp_path / "site", transcripts)
    expected = _expected(transcripts)
    assert set(actual) == set(expected), (sorted(set(actual) - set(expected)), sorted(set(expected) - set(actual)))
    assert actual == expected


def test_the_real_sessions_give_the_same_hits(tmp_path: Path, real_fixtures: Path) -> None:
    transcripts = {f"real-{n}": load_transcript(path) for n, path in enumerate(sorted(real_fixtures.glob("*.jsonl")))}
    actual = _indexed_hits(tmp_path / "site", transcripts)
    assert actual == _expected(transcripts)


@pytest.mark.parametrize("words", MIXED)
def test_each_mixed_text_gives_the_same_terms(tmp_path: Path, words: str) -> None:
    b = SessionBuilder(session_id="one", cwd="/work/one")
    b.user("u1", words)
    transcripts = {"one": load_transcript(b.write(tmp_path / "one.jsonl"))}
    site = tmp_path / "site"
    store_search_entries(site, "one", extract_search_entries(transcripts["one"]))
    update_search_index(site, {"one": SearchDocInfo("t", "/work/one", "sessions/one.html")})
    assert set(read_index(site)[1]) == set(_expected(transcripts))


def test_long_outputs_with_controls_escapes_and_overrides_give_the_terms_of_what_is_shown(tmp_path: Path) -> None:
    """Output over its kind's limit is indexed whole, and quickly (ASCII control characters are left
    for FTS5 to split words at): its words are those of the text as shown, escapes stripped and
    overrides named, as where the whole text is shown."""
    padding = " filler" * 300
    outputs = [
        "alpha\x01beta\x7fgamma\x0bdelta \x1b[31mcrimson\x1b[0m zeta \x1b]8;;http://x\x07link" + padding,
        "epsilon\x01theta \u202eoverride\u202c iota\x85kappa ütf" + padding,
    ]
    b = SessionBuilder(session_id="ctl", cwd="/work/ctl")
    for number, output in enumerate(outputs):
        b.assistant(f"a{number}", [tool_call(f"c{number}", "bash", command="run")])
        b.tool_result(f"r{number}", f"c{number}", "bash", output)
    transcripts = {"ctl": load_transcript(b.write(tmp_path / "ctl.jsonl"))}
    actual = _indexed_hits(tmp_path / "site", transcripts)
    assert actual == _expected(transcripts)
    shown = {"alpha", "beta", "gamma", "delta", "crimson", "zeta", "link", "epsilon", "theta", "override", "rlo"}
    assert shown <= set(actual)
    assert not {"alphabeta", "31m", "0m", "ctl"} & set(actual)
    assert {"iota", "kappa", "ütf"} <= set(actual)
