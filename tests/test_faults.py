"""Builds stopped by signals: no worker outlives the build, Ctrl-C and SIGTERM end it cleanly."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fault_helpers import (
    all_gone,
    finish,
    needs_proc,
    run_cli,
    start_cli,
    wait_for_workers,
)
from site_helpers import crawl

from sitegen.site.build.pool import WorkerPool
from sitegen.site.state.jobs import RenderJob

pytestmark = needs_proc


@pytest.mark.parametrize("kind", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_no_worker_outlives_a_stopped_build(tmp_path: Path, corpus: Path, kind: signal.Signals) -> None:
    site = tmp_path / "site"
    build = start_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    workers = wait_for_workers(build)
    os.kill(build.pid, kind)
    stderr = finish(build, workers)
    assert all_gone(workers), f"workers {workers} outlived the build"
    if kind == signal.SIGKILL:
        assert build.returncode == -signal.SIGKILL
    else:
        assert build.returncode == 128 + kind
        assert stderr.splitlines()[-1] == "Build interrupted"
        assert "Traceback" not in stderr


def test_a_stopped_rebuild_leaves_a_consistent_site(tmp_path: Path, corpus: Path) -> None:
    """Stopped while some sessions are gone and others changed: every link still finds its page."""
    agent = tmp_path / "agent"
    _copy_tree(corpus, agent)
    site = tmp_path / "site"
    assert run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "2").returncode == 0
    sessions = sorted(agent.rglob("*.jsonl"))
    for gone in sessions[:3]:
        gone.unlink()
    for grown in sessions[3:]:
        with grown.open("ab") as handle:
            handle.write(b'{"type":"custom","customType":"zz","id":"zz000001","parentId":null}\n')
    build = start_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "2")
    first = {page: page.stat().st_mtime_ns for page in site.glob("sessions/*/*.html")}
    workers = wait_for_workers(build)
    os.kill(build.pid, signal.SIGTERM)
    stderr = finish(build, workers)
    assert build.returncode == 143, stderr
    assert first  # pages of the first build are there
    assert crawl(site) == []


def test_workers_end_when_the_build_raises(tmp_path: Path) -> None:
    """Any way out of the pool's block (here an exception in the build) kills its workers at once."""
    from site_helpers import make_session

    agent = tmp_path / "agent"
    jobs = []
    for number in range(4):
        path = make_session(agent, "/work/alpha", f"s-{number}", f"ZZ_{number}_ZZ")
        page = f"sessions/alpha/s-{number}.html"
        jobs.append(RenderJob(str(path), "pi", f"s-{number}", "alpha", page, str(tmp_path / "site"), {}))
    pool = WorkerPool(2, multiprocessing.get_context("fork"))
    pids: list[int] = []
    with pytest.raises(RuntimeError), pool:
        for _outcome in pool.run(jobs):
            pids = [worker.process.pid for worker in pool.workers if worker.process.pid is not None]
            raise RuntimeError("the build fails")
    assert pids and all_gone(pids)


def _run_script(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A Python script in a fresh interpreter, its output as text."""
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=cwd)


# A stop signal that arrives while a worker is being forked, here from inside the fork itself (Python's
# at-fork hooks, where logging releases its locks): the pool must still stop, and leave no worker behind.
_STOP_DURING_FORK = """
import multiprocessing, os, signal, sys
from sitegen.cli.site import Stopped, stopped_by_signals
from sitegen.site.build.pool import WorkerPool

os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGTERM))
pool = WorkerPool(2, multiprocessing.get_context("fork"))
try:
    with stopped_by_signals(), pool:
        pool.start()
        print("went on with", len(pool.workers), "workers", flush=True)
except Stopped:
    print("stopped", flush=True)
"""


def test_a_stop_during_a_fork_is_not_lost(tmp_path: Path) -> None:
    done = _run_script(_STOP_DURING_FORK, tmp_path)
    assert done.stdout == "stopped\n", done.stdout + done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr


# Ctrl-C reaches the workers too; one that lands while a worker is forked (here from inside the fork, in
# the worker) is pending until the worker lets the stop signals in: it must be dropped, not raised there.
_CTRL_C_IN_FORK = """
import multiprocessing, os, signal
from sitegen.site.build.pool import WorkerPool

os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGINT))
with WorkerPool(1, multiprocessing.get_context("fork")) as pool:
    pool.start()
    worker = pool.workers[0]
    worker.conn.send(None)
    worker.process.join(30)
    print("worker exit", worker.process.exitcode, flush=True)
"""


def test_a_ctrl_c_during_a_fork_does_not_raise_in_the_worker(tmp_path: Path) -> None:
    done = _run_script(_CTRL_C_IN_FORK, tmp_path)
    assert done.stdout == "worker exit 0\n", done.stdout + done.stderr
    assert "KeyboardInterrupt" not in done.stderr, done.stderr


# Behind a fork server (watch, where threads run) no fork happens in the build: the stop signals it holds
# while starting a worker must not be held by the server it starts then, nor by what that server forks
# later (the search's and prompts' worker processes), which a SIGHUP or SIGTERM would then not end.
_SERVER_MASK = """
import multiprocessing, signal, threading, time
from concurrent.futures import ProcessPoolExecutor
from sitegen.site.build.pool import WorkerPool

def held():
    return sorted(int(number) for number in signal.pthread_sigmask(signal.SIG_BLOCK, []))

if __name__ == "__main__":
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    context = multiprocessing.get_context("forkserver")
    with WorkerPool(1, context) as pool:
        pool.start()
    with ProcessPoolExecutor(1, mp_context=context) as other:
        print(held(), other.submit(held).result(), flush=True)
"""


def test_a_fork_server_started_by_the_pool_holds_no_stop_signal(tmp_path: Path) -> None:
    script = tmp_path / "server_mask.py"
    script.write_text(_SERVER_MASK)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout == "[] []\n", done.stdout + done.stderr


# A worker that dies is replaced while the build runs other threads (watch's early pages start theirs
# once the first workers are up): the new one must not be forked from a process with threads, where it
# could inherit a lock one of them held. Here the first worker, forked before any thread, is killed by
# its job; the job is tried again in a worker from a fork server, which renders it.
_RESPAWN_WITH_THREADS = """
import multiprocessing, os, signal, sys, threading, time
import sitegen.site.build.worker as worker
from pathlib import Path
from sitegen.site.build.assets import publish_assets
from sitegen.site.build.pool import WorkerPool
from sitegen.site.state.jobs import RenderJob

# From the environment: a fork server that imports this script as its main module (Python 3.14 does)
# patches render_job too, and must still name the build, not itself.
BUILD = int(os.environ.setdefault("RESPAWN_BUILD_PID", str(os.getpid())))
real = worker.render_job

def render_job(job):
    if os.getppid() == BUILD:  # a worker the build forked dies; one from a fork server renders
        os.kill(os.getpid(), signal.SIGKILL)
    return real(job)

worker.render_job = render_job

if __name__ == "__main__":
    session, site = sys.argv[1:]
    assets = publish_assets(Path(site))
    job = RenderJob(session, "pi", "s-1", "alpha", "sessions/alpha/s-1.html", site, assets)
    with WorkerPool(1, multiprocessing.get_context("fork")) as pool:
        pool.start()
        first = type(pool.workers[0].process).__name__
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        outcomes = list(pool.run([job]))
        second = type(pool.workers[0].process).__name__
    print(first, second, [o.problem for o in outcomes], flush=True)
"""


def test_a_worker_replaced_while_threads_run_comes_from_a_fork_server(tmp_path: Path) -> None:
    from site_helpers import make_session

    session = make_session(tmp_path / "agent", "/work/alpha", "s-1", "ZZ_RESPAWN_ZZ")
    script = tmp_path / "respawn.py"
    script.write_text(_RESPAWN_WITH_THREADS)
    command = [sys.executable, str(script), str(session), str(tmp_path / "site")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout == "ForkProcess ForkServerProcess [None]\n", done.stdout + done.stderr
    assert "ZZ_RESPAWN_ZZ" in (tmp_path / "site" / "sessions" / "alpha" / "s-1.html").read_text()


def _copy_tree(source: Path, target: Path) -> None:
    import shutil

    shutil.copytree(source, target)
