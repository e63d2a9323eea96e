"""`sitegen search`: filters, exit codes, JSON lines, CJK, read-only agent files, the incremental index."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest
from fault_helpers import run_cli
from sessions import BASE_MS, SessionBuilder, text, thinking, tool_call
from site_helpers import build

DAY_MS = 86_400_000


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return cache


def _folder(agent: Path, cwd: str) -> Path:
    return agent / "sessions" / ("--" + cwd.strip("/").replace("/", "-") + "--")


def alpha(agent: Path, *more: str) -> Path:
    b = SessionBuilder(session_id="alpha", cwd="/work/alpha")
    b.user("u1", "why does the scheduler deadlock under load")
    b.assistant(
        "a1",
        [
            thinking("the retry loop holds the mutex"),
            text("The deadlock comes from the retry loop"),
            tool_call("c1", "bash", command="grep -rn mutex src"),
        ],
        model="claude-sonnet",
    )
    b.tool_result("r1", "c1", "bash", "src/sched.c:12: deadlock detected in mutex_lock")
    for number, words in enumerate(more, 2):
        b.user(f"u{number}", words)
    return b.write(_folder(agent, "/work/alpha") / "2026-01-01T00-00-00-000Z_alpha.jsonl")


def beta(agent: Path) -> Path:
    b = SessionBuilder(session_id="beta", cwd="/work/beta")
    b.clock = BASE_MS + 10 * DAY_MS  # 2026-01-11
    b.user("u1", "数据库写入失败，出现死锁 deadlock")
    b.assistant("a1", [text("锁的顺序不一致 the deadlock is fixed")], model="gpt-other")
    return b.write(_folder(agent, "/work/beta") / "2026-01-11T00-00-00-000Z_beta.jsonl")


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    alpha(agent)
    beta(agent)
    return agent


def search(agent: Path, *args: str | Path) -> Any:
    return run_cli("search", *args, "--agent-dir", agent, "--site", agent.parent / "no-site")


def hits(agent: Path, *args: str | Path) -> list[dict[str, Any]]:
    done = search(agent, *args, "--json")
    assert done.returncode in (0, 1), done.stderr
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def test_every_word_must_occur_and_the_json_lines_have_their_fields(agent: Path) -> None:
    found = hits(agent, "deadlock", "retry")
    assert {(hit["session"].rsplit("_", 1)[1], hit["entry"], hit["role"]) for hit in found} == {
        ("alpha.jsonl", "a1", "assistant")
    }
    hit = found[0]
    assert set(hit) >= {"session", "title", "entry", "role", "timestamp", "snippet", "url", "project"}
    assert hit["project"] == "/work/alpha" and hit["title"] == "why does the scheduler deadlock under load"
    assert hit["timestamp"].startswith("2026-01-01T") and hit["url"] is None
    assert "deadlock" in hit["snippet"] and "\x1b" not in hit["snippet"]
    assert Path(hit["session"]).is_file()


def test_ranked_best_first_and_limited(agent: Path) -> None:
    found = hits(agent, "deadlock")
    assert len(found) == 5  # alpha: user, assistant, tool; beta: user, assistant (and none twice)
    assert len({(hit["session"], hit["entry"], hit["role"]) for hit in found}) == len(found)
    assert len(hits(agent, "deadlock", "--limit", "2")) == 2


def test_the_last_word_is_a_prefix_the_others_whole(agent: Path) -> None:
    assert {hit["entry"] for hit in hits(agent, "deadl")} >= {"u1", "a1", "r1"}
    assert {hit["entry"] for hit in hits(agent, "mutex", "deadl")} == {"a1", "r1"}  # a1: its grep call
    assert not hits(agent, "deadl", "mutex")  # "deadl" not last: a whole word only
    assert not hits(agent, "deadl", "zzz")


def test_filters_project_dates_role_and_model(agent: Path) -> None:
    assert {hit["project"] for hit in hits(agent, "deadlock", "--project", "/work/beta")} == {"/work/beta"}
    assert {hit["role"] for hit in hits(agent, "mutex", "--role", "thinking")} == {"thinking"}
    assert {hit["role"] for hit in hits(agent, "mutex", "--role", "tool")} == {"tool"}
    assert {hit["project"] for hit in hits(agent, "deadlock", "--since", "2026-01-05")} == {"/work/beta"}
    assert {hit["project"] for hit in hits(agent, "deadlock", "--until", "2026-01-05")} == {"/work/alpha"}
    assert {hit["entry"] for hit in hits(agent, "deadlock", "--model", "GPT")} == {"a1"}


def test_chinese_words_are_found_inside_sentences(agent: Path) -> None:
    assert {hit["entry"] for hit in hits(agent, "写入")} == {"u1"}
    assert {hit["entry"] for hit in hits(agent, "锁")} == {"u1", "a1"}  # one character: in 死锁 and 锁的
    assert {hit["entry"] for hit in hits(agent, "死锁", "deadlock")} == {"u1"}
    assert "写入" in hits(agent, "写入")[0]["snippet"]


def test_exit_codes(agent: Path) -> None:
    found = search(agent, "deadlock")
    assert found.returncode == 0 and "why does the scheduler deadlock" in found.stdout
    assert "\x1b" not in found.stdout  # plain in a pipe
    nothing = search(agent, "zzabsent")
    assert nothing.returncode == 1 and nothing.stdout == "" and nothing.stderr.strip() == "No entries match."
    for usage in (
        ["deadlock", "--role", "robot"],
        ["!!"],
        ["deadlock", "--since", "yesterday"],
        ["deadlock", "--limit", "0"],
    ):
        done = search(agent, *usage)
        assert done.returncode == 2, (usage, done.stderr)
        assert "Traceback" not in done.stderr
    assert run_cli("search").returncode == 2


def _snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    return {
        str(path): (path.stat().st_mode, path.stat().st_mtime_ns, path.read_bytes() if path.is_file() else b"")
        for path in sorted(folder.rglob("*"))
    }


def test_agent_files_are_only_read(agent: Path) -> None:
    for path in [agent, *agent.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        before = _snapshot(agent)
        assert search(agent, "deadlock").returncode == 0
        assert search(agent, "deadlock").returncode == 0
        assert _snapshot(agent) == before
    finally:
        for path in [agent, *agent.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_the_index_follows_appended_removed_and_only_changed_files(agent: Path, tmp_path: Path) -> None:
    assert not hits(agent, "zzappended")
    alpha(agent, "and then zzappended a line")
    assert {hit["entry"] for hit in hits(agent, "zzappended")} == {"u2"}
    # An unchanged file is not read again: one made unreadable (same size and time) gives no warning.
    beta_file = next(agent.rglob("*_beta.jsonl"))
    beta_file.chmod(0)
    try:
        done = search(agent, "deadlock", "--json")
        assert done.returncode == 0 and done.stderr == ""
        assert "/work/beta" in done.stdout
    finally:
        beta_file.chmod(0o644)
    beta_file.unlink()
    assert {hit["project"] for hit in hits(agent, "deadlock")} == {"/work/alpha"}


def test_a_damaged_or_deleted_database_is_made_again_with_one_warning(agent: Path, cache_home: Path) -> None:
    assert hits(agent, "deadlock")
    database = cache_home / "sitegen" / "search" / "search.db"
    for suffix in ("-wal", "-shm"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)
    database.write_bytes(b"\0garbage" * 1000)
    done = search(agent, "deadlock", "--json")
    assert done.returncode == 0
    warnings = done.stderr.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("warning: search database") and "rebuilding" in warnings[0]
    assert len(done.stdout.splitlines()) == 5
    database.unlink()
    done = search(agent, "deadlock", "--json")
    assert done.returncode == 0 and done.stderr == "" and len(done.stdout.splitlines()) == 5


def test_results_link_to_the_site_pages(agent: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    done = run_cli("search", "retry", "loop", "--json", "--agent-dir", agent, "--site", site)
    found = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert found and all(hit["url"] for hit in found)
    url = found[0]["url"]
    assert url.startswith("file://") and url.endswith(f"#entry-{found[0]['entry']}")
    page = Path(url[len("file://") : url.index("#")])
    assert page.is_file() and f'id="entry-{found[0]["entry"]}"' in page.read_text()


def test_colour_marks_words_on_a_terminal_only(agent: Path) -> None:
    import pty
    import subprocess

    from fault_helpers import CLI

    leader, follower = pty.openpty()
    done = subprocess.run(
        [*CLI, "search", "mutex", "--agent-dir", str(agent)],
        stdout=follower,
        stderr=subprocess.PIPE,
        timeout=60,
        env=os.environ,
    )
    os.close(follower)
    shown = os.read(leader, 65536).decode()
    os.close(leader)
    assert done.returncode == 0 and "\x1b[1;33mmutex\x1b[0m" in shown


# A Python whose SQLite lacks FTS5 answers "no such module: fts5" to the table it needs.
NO_FTS5 = """
import sqlite3, sys

class Connection(sqlite3.Connection):
    def execute(self, sql, *args):
        if "using fts5" in sql.lower():
            raise sqlite3.OperationalError("no such module: fts5")
        return super().execute(sql, *args)

_connect = sqlite3.connect
sqlite3.connect = lambda *args, **kwargs: _connect(*args, **{**kwargs, "factory": Connection})
from sitegen.cli import main
sys.exit(main())
"""


def test_without_fts5_search_build_and_doctor_say_so_in_one_line(agent: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", NO_FTS5, *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    for done in (
        run("search", "deadlock", "--agent-dir", agent),
        run("build", "--out", tmp_path / "site", "--agent-dir", agent),
    ):
        assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "FTS5" in done.stderr and "install a Python" in done.stderr
    doctor = run("doctor")
    assert doctor.returncode == 1 and "FTS5 missing" in doctor.stdout and "install a Python" in doctor.stderr
    found = run_cli("doctor")
    assert found.returncode == 0 and "FTS5 available" in found.stdout and "SQLite 3." in found.stdout


def test_odek_sessions_are_searched_and_dated_by_their_session(agent: Path, tmp_path: Path) -> None:
    import shutil

    from sitegen.resources import resource_dir

    store = tmp_path / "odek"
    shutil.copytree(resource_dir("demo") / "odek" / "sessions", store)
    done = run_cli("search", "backup", "cron", "--json", "--agent-dir", agent, "--odek-dir", store)
    found = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and found and {hit["project"] for hit in found} == {"odek"}
    assert all(hit["timestamp"] and hit["timestamp"].startswith("2026-05-17") for hit in found)
