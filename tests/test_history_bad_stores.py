"""Each kind of bad prompt store: one line in `sitegen history` and on the problems page; the rest built as usual."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from history_helpers import HistoryRow, documented_store, folder_state, omp_store
from site_helpers import make_session, page_text, run_sitegen

from sitegen.site.build.pipeline import BuildConfig, build_site

T = 1760000000
GOOD = ("ZZ_GOOD_ZZ prompt", T, "/work/alpha")
NO_CWD = "CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT, created_at INTEGER)"
NO_TIME = "CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT, cwd TEXT)"
NO_FTS = "CREATE TABLE history (id INTEGER PRIMARY KEY, prompt TEXT, created_at INTEGER, cwd TEXT)"
HOSTILE = "<script>alert(1)</script> javascript:x"


def _table(path: Path, schema: str, *rows: tuple[object, ...]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.execute(schema)
    for row in rows:
        connection.execute(f"INSERT INTO history VALUES ({', '.join('?' * len(row))})", row)
    connection.commit()
    connection.close()


def _empty_database(path: Path) -> None:
    _table(path, "CREATE TABLE other (x)")


def _truncated(path: Path) -> None:
    documented_store(path, [(f"prompt {n} " + "x" * 300, T + n, "/w") for n in range(400)])
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _broken_fts(path: Path) -> None:
    documented_store(path, [GOOD])
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE history_fts_data")
    connection.commit()
    connection.close()


def _invalid_utf8(path: Path) -> None:
    documented_store(path, [GOOD])
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO history (prompt, created_at) VALUES (CAST(x'41ff42' AS TEXT), 1)")
    connection.commit()
    connection.close()


def _write(data: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    return make


# (case, how to make the store, the one line it gives or None, whether a store could be read at all)
DEFECTS: list[tuple[str, Callable[[Path], None], str, bool]] = [
    ("empty database", _empty_database, "no history table: not a prompt history, or no prompt written yet", True),
    ("zero bytes", _write(b""), "empty file (0 bytes): no prompt written yet", True),
    ("truncated", _truncated, "truncated: 161,792 of 323,584 bytes are there; it cannot be read", False),
    ("not a database", _write(b"just text\n" * 20), "not an SQLite database (encrypted, or another kind", False),
    ("encrypted", _write(os.urandom(8192)), "not an SQLite database (encrypted, or another kind", False),
    ("broken history_fts", _broken_fts, "history_fts does not answer (", True),
    (
        "no cwd column",
        lambda path: _table(path, NO_CWD, (1, "p", T)),
        "the history table has no cwd column: prompts are shown without it",
        True,
    ),
    (
        "no created_at column",
        lambda path: _table(path, NO_TIME, (1, "p", "/w")),
        "the history table has no created_at column: prompts are shown without it",
        True,
    ),
    ("NULL prompt", lambda path: documented_store(path, [GOOD, (None, T, "/w")]), "1 prompt is empty or NULL", True),
    ("invalid UTF-8", _invalid_utf8, "1 value is not valid UTF-8 (shown with �)", True),
]
# Not defects: read whole, no line.
FINE: list[tuple[str, Callable[[Path], None]]] = [
    (
        "unknown extra columns",
        lambda path: documented_store(path, [GOOD]) and _table(path, "ALTER TABLE history ADD COLUMN mood TEXT"),
    ),
    ("a 1 MB prompt", lambda path: omp_store(path, [HistoryRow("ZZ_HUGE_ZZ " + "y" * 1_000_000, T, "/w", None)])),
    ("hostile text", lambda path: omp_store(path, [HistoryRow(HOSTILE, T, "/w", None)])),
]


def _agent(tmp_path: Path) -> Path:
    agent = tmp_path / "home" / ".omp" / "agent"
    make_session(agent, "/work/alpha", "sess-alpha", "ZZ_ALPHA_ZZ")
    return agent


def _lines(text: str, store: Path) -> list[str]:
    """The lines naming the store but notes (a store without history_fts, as the ones made here by hand)."""
    return [line for line in text.splitlines() if str(store) in line and not line.startswith("note: ")]


@pytest.mark.parametrize(("case", "make", "line", "readable"), DEFECTS, ids=[case for case, *_ in DEFECTS])
def test_a_bad_store_is_one_line_everywhere(
    tmp_path: Path, case: str, make: Callable[[Path], None], line: str, readable: bool
) -> None:
    agent = _agent(tmp_path)
    store = agent / "history.db"
    make(store)
    before = folder_state(agent)
    done = run_sitegen("history", cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert _lines(done.stderr, store) == [_lines(done.stderr, store)[0]]
    assert _lines(done.stderr, store)[0].startswith(f"warning: {store}: {line}")
    assert done.returncode == (0 if readable else 1)
    site = tmp_path / "site"
    result = build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=1))
    assert result.sessions == 1 and (site / "sessions").is_dir()
    assert [problem for problem in result.problems if str(store) in problem] == [
        next(problem for problem in result.problems if problem.startswith(f"{store}: {line}"))
    ]
    assert page_text(site / "problems.html").count(line) == 1
    assert folder_state(agent) == before


def test_a_locked_store_is_one_line_and_exits_1(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    store = documented_store(agent / "history.db", [GOOD])
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = run_sitegen("history", cwd=tmp_path)
        result = build_site(BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == 1
    assert _lines(done.stderr, store) == [f"warning: {store}: locked by another process (SQLITE_BUSY) past the retries"]
    assert [p for p in result.problems if str(store) in p] == [
        f"{store}: locked by another process (SQLITE_BUSY) past the retries"
    ]


@pytest.mark.parametrize(("case", "make"), FINE, ids=[case for case, _ in FINE])
def test_what_is_no_defect_gives_no_line(tmp_path: Path, case: str, make: Callable[[Path], None]) -> None:
    agent = _agent(tmp_path)
    store = agent / "history.db"
    make(store)
    done = run_sitegen("history", cwd=tmp_path)
    assert done.returncode == 0 and _lines(done.stderr, store) == []
    result = build_site(BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1))
    assert [p for p in [*result.problems, *result.notes] if str(store) in p] == []


def test_a_store_without_history_fts_is_a_note_that_strict_passes(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    store = agent / "history.db"
    _table(store, NO_FTS, (1, "ZZ_SCAN_ZZ", T, "/w"))
    note = "no history_fts index: `sitegen history` searches by reading every prompt"
    done = run_sitegen("history", "scan", cwd=tmp_path)
    assert done.returncode == 0 and "ZZ_SCAN_ZZ" in done.stdout
    assert f"note: {store}: {note}" in done.stderr.splitlines() and _lines(done.stderr, store) == []
    site = tmp_path / "site"
    built = run_sitegen("build", "--strict", "--out", str(site), "--agent-dir", str(agent), "--jobs", "1", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert f"note: {store}: {note}" in built.stderr.splitlines() and _lines(built.stderr, store) == []
    assert page_text(site / "problems.html").count(note) == 1
    # A defect does fail it.
    _write(b"just text\n" * 20)(store)
    built = run_sitegen("build", "--strict", "--out", str(site), "--agent-dir", str(agent), "--jobs", "1", cwd=tmp_path)
    assert built.returncode == 1 and f"problem: {store}: not an SQLite database" in built.stderr
