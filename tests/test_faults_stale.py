"""Stale pages go: a session that can no longer be read keeps no page with its old content, and a
rebuild in `watch` that fails half way leaves the last complete site in place, page for page."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import orjson
import pytest
from fault_helpers import run_cli, start_cli
from sessions import SessionBuilder
from site_helpers import crawl, make_session, page_text


def _with_subagent(agent: Path) -> Path:
    path = make_session(agent, "/work/sub", "parent-1", "ZZ_PARENT_ZZ")
    artifacts = path.with_suffix("")
    artifacts.mkdir()
    sub = SessionBuilder(session_id="sub-1", cwd="/work/sub")
    sub.user("s1", "ZZ_SUBTASK_ZZ")
    sub.write(artifacts / "Scout.jsonl")
    return path


@pytest.mark.parametrize("breakage", ["not a session any more", "a pipe in its place"])
def test_a_session_that_cannot_be_read_keeps_no_old_page(tmp_path: Path, breakage: str) -> None:
    agent = tmp_path / "agent"
    path = _with_subagent(agent)
    make_session(agent, "/work/sub", "other-1", "ZZ_OTHER_ZZ")
    site = tmp_path / "site"
    assert run_cli("build", "--out", site, "--agent-dir", agent).returncode == 0
    page = next(site.glob("sessions/*/*_parent-1.html"))
    assert "ZZ_PARENT_ZZ" in page_text(page) and page.with_suffix("").is_dir()
    original = path.read_bytes()
    if breakage == "a pipe in its place":
        path.unlink()
        os.mkfifo(path)
        reason = "Not a session file: it is a pipe"
    else:
        path.write_bytes(b"\x00\x01 ZZ_GARBAGE_ZZ\n")
        reason = "Not a session"

    done = run_cli("build", "--out", site, "--agent-dir", agent)
    assert done.returncode == 0, done.stderr
    text = page_text(page)
    assert "ZZ_PARENT_ZZ" not in text and "This session could not be read" in text
    assert reason in text and 'href="../../problems.html"' in text
    assert not page.with_suffix("").exists()  # nor its subagents' pages
    assert page.name not in page_text(site / "index.html") + page_text(next(site.glob("projects/*.html")))
    assert str(path) in page_text(site / "problems.html")
    assert crawl(site) == []

    path.unlink()
    path.write_bytes(original)
    assert run_cli("build", "--out", site, "--agent-dir", agent).returncode == 0
    assert "ZZ_PARENT_ZZ" in page_text(page) and page.with_suffix("").is_dir()  # it comes back
    assert crawl(site) == []


def _files(site: Path) -> dict[str, bytes]:
    skip = {Path(".sitegen/lock"), Path("stats.html")}
    # The search databases are a cache each build checks against the site's own files (a segment is
    # exported again when its shards are not there, a document stored again when its page is made
    # again): a failed rebuild may leave them ahead; the next build's search must be a cold build's.
    search_cache = Path(".sitegen/search")
    return {
        str(p.relative_to(site)): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and p.relative_to(site) not in skip and search_cache not in p.relative_to(site).parents
    }


def _append(path: Path, entry_id: str) -> None:
    with path.open("ab") as handle:
        line = {"type": "message", "id": entry_id, "parentId": "r1", "timestamp": "2026-02-01T00:00:00.000Z"}
        line["message"] = {"role": "user", "content": f"ZZ_{entry_id}_ZZ", "timestamp": 1}
        handle.write(orjson.dumps(line) + b"\n")


def test_a_rebuild_in_watch_that_fails_half_way_leaves_the_last_site(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    sessions = [make_session(agent, "/work/alpha", f"alpha-{n}", f"ZZ_ALPHA{n}_ZZ") for n in range(5)]
    site = tmp_path / "site"
    watch = start_cli("watch", "--out", site, "--agent-dir", agent, "--port", "0")
    try:
        assert watch.stdout is not None and watch.stderr is not None
        assert watch.stdout.readline().startswith(f"Serving {site} at ")
        before = _files(site)
        # The stats page cannot be written: the rebuild fails after it rendered every session again.
        (site / "stats.html").unlink()
        (site / "stats.html").mkdir()
        for number, path in enumerate(sessions):
            _append(path, f"late{number}")
        line = watch.stderr.readline()
        while "Rebuild failed" not in line:
            assert line, "the watch ended"
            line = watch.stderr.readline()
        assert "still serving the last good site" in line
        assert _files(site) == before  # page for page
        assert not (site / ".sitegen" / "undo").exists()

        (site / "stats.html").rmdir()
        _append(sessions[0], "late9")
        while "Rebuilt in" not in line:
            line = watch.stdout.readline()
            assert line, "the watch ended"
        assert "ZZ_late9_ZZ" in page_text(next(site.glob("sessions/*/*_alpha-0.html")))
        assert crawl(site) == []
    finally:
        os.kill(watch.pid, signal.SIGINT)
        watch.communicate()
    # The search the reader gets after the failed rebuild and the next one is a cold build's.
    cold = tmp_path / "cold"
    assert run_cli("build", "--out", cold, "--agent-dir", agent).returncode == 0
    for name in ("search/index.js", *(str(p.relative_to(cold)) for p in sorted((cold / "search").rglob("*.js")))):
        assert (site / name).read_bytes() == (cold / name).read_bytes(), name


def test_a_rebuild_killed_half_way_is_undone_by_the_next_build(tmp_path: Path) -> None:
    """What a killed `watch` left in its journal is put back before the next build starts."""
    from sitegen.fileio import remove_file, replace_file
    from sitegen.undo import Journal, undo_unfinished

    site = tmp_path / "site"
    (site / "sessions").mkdir(parents=True)
    (site / "index.html").write_text("ZZ_OLD_INDEX_ZZ")
    (site / "sessions" / "gone.html").write_text("ZZ_GONE_ZZ")
    with Journal(site).active():
        replace_file(site / "index.html", "ZZ_NEW_INDEX_ZZ")
        replace_file(site / "index.html", "ZZ_NEWER_INDEX_ZZ")
        remove_file(site / "sessions" / "gone.html")
        replace_file(site / "projects" / "new.html", "ZZ_NEW_PAGE_ZZ")
    # (the process is killed here: nothing committed, nothing rolled back)
    assert undo_unfinished(site)
    assert (site / "index.html").read_text() == "ZZ_OLD_INDEX_ZZ"
    assert (site / "sessions" / "gone.html").read_text() == "ZZ_GONE_ZZ"
    assert not (site / "projects").exists() and not (site / ".sitegen" / "undo").exists()
    assert not undo_unfinished(site)
