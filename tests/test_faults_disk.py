"""Disk full: a build that hits ENOSPC stops with one clear line and exit 1, and leaves the previous
site as it was; once there is room, the next build finishes it. On a real (1 MB) tmpfs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from fault_helpers import DEADLINE_S

SCENARIO = Path(__file__).with_name("disk_full_scenario.py")


def _unshare() -> list[str]:
    """A command prefix that runs in a mount namespace of its own, where mounting a tmpfs is allowed."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs unshare(1) and mount(8)")
    prefix = ["unshare", "--user", "--map-root-user", "--mount"]
    probe = subprocess.run([*prefix, "mount", "-t", "tmpfs", "tmpfs", "/mnt"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a namespace here: {probe.stderr.decode().strip()}")
    return prefix


@pytest.mark.parametrize(("big_ones", "jobs"), [(1, 1), (4, 2)], ids=["in the build's process", "in workers"])
def test_a_full_disk_stops_the_build_and_keeps_the_site(tmp_path: Path, big_ones: int, jobs: int) -> None:
    tests = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [*_unshare(), sys.executable, str(SCENARIO), str(tmp_path), str(big_ones), str(jobs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE_S * 4,
    )
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["first"]["code"] == 0, report["first"]

    full = report["full"]
    assert full["code"] == 1, full
    lines = [line for line in full["stderr"].splitlines() if not line.endswith(" written")]
    assert len(lines) == 1 and "Traceback" not in full["stderr"], full["stderr"]
    assert lines[0].startswith("Build stopped: No space left on device writing ")
    assert lines[0].endswith("free some space and build again to finish")
    # The previous site, page for page (only the build's own state may have moved on).
    assert [name for name in report["changed"] if not name.startswith(".sitegen/")] == []
    assert report["broken_links"] == []

    freed = report["after_freeing"]
    assert freed["code"] == 0, freed
    assert f"{3 + big_ones} sessions" in freed["stdout"] and "0 problems" in freed["stdout"]
    assert report["final_broken_links"] == [] and report["final_temporaries"] == []
