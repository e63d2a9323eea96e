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
