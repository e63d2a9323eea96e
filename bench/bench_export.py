"""Time `sitegen export` against pi's own exporter (`pi --export`): wall time, peak memory, page size."""

from __future__ import annotations

import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
MB = 1024 * 1024
REAL_FIXTURES = ROOT.parent / "shared" / "fixtures" / "real"
# Where the reference tools are installed (npm install in /tmp/piref; this sandbox has /tmp/ref).
PIREF = next(
    (p for p in (Path("/tmp/piref/node_modules/.bin"), Path("/tmp/ref/node_modules/.bin")) if p.is_dir()),
    Path("/tmp/piref/node_modules/.bin"),
)
# Issue 19's goals: our export takes at most half of pi's time on the real fixtures, and no more than
# pi's on the generated 50 MB session (any session over BIG_BYTES).
GOAL_TIME_RATIO = 0.5
GOAL_BIG_TIME_RATIO = 1.0
BIG_BYTES = 10_000_000
# Issue 21's bound: the page at most 1.5 x the session file with the default artifact budget.
GOAL_PAGE_RATIO = 1.5
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
SAMPLE_SECONDS = 0.02

__all__ = ["Measured", "pi_transcript_command", "run_measured", "sitegen_command", "tool_command"]


# ---------------------------------------------------------------------------------------------------------
# Running a command in a fresh process and measuring it: shared with bench_build.py.


@dataclass(slots=True)
class Measured:
    """One run of a command: wall time, peak summed RSS and PSS of its process tree, biggest process,
    and the CPU time of the whole tree (user + system, the command and every child it waited for)."""

    seconds: float
    tree_peak: int
    tree_pss: int
    max_rss: int
    returncode: int
    stdout: str
    stderr: str
    cpu: float = 0.0


def _children(pid: int) -> list[int]:
    """Direct children of pid, from /proc/<pid>/task/*/children (every thread can be a parent)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(x) for x in handle.read().split())
        except OSError:
            continue
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def tree_memory(root: int) -> tuple[int, int]:
    """Summed RSS and PSS of root and all its descendants. RSS counts a page shared by a forked worker
    once per process, so it errs high; PSS splits shared pages between their processes."""
    rss = pss = 0
    stack = [root]
    seen: set[int] = set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        rss += _rss(pid)
        pss += _pss(pid)
        stack.extend(_children(pid))
    return rss, pss


class TreeSampler(threading.Thread):
    """Poll a process tree's total RSS and PSS every 20 ms and keep the peaks."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.rss = 0
        self.pss = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            rss, pss = tree_memory(self.pid)
            self.rss = max(self.rss, rss)
            self.pss = max(self.pss, pss)
            self.stopped.wait(SAMPLE_SECONDS)


def run_measured(
    command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None, sample: bool = True
) -> Measured:
    """Run command in a fresh process; time it end to end and (sample) poll its tree's memory. Polling
    costs CPU time beside the tool, most for a tool of several processes on a machine of few cores."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
        sampler = TreeSampler(process.pid)
        if sample:
            sampler.start()
        # wait4 gives this child's own rusage: ru_maxrss is its (or a waited-for descendant's) peak.
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        sampler.stopped.set()
        if sample:
            sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Measured(
            seconds=seconds,
            tree_peak=sampler.rss,
            tree_pss=sampler.pss,
            max_rss=usage.ru_maxrss * 1024,  # Linux reports KiB
            returncode=process.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            # Less bent than wall time on a machine shared with other work.
            cpu=usage.ru_utime + usage.ru_stime,
        )


def sitegen_command(option: str | None) -> list[str]:
    """The sitegen CLI as a user runs it: --sitegen-bin, $SITEGEN_BIN, the script next to this Python,
    or else the CLI's main through this interpreter (sitegen need not be installed)."""
    chosen = option or os.environ.get("SITEGEN_BIN")
    if chosen:
        return [chosen]
    script = Path(sys.executable).parent / "sitegen"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from sitegen.cli import main; sys.exit(main())"]


def tool_command(option: str | None, env_var: str, default: Path) -> list[str] | None:
    """A reference tool from an option, an env var or the default path; None when it is not there."""
    chosen = Path(option or os.environ.get(env_var) or default)
    return [str(chosen)] if chosen.exists() else None


def pi_transcript_command(option: str | None) -> list[str] | None:
    return tool_command(option, "PI_TRANSCRIPT_BIN", PIREF / "pi-transcript")


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for a measured tool: an empty HOME so no real agent dir or config is read."""
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    env.pop("PYTHONTRACEMALLOC", None)
    # An installed package has its bytecode compiled (pip does it); with this set, as in some
    # sandboxes, an editable checkout would compile every sitegen module on every run instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


# ---------------------------------------------------------------------------------------------------------
# What a page shows.

_OUR_ENTRY = re.compile(rb'id="entry-[^"]+"')
_PI_DATA = re.compile(rb'<script id="session-data" type="application/json">(.*?)</script>', re.S)


def session_entries(path: Path) -> int:
    """Entries in the session file: every parseable line but the header and omp's title slot."""
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(record, dict) and record.get("type") not in ("session", "title"):
                count += 1
    return count


def our_entries(page: Path) -> int:
    """Entries our page renders: elements with id="entry-…"."""
    return len(_OUR_ENTRY.findall(page.read_bytes()))


def pi_entries(page: Path) -> int | None:
    """Entries pi's page carries: it embeds the session as base64 JSON and renders it in the browser."""
    match = _PI_DATA.search(page.read_bytes())
    if not match:
        return None
    try:
        data = orjson.loads(base64.b64decode(match.group(1)))
    except (ValueError, orjson.JSONDecodeError):
        return None
    entries = data.get("entries") if isinstance(data, dict) else None
    return len(entries) if isinstance(entries, list) else None


# ---------------------------------------------------------------------------------------------------------
# The benchmark.


def ensure_big_session(target_mb: float, seed: int) -> Path:
    """The generated big session, shared with bench_load.py: made once under bench/out, then reused."""
    from corpus import encode_cwd, write_big_session

    path = OUT / f"big-{target_mb:g}mb-s{seed}" / "sessions" / encode_cwd("/home/dev/work/monorepo") / "big.jsonl"
    if path.exists():
        print(f"reusing {path.relative_to(ROOT)}")
        return path
    started = time.perf_counter()
    info = write_big_session(path, target_mb, seed, deep_chain=True)
    print(f"generated {path.relative_to(ROOT)} in {time.perf_counter() - started:.1f} s: {info.entries} entries")
    return path


@dataclass(slots=True)
class Best:
    """The best of several runs of one tool on one session."""

    seconds: float = float("inf")
    tree_peak: int = 0
    tree_pss: int = 0
    max_rss: int = 0
    page: int = 0
    shown: int | None = None
    failed: str = ""

    def add(self, run: Measured, page: Path, shown: int | None, timed: bool = True) -> None:
        if run.returncode != 0 or not page.exists():
            self.failed = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1][:100]
            return
        if timed:
            self.seconds = min(self.seconds, run.seconds)
        else:  # the memory run: its time is not counted, the polling slows it
            self.tree_peak, self.tree_pss, self.max_rss = run.tree_peak, run.tree_pss, run.max_rss
        self.page = page.stat().st_size
        self.shown = shown


def export_sitegen(command: list[str], session: Path, page: Path, home: Path, sample: bool) -> Measured:
    page.unlink(missing_ok=True)
    return run_measured([*command, "export", str(session), str(page)], env=child_env(home), cwd=home, sample=sample)


def export_pi(command: list[str], session: Path, page: Path, home: Path, sample: bool) -> Measured:
    """pi --export on a fresh copy: pi rewrites v1/v2 files (and files it cannot read) in place."""
    page.unlink(missing_ok=True)
    copy = home / "copy" / session.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(session, copy)
    # PI_OFFLINE: no update check or other network call at start-up.
    env = child_env(home, PI_OFFLINE="1")
    return run_measured([*command, "--export", str(copy), str(page)], env=env, cwd=home, sample=sample)


def measure(sessions: list[Path], sitegen: list[str], pi: list[str] | None, runs: int) -> None:
    pages = OUT / "export"
    pages.mkdir(parents=True, exist_ok=True)
    ours: dict[Path, Best] = {s: Best() for s in sessions}
    theirs: dict[Path, Best] = {s: Best() for s in sessions}
    with tempfile.TemporaryDirectory(prefix="bench-export-home-") as tmp:
        home = Path(tmp)
        # Interleave tools and sessions so a noisy neighbour hurts them all alike. The timed runs poll
        # no memory; a first run of each measures it (first: a child's maxrss starts from this
        # process's size at the fork, which grows as it reads the pages).
        for run in range(runs + 1):
            timed = run > 0
            label = f"run {run}/{runs}" if timed else "memory run"
            for session in sessions:
                page = pages / f"{session.stem}.sitegen.html"
                result = export_sitegen(sitegen, session, page, home, sample=not timed)
                ours[session].add(result, page, our_entries(page) if page.exists() else None, timed)
                line = f"{label} {session.name[:40]:<40} sitegen {result.seconds:6.2f}s"
                if pi:
                    pi_page = pages / f"{session.stem}.pi.html"
                    result = export_pi(pi, session, pi_page, home, sample=not timed)
                    theirs[session].add(result, pi_page, pi_entries(pi_page) if pi_page.exists() else None, timed)
                    line += f"  pi {result.seconds:6.2f}s"
                print(line, flush=True)
    report(sessions, ours, theirs if pi else None, runs)


def _row(name: str, size: int, entries: int, tool: str, best: Best, ratio: str) -> str:
    if best.failed:
        return f"{name:<34} {tool:<8} FAILED: {best.failed}"
    shown = "?" if best.shown is None else str(best.shown)
    return (
        f"{name:<34} {tool:<8} {best.seconds:8.2f} {ratio:>7} {best.tree_peak / MB:7.0f} "
        f"{best.tree_pss / MB:7.0f} {best.max_rss / MB:7.0f} {best.tree_pss / size:6.1f} "
        f"{best.page / MB:8.1f} {best.page / size:6.2f} "
        f"{shown:>6}/{entries}"
    )


def report(sessions: list[Path], ours: dict[Path, Best], theirs: dict[Path, Best] | None, runs: int) -> None:
    print(
        f"\nbest of {runs}; each run a fresh process, wall time end to end; memory sampled every 20 ms in a"
        " separate run"
    )
    print(
        f"{'session':<34} {'tool':<8} {'seconds':>8} {'x pi':>7} {'RSS MB':>7} {'PSS MB':>7} {'maxrss':>7} "
        f"{'x file':>6} "
        f"{'page MB':>8} {'x file':>6} {'shown/entries':>13}"
    )
    verdicts: list[str] = []
    for session in sessions:
        size = session.stat().st_size
        entries = session_entries(session)
        name = f"{session.name[:26]} {size / MB:5.1f}MB"
        mine = ours[session]
        pi = theirs[session] if theirs else None
        ratio = "-"
        if pi and not pi.failed and not mine.failed:
            value = mine.seconds / pi.seconds
            ratio = f"{value:.2f}"
            shown = "" if pi.shown == entries else f" (pi's page carries {pi.shown} of {entries} entries)"
            goal = GOAL_BIG_TIME_RATIO if size > BIG_BYTES else GOAL_TIME_RATIO
            verdicts.append(
                f"{session.name}: {value:.2f}x pi's time (goal <= {goal}) {'ok' if value <= goal else 'MISS'}{shown}"
            )
        print(_row(name, size, entries, "sitegen", mine, ratio))
        if pi:
            print(_row("", size, entries, "pi", pi, ""))
    if not theirs:
        print("\npi not found (--pi-bin / $PI_BIN / /tmp/piref/node_modules/.bin/pi): comparison skipped")
    print("\ncolumns: RSS / PSS MB = peaks of the process tree's summed RSS / PSS (PSS splits pages a forked")
    print("child shares); maxrss = the biggest single process; x file = tree PSS or page over the session")
    print("file size; shown = entries the page renders")
    print('(ours: id="entry-" elements; pi: entries in its embedded session JSON)')
    good = [s for s in sessions if not ours[s].failed]
    if len(good) >= 2:
        small, big = min(good, key=lambda s: s.stat().st_size), max(good, key=lambda s: s.stat().st_size)
        grow = (ours[big].tree_pss - ours[small].tree_pss) / max(1, big.stat().st_size - small.stat().st_size)
        page = ours[big].page / big.stat().st_size
        verdicts.append(f"memory: {grow:.1f} MB more tree PSS per MB of session ({small.name} to {big.name})")
        verdicts.append(
            f"page size, {big.name}: {page:.2f}x the session (goal <= {GOAL_PAGE_RATIO}) "
            f"{'ok' if page <= GOAL_PAGE_RATIO else 'MISS'}"
        )
    print()
    for verdict in verdicts:
        print(verdict)


# ---------------------------------------------------------------------------------------------------------
# The 50 MB session with its artifact folder as a long omp session has it (issue 32, point 5).

# The folder: 1,116 tool logs and 1,686 subagent outputs with their transcripts.
FOLDER_LOGS = 1116
FOLDER_SUBAGENTS = 1686
# The system calls that say how often the folder is listed and its files looked at.
FILE_CALLS = ("getdents64", "openat", "newfstatat", "statx", "stat", "lstat", "fstat")


def ensure_folder_session(target_mb: float, seed: int) -> Path:
    """The big session with a crowded artifact folder (bench/corpus.py --logs --subagents), made once."""
    from corpus import encode_cwd, write_big_session
    from output_folders import made_once

    folder = OUT / f"big-{target_mb:g}mb-s{seed}-l{FOLDER_LOGS}-a{FOLDER_SUBAGENTS}"
    path = folder / "sessions" / encode_cwd("/home/dev/work/monorepo") / "big.jsonl"

    def write() -> None:
        started = time.perf_counter()
        info = write_big_session(path, target_mb, seed, logs=FOLDER_LOGS, subagents=FOLDER_SUBAGENTS)
        print(
            f"generated {path.relative_to(ROOT)} in {time.perf_counter() - started:.1f} s: {info.entries} entries, "
            f"{info.artifacts} logs, {info.subagents} subagent runs"
        )

    if not made_once(folder, write):
        print(f"reusing {path.relative_to(ROOT)}")
    return path


def strace_counts(command: Sequence[str], env: Mapping[str, str], cwd: Path) -> dict[str, int] | None:
    """Calls per system call of one run of command and its children (strace -c -f); None without strace."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".strace") as out:
        subprocess.run(
            [strace, "-f", "-c", "-o", out.name, *command],
            env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        counts: dict[str, int] = {}
        for line in Path(out.name).read_text().splitlines():
            fields = line.split()
            # % time, seconds, usecs/call, calls, [errors,] syscall
            if len(fields) >= 5 and fields[3].isdigit() and not fields[-1].startswith("total"):
                counts[fields[-1]] = int(fields[3])
        return counts


def measure_folder(
    session: Path, sitegen: list[str], pi: list[str] | None, runs: int, before: list[str] | None = None
) -> None:
    """sitegen export with the folder present (budget and none), of the file alone, and pi on a copy;
    with `before` (another sitegen, such as a checkout of older code), its exports with the folder too."""
    folder = session.with_suffix("")
    names = os.listdir(folder)
    print(
        f"\n{session.name}: {session.stat().st_size / MB:.1f} MB; its folder {len(names)} files "
        f"({sum(n.endswith('.log') for n in names)} logs, {sum(n.endswith('.md') for n in names)} subagent outputs, "
        f"{sum(n.endswith('.jsonl') for n in names)} transcripts), "
        f"{sum((folder / n).stat().st_size for n in names) / MB:.0f} MB"
    )
    pages = OUT / "export"
    pages.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-export-folder-") as tmp:
        home = Path(tmp)
        # The same file with no folder beside it, in an agent dir with the same blobs.
        alone = home / "alone" / "sessions" / session.parent.name / session.name
        alone.parent.mkdir(parents=True)
        shutil.copyfile(session, alone)
        shutil.copytree(session.parents[2] / "blobs", home / "alone" / "blobs")
        variants: dict[str, tuple[list[str], Path]] = {}
        for label, source, extra in (
            ("sitegen", session, []),
            ("sitegen --artifacts none", session, ["--artifacts", "none"]),
            ("sitegen, the file alone", alone, []),
        ):
            page = pages / f"folder-{len(variants)}.html"
            variants[label] = ([*sitegen, "export", str(source), str(page), *extra], page)
        for label, extra in (("before", []), ("before --artifacts none", ["--artifacts", "none"])):
            if before:
                page = pages / f"folder-{len(variants)}.html"
                variants[label] = ([*before, "export", str(session), str(page), *extra], page)
        best = {label: Best() for label in [*variants, *(["pi"] if pi else [])]}
        cpu = dict.fromkeys(best, float("inf"))
        for run in range(runs + 1):
            timed = run > 0
            line = f"{f'run {run}/{runs}' if timed else 'memory run'}:"
            for label, (command, page) in variants.items():
                page.unlink(missing_ok=True)
                result = run_measured(command, env=child_env(home), cwd=home, sample=not timed)
                best[label].add(result, page, None, timed)
                cpu[label] = min(cpu[label], result.cpu) if timed else cpu[label]
                line += f"  {label} {result.seconds:.2f}s"
            if pi:
                page = pages / "folder-pi.html"
                result = export_pi(pi, session, page, home, sample=not timed)
                best["pi"].add(result, page, None, timed)
                cpu["pi"] = min(cpu["pi"], result.cpu) if timed else cpu["pi"]
                line += f"  pi {result.seconds:.2f}s"
            print(line, flush=True)
        traced = {label: strace_counts(command, child_env(home), home) for label, (command, _) in variants.items()}
    reference = best["pi"].seconds if pi and not best["pi"].failed else None
    print(f"\nbest of {runs}; CPU = user + system of the whole tree (best run); PSS = peak tree PSS (memory run)")
    print(f"{'export':<26} {'wall s':>7} {'x pi':>6} {'CPU s':>6} {'PSS MB':>7} {'maxrss':>7} {'page MB':>8}")
    for label, result in best.items():
        if result.failed:
            print(f"{label:<26} FAILED: {result.failed}")
            continue
        ratio = f"{result.seconds / reference:.2f}" if reference else "-"
        print(
            f"{label:<26} {result.seconds:7.2f} {ratio:>6} {cpu[label]:6.2f} {result.tree_pss / MB:7.0f} "
            f"{result.max_rss / MB:7.0f} {result.page / MB:8.1f}"
        )
    if all(counts is None for counts in traced.values()):
        print("\nstrace not found: system calls not counted")
        return
    print(f"\nsystem calls of one run (strace -c -f)\n{'export':<26} " + " ".join(f"{c:>10}" for c in FILE_CALLS))
    for label, counts in traced.items():
        print(f"{label:<26} " + " ".join(f"{(counts or {}).get(c, 0):>10}" for c in FILE_CALLS))


def profile(session: Path) -> None:
    """Time the export's stages in this process (the second half not forked) and cProfile them."""
    import cProfile
    import pstats

    sys.path.insert(0, str(ROOT))
    from sitegen.render.export import export_page, load_transcript

    profiler = cProfile.Profile()
    page = OUT / "export" / f"{session.stem}.profile.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    transcript = profiler.runcall(load_transcript, session, [])
    loaded = time.perf_counter()
    size = profiler.runcall(export_page, transcript, page, parallel=False)
    written = time.perf_counter()
    print(
        f"load_transcript {loaded - started:.2f} s, export_page {written - loaded:.2f} s "
        f"({size / 1e6:.1f} MB; under cProfile, which slows Python code down)"
    )
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(20)
    stats.sort_stats("cumulative").print_stats(25)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mb", type=float, default=50.0, help="size of the generated session")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-big", action="store_true", help="only the real fixture files")
    parser.add_argument("--session", type=Path, action="append", help="measure these files instead")
    parser.add_argument("--sitegen-bin", help="the sitegen CLI (default: $SITEGEN_BIN, or this Python's)")
    parser.add_argument("--pi-bin", help=f"pi's CLI (default: $PI_BIN or {PIREF / 'pi'})")
    parser.add_argument("--profile", type=Path, metavar="SESSION", help="cProfile one export in-process")
    parser.add_argument(
        "--folder", action="store_true", help="only the big session with its crowded artifact folder, against pi"
    )
    parser.add_argument("--no-folder", action="store_true", help="without the big session's crowded folder")
    parser.add_argument("--before-bin", help="with --folder: another sitegen CLI (older code) to measure beside")
    args = parser.parse_args(argv)
    if args.profile:
        profile(args.profile)
        return 0
    sitegen = sitegen_command(args.sitegen_bin)
    pi = tool_command(args.pi_bin, "PI_BIN", PIREF / "pi")
    if args.folder:
        before = [args.before_bin] if args.before_bin else None
        measure_folder(ensure_folder_session(args.mb, args.seed), sitegen, pi, args.runs, before)
        return 0
    sessions: list[Path] = list(args.session or [])
    if not sessions:
        if REAL_FIXTURES.is_dir():
            sessions += sorted(REAL_FIXTURES.glob("*.jsonl"))
        else:
            print(f"no real fixtures at {REAL_FIXTURES}: skipped")
        if not args.no_big:
            sessions.append(ensure_big_session(args.mb, args.seed))
    print(f"sitegen: {' '.join(sitegen)[:100]}")
    print(f"pi:      {' '.join(pi) if pi else 'not found, comparison skipped'}")
    measure(sessions, sitegen, pi, args.runs)
    if not args.no_big and not args.no_folder and not args.session:
        measure_folder(ensure_folder_session(args.mb, args.seed), sitegen, pi, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
