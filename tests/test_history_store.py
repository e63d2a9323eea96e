"""Reading history.db: both schemas, one snapshot while another process writes, bad stores, no file touched."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from history_helpers import HistoryRow, documented_store, folder_state, omp_store, start_writer

from sitegen.history.query import search_history
from sitegen.history.store import history_stores, read_store, store_fingerprint
from sitegen.history.writer import add_prompt


def test_documented_schema_reads_id_prompt_time_and_folder(tmp_path: Path) -> None:
    rows = [("first prompt", 1760000000, "/a"), ("second", 1760000060, "/b")]
    store = documented_store(tmp_path / "history.db", rows)
    read = read_store(store)
    assert read.readable and read.problems == [] and read.fts
    assert [(p.id, p.text, p.created_s, p.cwd, p.session_id, p.use_count) for p in read.prompts] == [
        (1, "first prompt", 1760000000, "/a", None, None),
        (2, "second", 1760000060, "/b", None, None),
    ]


def test_omp18_schema_reads_session_and_use_count_and_a_reused_prompt_once(tmp_path: Path) -> None:
    store = omp_store(
        tmp_path / "history.db",
        [
            HistoryRow("fix the login bug", 1760000000, "/w", "s1"),
            HistoryRow("other", 1760000050, "/w", "s2"),
            HistoryRow("fix the login bug", 1760000100, "/v", "s3"),
        ],
    )
    read = read_store(store)
    assert read.problems == []
    prompts = {p.text: p for p in read.prompts}
    assert len(read.prompts) == 2
    reused = prompts["fix the login bug"]
    assert (reused.created_s, reused.cwd, reused.session_id, reused.use_count) == (1760000100, "/v", "s3", 2)


def test_a_read_after_a_snapshot_fetches_what_changed_and_sees_it_all(tmp_path: Path) -> None:
    rows = [HistoryRow(f"prompt {n}", 1760000000 + n, "/w", f"s{n}") for n in range(50)]
    store = omp_store(tmp_path / "history.db", rows)
    connection = sqlite3.connect(store)
    connection.execute("INSERT INTO history (prompt, created_at) VALUES ('', 1)")
    connection.execute("INSERT INTO history (prompt, created_at) VALUES (CAST(x'41ff42' AS TEXT), 'soon')")
    connection.commit()
    first = read_store(store)
    assert first.changed is None and first.snapshot is not None
    assert read_store(store, previous=first.snapshot).changed == set()
    # The agent reuses a prompt (its row moves to the new time, folder and session), adds one, and
    # one is deleted.
    add_prompt(connection, HistoryRow("prompt 3", 1760000999, "/v", "s99"))
    add_prompt(connection, HistoryRow("ZZ_NEW_ZZ", 1760001000, "/w", "s100"))
    connection.execute("DELETE FROM history WHERE prompt = 'prompt 7'")
    connection.commit()
    connection.close()
    again = read_store(store, previous=first.snapshot)
    whole = read_store(store)
    assert again.prompts == whole.prompts and again.problems == whole.problems
    new = next(p.id for p in whole.prompts if p.text == "ZZ_NEW_ZZ")
    assert again.changed == {4, 8, new}
    assert whole.problems == [
        "1 prompt is empty or NULL (left out)",
        "1 prompt has no valid created_at time",
        "1 value is not valid UTF-8 (shown with �)",
    ]


def test_times_in_milliseconds_or_iso_text_are_read_as_seconds(tmp_path: Path) -> None:
    store = tmp_path / "history.db"
    connection = sqlite3.connect(store)
    connection.execute("CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT, created_at, cwd TEXT)")
    connection.executemany(
        "INSERT INTO history (prompt, created_at) VALUES (?, ?)",
        [("ms", 1760000000123), ("iso", "2025-10-09T08:53:20Z"), ("junk", "yesterday")],
    )
    connection.commit()
    connection.close()
    read = read_store(store)
    assert [p.created_s for p in read.prompts] == [1760000000, 1760000000, None]
    assert "1 prompt has no valid created_at time" in read.problems


def _wal_store_without_wal(path: Path) -> Path:
    omp_store(path, [HistoryRow("ZZ_CLOSED_ZZ", 1760000000, "/w", None)])
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    return path


def test_a_closed_wal_store_is_read_without_creating_wal_or_shm(tmp_path: Path) -> None:
    store = _wal_store_without_wal(tmp_path / "agent" / "history.db")
    before = folder_state(store.parent)
    read = read_store(store)
    assert [p.text for p in read.prompts] == ["ZZ_CLOSED_ZZ"]
    assert os.listdir(store.parent) == ["history.db"]
    assert folder_state(store.parent) == before


def test_a_wal_left_without_its_shm_is_read_from_a_copy(tmp_path: Path) -> None:
    # A crash can leave the -wal without the -shm: its commits are read, and no -shm is made.
    live = tmp_path / "live" / "history.db"
    omp_store(live, [HistoryRow("ZZ_CHECKPOINTED_ZZ", 1760000000, "/w", None)])
    writer = sqlite3.connect(live)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO history (prompt, created_at) VALUES ('ZZ_ONLY_IN_WAL_ZZ', 1760000001)")
    writer.commit()
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    shutil.copyfile(live, crashed / "history.db")
    shutil.copyfile(f"{live}-wal", crashed / "history.db-wal")
    writer.close()
    before = folder_state(crashed)
    read = read_store(crashed / "history.db")
    assert [p.text for p in read.prompts] == ["ZZ_CHECKPOINTED_ZZ", "ZZ_ONLY_IN_WAL_ZZ"]
    assert folder_state(crashed) == before
    assert sorted(os.listdir(crashed)) == ["history.db", "history.db-wal"]


def test_reads_are_whole_snapshots_while_another_process_writes(tmp_path: Path) -> None:
    store = tmp_path / "agent" / "history.db"
    store.parent.mkdir()
    writer = start_writer(store, 200)
    try:
        counts = []
        while True:
            read = read_store(store)
            assert read.readable, read.problems
            ids = [p.id for p in read.prompts]
            # A snapshot is a prefix of the commits: no gap, no duplicate, each prompt whole.
            assert ids == list(range(1, len(ids) + 1))
            assert all(p.text == f"ZZ_PROMPT_{p.id - 1:05d}_ZZ concurrent prompt" for p in read.prompts)
            counts.append(len(ids))
            if len(ids) == 200:
                break
        assert writer.poll() is None  # the writer still holds the database open
        before = folder_state(store.parent)
        fingerprint = store_fingerprint(store)
        for _ in range(3):
            assert len(read_store(store).prompts) == 200
        assert folder_state(store.parent) == before
        assert store_fingerprint(store) == fingerprint
    finally:
        assert writer.stdin is not None
        writer.stdin.write("\n")
        writer.stdin.close()
        writer.wait(10)
    assert counts == sorted(counts)
    assert len(set(counts)) > 2  # reads did overlap the writes


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty file (0 bytes)"),
        (b"just some text that is not a database\n" * 4, "not an SQLite database"),
        (os.urandom(8192), "not an SQLite database (encrypted"),
    ],
)
def test_files_that_hold_no_database_are_one_line_each(tmp_path: Path, content: bytes, expected: str) -> None:
    store = tmp_path / "history.db"
    store.write_bytes(content)
    read = read_store(store)
    assert len(read.problems) == 1 and expected in read.problems[0]
    assert read.prompts == []
    assert store.read_bytes() == content and os.listdir(tmp_path) == ["history.db"]


def test_a_truncated_store_gives_what_it_can_and_says_so(tmp_path: Path) -> None:
    rows = [(f"prompt {n} " + "x" * 300, 1760000000 + n, "/w") for n in range(400)]
    store = documented_store(tmp_path / "history.db", rows)
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 2])
    read = read_store(store)
    assert any("truncated" in problem for problem in read.problems)
    assert len(read.prompts) < 400
    assert os.listdir(tmp_path) == ["history.db"]


def test_a_locked_store_is_retried_then_reported(tmp_path: Path) -> None:
    store = documented_store(tmp_path / "history.db", [("locked prompt", 1760000000, "/w")])
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        read = read_store(store)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert read.busy and not read.readable
    assert read.problems == ["locked by another process (SQLITE_BUSY) past the retries"]
    assert [p.text for p in read_store(store).prompts] == ["locked prompt"]


def test_missing_or_broken_fts_is_reported_and_search_scans(tmp_path: Path) -> None:
    missing = tmp_path / "a" / "history.db"
    missing.parent.mkdir()
    connection = sqlite3.connect(missing)
    connection.execute("CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT, created_at INTEGER, cwd TEXT)")
    connection.execute("INSERT INTO history (prompt, created_at, cwd) VALUES ('ZZ_NO_FTS_ZZ word', 1, '/w')")
    connection.commit()
    connection.close()
    broken = documented_store(tmp_path / "b" / "history.db", [("ZZ_BROKEN_FTS_ZZ word", 2, "/w")])
    connection = sqlite3.connect(broken)
    connection.execute("DROP TABLE history_fts_data")
    connection.commit()
    connection.close()
    assert "no history_fts index" in read_store(missing).problems[0]
    assert "history_fts does not answer" in read_store(broken).problems[0]
    found = search_history([missing, broken], "word")
    assert [item.prompt.text for item in found.prompts] == ["ZZ_BROKEN_FTS_ZZ word", "ZZ_NO_FTS_ZZ word"]
    assert found.fts == 0


def test_odd_columns_and_values(tmp_path: Path) -> None:
    store = tmp_path / "history.db"
    connection = sqlite3.connect(store)
    connection.execute("CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT, mood TEXT, extra BLOB)")
    connection.execute("INSERT INTO history (prompt, mood) VALUES ('ZZ_EXTRA_COLUMNS_ZZ', 'happy')")
    connection.execute("INSERT INTO history (prompt) VALUES (NULL)")
    connection.execute("INSERT INTO history (prompt) VALUES (CAST(x'41ff42' AS TEXT))")
    connection.execute("INSERT INTO history (prompt) VALUES (?)", ("y" * 1_000_000,))
    connection.commit()
    connection.close()
    read = read_store(store)
    assert [p.text[:20] for p in read.prompts] == ["ZZ_EXTRA_COLUMNS_ZZ", "A\ufffdB", "y" * 20]
    assert len(read.prompts[2].text) == 1_000_000
    assert all(p.created_s is None and p.cwd is None for p in read.prompts)
    assert read.problems == [
        "the history table has no created_at column: prompts are shown without it",
        "the history table has no cwd column: prompts are shown without it",
        "no history_fts index: `sitegen history` searches by reading every prompt",
        "1 prompt is empty or NULL (left out)",
        "1 value is not valid UTF-8 (shown with �)",
    ]


def test_stores_are_found_in_each_agent_dir_once(tmp_path: Path) -> None:
    omp = tmp_path / "omp"
    omp_store(omp / "history.db", [HistoryRow("p", 1, None, None)])
    (tmp_path / "pi").mkdir()
    link = tmp_path / "link"
    link.symlink_to(omp)
    assert history_stores([omp, tmp_path / "pi", link]) == [omp / "history.db"]


def test_a_folder_named_history_db_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "history.db").mkdir()
    assert read_store(tmp_path / "history.db").problems == ["not a prompt history: it is a folder"]
