"""bench/bench_design.py's variants: each build runs with its replacements, or the bench would report a lie."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from site_helpers import make_session

from sitegen.site.build.config import POOL_MIN_JOBS

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import bench_design  # noqa: E402


@pytest.mark.parametrize("variant", bench_design.VARIANTS)
def test_each_variant_builds_as_it_says(tmp_path: Path, variant: str) -> None:
    # Enough sessions for the build to render them in its worker processes, as the bench's 200 are:
    # the replacements must reach the workers, not only the build's own process.
    agent = tmp_path / "agent"
    for number in range(POOL_MIN_JOBS + 1):
        make_session(agent, f"/work/p{number % 2}", f"s-{number}", f"ZZ_S{number}_ZZ")
    site = tmp_path / "site"
    command = [*bench_design.variant_command(variant), "build", "--out", str(site), "--agent-dir", str(agent)]
    command += ["--jobs", "2", "--profile"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(summed over 3 processes)" in done.stdout, done.stdout
    assert bench_design.took_effect(variant, site) == ""
    # And the check itself tells a variant from another.
    others = [other for other in bench_design.VARIANTS if other != variant]
    assert all(bench_design.took_effect(other, site) for other in others)


def test_generated_data_is_made_once_and_a_half_made_folder_again(tmp_path: Path) -> None:
    from output_folders import made_once

    folder = tmp_path / "corpus"
    calls: list[str] = []

    def make() -> None:
        calls.append("made")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "session.jsonl").write_text("{}\n")

    assert made_once(folder, make) is True
    assert made_once(folder, make) is False and calls == ["made"]
    # A run stopped before its mark: the folder is started again from nothing.
    (folder / ".complete").unlink()
    (folder / "half-written.jsonl").write_text("{")
    assert made_once(folder, make) is True and calls == ["made", "made"]
    assert sorted(p.name for p in folder.iterdir()) == [".complete", "session.jsonl"]
