"""Time `sitegen build` (cold, no-op, one session changed), `sitegen watch` latency, and pi-transcript."""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_sessions import append_entry, ensure_corpus, page_shows, session_files
from bench_export import (
    MB,
    Measured,
    child_env,
    pi_transcript_command,
    run_measured,
    sitegen_command,
)
from cold_builds import GOAL_COLD_RATIO, cold_only
from output_folders import OUT, ROOT, emptied, tree_bytes
from step_series import Series, goal_verdict, rendered_count, summary_line
from watch_cold import ColdWatch, best_cold, cold_watch_rows, measure_cold_watch, set_activity_mtimes, stop_watch

# bench_against.py imports the corpus and session helpers from here.
__all__ = ["OUT", "ROOT", "append_entry", "ensure_corpus", "main", "page_shows", "rendered_count", "session_files"]

# The goals (the cold build's, against pi-transcript: cold_builds.GOAL_COLD_RATIO).
GOAL_PEAK_MB = 300.0
GOAL_NOOP_S = 0.2
GOAL_CHANGED_S = 0.3
GOAL_WATCH_S = 0.5
# The live server's event stream (sitegen/site/live/serve.py EVENTS_URL).
EVENTS_URL = "/__sitegen__/events"
WATCH_SAMPLES = 5
WATCH_TIMEOUT_S = 20.0
WATCH_START_TIMEOUT_S = 600.0


# ---------------------------------------------------------------------------------------------------------
# One round of builds.


class Bench:
    """One benchmark run over a working copy of the corpus."""

    def __init__(self, agent: Path, sitegen: list[str], pi_transcript: list[str] | None, jobs: int) -> None:
        self.agent = agent
        self.sitegen = sitegen
        self.pi_transcript = pi_transcript
        self.jobs = jobs
        self.site = OUT / "build" / "site"
        self.pt_out = OUT / "build" / "pi-transcript"
        self.sessions = session_files(agent)
        by_size = sorted(self.sessions, key=lambda p: p.stat().st_size)
        self.median = by_size[len(by_size) // 2]
        self.biggest = by_size[-1]
        self.series: dict[str, Series] = {}
        self.appended = 0

    def step(self, name: str) -> Series:
        return self.series.setdefault(name, Series())

    def build(self, home: Path) -> Measured:
        command = [*self.sitegen, "build", "--out", str(self.site), "--agent-dir", str(self.agent)]
        return run_measured([*command, "--jobs", str(self.jobs)], env=child_env(home), cwd=home)

    def changed(self, name: str, session: Path, home: Path) -> Measured:
        self.appended += 1
        token = f"ZZ_BENCH_APPEND_{self.appended}_ZZ"
        append_entry(session, token)
        run = self.build(home)
        shown = run.returncode == 0 and page_shows(self.site, session, token)
        note = "" if shown else f"page lacks the appended entry after append {self.appended}"
        count = rendered_count(run)
        if count != 1:
            # A template or asset edited meanwhile (the checkout is live) makes every page render again.
            note = f"a run rendered {count} sessions, not 1 (templates or assets changed meanwhile?)"
        self.step(name).add(run, note)
        return run

    def run_pi_transcript(self, run_index: int) -> None:
        if not self.pi_transcript:
            return
        emptied(self.pt_out)
        with tempfile.TemporaryDirectory(prefix="bench-build-pt-home-") as tmp:
            home = Path(tmp)
            # pi-transcript reads only ~/.pi/agent/sessions/<project>/*.jsonl.
            (home / ".pi" / "agent").mkdir(parents=True)
            (home / ".pi" / "agent" / "sessions").symlink_to(self.agent / "sessions")
            command = [*self.pi_transcript, "--all", "-o", str(self.pt_out), "--no-open"]
            run = run_measured(command, env=child_env(home), cwd=home)
        self.step("pi-transcript --all").add(run)
        print(f"  run {run_index}: pi-transcript --all {run.seconds:6.2f} s", flush=True)

    def round(self, run_index: int) -> None:
        """Cold, no-op and two changed-session builds, then pi-transcript: one interleaved round."""
        emptied(self.site)
        # A fresh HOME per cold build: nothing sitegen might cache there survives.
        with tempfile.TemporaryDirectory(prefix="bench-build-home-") as tmp:
            home = Path(tmp)
            self.startup_floor(home)
            cold = self.build(home)
            self.step("cold build").add(cold)
            print(f"  run {run_index}: cold build {cold.seconds:6.2f} s  {summary_line(cold)}", flush=True)
            if cold.returncode != 0:
                print(f"    failed: {cold.stderr.strip()[-400:]}")
                return
            noop = self.build(home)
            count = rendered_count(noop)
            note = "" if count == 0 else f"a run rendered {count} sessions (templates or assets changed meanwhile?)"
            self.step("no-op rebuild").add(noop, note)
            print(f"  run {run_index}: no-op      {noop.seconds:6.2f} s  {summary_line(noop)}", flush=True)
            run = self.changed("median session changed", self.median, home)
            print(f"  run {run_index}: median +1  {run.seconds:6.2f} s  {summary_line(run)}", flush=True)
            run = self.changed("biggest session changed", self.biggest, home)
            print(f"  run {run_index}: biggest +1 {run.seconds:6.2f} s  {summary_line(run)}", flush=True)
        self.run_pi_transcript(run_index)

    def startup_floor(self, home: Path) -> None:
        """`sitegen --help`: interpreter start and the CLI's imports, the floor under every command."""
        self.step("sitegen --help").add(run_measured([*self.sitegen, "--help"], env=child_env(home), cwd=home))


# ---------------------------------------------------------------------------------------------------------
# Watch latency.


def has_command(sitegen: list[str], name: str) -> bool:
    done = subprocess.run([*sitegen, "--help"], capture_output=True, text=True, env=child_env(Path("/nonexistent")))
    return any(line.strip(" │|").split(" ", 1)[0] == name for line in done.stdout.splitlines())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class EventListener(threading.Thread):
    """Read the server-sent event stream and queue the arrival time of every `reload` event."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.reloads: queue.Queue[float] = queue.Queue()
        self.connected = threading.Event()
        self.error = ""

    def run(self) -> None:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600)
            connection.request("GET", EVENTS_URL, headers={"Accept": "text/event-stream"})
            response = connection.getresponse()
            if response.status != 200:
                self.error = f"{EVENTS_URL} answered {response.status}"
                return
            self.connected.set()
            while True:
                line = response.fp.readline()
                if not line:
                    return
                if line.strip() == b"event: reload":
                    self.reloads.put(time.perf_counter())
        except OSError as error:
            self.error = str(error)
        finally:
            self.connected.set()


def _wait_until_served(port: int, process: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            connection.request("GET", "/")
            status = connection.getresponse().status
            connection.close()
            if status == 200:
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def measure_watch(bench: Bench, samples: int) -> tuple[list[float], str]:
    """Start `sitegen watch` over the built site, append lines to the median session, time each reload."""
    help_text = subprocess.run([*bench.sitegen, "watch", "--help"], capture_output=True, text=True).stdout
    port = free_port()
    command = [*bench.sitegen, "watch", "--port", str(port), "--agent-dir", str(bench.agent)]
    if "--out" in help_text:
        command += ["--out", str(bench.site)]  # the site just built: watch starts with a no-op build
    latencies: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-watch-home-") as tmp, open(OUT / "build" / "watch.log", "wb") as log:
        # cwd: watch's default output (./site) is then the site just built.
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=child_env(Path(tmp)), cwd=bench.site.parent
        )
        try:
            if not _wait_until_served(port, process, WATCH_START_TIMEOUT_S):
                return [], f"watch did not serve on port {port} (exit {process.poll()}); see bench/out/build/watch.log"
            listener = EventListener(port)
            listener.start()
            listener.connected.wait(10)
            if listener.error:
                return [], listener.error
            for index in range(samples):
                time.sleep(1.0)  # let the previous rebuild settle, then drop any late event
                while not listener.reloads.empty():
                    listener.reloads.get_nowait()
                bench.appended += 1
                token = f"ZZ_BENCH_WATCH_{bench.appended}_ZZ"
                started = time.perf_counter()
                append_entry(bench.median, token)
                try:
                    arrived = listener.reloads.get(timeout=WATCH_TIMEOUT_S)
                except queue.Empty:
                    return latencies, f"no reload event within {WATCH_TIMEOUT_S:.0f} s of append {index + 1}"
                latencies.append(arrived - started)
                shown = "" if page_shows(bench.site, bench.median, token) else " (page lacks the new entry!)"
                print(f"  watch: reload {arrived - started:.3f} s after the append{shown}", flush=True)
        finally:
            stop_watch(process, 15)
    return latencies, ""


# ---------------------------------------------------------------------------------------------------------
# Reporting.


def print_rows(rows: list[tuple[str, str, str, str]]) -> None:
    print(f"\n{'measure':<36} {'value':>12} {'goal':>12}  verdict")
    for label, value, goal, verdict in rows:
        print(f"{label:<36} {value:>12} {goal:>12}  {verdict}")


def report(
    bench: Bench,
    corpus_bytes: int,
    agent_bytes: int,
    watch: tuple[list[float], str] | None,
    cold_watch: list[ColdWatch] | None = None,
) -> None:
    runs = max((len(s.runs) for s in bench.series.values()), default=0)
    print(
        f"\ncorpus: {len(bench.sessions)} sessions, {corpus_bytes / MB:.1f} MB of session files "
        f"({agent_bytes / MB:.1f} MB with artifacts, subagent sidecars and blobs)"
    )
    print(
        f"median session {bench.median.name} ({bench.median.stat().st_size / MB:.2f} MB); "
        f"biggest {bench.biggest.name} ({bench.biggest.stat().st_size / MB:.1f} MB); "
        f"best of {runs}; --jobs {bench.jobs}"
    )
    print(f"\n{'step':<26} {'seconds':>8} {'CPU s':>8} {'tree RSS MB':>12} {'tree PSS MB':>12} {'max proc MB':>12}")
    for name, series in bench.series.items():
        if not series.ok:
            print(f"{name:<26} FAILED {series.failure()}")
            continue
        print(
            f"{name:<26} {series.best('seconds'):8.2f} {series.best('cpu'):8.2f} {series.best('tree_peak') / MB:12.0f} "
            f"{series.best('tree_pss') / MB:12.0f} {series.best('max_rss') / MB:12.0f}"
        )
        for note in sorted(set(series.notes)):
            print(f"  note: {note}")

    site_bytes = tree_bytes(bench.site)
    search_bytes = tree_bytes(bench.site / "search")
    pages = sum(1 for _ in bench.site.rglob("*.html"))
    print(
        f"\nsitegen site: {site_bytes / MB:.1f} MB, {pages} HTML pages; "
        f"search/: {search_bytes / MB:.1f} MB" + ("" if search_bytes else " (no search/ folder)")
    )
    if bench.pi_transcript and bench.pt_out.exists():
        pt_bytes = tree_bytes(bench.pt_out)
        pt_pages = sum(1 for _ in bench.pt_out.rglob("*.html"))
        print(f"pi-transcript archive: {pt_bytes / MB:.1f} MB, {pt_pages} HTML pages")

    def best(name: str, attribute: str = "seconds") -> float | None:
        series = bench.series.get(name)
        return series.best(attribute) if series and series.ok else None

    rows: list[tuple[str, str, str, str]] = []

    def row(label: str, value: float | None, shown: Callable[[float], str], goal: float | None, goal_text: str) -> None:
        rows.append((label, "n/a" if value is None else shown(value), goal_text, goal_verdict(value, goal)))

    seconds = lambda v: f"{v:.2f} s"  # noqa: E731 - a one-line formatter
    cold, pt = best("cold build"), best("pi-transcript --all")
    row("cold build", cold, seconds, None, "")
    row("pi-transcript --all", pt, seconds, None, "")
    ratio = cold / pt if cold is not None and pt else None
    row("cold build / pi-transcript", ratio, lambda v: f"{v:.2f}x", GOAL_COLD_RATIO, f"<= {GOAL_COLD_RATIO}x")
    cold_cpu, pt_cpu = best("cold build", "cpu"), best("pi-transcript --all", "cpu")
    cpu_ratio = cold_cpu / pt_cpu if cold_cpu is not None and pt_cpu else None
    row("  in CPU time (user+sys)", cpu_ratio, lambda v: f"{v:.2f}x", None, "")
    rss, pss = best("cold build", "tree_peak"), best("cold build", "tree_pss")
    rss, pss = (None if v is None else v / MB for v in (rss, pss))
    row("peak memory, tree RSS sum", rss, lambda v: f"{v:.0f} MB", GOAL_PEAK_MB, f"< {GOAL_PEAK_MB:.0f} MB")
    row("peak memory, tree PSS sum", pss, lambda v: f"{v:.0f} MB", GOAL_PEAK_MB, f"< {GOAL_PEAK_MB:.0f} MB")
    row("no-op rebuild", best("no-op rebuild"), seconds, GOAL_NOOP_S, f"< {GOAL_NOOP_S} s")
    row("median session changed", best("median session changed"), seconds, GOAL_CHANGED_S, f"< {GOAL_CHANGED_S} s")
    row("biggest session changed", best("biggest session changed"), seconds, None, "(report)")
    row("sitegen --help (floor)", best("sitegen --help"), seconds, None, "")
    if watch is None:
        rows.append(("watch latency (median)", "n/a", f"< {GOAL_WATCH_S} s", "not measured"))
    else:
        latencies, problem = watch
        latency = statistics.median(latencies) if latencies else None
        label = f"watch latency (median of {len(latencies)})"
        row(label, latency, lambda v: f"{v:.3f} s", GOAL_WATCH_S, f"< {GOAL_WATCH_S} s")
        if problem:
            rows[-1] = (*rows[-1][:3], f"{rows[-1][3]} ({problem})")
    row("site size / session files", site_bytes / corpus_bytes if site_bytes else None, lambda v: f"{v:.2f}x", None, "")
    row(
        "search/ size / session files",
        search_bytes / corpus_bytes if search_bytes else None,
        lambda v: f"{v:.3f}x",
        None,
        "compact",
    )
    if bench.pi_transcript and bench.pt_out.exists():
        row(
            "pi-transcript out / session files",
            tree_bytes(bench.pt_out) / corpus_bytes,
            lambda v: f"{v:.2f}x",
            None,
            "",
        )

    if cold_watch:
        rows += cold_watch_rows(best_cold(cold_watch))
    print_rows(rows)


# ---------------------------------------------------------------------------------------------------------
# Watch on a cold site, one build under cProfile, the command line.


def run_cold_watch(bench: Bench, run_index: int) -> ColdWatch:
    """`sitegen watch` on an empty site folder, with a fresh HOME."""
    with tempfile.TemporaryDirectory(prefix="bench-cold-watch-home-") as tmp:
        site = OUT / "build" / "watch-site"
        cold = measure_cold_watch(bench.sitegen, bench.sessions, bench.agent, site, child_env(Path(tmp)))
    marks = [
        f"{name} {value:.2f} s"
        for name, value in (
            ("home", cold.home),
            ("newest", cold.newest),
            ("5 newest", cold.five),
            ("20 newest", cold.recent),
            ("done", cold.done),
        )
        if value is not None
    ]
    newest = f"(the newest session: {cold.newest_mb:.2f} MB)"
    print(f"  run {run_index}: watch, cold: {', '.join(marks)} {newest} {cold.problem}", flush=True)
    return cold


def profile(step: str, jobs: int) -> None:
    """cProfile one build in this process over bench/out/build (run the benchmark once first)."""
    import cProfile
    import pstats

    sys.path.insert(0, str(ROOT))
    from sitegen.site.build.pipeline import BuildConfig, build_site

    agent, site = OUT / "build" / "agent", OUT / "build" / "site"
    if not agent.exists():
        raise SystemExit("no bench/out/build/agent: run the benchmark once first")
    bench = Bench(agent, [], None, jobs)
    if step == "cold":
        emptied(site)
    elif step != "noop":
        session = bench.median if step == "median" else bench.biggest
        append_entry(session, f"ZZ_BENCH_PROFILE_{os.urandom(3).hex()}_ZZ")
    config = BuildConfig(out=site, agent_dirs=[agent], jobs=jobs, use_default_dirs=False)
    profiler = cProfile.Profile()
    started = time.perf_counter()
    result = profiler.runcall(build_site, config, None)
    print(f"{step}: {len(result.rendered)} rendered in {time.perf_counter() - started:.2f} s (under cProfile)")
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(20)
    stats.sort_stats("cumulative").print_stats(30)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--total-mb", type=float, default=120.0)
    parser.add_argument("--one-session-mb", type=float, default=18.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="passed to sitegen build --jobs")
    parser.add_argument("--agent", type=Path, help="measure this agent dir (copied first) instead of the corpus")
    parser.add_argument("--no-watch", action="store_true", help="skip the watch latency measurement")
    parser.add_argument(
        "--cold-watch-only", action="store_true", help="measure only `sitegen watch` on a cold site (--runs times)"
    )
    parser.add_argument("--sitegen-bin", help="the sitegen CLI (default: $SITEGEN_BIN, or this Python's)")
    parser.add_argument(
        "--pi-transcript-bin", help="pi-transcript's CLI (default: $PI_TRANSCRIPT_BIN or /tmp/piref/...)"
    )
    parser.add_argument(
        "--profile", choices=("cold", "noop", "median", "big"), help="cProfile one build step in-process"
    )
    parser.add_argument(
        "--cold-only",
        action="store_true",
        help="only cold builds against pi-transcript --all, turn about, on the team's corpus and a plain one",
    )
    parser.add_argument(
        "--baseline-bin",
        help="with --cold-only: another sitegen CLI (an older checkout) timed turn about with this one",
    )
    parser.add_argument(
        "--corpora",
        default="team,plain",
        help="with --cold-only: team (the corpus above), plain (the same sizes, plain pi sessions), or both",
    )
    args = parser.parse_args(argv)
    if args.profile:
        profile(args.profile, args.jobs)
        return 0
    if args.cold_only:
        pi_transcript = pi_transcript_command(args.pi_transcript_bin)
        if not pi_transcript:
            raise SystemExit("pi-transcript not found: pass --pi-transcript-bin")
        if args.agent:  # that agent dir alone (cold builds leave it as it is: no copy), no corpus generated
            corpora = [("agent", args.agent)]
        else:
            corpora = [
                (name, ensure_corpus(args.sessions, args.total_mb, args.seed, args.one_session_mb, plain))
                for name, plain in (("team", False), ("plain", True))
                if name in args.corpora.split(",")
            ]
        baseline = [args.baseline_bin] if args.baseline_bin else None
        cold_only(corpora, sitegen_command(args.sitegen_bin), pi_transcript, args.jobs, args.runs, baseline)
        return 0
    source = args.agent or ensure_corpus(args.sessions, args.total_mb, args.seed, args.one_session_mb)
    # Appending lines changes the sessions: work on a copy so the cached corpus stays as generated.
    agent = OUT / "build" / "agent"
    shutil.rmtree(agent, ignore_errors=True)
    shutil.copytree(source, agent, symlinks=True)
    # As an agent leaves them: the newest session is the one written to last.
    set_activity_mtimes(session_files(agent))
    sitegen = sitegen_command(args.sitegen_bin)
    pi_transcript = pi_transcript_command(args.pi_transcript_bin)
    print(f"sitegen:       {' '.join(sitegen)[:100]}")
    print(f"pi-transcript: {' '.join(pi_transcript) if pi_transcript else 'not found, comparison skipped'}")
    bench = Bench(agent, sitegen, pi_transcript, args.jobs)
    corpus_bytes = sum(p.stat().st_size for p in bench.sessions)
    agent_bytes = tree_bytes(agent)
    # First, on the corpus as generated: the rounds append to the median and the biggest session,
    # which makes them the newest.
    cold = [run_cold_watch(bench, index) for index in range(1, args.runs + 1)]
    if args.cold_watch_only:
        print(f"\ncorpus: {len(bench.sessions)} sessions; best of {len(cold)}")
        print_rows(cold_watch_rows(best_cold(cold)))
        return 0
    # Interleave the steps so a noisy neighbour on the machine hurts them all alike.
    for index in range(1, args.runs + 1):
        bench.round(index)
    watch: tuple[list[float], str] | None = None
    if args.no_watch:
        pass
    elif not has_command(sitegen, "watch"):
        print("\n`sitegen watch` does not exist (not in `sitegen --help`): watch latency not measured")
    else:
        watch = measure_watch(bench, WATCH_SAMPLES)
        if watch[1]:
            print(f"  watch: {watch[1]}")
    report(bench, corpus_bytes, agent_bytes, watch, cold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
