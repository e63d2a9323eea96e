"""Files sitegen did not make: pipes are skipped, never waited on; names that are not UTF-8 are listed
on the problems page; `resolve` shows an artifact's control characters on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from fault_helpers import CLI, DEADLINE_S, run_cli
from site_helpers import crawl, make_session, page_text


def test_a_pipe_in_the_template_cache_is_skipped(tmp_path: Path) -> None:
    path = make_session(tmp_path / "agent", "/work/a", "pipe-1", "ZZ_PIPE_ZZ")
    cache = tmp_path / "cache"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    first = subprocess.run([*CLI, "export", str(path), str(tmp_path / "one.html")], env=env, capture_output=True)
    assert first.returncode == 0, first.stderr
    compiled = sorted((cache / "sitegen" / "templates").iterdir())
    assert compiled
    for file in compiled:  # each compiled template replaced by a pipe nobody writes to
        file.unlink()
        os.mkfifo(file)
    done = subprocess.run(
        [*CLI, "export", str(path), str(tmp_path / "two.html")],
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert done.returncode == 0, done.stderr
    assert "ZZ_PIPE_ZZ" in page_text(tmp_path / "two.html")
    warnings = done.stderr.splitlines()
    assert warnings and all(
        line.startswith("warning: Skipping ") and line.endswith(" in the template cache: not a regular file")
        for line in warnings
    )
    assert all(file.is_fifo() for file in compiled)  # not replaced: they are not sitegen's


def test_pipes_in_the_site_folder_are_not_waited_on(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    paths = [make_session(agent, "/work/a", f"a-{n}", f"ZZ_A{n}_ZZ") for n in range(2)]
    site = tmp_path / "site"
    assert run_cli("build", "--out", site, "--agent-dir", agent).returncode == 0
    related = next(site.glob("sessions/*/*_a-0.related.js"))
    # Files the build reads back to compare or resume, each a pipe that nobody writes to.
    for target in (site / ".sitegen" / "search" / "index.db", site / "search" / "index.js", related):
        target.unlink()
        os.mkfifo(target)
    for path in paths:
        with path.open("ab") as handle:
            handle.write(b'{"type":"custom","customType":"zz","id":"zz000001","parentId":"r1"}\n')
    done = run_cli("build", "--out", site, "--agent-dir", agent)
    assert done.returncode == 0, done.stderr
    assert not (site / "search" / "index.js").is_fifo() and not related.is_fifo()  # written anew
    assert not (site / ".sitegen" / "search" / "index.db").is_fifo()
    assert crawl(site) == []


def test_names_that_are_not_utf8_are_on_the_problems_page(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    good = make_session(agent, "/work/a", "good-1", "ZZ_GOOD_ZZ")
    bad = os.fsencode(good.parent) + b"/2026-01-02T00-00-00-000Z_bad\xff<i>ZZ.jsonl"
    with open(bad, "wb") as handle:
        handle.write(good.read_bytes())
    site = tmp_path / "site"
    done = run_cli("build", "--out", site, "--agent-dir", agent)
    assert done.returncode == 0
    shown = f"{good.parent}/2026-01-02T00-00-00-000Z_bad\ufffd&lt;i&gt;ZZ.jsonl"
    problems = page_text(site / "problems.html")
    assert shown in problems and "the file name is not UTF-8" in problems and "<i>ZZ" not in problems
    assert "Problems (1)" in page_text(site / "index.html")
    os.unlink(bad)
    assert run_cli("build", "--out", site, "--agent-dir", agent).returncode == 0
    assert "bad\ufffd" not in page_text(site / "problems.html")  # and it goes when the file goes


def _on_a_terminal(*args: str) -> bytes:
    """What the CLI writes to stdout when stdout is a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([*CLI, *args], stdout=follower, stderr=subprocess.PIPE)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=DEADLINE_S)
    finally:
        os.close(leader)
    return b"".join(chunks)


def test_resolve_shows_control_characters_on_a_terminal(tmp_path: Path) -> None:
    path = make_session(tmp_path / "agent", "/work/a", "esc-1", "ZZ_ESC_ZZ")
    folder = path.with_suffix("")
    folder.mkdir()
    (folder / "3.bash.log").write_bytes(b"\x1b]0;ZZ_TITLE\x07\x1b[31mred\x1b[0m\tok\n")
    shown = _on_a_terminal("resolve", "artifact://3", "--session", str(path))
    # The terminal turns "\n" into "\r\n"; the escape sequences arrive as symbols, not as commands.
    assert shown.replace(b"\r\n", b"\n") == "␛]0;ZZ_TITLE␇␛[31mred␛[0m\tok\n".encode()
    raw = _on_a_terminal("resolve", "artifact://3", "--session", str(path), "--raw")
    assert raw.replace(b"\r\n", b"\n") == b"\x1b]0;ZZ_TITLE\x07\x1b[31mred\x1b[0m\tok\n"
    piped = run_cli("resolve", "artifact://3", "--session", path)
    assert piped.stdout == "\x1b]0;ZZ_TITLE\x07\x1b[31mred\x1b[0m\tok\n"
