"""The Prompts page's filter served by SQLite FTS5: words and CJK found, kept up to date incrementally,
a damaged or deleted database made again, and no prompt found twice by the site's search."""

from __future__ import annotations

import logging
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from history_helpers import HistoryRow, omp_store
from sessions import BASE_MS
from site_helpers import build, make_session
from test_search import read_index

from sitegen.site.search import store as search_store
from sitegen.site.search.index import shard_bucket
from sitegen.site.search.postings import tokenize
from sitegen.site.search.spec import cjk_class

T0 = BASE_MS // 1000
CHINESE = "请修复写锁的问题 zzcjk"


def _data(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return orjson.loads(text[text.index(",") + 1 : text.rindex(")")])


def matching(site: Path, query: str) -> list[str]:
    """The texts of the prompts the page's filter shows for a query, as static/prompts.js finds them:
    each word's terms (a word from its start, a CJK run by its pairs or its one character) looked up in
    each segment's term shard, the prompts holding every word."""
    folder = site / "prompts"
    (index_file,) = folder.glob("index-*.js")
    index = _data(index_file)
    cjk = re.compile(f"[{cjk_class()}]")
    found: set[int] | None = None
    for word in tokenize(query):
        slots: set[int] = set()
        for number, (buckets, shards) in enumerate(index["segments"]):
            name = shards[shard_bucket(word, buckets)]
            shard = _data(folder / "t" / f"{name}.js") if name else {}
            before = number * index["segment"] * index["size"] - 1
            for term, numbers in shard.items():
                if term == word or (not cjk.search(word) and term.startswith(word)):
                    slots.update(before + int(n) for n in numbers.split(","))
        found = slots if found is None else found & slots
    chunks = [_data(folder / "c" / f"{name}.js") for name in index["chunks"]]
    rows = [chunks[slot // index["size"]][slot % index["size"]] for slot in sorted(found or ())]
    return sorted(str(row[7]) for row in rows)


def _rows(count: int) -> list[HistoryRow]:
    rows = [HistoryRow(f"ZZ{n:04d} zzfix the login number{n}", T0 + n, "/work/alpha", None) for n in range(count)]
    rows.append(HistoryRow(CHINESE, T0 + count, "/work/alpha", None))
    return rows


def _site(tmp_path: Path, count: int = 300, linked: bool = False) -> tuple[Path, Path]:
    """A site of a store's prompts; with linked, also a session whose first prompt the store holds
    (a chunk of prompts both linked and not: kept for the page alone, not as one search document)."""
    agent = tmp_path / "agent"
    rows = _rows(count)
    if linked:
        make_session(agent, "/work/alpha", "sess-alpha", "ZZ_ALPHA_ZZ")
        rows.append(HistoryRow("ZZ_ALPHA_ZZ first question", T0 + 1, "/work/alpha", "sess-alpha"))
    omp_store(agent / "history.db", rows)
    site = tmp_path / "site"
    build(site, agent)
    return agent, site


def _execute(store: Path, sql: str, *values: object) -> None:
    connection = sqlite3.connect(store)
    connection.execute(sql, values)
    connection.commit()
    connection.close()


def test_words_prefixes_and_cjk_are_found(tmp_path: Path) -> None:
    _, site = _site(tmp_path)
    assert matching(site, "number123") == ["ZZ0123 zzfix the login number123"]
    assert len(matching(site, "zzfix LOG")) == 300  # every word, the last (or any) from its start
    assert matching(site, "写锁") == [CHINESE]  # a CJK word inside a sentence, by its pair
    assert matching(site, "锁") == [CHINESE]  # and a one-character word
    assert matching(site, "修复 zzcjk") == [CHINESE]
    assert matching(site, "锁写") == []
    assert matching(site, "zzfix number12") == [f"ZZ{n:04d} zzfix the login number{n}" for n in [12, *range(120, 130)]]


def test_a_new_a_changed_and_a_removed_prompt_and_store(tmp_path: Path) -> None:
    agent, site = _site(tmp_path)
    store = agent / "history.db"
    _execute(store, "INSERT INTO history (prompt, created_at, cwd) VALUES ('zznewword here', ?, '/work/a')", T0 + 999)
    build(site, agent)
    assert matching(site, "zznewword") == ["zznewword here"]
    # Changed as an agent changes a row (a later time with it: watch's read compares the small columns).
    changed = "UPDATE history SET prompt = 'ZZ0007 zzchanged now', created_at = ? WHERE prompt LIKE 'ZZ0007 %'"
    _execute(store, changed, T0 + 1000)
    build(site, agent)
    assert matching(site, "zzchanged") == ["ZZ0007 zzchanged now"]
    assert matching(site, "number7") == [f"ZZ{n:04d} zzfix the login number{n}" for n in range(70, 80)]
    _execute(store, "DELETE FROM history WHERE prompt = 'zznewword here'")
    build(site, agent)
    assert matching(site, "zznewword") == []
    fresh = tmp_path / "fresh"
    build(fresh, agent)
    assert matching(site, "zz") == matching(fresh, "zz")
    # The store removed: its prompts leave the page, and the database keeps no rows of them.
    make_session(agent, "/work/alpha", "sess-alpha", "ZZ_ALPHA_ZZ")
    store.unlink()
    build(site, agent)
    assert matching(site, "zzfix") == [] and matching(site, "zz") == ["ZZ_ALPHA_ZZ first question"]
    db = sqlite3.connect(site / search_store.DB_FILE)
    chunks = {name for (name,) in db.execute("SELECT DISTINCT chunk FROM prompt_rows")}
    db.close()
    assert chunks <= set(_data(next((site / "prompts").glob("index-*.js")))["chunks"])


@pytest.mark.parametrize("linked", [False, True])
@pytest.mark.parametrize("damage", ["deleted", "damaged"])
def test_a_deleted_or_damaged_database_is_made_again(
    tmp_path: Path, damage: str, linked: bool, caplog: pytest.LogCaptureFixture
) -> None:
    agent, site = _site(tmp_path, linked=linked)
    before = {query: matching(site, query) for query in ("zzfix", "写锁", "number42", "zz_alpha_zz")}
    assert len(before["zz_alpha_zz"]) == linked
    search_store.close_connections()  # as a new process finds it
    path = site / search_store.DB_FILE
    if damage == "deleted":
        shutil.rmtree(path.parent)
    else:
        path.write_bytes(b"this is not a database" * 400)
    _execute(
        agent / "history.db", "INSERT INTO history (prompt, created_at, cwd) VALUES ('zzlater', ?, '/w')", T0 + 900
    )
    with caplog.at_level(logging.WARNING, logger="sitegen.site"):
        build(site, agent)
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    if damage == "damaged":
        assert len(warnings) == 1 and "damaged" in warnings[0] and "\n" not in warnings[0], warnings
    assert {query: matching(site, query) for query in before} == before
    assert matching(site, "zzlater") == ["zzlater"]
    _, postings = read_index(site)
    assert [hit[0] for hit in postings["number42"]] == ["prompts.html"]


def test_a_prompt_linked_to_a_session_entry_is_not_a_second_search_result(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "sess-alpha", "ZZ_ALPHA_ZZ")
    rows = [
        HistoryRow("ZZ_ALPHA_ZZ first question", T0 + 1, "/work/alpha", "sess-alpha"),  # sent in the session
        HistoryRow("zzonlyhere in the history", T0 + 2, "/work/alpha", None),
    ]
    omp_store(agent / "history.db", rows)
    site = tmp_path / "site"
    build(site, agent)
    _, postings = read_index(site)
    assert postings["alpha"] and all(hit[0] != "prompts.html" for hit in postings["alpha"])
    assert [hit[0] for hit in postings["zzonlyhere"]] == ["prompts.html"]
    # The page's own filter finds both.
    assert matching(site, "zz_alpha_zz") == ["ZZ_ALPHA_ZZ first question"]
    assert matching(site, "zzonlyhere") == ["zzonlyhere in the history"]
