"""sitegen history in its own process: words, --project, --json, the stores it finds, and bad ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

from history_helpers import HistoryRow, documented_store, folder_state, omp_store
from site_helpers import run_sitegen

HOSTILE = "ZZ_NEWEST_ZZ <script>alert(1)</script> \x1b]0;title\x07 javascript:alert(1)"
ROWS = [
    HistoryRow("ZZ_OLDEST_ZZ fix the login bug", 1760000000, "/work/webapp", "s1"),
    HistoryRow("add tests for 写锁 handling\nsecond line", 1760000100, "/work/api", "s2"),
    HistoryRow(HOSTILE, 1760000300, "/work/webapp/ui", None),
]


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    omp_store(home / ".omp" / "agent" / "history.db", ROWS)
    return home


def test_prints_every_prompt_newest_first_with_time_and_project(tmp_path: Path) -> None:
    home = _home(tmp_path)
    before = folder_state(home / ".omp" / "agent")
    done = run_sitegen("history", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2025-10-09 08:58  /work/webapp/ui  ZZ_NEWEST_ZZ <script>")
    assert "\x1b" not in done.stdout and "␛]0;title␇" in lines[0]
    assert lines[1:3] == ["2025-10-09 08:55  /work/api  add tests for 写锁 handling", "  second line"]
    assert lines[3] == "2025-10-09 08:53  /work/webapp  ZZ_OLDEST_ZZ fix the login bug"
    assert done.stderr == ""
    assert folder_state(home / ".omp" / "agent") == before


def test_every_word_must_match_case_insensitive_cjk_included(tmp_path: Path) -> None:
    _home(tmp_path)
    assert "ZZ_OLDEST_ZZ" in run_sitegen("history", "LOGIN", "fix", cwd=tmp_path).stdout
    assert run_sitegen("history", "login", "tests", cwd=tmp_path).stdout == ""
    assert run_sitegen("history", "ogin", cwd=tmp_path).stdout == ""  # words match from their start
    cjk = run_sitegen("history", "锁", cwd=tmp_path)
    assert cjk.returncode == 0 and "写锁" in cjk.stdout and "ZZ_" not in cjk.stdout
    empty = run_sitegen("history", "nothinglikethis", cwd=tmp_path)
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, "", "No prompts match.\n")


def test_project_keeps_the_folder_and_below(tmp_path: Path) -> None:
    _home(tmp_path)
    done = run_sitegen("history", "--project", "/work/webapp", cwd=tmp_path)
    assert [line.split("  ")[1] for line in done.stdout.splitlines()] == ["/work/webapp/ui", "/work/webapp"]
    assert run_sitegen("history", "--project", "/work/web", cwd=tmp_path).stdout == ""


def test_json_is_one_object_per_prompt(tmp_path: Path) -> None:
    _home(tmp_path)
    done = run_sitegen("history", "--json", cwd=tmp_path)
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["prompt"][:12] for o in objects] == ["ZZ_NEWEST_ZZ", "add tests fo", "ZZ_OLDEST_ZZ"]
    assert objects[0]["prompt"].endswith("\x1b]0;title\x07 javascript:alert(1)")
    assert objects[2] == {
        "time": "2025-10-09 08:53:20 UTC",
        "created_at": 1760000000,
        "project": "/work/webapp",
        "prompt": "ZZ_OLDEST_ZZ fix the login bug",
        "session_id": "s1",
        "use_count": 1,
        "id": 1,
        "store": str(tmp_path / "home" / ".omp" / "agent" / "history.db"),
    }


def test_stores_of_every_agent_dir_are_read_together(tmp_path: Path) -> None:
    home = _home(tmp_path)
    documented_store(home / ".xcsh" / "agent" / "history.db", [("ZZ_XCSH_ZZ prompt", 1760000200, "/x")])
    extra = tmp_path / "elsewhere"
    documented_store(extra / "history.db", [("ZZ_GIVEN_ZZ prompt", 1760000250, "/y")])
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "envdir")}
    documented_store(tmp_path / "envdir" / "history.db", [("ZZ_ENV_ZZ prompt", 1760000260, "/z")])
    done = run_sitegen("history", "prompt", "--agent-dir", str(extra), cwd=tmp_path, env=env)
    assert [line.split("  ")[2].split()[0] for line in done.stdout.splitlines()] == [
        "ZZ_ENV_ZZ",
        "ZZ_GIVEN_ZZ",
        "ZZ_XCSH_ZZ",
    ]


def test_no_store_at_all_exits_1_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "home" / ".omp" / "agent").mkdir(parents=True)
    done = run_sitegen("history", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("No prompt history found (looked for ") and done.stderr.count("\n") == 1


def test_a_bad_store_beside_a_good_one_is_a_warning(tmp_path: Path) -> None:
    home = _home(tmp_path)
    bad = home / ".xcsh" / "agent" / "history.db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(os.urandom(4096))
    done = run_sitegen("history", "login", cwd=tmp_path)
    assert done.returncode == 0 and "ZZ_OLDEST_ZZ" in done.stdout
    assert done.stderr == f"warning: {bad}: not an SQLite database (encrypted, or another kind of file)\n"


def test_only_bad_stores_exit_1_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "home" / ".omp" / "agent" / "history.db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    done = run_sitegen("history", cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stderr.endswith("No prompt history could be read.\n")
    assert bad.read_bytes() == b"SQLite format 3\x00" + b"\x00" * 84
    assert os.listdir(bad.parent) == ["history.db"]


def test_a_missing_agent_dir_is_a_usage_error(tmp_path: Path) -> None:
    done = run_sitegen("history", "--agent-dir", str(tmp_path / "nope"), cwd=tmp_path)
    assert done.returncode == 1 and done.stderr == f"Not a folder: --agent-dir {tmp_path / 'nope'}\n"
