"""Search index: extracted entries, index content and weights, incremental updates, determinism, hostile text."""

from __future__ import annotations

import base64
import re
import sqlite3
import zlib
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sessions import SessionBuilder, text, thinking, tool_call
from site_helpers import build, make_session

from sitegen.site.search import index as search
from sitegen.site.search import postings
from sitegen.site.search import store as search_store
from sitegen.site.search.index import (
    TEXT_LIMITS,
    SearchDocInfo,
    SearchEntry,
    extract_search_entries,
    shard_bucket,
    store_search_entries,
    tokenize,
    update_search_index,
)
from sitegen.transcript.load import load_transcript
from sitegen.transcript.model import Transcript

PREFIX = b'window.sitegen.search.add("'


# ---- reading the index back, as search.js does --------------------------------------------------


def read_script(path: Path) -> tuple[str, Any]:
    data = path.read_bytes()
    assert data.startswith(PREFIX) and data.endswith(b");\n")
    ident, _, payload = data[len(PREFIX) : -3].partition(b'",')
    return ident.decode(), orjson.loads(payload)


WEIGHT_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"


def decode(code: str, sessions: list[int], counts: list[int], weights: str) -> list[tuple[int, int, int]]:
    """(session number, entry number, weight) of a shard value: the segment's entry numbers, from 1,
    one session's entries after another's (counts: each session's entries), each weighed by its digit."""
    starts = [sum(counts[:slot]) for slot in range(len(counts))]
    out = []
    for position in map(int, code.split(",")):
        slot = max(slot for slot, start in enumerate(starts) if start < position)
        assert position <= starts[slot] + counts[slot]
        out.append((sessions[slot], position - starts[slot], WEIGHT_DIGITS.index(weights[position - 1])))
    return out


def read_index(site: Path) -> tuple[dict[str, Any], dict[str, list[tuple[str, str, str, int]]]]:
    """index.js, and term -> [(page, entry id, kind, weight)] over every shard."""
    ident, index = read_script(site / "search" / "index.js")
    assert ident == "index"
    rows: dict[int, list[list[str]]] = {}
    for number, (_title, _project, _page, chunks, *_context_and_time) in enumerate(index["sessions"]):
        rows[number] = []
        for count, name in chunks:
            data_id, data = read_script(site / "search" / "d" / f"{name}.js")
            assert data_id == f"d:{name}" and len(data["rows"]) == count
            texts = orjson.loads(zlib.decompress(base64.b64decode(data["text"])))
            rows[number].extend([*row, text] for row, text in zip(data["rows"], texts, strict=True))
    postings: dict[str, list[tuple[str, str, str, int]]] = {}
    for sessions, buckets, shards, weights in index["segments"]:
        assert len(shards) == buckets
        counts = [len(rows[session]) for session in sessions]
        assert len(weights) == sum(counts)
        for bucket, name in enumerate(shards):
            if not name:
                continue
            data_id, shard = read_script(site / "search" / "t" / f"{name}.js")
            assert data_id == f"t:{name}"
            for term, code in shard.items():
                assert shard_bucket(term, buckets) == bucket
                for session, entry, weight in decode(code, sessions, counts, weights):
                    row = rows[session][entry - 1]
                    postings.setdefault(term, []).append((index["sessions"][session][2], row[0], row[1], weight))
    return index, postings


def referenced_files(site: Path) -> set[str]:
    _, index = read_script(site / "search" / "index.js")
    names = {f"d/{name}.js" for session in index["sessions"] for _, name in session[3]}
    names |= {f"t/{name}.js" for _, _, shards, _ in index["segments"] for name in shards if name}
    return names


def search_files(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted((site / "search").rglob("*")) if p.is_file()}


# ---- sessions -------------------------------------------------------------------------------------


def rich_session(tmp_path: Path) -> Transcript:
    b = SessionBuilder(session_id="rich", cwd="/work/rich")
    b.user("u1", "Please   ZZ_USER_ZZ\n\nthe   database")
    b.assistant(
        "a1",
        [
            text("I will look ZZ_ANSWER_ZZ"),
            thinking("ZZ_THINK_ZZ about it"),
            tool_call("c1", "bash", command="grep -r ZZ_ARG_ZZ src", timeout=30),
        ],
    )
    b.tool_result("r1", "c1", "bash", "\x1b[31mZZ_OUTPUT_ZZ\x1b[0m found")
    b.add("compaction", "k1", summary="ZZ_COMPACTED_ZZ so far", firstKeptEntryId="u1", tokensBefore=100)
    b.add("branch_summary", "s1", summary="ZZ_BRANCH_ZZ tried", fromId="u1")
    b.add("custom_message", "m1", customType="note", content="ZZ_CUSTOM_ZZ", display=True)
    b.message("x1", "bashExecution", None, command="ls ZZ_CMD_ZZ", output="ZZ_SHELL_ZZ", exitCode=0)
    b.add("model_change", "mc1", provider="anthropic", modelId="other")
    b.add("label", "l1", targetId="u1", label="ZZ_LABEL_ZZ")
    return load_transcript(b.write(tmp_path / "rich.jsonl"))


def small_session(tmp_path: Path, name: str, words: str, *, cwd: str = "/work/p", tool: str = "") -> Transcript:
    b = SessionBuilder(session_id=name, cwd=cwd)
    b.user(f"{name}-u", words)
    b.assistant(f"{name}-a", [text(f"answer about {words}"), tool_call(f"{name}-c", "bash", command="make")])
    b.tool_result(f"{name}-r", f"{name}-c", "bash", tool or "ok")
    return load_transcript(b.write(tmp_path / "agent" / f"{name}.jsonl"))


def index_sessions(site: Path, transcripts: dict[str, Transcript], changed: set[str] | None = None) -> Any:
    for key in sorted(transcripts if changed is None else changed):
        store_search_entries(site, key, extract_search_entries(transcripts[key]))
    infos = {key: SearchDocInfo(t.display_title, t.cwd, f"sessions/p/{key}.html") for key, t in transcripts.items()}
    return update_search_index(site, infos, set(transcripts) if changed is None else changed)


# ---- extraction -----------------------------------------------------------------------------------


def test_entries_cover_messages_tools_summaries_and_custom_messages(tmp_path: Path) -> None:
    entries = {e.id: e for e in extract_search_entries(rich_session(tmp_path))}
    assert list(entries) == ["u1", "a1", "r1", "k1", "s1", "m1", "x1"]  # markers and labels left out
    assert entries["u1"] == SearchEntry("u1", "user", "", "Please ZZ_USER_ZZ the database")
    answer = entries["a1"]
    assert (answer.kind, answer.label) == ("assistant", "bash")
    # Text first, then the call's name and argument values, then thinking.
    assert answer.text == "I will look ZZ_ANSWER_ZZ bash grep -r ZZ_ARG_ZZ src 30 ZZ_THINK_ZZ about it"
    assert entries["r1"] == SearchEntry("r1", "tool", "bash", "ZZ_OUTPUT_ZZ found")  # ANSI codes removed
    assert entries["k1"] == SearchEntry("k1", "summary", "compaction", "ZZ_COMPACTED_ZZ so far")
    assert entries["s1"] == SearchEntry("s1", "summary", "branch summary", "ZZ_BRANCH_ZZ tried")
    assert entries["m1"] == SearchEntry("m1", "custom", "note", "ZZ_CUSTOM_ZZ")
    assert entries["x1"] == SearchEntry("x1", "shell", "bash", "ls ZZ_CMD_ZZ ZZ_SHELL_ZZ")


def test_long_text_is_capped_and_tool_output_keeps_its_end(tmp_path: Path) -> None:
    b = SessionBuilder(session_id="long", cwd="/work/long")
    b.user("u1", "ZZ_FIRST_ZZ " + "word " * 5000 + "ZZ_LATE_ZZ")
    b.assistant("a1", [tool_call("c1", "bash", command="make")])
    b.tool_result("r1", "c1", "bash", "ZZ_HEAD_ZZ\n" + "noise line\n" * 5000 + "ZZ_TAIL_ZZ failed")
    entries = extract_search_entries(load_transcript(b.write(tmp_path / "long.jsonl")))
    user, _, output = entries
    assert len(user.text) <= TEXT_LIMITS["user"] and user.text.startswith("ZZ_FIRST_ZZ")
    assert "ZZ_LATE_ZZ" not in user.text
    assert len(output.text) <= TEXT_LIMITS["tool"]
    assert output.text.startswith("ZZ_HEAD_ZZ") and output.text.endswith("ZZ_TAIL_ZZ failed") and " … " in output.text
    # The snippets are cut; the index is not: every word of both can be found.
    postings = _indexed(tmp_path / "site", entries)
    for word in ("zz_late_zz", "zz_first_zz", "noise", "failed"):
        assert all(term in postings for term in tokenize(word)), word


def _indexed(site: Path, entries: list[SearchEntry]) -> dict[str, list[tuple[str, str, str, int]]]:
    """The site index's terms of one document's entries, stored and exported as a build does."""
    store_search_entries(site, "doc", entries)
    update_search_index(site, {"doc": SearchDocInfo("doc", "", "sessions/doc.html")})
    return read_index(site)[1]


def test_every_word_of_the_real_sessions_is_indexed(tmp_path: Path, real_fixtures: Path) -> None:
    for path in sorted(real_fixtures.glob("*.jsonl")):
        transcript = load_transcript(path)
        entries = extract_search_entries(transcript)
        postings = _indexed(tmp_path / path.stem, entries)
        words: set[str] = set()
        for entry in entries:
            words.update(tokenize(entry.terms or entry.text))
        assert words <= postings.keys()
        # Words from the middle of long outputs, which snippets leave out, are in the index.
        long_output = max(
            (n for n in transcript.nodes if n.kind == "tool_result"), key=lambda n: sum(len(p.text) for p in n.parts)
        )
        middle = "\n".join(p.text for p in long_output.parts)
        middle = middle[len(middle) // 2 :][:2000]
        assert set(tokenize(middle)[1:-1]) <= postings.keys(), path.name  # the ends may be cut words


def test_tokens_are_lowercased_words_of_two_to_32_letters_or_digits() -> None:
    assert tokenize("Fix foo_bar.py: x = 12; ÉCOLE 中文") == ["fix", "foo", "bar", "py", "12", "école", "中文"]
    # CJK, written without spaces: overlapping character pairs, a lone character whole, mixed runs split.
    assert tokenize("修复登录错误") == ["修复", "复登", "登录", "录错", "错误"]
    assert tokenize("锁 v2版本 テスト") == ["锁", "v2", "版本", "テス", "スト"]
    assert tokenize("𠀀𠀁x") == ["𠀀𠀁"]
    assert tokenize("a" * 32 + " " + "b" * 33 + " ok") == ["a" * 32, "ok"]


def test_cjk_text_is_indexed_by_its_pairs_and_each_character_alone() -> None:
    # A query is split into pairs (tokenize); the index also holds every character, for one-character words.
    assert postings._indexed_terms("修复锁 v2版本") == ["修复", "复锁", "修", "复", "锁", "v2", "版本", "版", "本"]
    assert postings._indexed_terms("锁 テスト") == ["锁", "テス", "スト", "テ", "ス", "ト"]
    assert postings._indexed_terms("Fix foo_bar 中") == tokenize("Fix foo_bar 中")


# ASCII letters, digits and separators; non-ASCII characters that only separate words (the snippets'
# ellipsis, dashes, check marks, box drawing, a combining dot) and ones that are letters (including
# the Kelvin sign and dotted capital I, whose lowercase forms are ASCII or longer).
# Chinese, kana, Hangul and a CJK character outside the BMP, which are indexed by pairs and alone.
_TEXT = "ab z09_-.\n…—✓│\u0307éßÜ中文锁テス한\U00020000\u212a\u0130"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_TEXT, max_size=80) | st.text(max_size=40))
@example("done … ✓ ok—fine →next a—b │x│")
@example("a" * 33 + "…ok " + "b" * 32 + "—c")
@example("naïve—café … \ud800 lone")
@example("修复登录错误 锁 v2版本")
@example("㐀\ufa6e")  # an unassigned code point inside the CJK ranges is no letter: it ends the run
def test_counted_terms_are_exactly_the_tokens(sample: str) -> None:
    # The index holds the query terms, and every character of a CJK run long enough to be cut into pairs;
    # a run is of letters and digits, so what the ranges hold that is neither (unassigned) ends it.
    runs = [
        piece
        for run in re.findall(f"[{postings._CJK_CHARACTERS}]+", sample.lower())
        for piece in re.split(r"\W", run)
        if len(piece) >= 2
    ]
    assert sorted(postings._indexed_terms(sample)) == sorted(tokenize(sample) + [char for run in runs for char in run])


# ---- index content and weights --------------------------------------------------------------------


def test_index_maps_words_to_entries_with_weights_by_kind(tmp_path: Path) -> None:
    agent = tmp_path / "src"
    transcripts = {
        "one": small_session(agent, "one", "zzpostgres vacuum", tool="zzpostgres restarted"),
        "two": small_session(agent, "two", "react hooks", cwd="/work/ui"),
    }
    site = tmp_path / "site"
    result = index_sessions(site, transcripts)
    assert "search/index.js" in result.written and not result.missing
    index, postings = read_index(site)
    assert [row[:3] for row in index["sessions"]] == [
        ["zzpostgres vacuum", "/work/p", "sessions/p/one.html"],
        ["react hooks", "/work/ui", "sessions/p/two.html"],
    ]
    hits = {entry_id: (kind, weight) for page, entry_id, kind, weight in postings["zzpostgres"]}
    assert set(hits) == {"one-u", "one-a", "one-r"}
    # The same word weighs most in what the user wrote and least in tool output.
    assert hits["one-u"][1] > hits["one-a"][1] > hits["one-r"][1] >= 1
    assert {p[1] for p in postings["hooks"]} == {"two-u", "two-a"}
    assert "bash" in postings and "make" in postings  # tool names and arguments are searchable


def test_weights_are_the_kind_weight_times_bm25_of_one_occurrence_by_length(tmp_path: Path) -> None:
    b = SessionBuilder(session_id="w", cwd="/work/w")
    b.user("u1", "zzalpha zzalpha zzbeta")
    b.user("u2", "zzalpha " + "filler " * 200)
    b.assistant("a1", [tool_call("c1", "bash", command="make")])
    b.tool_result("r1", "c1", "bash", "zzrep " * 9)
    site = tmp_path / "site"
    index_sessions(site, {"w": load_transcript(b.write(tmp_path / "w.jsonl"))})
    _, postings = read_index(site)
    # FTS5 keeps no count per entry (detail=none), so a posting weighs an entry, not a term in it:
    # BM25 of one occurrence with k1 1.2, b 0.75 and the length in characters against an average of
    # 600, times 7 and the kind's weight. 22 characters, user (2.0): 30.8 / (1 + 0.333); 1,407
    # characters, user: 30.8 / (1 + 2.41); 53 characters, tool (0.6): 9.24 / (1 + 0.380).
    weights = {
        term: [(entry, weight) for _, entry, _, weight in postings[term]] for term in ("zzalpha", "zzbeta", "zzrep")
    }
    assert weights == {"zzalpha": [("u1", 23), ("u2", 9)], "zzbeta": [("u1", 23)], "zzrep": [("r1", 7)]}


def test_snippet_text_round_trips(tmp_path: Path) -> None:
    site = tmp_path / "site"
    index_sessions(site, {"rich": rich_session(tmp_path)})
    _, postings = read_index(site)
    assert [(p[1], p[2]) for p in postings["think"]] == [("a1", "assistant")]
    assert {p[1] for p in postings["shell"]} == {"x1"}


# ---- incremental updates, determinism, stopped builds -------------------------------------------


def many_sessions(tmp_path: Path, count: int) -> dict[str, Transcript]:
    return {f"s{i:03d}": small_session(tmp_path / "src", f"s{i:03d}", f"topic{i} shared words") for i in range(count)}


def test_one_changed_session_rewrites_only_its_segment(tmp_path: Path) -> None:
    transcripts = many_sessions(tmp_path, 40)
    site = tmp_path / "site"
    index_sessions(site, transcripts)
    index, _ = read_index(site)
    assert len(index["segments"]) > 1
    before = {p.name: p.stat().st_mtime_ns for p in (site / "search" / "t").iterdir()}

    transcripts["s007"] = small_session(tmp_path / "src2", "s007", "zzchanged words")
    result = index_sessions(site, transcripts, changed={"s007"})
    index, postings = read_index(site)
    assert {p[1] for p in postings["zzchanged"]} == {"s007-u", "s007-a"}
    assert "topic7" not in postings
    segment = next(s for s in index["segments"] if sorted(transcripts).index("s007") in s[0])
    new_shards = {f"{name}.js" for name in segment[2] if name}
    after = {p.name: p.stat().st_mtime_ns for p in (site / "search" / "t").iterdir()}
    assert {f"search/t/{name}" for name in new_shards} <= set(result.written)
    # Shards of the other segments are the same files, untouched.
    assert {name: after[name] for name in after if name not in new_shards} == {
        name: before[name] for name in after if name not in new_shards
    }
    assert set(search_files(site)) == {"search/index.js"} | {f"search/{n}" for n in referenced_files(site)}


def test_incremental_result_equals_a_fresh_build(tmp_path: Path) -> None:
    transcripts = many_sessions(tmp_path, 30)
    site = tmp_path / "site"
    index_sessions(site, transcripts)
    transcripts["s003"] = small_session(tmp_path / "src2", "s003", "zzrewritten")
    index_sessions(site, transcripts, changed={"s003"})
    del transcripts["s010"], transcripts["s011"]
    result = index_sessions(site, transcripts, changed=set())
    transcripts["s100"] = small_session(tmp_path / "src3", "s100", "zzbrand new")
    index_sessions(site, transcripts, changed={"s100"})

    fresh = tmp_path / "fresh"
    index_sessions(fresh, transcripts)
    assert search_files(site) == search_files(fresh)
    assert "search/index.js" in result.written
    _, postings = read_index(site)
    assert "topic10" not in postings and "topic3" not in postings and "zzrewritten" in postings
    # The database holds the entries of these sessions only: removed ones were deleted.
    db = sqlite3.connect(site / ".sitegen" / "search" / "index.db")
    assert {key for (key,) in db.execute("SELECT DISTINCT key FROM entries")} == set(transcripts)
    db.close()


def test_segments_filled_by_worker_processes_equal_those_filled_here(tmp_path: Path) -> None:
    transcripts = many_sessions(tmp_path, 200)  # 16 segments: more than PARALLEL_SEGMENTS
    infos = {key: SearchDocInfo(t.display_title, t.cwd, f"sessions/p/{key}.html") for key, t in transcripts.items()}
    sites = {jobs: tmp_path / f"site-{jobs}" for jobs in (1, 2)}
    for jobs, site in sites.items():
        for key in sorted(transcripts):
            store_search_entries(site, key, extract_search_entries(transcripts[key]))
        assert len(update_search_index(site, infos, jobs=jobs).written) > search.PARALLEL_SEGMENTS
    assert search_files(sites[1]) == search_files(sites[2])
    assert {p[1] for p in read_index(sites[2])[1]["topic123"]} == {"s123-u", "s123-a"}


def test_meanwhile_runs_once_while_the_worker_processes_fill_the_segments(tmp_path: Path) -> None:
    """The build makes its other site pages then (sitegen.site.pages.site_pages.SearchExport): both
    cores busy to the end; the index is the same as without."""
    import multiprocessing

    transcripts = many_sessions(tmp_path, 200)  # 16 segments: more than PARALLEL_SEGMENTS
    infos = {key: SearchDocInfo(t.display_title, t.cwd, f"sessions/p/{key}.html") for key, t in transcripts.items()}
    alive: dict[int, list[int]] = {1: [], 2: []}
    files: dict[int, dict[str, bytes]] = {}
    for jobs in (1, 2):
        site = tmp_path / f"site-{jobs}"
        for key in sorted(transcripts):
            store_search_entries(site, key, extract_search_entries(transcripts[key]))
        seen = partial(lambda calls: calls.append(len(multiprocessing.active_children())), alive[jobs])
        update_search_index(site, infos, jobs=jobs, meanwhile=seen)
        files[jobs] = search_files(site)
    assert alive[1] == [0]  # once, with no worker process
    assert len(alive[2]) == 1 and alive[2][0] >= 1  # once, while the segments' workers are there
    assert files[1] == files[2] == search_files(_fresh(tmp_path, transcripts))


def test_worker_processes_fill_the_biggest_segments_first_and_record_them_all(tmp_path: Path) -> None:
    assert search.fill_order({0: 5, 1: 90, 2: 5, 3: 40}) == [1, 3, 0, 2]
    transcripts = many_sessions(tmp_path, 200)
    infos = {key: SearchDocInfo(t.display_title, t.cwd, f"sessions/p/{key}.html") for key, t in transcripts.items()}
    site = tmp_path / "site"
    for key in sorted(transcripts):
        store_search_entries(site, key, extract_search_entries(transcripts[key]))
    assert update_search_index(site, infos, jobs=2).written
    # Every segment was recorded (in one transaction, after the workers): the next update writes nothing.
    assert not update_search_index(site, infos, jobs=2).written


def test_a_failing_meanwhile_leaves_no_segment_worker_behind(tmp_path: Path) -> None:
    import multiprocessing

    transcripts = many_sessions(tmp_path, 200)
    infos = {key: SearchDocInfo(t.display_title, t.cwd, f"sessions/p/{key}.html") for key, t in transcripts.items()}
    site = tmp_path / "site"
    for key in sorted(transcripts):
        store_search_entries(site, key, extract_search_entries(transcripts[key]))

    def fail() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        update_search_index(site, infos, jobs=2, meanwhile=fail)
    assert multiprocessing.active_children() == []
    assert not (site / "search" / "index.js").exists()  # the index names no file until it is whole
    update_search_index(site, infos, jobs=2)  # the next build finishes it
    assert search_files(site) == search_files(_fresh(tmp_path, transcripts))


def test_a_deleted_search_folder_is_written_again(tmp_path: Path) -> None:
    import shutil

    transcripts = many_sessions(tmp_path, 20)
    site = tmp_path / "site"
    index_sessions(site, transcripts)
    before = search_files(site)
    shutil.rmtree(site / "search" / "t")
    index_sessions(site, transcripts, changed=set())
    assert search_files(site) == before


def test_output_is_deterministic(tmp_path: Path) -> None:
    transcripts = many_sessions(tmp_path, 20)
    first, second = tmp_path / "first", tmp_path / "second"
    index_sessions(first, transcripts)
    index_sessions(second, dict(reversed(list(transcripts.items()))))
    assert search_files(first) == search_files(second)
    before = {name: (first / name).stat().st_mtime_ns for name in search_files(first)}
    assert not update_search_index(
        first, {k: SearchDocInfo(t.display_title, t.cwd, f"sessions/p/{k}.html") for k, t in transcripts.items()}
    ).written  # nothing changed: nothing written
    assert {name: (first / name).stat().st_mtime_ns for name in search_files(first)} == before


def test_growing_past_a_segment_count_rewrites_everything_consistently(tmp_path: Path) -> None:
    transcripts = many_sessions(tmp_path, 40)
    site = tmp_path / "site"
    index_sessions(site, dict(list(transcripts.items())[:3]))
    assert len(read_index(site)[0]["segments"]) == 1
    index_sessions(site, transcripts, changed=set(list(transcripts)[3:]))
    index, postings = read_index(site)
    assert len(index["segments"]) == 4 and len(index["sessions"]) == 40
    assert {p[1] for p in postings["topic2"]} == {"s002-u", "s002-a"}
    assert search_files(site) == search_files(_fresh(tmp_path, transcripts))


def _fresh(tmp_path: Path, transcripts: dict[str, Transcript]) -> Path:
    fresh = tmp_path / "fresh"
    index_sessions(fresh, transcripts)
    return fresh


def test_a_stopped_update_leaves_the_old_index_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    transcripts = many_sessions(tmp_path, 20)
    site = tmp_path / "site"
    index_sessions(site, transcripts)
    old_index = (site / "search" / "index.js").read_bytes()
    transcripts["s001"] = small_session(tmp_path / "src2", "s001", "zzlater")

    def stop(path: Path, data: bytes) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(search, "replace_file_if_changed", stop)
    with pytest.raises(KeyboardInterrupt):
        index_sessions(site, transcripts, changed={"s001"})
    assert (site / "search" / "index.js").read_bytes() == old_index
    assert all((site / "search" / name).is_file() for name in referenced_files(site))
    monkeypatch.undo()
    index_sessions(site, transcripts, changed={"s001"})
    assert "zzlater" in read_index(site)[1]


def test_sessions_without_stored_entries_are_reported(tmp_path: Path) -> None:
    site = tmp_path / "site"
    infos = {"ghost": SearchDocInfo("Ghost title", "/work/g", "sessions/g/ghost.html")}
    result = update_search_index(site, infos, {"ghost"})
    assert result.missing == ["ghost"]
    index, postings = read_index(site)
    assert index["sessions"] == [["Ghost title", "/work/g", "sessions/g/ghost.html", [], "", 0]] and not postings


@pytest.mark.parametrize("damage", ["garbage", "truncated", "older layout", "deleted"])
def test_a_damaged_or_deleted_database_is_made_again_never_trusted(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    site = tmp_path / "site"
    transcripts = {"old": small_session(tmp_path / "src", "old", "zzolder layout")}
    index_sessions(site, transcripts)
    search_store.close_connections()  # as a new build process would find it
    path = site / ".sitegen" / "search" / "index.db"
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    if damage == "garbage":
        path.write_bytes(b"not a database at all " * 400)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1500])
    elif damage == "older layout":
        db = sqlite3.connect(path)
        db.execute("PRAGMA user_version = 0")
        db.close()
    else:
        path.unlink()
    infos = {"old": SearchDocInfo("Old", "/work/p", "sessions/p/old.html")}
    # Its entries are gone with it: the build renders the session again (they are missing).
    assert update_search_index(site, infos, set()).missing == ["old"]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    if damage in ("garbage", "truncated"):
        assert len(warnings) == 1 and "damaged" in warnings[0] and "\n" not in warnings[0]
    index_sessions(site, transcripts)
    assert "zzolder" in read_index(site)[1]


# ---- hostile text ---------------------------------------------------------------------------------


def test_hostile_text_is_data(tmp_path: Path) -> None:
    nasty = '</script><script>alert(1)</script> "quoted" \\back\u2028line\u2029 \x00nul'
    b = SessionBuilder(session_id="evil", cwd="/tmp/<script>alert('cwd')</script>")
    b.user("u1", nasty + " zzhostile")
    b.assistant("a1", [text("also zzhostile")])
    transcript = load_transcript(b.write(tmp_path / "evil.jsonl"))
    site = tmp_path / "site"
    store_search_entries(site, "evil", extract_search_entries(transcript))
    title = '<img src=x onerror="alert(1)">'
    update_search_index(site, {"evil": SearchDocInfo(title, transcript.cwd, "sessions/e/evil.html")}, {"evil"})
    index, postings = read_index(site)
    assert index["sessions"][0][:2] == [title, "/tmp/<script>alert('cwd')</script>"]
    _, chunk = read_script(site / "search" / "d" / f"{index['sessions'][0][3][0][1]}.js")
    texts = orjson.loads(zlib.decompress(base64.b64decode(chunk["text"])))
    # The NUL is shown as U+FFFD, as on the page (sitegen.visible); the rest is kept as it is.
    assert texts[0] == " ".join(nasty.split()).replace("\x00", "\ufffd") + " zzhostile"
    # Each data file is one call with a plain JSON payload: no text can end it early.
    for path in (site / "search").rglob("*.js"):
        read_script(path)
    assert {p[1] for p in postings["zzhostile"]} == {"u1", "a1"}
    # Lone surrogates (the pi loader refuses them, other sources may not) become U+FFFD, which JSON can carry.
    assert search._clip(["lone \ud800 surrogate"], 100) == "lone \ufffd surrogate"


# ---- through the site build ---------------------------------------------------------------------


def _sessions_only(index: dict[str, Any]) -> list[list[Any]]:
    """The index's session documents, without the Prompts page's (the prompts typed in them)."""
    return [row for row in index["sessions"] if row[2] != "prompts.html"]


def test_site_build_keeps_the_index_current(tmp_path: Path) -> None:
    agent, site = tmp_path / "agent", tmp_path / "site"
    make_session(agent, "/work/alpha", "alpha", "zzalpha")
    beta = make_session(agent, "/work/beta", "beta", "zzbeta")
    build(site, agent)
    index, postings = read_index(site)
    sessions = _sessions_only(index)
    assert {row[1] for row in sessions} == {"/work/alpha", "/work/beta"}
    # Each session's last activity, for the results' dates and the date filter.
    assert {row[5] for row in sessions} == {1_767_225_600_000 + 3000}
    # The sessions' pages only: a prompt typed in a session is found as its entry, not a second time
    # as a row of the Prompts page (which lists it all the same).
    alpha = next(row[2] for row in sessions if row[1] == "/work/alpha")
    assert {p[0] for p in postings["zzalpha"]} == {alpha}
    assert (site / "search.html").is_file()

    make_session(agent, "/work/alpha", "alpha", "zzalpha zzappended", entries=3)
    beta.unlink()
    build(site, agent)
    index, postings = read_index(site)
    assert [row[1] for row in _sessions_only(index)] == ["/work/alpha"]
    assert "zzbeta" not in postings
    assert {p[1] for p in postings["zzappended"]} == {"u1", "a1", "u2"}
    assert not [row for row in index["sessions"] if row[2] == "prompts.html"], "session prompts searched twice"
    assert set(search_files(site)) == {"search/index.js"} | {f"search/{n}" for n in referenced_files(site)}


@pytest.mark.parametrize("writer", ["document", "prompts"])
def test_a_database_damaged_under_an_open_connection_is_made_again_and_written(
    tmp_path: Path, writer: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Both writers of the site's search database (a session's entries, a chunk of prompts) make it
    again, with one warning, when it is found damaged while they write, and write in the new one."""
    from sitegen.site.search.prompt_store import store_prompt_chunks, stored_prompt_chunks

    search_store.prepare(tmp_path)
    search_store.store_document(tmp_path, "old", ["user"], ["before"], [])
    (tmp_path / search_store.DB_FILE).write_bytes(b"garbage!" * 2048)
    if writer == "document":
        search_store.store_document(tmp_path, "new", ["user"], ["hello world"], [])
        assert sorted(search_store.stored_documents(tmp_path)) == ["new"]
    else:
        store_prompt_chunks(tmp_path, {"c1": ["alpha beta"]})
        assert stored_prompt_chunks(tmp_path, ["c1", "c2"]) == {"c1"}
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 1 and "is damaged: it is made again" in warnings[0]
    search_store.close_connections()
