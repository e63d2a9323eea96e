"""A dying worker costs one session, not the build: it is tried again in a fresh worker, then listed
on the problems page with the reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fault_helpers import DEADLINE_S, needs_proc
from site_helpers import crawl, make_session, page_text

pytestmark = needs_proc

# Loaded by the build before sitegen: a worker (any process but the build's own) that is given a
# session named in ZZ_DIE is killed with SIGKILL, as the kernel kills a process out of memory;
# with ZZ_ONCE, only the first worker that tries (the next one finds the mark file).
HOOK = """
import os, signal
from pathlib import Path
import sitegen.site.build.worker as worker

BUILD = os.getpid()
real = worker.render_job

def render_job(job):
    if os.getpid() != BUILD and "ZZ_DIE" in job.source:
        mark = Path(job.site_dir).parent / "died-once"
        if "ZZ_ONCE" not in job.source or not mark.exists():
            mark.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
    return real(job)

worker.render_job = render_job
"""


def _build(tmp_path: Path, agent: Path, site: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "hook").mkdir(exist_ok=True)
    (tmp_path / "hook" / "die_hook.py").write_text(HOOK)
    script = (
        f"import sys; sys.path.insert(0, {str(tmp_path / 'hook')!r}); import die_hook; "
        "from sitegen.cli import main; sys.exit(main())"
    )
    command = [sys.executable, "-c", script, "build", "--out", str(site), "--agent-dir", str(agent), "--jobs", "2"]
    return subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_S * 4)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    for number in range(5):
        make_session(agent, "/work/alpha", f"alpha-{number}", f"ZZ_ALPHA{number}_ZZ")
    return agent


def test_a_session_that_kills_its_worker_twice_is_a_problem(tmp_path: Path, agent: Path) -> None:
    poison = make_session(agent, "/work/alpha", "ZZ_DIE", "ZZ_POISON_ZZ")
    site = tmp_path / "site"
    done = _build(tmp_path, agent, site)
    assert done.returncode == 0, done.stderr
    assert "6 sessions, 5 rendered, 0 removed, 1 problems" in done.stdout
    killed = "it was killed (SIGKILL; most often the system ran out of memory)"
    reason = f"The worker process rendering it died twice; the second time {killed}"
    assert f"problem: {poison}: {reason}" in done.stderr.splitlines()
    problems = page_text(site / "problems.html")
    assert "ZZ_DIE" in problems and killed in problems
    assert len(list(site.glob("sessions/*/*.html"))) == 5 and crawl(site) == []


def test_a_session_whose_worker_died_once_is_rendered_by_a_fresh_one(tmp_path: Path, agent: Path) -> None:
    make_session(agent, "/work/alpha", "ZZ_DIE-ZZ_ONCE", "ZZ_SECOND_TRY_ZZ")
    site = tmp_path / "site"
    done = _build(tmp_path, agent, site)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "died-once").exists()  # a worker did die on it
    assert "6 sessions, 6 rendered, 0 removed, 0 problems" in done.stdout
    assert "ZZ_SECOND_TRY_ZZ answer" in page_text(next(site.glob("sessions/*/*ZZ_ONCE.html")))
    assert crawl(site) == []
