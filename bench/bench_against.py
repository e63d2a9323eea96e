"""Turn about: `sitegen build` of this checkout's code and of another's, cold, no-op and one session changed."""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench_build import OUT, ROOT, append_entry, ensure_corpus, page_shows, rendered_count, session_files
from bench_export import MB, Measured, child_env, run_measured
from watch_cold import set_activity_mtimes

STEPS = ("cold build", "no-op rebuild", "median session changed")
CLI = [sys.executable, "-c", "import sys; from sitegen.cli import main; sys.exit(main())"]


class Tree:
    """One code tree, with its own copy of the corpus and its own site."""

    def __init__(self, name: str, code: Path, source: Path, jobs: int, sample: bool) -> None:
        self.name, self.code, self.jobs, self.sample = name, code, jobs, sample
        work = OUT / "against" / name
        self.agent, self.site = work / "agent", work / "site"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(source, self.agent, symlinks=True)
        set_activity_mtimes(session_files(self.agent))
        by_size = sorted(session_files(self.agent), key=lambda p: p.stat().st_size)
        self.median = by_size[len(by_size) // 2]
        self.runs: dict[str, list[Measured]] = {step: [] for step in STEPS}
        self.notes: list[str] = []
        self.appended = 0

    def run(self, home: Path, *args: str) -> Measured:
        env = child_env(home, PYTHONPATH=str(self.code))
        return run_measured([*CLI, *args], env=env, cwd=home, sample=self.sample)

    def build(self, step: str, home: Path) -> Measured:
        run = self.run(home, "build", "--out", str(self.site), "--agent-dir", str(self.agent), "--jobs", str(self.jobs))
        if run.returncode != 0:
            raise SystemExit(f"{self.name}: {step} failed: {run.stderr.strip()[-400:]}")
        self.runs[step].append(run)
        return run

    def cold(self, home: Path) -> None:
        shutil.rmtree(self.site, ignore_errors=True)
        self.run(home, "--help")  # its bytecode compiled before the first measured run
        self.build("cold build", home)

    def rebuilds(self, home: Path) -> None:
        """A no-op rebuild, then one after a user message appended to the median session."""
        noop = self.build("no-op rebuild", home)
        if rendered_count(noop) != 0:
            self.notes.append(f"a no-op rendered {rendered_count(noop)} sessions")
        self.appended += 1
        token = f"ZZ_BENCH_AGAINST_{self.appended}_ZZ"
        append_entry(self.median, token)
        changed = self.build("median session changed", home)
        if rendered_count(changed) != 1 or not page_shows(self.site, self.median, token):
            self.notes.append(f"append {self.appended}: {rendered_count(changed)} rendered, or the page lacks it")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--against", type=Path, required=True, help="the other code tree (e.g. a worktree of main)")
    parser.add_argument("--runs", type=int, default=3, help="cold builds of each tree")
    parser.add_argument("--rebuilds", type=int, default=5, help="no-op and one-session rebuilds after each")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--total-mb", type=float, default=120.0)
    parser.add_argument("--one-session-mb", type=float, default=18.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sample", action="store_true", help="poll the tree's memory too (costs CPU time)")
    args = parser.parse_args(argv)
    source = ensure_corpus(args.sessions, args.total_mb, args.seed, args.one_session_mb)
    codes = (("this", ROOT), ("against", args.against))
    trees = [Tree(name, code, source, args.jobs, args.sample) for name, code in codes]
    for index in range(args.runs):
        # Each goes first every other time: a noisy neighbour hurts both alike.
        with tempfile.TemporaryDirectory(prefix="bench-against-home-") as tmp:
            homes = {tree.name: Path(tmp) / tree.name for tree in trees}
            for tree in trees if index % 2 == 0 else trees[::-1]:
                homes[tree.name].mkdir()
                tree.cold(homes[tree.name])
                print(f"  run {index + 1} {tree.name:<8} cold build CPU s {tree.runs['cold build'][-1].cpu:.3f}")
            for again in range(args.rebuilds):
                for tree in trees if (index + again) % 2 == 0 else trees[::-1]:
                    tree.rebuilds(homes[tree.name])
            for tree in trees:
                cpu = "  ".join(f"{step} {statistics.median(r.cpu for r in tree.runs[step]):.3f}" for step in STEPS[1:])
                print(f"  run {index + 1} {tree.name:<8} median CPU s so far: {cpu}", flush=True)
    print(f"\n{'step':<24} {'tree':<8} {'CPU s best':>10} {'median':>8} {'wall best':>10} {'PSS MB':>7}")
    for step in STEPS:
        for tree in trees:
            runs = tree.runs[step]
            cpu = [run.cpu for run in runs]
            pss = max(run.tree_pss for run in runs) / MB if args.sample else float("nan")
            wall = min(run.seconds for run in runs)
            middle = statistics.median(cpu)
            print(f"{step:<24} {tree.name:<8} {min(cpu):>10.3f} {middle:>8.3f} {wall:>10.3f} {pss:>7.0f}")
    for tree in trees:
        for note in tree.notes:
            print(f"note ({tree.name}): {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
