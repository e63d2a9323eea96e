"""A first build on two workers keeps both cores busy to its end: the related lists and the index pages
are made while the search export's processes fill its segments. The site is the same as one process
makes, and a build stopped then leaves no process behind and is finished by the next."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import orjson
import pytest
from site_helpers import make_session

from sitegen.site.build.pipeline import BuildConfig, build_site
from sitegen.site.pages.index_pages import StatsPage
from sitegen.site.search import index as search

SESSIONS = 150  # 16 search segments: the export fills them in worker processes


def _agent(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    for number in range(SESSIONS):
        make_session(agent, f"/work/project{number % 3}", f"sess-{number:03d}", f"ZZ{number:03d}ZZ topic{number}")
    return agent


def _site_files(site: Path) -> dict[str, bytes]:
    """Every file of the site but the build's own state."""
    return {
        path.relative_to(site).as_posix(): path.read_bytes()
        for path in sorted(site.rglob("*"))
        if path.is_file() and ".sitegen" not in path.relative_to(site).parts
    }


def _build(site: Path, agent: Path, jobs: int) -> None:
    result = build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=jobs))
    assert result.problems == []


def _segments(site: Path) -> int:
    script = (site / "search" / "index.js").read_bytes()
    data = orjson.loads(script[script.index(b"{") : script.rindex(b"}") + 1])
    return len(data["segments"])


def test_two_workers_make_the_site_one_process_makes(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    built: dict[int, dict[str, bytes]] = {}
    for jobs in (2, 1):
        site = tmp_path / "site"  # the same path for both: nothing may differ but the work's order
        _build(site, agent, jobs)
        built[jobs] = _site_files(site)
        assert _segments(site) >= search.PARALLEL_SEGMENTS
        os.rename(site, tmp_path / f"site-{jobs}")
    assert built[2] == built[1]
    assert {"index.html", "stats.html", "problems.html", "sessions.html", "search.html"} <= set(built[2])


def test_a_build_stopped_while_the_search_is_exported_is_finished_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = _agent(tmp_path)
    site = tmp_path / "site"

    def stopped(self: StatsPage, context: object) -> list[str]:
        raise KeyboardInterrupt  # Ctrl-C while the stats page is made, the segments' workers at work

    monkeypatch.setattr(StatsPage, "write", stopped)
    with pytest.raises(KeyboardInterrupt):
        _build(site, agent, 2)
    assert multiprocessing.active_children() == []  # no segment worker outlives the build
    monkeypatch.undo()
    _build(site, agent, 2)
    fresh = tmp_path / "fresh"
    _build(fresh, agent, 2)
    os.rename(site, tmp_path / "resumed")
    os.rename(fresh, site)
    assert _site_files(tmp_path / "resumed") == _site_files(site)


def test_a_session_that_fails_when_rendered_again_for_the_search_is_on_the_problems_page(tmp_path: Path) -> None:
    """The index pages are made while the search is exported; a session whose stored entries were gone
    is rendered again after that, and a failure then is on the pages made again after it."""
    agent = tmp_path / "agent"
    sessions = [make_session(agent, "/work/alpha", f"alpha-{n}", f"ZZ_ALPHA{n}_ZZ") for n in range(3)]
    site = tmp_path / "site"
    _build(site, agent, 1)
    # The search database deleted by hand; a session spoiled without its size or time changing (so the
    # plan takes it as it was); another one grown, so the build exports the search.
    (site / ".sitegen" / "search" / "index.db").unlink()
    status = sessions[1].stat()
    sessions[1].write_bytes(b"\xff" * status.st_size)
    os.utime(sessions[1], ns=(status.st_atime_ns, status.st_mtime_ns))
    line = {"type": "message", "id": "zz9", "parentId": "u2", "timestamp": "2026-01-01T01:00:00.000Z"}
    line["message"] = {"role": "user", "content": [{"type": "text", "text": "more words"}]}
    with sessions[0].open("ab") as handle:
        handle.write(orjson.dumps(line) + b"\n")
    result = build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=1))
    assert len(result.problems) == 1 and "alpha-1.jsonl" in result.problems[0]  # said, and --strict fails
    problems = (site / "problems.html").read_text()
    assert "alpha-1.jsonl" in problems and "no session header" in problems
