"""One writer per site: a second build or watch of the same --out waits, or with --no-wait says who holds it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import orjson
from fault_helpers import (
    finish,
    needs_proc,
    run_cli,
    start_cli,
    wait_for_workers,
)
from site_helpers import crawl, make_session

from sitegen.site.state.lock import LOCK_PATH

pytestmark = needs_proc


def test_a_second_build_with_no_wait_names_the_holder(tmp_path: Path, corpus: Path) -> None:
    site = tmp_path / "site"
    first = start_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    workers = wait_for_workers(first)
    second = run_cli("build", "--out", site, "--agent-dir", corpus, "--no-wait")
    os.kill(first.pid, signal.SIGTERM)
    finish(first, workers)
    assert second.returncode == 1
    assert (
        second.stderr
        == f"{site} is being written by `sitegen build` (process {first.pid}, since "
        + (second.stderr.split("since ", 1)[1])
    )
    assert second.stderr.endswith("); try again when it is done\n")
    assert second.stdout == ""


def test_a_second_build_waits_for_the_first(tmp_path: Path, corpus: Path) -> None:
    site = tmp_path / "site"
    first = start_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    workers = wait_for_workers(first)
    second = start_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    assert second.stderr is not None
    waiting = second.stderr.readline()
    assert waiting.startswith(f"Waiting for `sitegen build` (process {first.pid}, since ")
    assert waiting.endswith(f") to finish with {site} (Ctrl-C to give up)\n")
    os.kill(first.pid, signal.SIGTERM)
    finish(first, workers)
    out, _ = second.communicate()
    assert second.returncode == 0 and out.startswith(f"Built {site}: 24 sessions")
    assert crawl(site) == []


def test_the_lock_of_a_killed_build_is_taken_over(tmp_path: Path, corpus: Path) -> None:
    site = tmp_path / "site"
    first = start_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    workers = wait_for_workers(first)
    os.kill(first.pid, signal.SIGKILL)
    finish(first, workers)
    assert orjson.loads((site / LOCK_PATH).read_bytes())["pid"] == first.pid  # it names the dead build
    again = run_cli("build", "--out", site, "--agent-dir", corpus, "--no-wait")
    assert again.returncode == 0, again.stderr
    assert "Waiting" not in again.stderr


def test_a_lock_file_naming_a_live_process_that_holds_no_lock_is_taken(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "alpha-1", "ZZ_ALPHA_ZZ")
    site = tmp_path / "site"
    (site / LOCK_PATH).parent.mkdir(parents=True)
    (site / LOCK_PATH).write_bytes(orjson.dumps({"pid": os.getpid(), "command": "sitegen build", "started": "x"}))
    done = run_cli("build", "--out", site, "--agent-dir", agent, "--no-wait")
    assert done.returncode == 0, done.stderr


def test_build_while_watch_serves_the_same_site(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "alpha-1", "ZZ_ALPHA_ZZ")
    site = tmp_path / "site"
    watch = start_cli("watch", "--out", site, "--agent-dir", agent, "--port", "0")
    assert watch.stdout is not None
    assert watch.stdout.readline().startswith(f"Serving {site} at http://127.0.0.1:")
    busy = run_cli("build", "--out", site, "--agent-dir", agent, "--no-wait")
    assert busy.returncode == 1
    assert busy.stderr.startswith(f"{site} is being written by `sitegen watch` (process {watch.pid}, since ")
    os.kill(watch.pid, signal.SIGINT)
    out, _ = watch.communicate()
    assert watch.returncode == 0 and out.endswith("Stopped.\n")
    done = run_cli("build", "--out", site, "--agent-dir", agent, "--no-wait")
    assert done.returncode == 0 and "is up to date" in done.stdout
