"""`sitegen build --profile`: where the time went, per phase and in total."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.timings import PHASES, PhaseClock

GOLDEN_DEMO = Path(__file__).resolve().parent / "fixtures" / "golden" / "demo"
runner = CliRunner()


def _table(output: str) -> dict[str, float]:
    """phase -> seconds, from the lines after the table's head."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split() == ["phase", "seconds", "share"])
    rows = {}
    for line in lines[start + 1 :]:
        words = line.split()
        rows[words[0]] = float(words[1])
        if words[0] == "wall":
            return rows
    raise AssertionError("the table has no wall time")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_build_profile_prints_every_phase_and_the_total(tmp_path: Path, jobs: str) -> None:
    site = tmp_path / "site"
    args = ["build", "--out", str(site), "--agent-dir", str(GOLDEN_DEMO / "pi"), "--jobs", jobs, "--profile"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = _table(result.output)
    # The worker phases are there whether the sessions render in this process or in a pool.
    for phase in ("plan", "load", "highlight", "markdown", "templates", "search", "related", "stats", "write"):
        assert phase in rows, phase
    # Each of the site pages' generators under its own name (sitegen.site.pages.site_pages).
    for phase in ("prompts", "problems", "projects", "all-sessions", "home"):
        assert phase in rows, phase
    phases = {name: value for name, value in rows.items() if name not in ("total", "wall")}
    assert set(phases) <= set(PHASES)
    assert rows["total"] == pytest.approx(sum(phases.values()), abs=0.001 * len(phases))
    assert "summed over 1 process" in result.output if jobs == "1" else "summed over 3 processes" in result.output
    # A no-op rebuild renders nothing: only the plan is timed.
    again = _table(runner.invoke(app, args).output)
    assert "highlight" not in again and "plan" in again


def test_build_without_profile_prints_no_table(tmp_path: Path) -> None:
    args = ["build", "--out", str(tmp_path / "site"), "--agent-dir", str(GOLDEN_DEMO / "pi"), "--jobs", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "phase" not in result.output


def test_nested_phases_count_their_own_time() -> None:
    ticks = iter([0.0, 2.0, 7.0, 10.0])  # templates opens, highlight runs 2..7, templates closes at 10
    clock = PhaseClock(now=lambda: next(ticks))
    with clock.phase("templates"):
        clock.timed("highlight", lambda: None)()
    assert clock.take() == {"templates": 5.0, "highlight": 5.0}
    assert clock.seconds == {}


def test_paused_time_goes_to_no_phase() -> None:
    # search opens at 0; paused from 1 to 6 (a worker's render, whose seconds come back with it); closes at 8
    ticks = iter([0.0, 1.0, 6.0, 8.0])
    clock = PhaseClock(now=lambda: next(ticks))
    with clock.phase("search"), clock.paused():
        clock.add({"load": 4.0})
    assert clock.take() == {"search": 3.0, "load": 4.0}
