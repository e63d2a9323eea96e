"""Nothing done is lost: a build killed half way leaves whole pages, indexes that link only to pages
that exist, and a manifest from which the next build renders only what was not finished."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import orjson
from fault_helpers import (
    copy_corpus,
    finish,
    manifest_data,
    needs_proc,
    reachable_problems,
    recorded,
    run_cli,
    start_cli,
    temporaries,
    wait_until,
)
from site_helpers import crawl

pytestmark = needs_proc


def _rendered(stdout: str) -> int:
    found = re.search(r": 24 sessions, (\d+) rendered", stdout)
    assert found, stdout
    return int(found.group(1))


def _site_files(site: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(site)): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file() and p.relative_to(site).parts[0] != ".sitegen"
    }


def test_a_killed_cold_build_is_finished_by_the_next_one(tmp_path: Path, corpus: Path) -> None:
    site = tmp_path / "site"
    # Progress saved after every page, so the build is killed between two saves however fast it runs.
    build = start_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2", env={"SITEGEN_CHECKPOINT_S": "0"})
    wait_until(lambda: recorded(site) >= 3 or build.poll() is not None, "three pages saved in the manifest")
    assert build.poll() is None, "the build ended before it could be killed"
    os.kill(build.pid, signal.SIGKILL)
    finish(build)
    kept = recorded(site)
    assert 3 <= kept < 24 and manifest_data(site)["complete"] is False
    pages = list(site.rglob("*.html"))
    assert all(page.read_text().rstrip().endswith("</html>") for page in pages)  # each page whole

    again = run_cli("build", "--out", site, "--agent-dir", corpus, "--jobs", "2")
    assert again.returncode == 0, again.stderr
    assert _rendered(again.stdout) == 24 - kept  # only what was not finished
    assert temporaries(site) == []  # what the killed writes left is cleared
    assert manifest_data(site)["complete"] is True
    cold = tmp_path / "cold"
    assert run_cli("build", "--out", cold, "--agent-dir", corpus, "--jobs", "2").returncode == 0
    assert _site_files(site) == _site_files(cold)  # the same site as one build makes


def test_a_rebuild_stopped_half_way_links_only_to_pages_that_exist(tmp_path: Path, corpus: Path) -> None:
    """Sessions gone, grown and new; stopped by SIGTERM after its progress was saved once."""
    agent = copy_corpus(corpus, tmp_path / "agent")
    site = tmp_path / "site"
    assert run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "2").returncode == 0
    sessions = sorted(agent.rglob("sessions/*/*.jsonl"))
    for gone in sessions[:3]:
        gone.unlink()
    for grown in sessions[3:]:
        with grown.open("ab") as handle:
            handle.write(orjson.dumps({"type": "custom", "customType": "zz", "id": "zz000001"}) + b"\n")
    moved = sessions[3].with_name("2026-01-01T00-00-00-000Z_zz-new.jsonl")
    moved.write_bytes(sessions[3].read_bytes())  # and one new session
    # Progress saved after every page, so the build is stopped between two saves however fast it runs.
    build = start_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "2", env={"SITEGEN_CHECKPOINT_S": "0"})
    wait_until(lambda: manifest_data(site).get("complete") is False or build.poll() is not None, "a checkpoint")
    assert build.poll() is None, "the build ended before it could be stopped"
    os.kill(build.pid, signal.SIGTERM)
    stderr = finish(build)
    assert build.returncode == 143 and stderr.endswith("Build interrupted\n"), stderr
    assert reachable_problems(site) == []
    entries = manifest_data(site)["sessions"]
    changed = [*sessions[3:], moved]
    # Rendered again before the stop: the manifest has the file's new size.
    finished = sum(
        1 for path in changed if entries.get(str(path), {}).get("fingerprint", [0])[0] == path.stat().st_size
    )

    again = run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "2")
    assert again.returncode == 0, again.stderr
    assert f": 22 sessions, {len(changed) - finished} rendered, 3 removed" in again.stdout
    assert crawl(site) == [] and manifest_data(site)["complete"] is True
    assert finished > 0
