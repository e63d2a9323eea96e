"""A first build killed in its index phase: no page links to a page that is not there, and the next
build finishes the same site a cold build makes."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fault_helpers import DEADLINE_S, finish, needs_proc, reachable_problems, run_cli, start_cli
from site_helpers import crawl

pytestmark = needs_proc


def _site_files(site: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(site)): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file() and ".sitegen" not in p.relative_to(site).parts
    }


def _kill_when(site: Path, corpus: Path, condition: Callable[[], bool]) -> bool:
    """Start a cold build and SIGKILL it as soon as `condition` holds (polled without sleeping: the
    index phase is short); whether it was still running then."""
    build = start_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    end = time.monotonic() + DEADLINE_S * 4
    while not condition() and build.poll() is None and time.monotonic() < end:
        pass
    running = build.poll() is None
    if running:
        os.kill(build.pid, signal.SIGKILL)
    finish(build)
    return running


# Moments of the index phase: its placeholders written (the home page's last), the search index,
# the project pages.
MOMENTS = {
    "placeholders": lambda site: (site / "index.html").exists(),
    "search": lambda site: (site / "search" / "index.js").exists(),
    "projects": lambda site: "Being built" not in _text(next(iter(site.glob("projects/*.html")), None)),
}


def _text(path: Path | None) -> str:
    try:
        return path.read_text() if path is not None else "Being built"
    except OSError:
        return "Being built"


@pytest.fixture(scope="module")
def cold_site(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> dict[str, bytes]:
    """The site one uninterrupted build makes of the corpus."""
    cold = tmp_path_factory.mktemp("cold") / "site"
    assert run_cli("build", "--out", cold, "--agent-dir", corpus, "--jobs", "2").returncode == 0
    return _site_files(cold)


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_first_build_killed_in_its_index_phase_links_only_to_pages_that_exist(
    tmp_path: Path, corpus: Path, cold_site: dict[str, bytes], moment: str
) -> None:
    site = tmp_path / "site"
    if not _kill_when(site, corpus, lambda: MOMENTS[moment](site)):
        pytest.skip("the build ended before the moment could be caught")
    assert (site / "index.html").exists()
    assert crawl(site) == []  # every page's links, session pages included
    assert reachable_problems(site) == []
    again = run_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    assert again.returncode == 0, again.stderr
    assert _site_files(site) == cold_site
