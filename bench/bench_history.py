"""Time the Prompts page over a generated history.db: cold build, no-op, one new prompt, and the page in Chromium."""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sqlite3
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(ROOT))

from sitegen.history.writer import OMP18_SCHEMA, HistoryRow, add_prompt  # noqa: E402
from sitegen.site.build.pipeline import BuildConfig, build_site  # noqa: E402
from sitegen.site.prompts import page as prompts  # noqa: E402

# The goal: 100,000 prompts build in under 2 s.
GOAL_COLD_S = 2.0
WORDS = (
    "fix the failing test in parser add a flag to the cli why is this slow profile and speed up rename module "
    "refactor handler write docs for api check the diff review migration error message login cache database "
    "index query timeout retry config deploy build release bump version lint format typo branch merge rebase"
)
# One prompt in twenty is written in Chinese (the tokenizer's slower path).
CJK_WORDS = "修复 登录 错误 写锁 性能 测试 数据库 索引"
CJK_SHARE = 0.05
PROJECTS = [f"/home/dev/work/project-{n}" for n in range(12)]


def write_store(path: Path, count: int, seed: int) -> None:
    """An omp 18 store of `count` prompts over a year: log-normal lengths (median about 13 words, a
    fifth with a code block, some thousands of characters), a few reused; the same for a seed."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(OMP18_SCHEMA)
    start = 1_735_689_600  # 2025-01-01
    ascii_words, cjk_words = WORDS.split(), CJK_WORDS.split()
    with connection:
        for number in range(count):
            length = max(2, int(rng.lognormvariate(2.6, 1.0)))
            vocabulary = cjk_words if rng.random() < CJK_SHARE else ascii_words
            words = [rng.choice(vocabulary) for _ in range(length)]
            if rng.random() < 0.2:
                words.insert(rng.randrange(len(words)), "\n\n```\n" + " ".join(words[:8]) + "\n```\n")
            reused = rng.random() < 0.02
            text = " ".join(ascii_words[:6]) if reused else f"{' '.join(words)} #{number}"
            when = start + number * (365 * 86400 // count)
            add_prompt(connection, HistoryRow(text, when, rng.choice(PROJECTS), None))
    connection.close()


def add_one(store: Path) -> None:
    connection = sqlite3.connect(store)
    connection.execute(
        "INSERT INTO history (prompt, created_at, cwd) VALUES (?, ?, ?)",
        (f"one more prompt {time.time_ns()}", int(time.time()), PROJECTS[0]),
    )
    connection.commit()
    connection.close()


def forget() -> None:
    """Drop what this process kept of the last build: the next one is a new process's."""
    getattr(prompts, "_KEPT", {}).clear()
    # And what an up-to-date build left to prime (sitegen.site.prompts.kept; not in older trees).
    getattr(sys.modules.get("sitegen.site.prompts.kept"), "PRIMERS", {}).clear()


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(site: Path, agent: Path, jobs: int | None) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds (this process and its workers) of one build."""
    started, cpu = time.perf_counter(), _cpu()
    result = build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=jobs))
    return time.perf_counter() - started, _cpu() - cpu, result.written


def folder_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def browser_figures(site: Path) -> None:
    """Open prompts.html from file://, filter, scroll: seconds until the page answers."""
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import chromium, open_page

    with chromium() as browser:
        started = time.perf_counter()
        page, watch = open_page(browser, site / "prompts.html", allow=site)
        page.wait_for_function("() => !document.getElementById('prompt-filter').hidden")
        print(f"  page ready (index loaded, filter shown): {time.perf_counter() - started:.2f} s")
        for query in ("fix login", "写锁", "retry timeout config", "zzznothing"):
            page.locator("#prompt-query").fill("")
            page.locator("#prompt-status").filter(has_text="All ").wait_for()
            started = time.perf_counter()
            page.locator("#prompt-query").fill(query)
            page.wait_for_function("() => !/^All /.test(document.getElementById('prompt-status').textContent)")
            status = page.locator("#prompt-status").inner_text()
            # The page waits 80 ms for the next key before it filters: part of what a reader waits for.
            print(f"  filter {query!r}: {time.perf_counter() - started:.2f} s ({status})")
        page.locator("#prompt-query").fill("")
        page.locator("#prompt-status").filter(has_text="All ").wait_for()
        started = time.perf_counter()
        page.mouse.wheel(0, 100_000)
        page.wait_for_function("() => document.querySelectorAll('.prompt').length >= 200")
        print(f"  scroll past the first 100: {time.perf_counter() - started:.2f} s")
        if watch.errors:
            print(f"  page errors: {watch.errors}")


_APPEND = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], timeout=5)
row = (sys.argv[2], int(time.time()), sys.argv[3])
connection.execute("INSERT INTO history (prompt, created_at, cwd) VALUES (?, ?, ?)", row)
connection.commit()
print(time.time(), flush=True)
"""


def watch_figures(site: Path, agent: Path, jobs: int | None, turns: int) -> None:
    """`sitegen watch` (in this process) while another process appends prompts: seconds from each
    commit to the reload event that names prompts.html (the watcher polls the store every 0.2 s).
    It starts on the site built last, as `sitegen watch` on a site already built; the first prompt
    is sent once `watching` is set (the watches in place, and the stores primed)."""
    import json
    import subprocess
    import urllib.request

    from sitegen.site.live.watch import LiveSite

    config = BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=jobs)
    seconds = []
    forget()  # as a new `sitegen watch` process starts
    with LiveSite(config, port=0) as live:
        started = time.perf_counter()
        live.start()
        built = time.perf_counter() - started
        # Pages asked for at once: served while the watcher catches up and primes the stores.
        pages = []
        for page in ("index.html", "prompts.html"):
            asked = time.perf_counter()
            urllib.request.urlopen(live.url + page, timeout=30).read()
            pages.append(f"{page} {time.perf_counter() - asked:.2f} s")
        # And again until it watches: the slowest answer while it catches up and primes.
        slowest = 0.0
        while not live.watching.is_set() and time.perf_counter() - started < 10:
            asked = time.perf_counter()
            urllib.request.urlopen(live.url + "prompts.html", timeout=30).read()
            slowest = max(slowest, time.perf_counter() - asked)
        live.watching.wait(10)
        print(
            f"watch start: first build {built:.2f} s, then {', '.join(pages)}; watching "
            f"{time.perf_counter() - started:.2f} s after start (prompts.html meanwhile: at worst {slowest:.2f} s)"
        )
        for turn in range(turns):
            stream = urllib.request.urlopen(f"{live.url}__sitegen__/events?since={live.version.token}", timeout=30)
            text = f"watched prompt {turn} {time.time_ns()}"
            done = subprocess.run(
                [sys.executable, "-c", _APPEND, str(agent / "history.db"), text, PROJECTS[1]],
                capture_output=True,
                text=True,
                check=True,
            )
            committed = float(done.stdout)
            for raw in stream:
                event = json.loads(raw[6:]) if raw.startswith(b"data: ") else {}
                if "written" in event and (event["written"] is None or "prompts.html" in event["written"]):
                    seconds.append(time.time() - committed)
                    break
            stream.close()
    first, rest = seconds[0], sorted(seconds[1:])
    print(
        f"watch, one prompt more: first after start {first:.2f} s, then median {rest[len(rest) // 2]:.2f} s, "
        f"worst {rest[-1]:.2f} s ({len(rest)} turns; commit to reload event)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--prompts", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3, help="cold builds; the best is reported")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--browser", action="store_true", help="also time the page in headless Chromium")
    parser.add_argument("--watch-turns", type=int, default=6, help="prompts appended while watch runs (0: none)")
    args = parser.parse_args()
    agent = OUT / f"history-{args.prompts}-s{args.seed}-v2"
    store = agent / "history.db"
    if not store.exists():
        print(f"writing {store.relative_to(ROOT)} ...")
        write_store(store, args.prompts, args.seed)
    print(f"{args.prompts:,} prompts, {store.stat().st_size / 1e6:.1f} MB store, {os.cpu_count()} cores")
    site = OUT / "history-site"
    cold = []
    for _ in range(args.runs):
        shutil.rmtree(site, ignore_errors=True)
        forget()
        cold.append(timed(site, agent, args.jobs)[:2])
    wall, cpu = min(cold)
    print(f"cold build:      {wall:.2f} s wall, {cpu:.2f} s CPU (best of {args.runs}; goal < {GOAL_COLD_S:g} s)")
    wall, cpu, written = timed(site, agent, args.jobs)
    print(f"no change:       {wall:.3f} s wall, {cpu:.3f} s CPU ({len(written)} files written)")
    add_one(store)
    wall, cpu, written = timed(site, agent, args.jobs)
    print(f"one prompt more: {wall:.2f} s wall, {cpu:.2f} s CPU ({len(written)} files written; the same process)")
    add_one(store)
    forget()
    wall, cpu, written = timed(site, agent, args.jobs)
    print(f"one prompt more: {wall:.2f} s wall, {cpu:.2f} s CPU ({len(written)} files written; a new process)")
    page = (site / "prompts.html").stat().st_size / 1e3
    index = next((site / "prompts").glob("index-*.js")).stat().st_size / 1e6
    data, search = folder_mb(site / "prompts"), folder_mb(site / "search")
    print(f"prompts.html {page:.0f} KB, index {index:.2f} MB, prompt data {data:.1f} MB, search {search:.1f} MB")
    if args.watch_turns:
        watch_figures(site, agent, args.jobs, args.watch_turns)
    if args.browser:
        browser_figures(site)


if __name__ == "__main__":
    main()
