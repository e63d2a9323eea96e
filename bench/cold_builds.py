"""Cold builds against pi-transcript --all, turn about on several corpora (bench_build.py --cold-only)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from agent_sessions import session_files
from bench_export import MB, Measured, child_env, run_measured
from output_folders import OUT, emptied
from step_series import Series, goal_verdict

__all__ = ["BASELINE", "GOAL_COLD_RATIO", "cold_build_run", "cold_only", "pi_transcript_run"]

GOAL_COLD_RATIO = 1.0  # of pi-transcript's time (issue 19)
BASELINE = "cold build (baseline)"


def pi_transcript_run(pi_transcript: list[str], agent: Path, out: Path, *, sample: bool) -> Measured:
    """`pi-transcript --all` over agent's sessions (it reads only ~/.pi/agent/sessions: a temp HOME links there)."""
    emptied(out)
    with tempfile.TemporaryDirectory(prefix="bench-build-pt-home-") as tmp:
        home = Path(tmp)
        (home / ".pi" / "agent").mkdir(parents=True)
        (home / ".pi" / "agent" / "sessions").symlink_to(agent.resolve() / "sessions")
        command = [*pi_transcript, "--all", "-o", str(out), "--no-open"]
        return run_measured(command, env=child_env(home), cwd=home, sample=sample)


def cold_build_run(sitegen: list[str], agent: Path, site: Path, jobs: int, *, sample: bool) -> Measured:
    """`sitegen build` on an empty site folder with a fresh HOME."""
    emptied(site)
    with tempfile.TemporaryDirectory(prefix="bench-build-home-") as tmp:
        command = [*sitegen, "build", "--out", str(site), "--agent-dir", str(agent.resolve()), "--jobs", str(jobs)]
        return run_measured(command, env=child_env(Path(tmp)), cwd=Path(tmp), sample=sample)


def cold_only(
    corpora: list[tuple[str, Path]],
    sitegen: list[str],
    pi_transcript: list[str],
    jobs: int,
    runs: int,
    baseline: list[str] | None = None,
) -> None:
    """Cold builds and pi-transcript --all, turn about on each corpus: the first round polls memory,
    the others time the tools without the polling's cost (with one round, its times are shown).
    baseline: another sitegen CLI (an older checkout) whose cold build runs turn about with this one's."""
    series: dict[tuple[str, str], Series] = {}
    memory: dict[tuple[str, str], Measured] = {}
    tools = ["cold build", *([BASELINE] if baseline else []), "pi-transcript --all"]
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for index in range(1, runs + 1):
        sample = index == 1
        for name, agent in corpora:
            for tool in tools:
                if tool == "pi-transcript --all":
                    measured = pi_transcript_run(pi_transcript, agent, OUT / "build" / f"pt-{name}", sample=sample)
                else:
                    command = baseline if tool == BASELINE and baseline else sitegen
                    measured = cold_build_run(command, agent, OUT / "build" / f"cold-{name}", jobs, sample=sample)
                if sample:
                    memory[name, tool] = measured
                if not sample or runs == 1:
                    series.setdefault((name, tool), Series()).add(measured)
                failed = f"  FAILED: {measured.stderr.strip()[-300:]}" if measured.returncode else ""
                print(
                    f"  run {index}: {name:<6} {tool:<22} {measured.seconds:6.2f} s {measured.cpu:6.2f} CPU s"
                    f"{' (memory polled)' if sample else ''}{failed}",
                    flush=True,
                )
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"\nbest of {runs - 1 if runs > 1 else 1} (times), memory from the first run; --jobs {jobs}")
    header = f"{'seconds':>8} {'CPU s':>8} {'tree RSS MB':>12} {'tree PSS MB':>12} {'max proc MB':>12}"
    print(f"{'corpus':<8} {'step':<22} {header}")
    for name, _ in corpora:
        for tool in tools:
            best, peak = series[name, tool], memory[name, tool]
            print(
                f"{name:<8} {tool:<22} {best.best('seconds'):8.2f} {best.best('cpu'):8.2f} "
                f"{peak.tree_peak / MB:12.0f} {peak.tree_pss / MB:12.0f} {peak.max_rss / MB:12.0f}"
            )
    # The share of the cores the build kept busy, CPU s / (cores x wall): steadier than wall on a
    # shared machine, and what overlapping the build's stages moves. Ranges over the timed runs.
    cores = os.cpu_count() or 1
    print(f"\n{'corpus':<8} {'step':<22} {'wall s':>13} {'CPU s':>13} {f'busy of {cores} cores':>18}")
    for name, _ in corpora:
        for tool in tools:
            ok = series[name, tool].ok
            walls, cpus = [r.seconds for r in ok], [r.cpu for r in ok]
            busy = [r.cpu / (cores * r.seconds) for r in ok if r.seconds]
            print(f"{name:<8} {tool:<22} {_span(walls, '.2f'):>13} {_span(cpus, '.2f'):>13} {_span(busy, '.0%'):>18}")
    goal = f"goal <= {GOAL_COLD_RATIO}x wall"
    print(f"\n{'corpus':<8} {'sessions':>8} {'MB':>7} {'wall ratio':>11} {'CPU ratio':>10}  {goal}")
    for name, agent in corpora:
        files = session_files(agent)
        size = sum(p.stat().st_size for p in files) / MB
        ours, theirs = series[name, "cold build"], series[name, "pi-transcript --all"]
        wall = ours.best("seconds") / theirs.best("seconds")
        cpu = ours.best("cpu") / theirs.best("cpu")
        mark = goal_verdict(wall, GOAL_COLD_RATIO)
        print(f"{name:<8} {len(files):>8} {size:>7.1f} {wall:>10.2f}x {cpu:>9.2f}x  {mark}")


def _span(values: list[float], spec: str) -> str:
    """min-max of the values, as spec formats each ("-" for none)."""
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low:{spec}}" if format(low, spec) == format(high, spec) else f"{low:{spec}}-{high:{spec}}"
