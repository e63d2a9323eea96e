"""The order a build writes session pages in, as the terminal's progress line shows it: the newest
sessions first (those the home page lists), then the rest biggest first."""

from __future__ import annotations

import os
import pty
import re
import subprocess
from pathlib import Path

from fault_helpers import CLI, DEADLINE_S
from site_helpers import make_session

from sitegen.site.state.jobs import NEWEST_FIRST

# More sessions than the home page lists, so both halves of the order show.
SESSIONS = NEWEST_FIRST + 5


def run_on_a_terminal(*args: str | Path) -> tuple[int, str]:
    """The CLI with its stderr on a pseudo-terminal (as a user sees it): exit code and what it showed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*CLI, *map(str, args)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every process holding the terminal closed it
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    process.communicate(timeout=DEADLINE_S)
    return process.returncode, shown.decode()


def test_pages_are_written_newest_first_then_biggest_first(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    sessions: list[Path] = []
    for index in range(SESSIONS):
        # Sizes rise with the index; ages are a shuffle of them, so neither order is the other.
        path = make_session(agent, f"/work/p{index % 3}", f"s{index:02d}", "word " * 40, entries=3 + 2 * index)
        age = (index * 7) % SESSIONS
        os.utime(path, ns=(1_700_000_000_000_000_000 - age * 10**12,) * 2)
        sessions.append(path)
    newest = sorted(sessions, key=lambda p: -p.stat().st_mtime_ns)[:NEWEST_FIRST]
    rest = sorted(set(sessions) - set(newest), key=lambda p: -p.stat().st_size)
    expected = [path.stem for path in newest + rest]

    code, shown = run_on_a_terminal("build", "--out", tmp_path / "site", "--agent-dir", agent, "--jobs", "1")

    assert code == 0, shown
    # One redrawn line: "[###---] 3 of 25 sessions written <key>".
    drawn = re.findall(r"\r\[[#-]+\] (\d+) of (\d+) sessions written (\S+)", shown)
    assert [int(done) for done, _, _ in drawn] == list(range(1, SESSIONS + 1))
    assert {int(total) for _, total, _ in drawn} == {SESSIONS}
    # The key is cut to the line's width: compare the beginnings.
    keys = [key for _, _, key in drawn]
    assert [name[: len(key)] for name, key in zip(expected, keys, strict=True)] == keys
    assert len(set(keys)) == SESSIONS
