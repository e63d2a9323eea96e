"""The All sessions page at 2,000 sessions beside the same list drawn whole: rows in the page when it
opens, time to open, to filter by a word and to reach the end, in Chromium from file://.

Run: python bench/bench_all_sessions.py [--sessions 2000] [--runs 3]
Prints one table; both pages are measured in this run, side by side."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitegen.site.build.assets import publish_assets  # noqa: E402
from sitegen.site.pages.indexes import IndexWriter  # noqa: E402
from sitegen.site.state.records import SessionRecord  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def record(n: int) -> SessionRecord:
    return SessionRecord(
        key=f"s{n:05d}", source=f"/x/s{n:05d}.jsonl", family="pi", session_id=f"s{n:05d}", project=f"/work/p{n % 60}",
        project_slug=f"p{n % 60}", page=f"sessions/p{n % 60}/s{n:05d}.html",
        title=f"fix the importer for bank export number {n} and keep the plain CSVs working",
        created_ms=1_700_000_000_000 + n, modified_ms=1_700_000_000_000 + n * 60_000, messages=n % 90,
        tool_calls=n % 40, branches=1, compactions=n % 3, models=["anthropic/claude-sonnet-4-5"], input=0,
        output=0, cache_read=0, cache_write=0, cost=0.01 * (n % 50),
    )  # fmt: skip


def measure(page_url: str, runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    best: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            start = time.perf_counter()
            page.goto(page_url)
            page.wait_for_function("!document.getElementById('all-filter').disabled")
            opened = time.perf_counter() - start
            rows = page.evaluate("document.querySelectorAll('#all-sessions tbody tr').length")
            page.wait_for_timeout(200)
            start = time.perf_counter()
            page.fill("#all-filter", "number 1999")
            page.wait_for_function("document.querySelectorAll('#all-sessions tbody tr').length <= 12")
            filtered = time.perf_counter() - start
            page.fill("#all-filter", "")
            start = time.perf_counter()
            page.evaluate("scrollTo(0, document.body.scrollHeight)")
            page.wait_for_timeout(50)
            scrolled = time.perf_counter() - start
            figures = {"rows at open": rows, "open s": opened, "filter s": filtered, "scroll s": scrolled}
            for name, value in figures.items():
                best[name] = min(best.get(name, value), value)
            context.close()
        browser.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder)
        writer = IndexWriter(site, publish_assets(site))
        records = [record(n) for n in range(args.sessions)]
        names = {f"p{n}": f"/work/p{n}" for n in range(60)}
        # The same listing with every row in the page: what it would be without paging.
        writer.write_all_sessions(records, names, 0, first_rows=len(records))
        (site / "sessions.html").rename(site / "whole.html")
        writer.write_all_sessions(records, names, 0)
        paged = measure((site / "sessions.html").as_uri(), args.runs)
        whole = measure((site / "whole.html").as_uri(), args.runs)
        size = (site / "sessions.html").stat().st_size, (site / "whole.html").stat().st_size
        print(f"{args.sessions} sessions, best of {args.runs}")
        print(f"{'':16}{'paged (sessions.html)':>24}{'every row in the page':>24}")
        for name in paged:
            print(f"{name:16}{paged[name]:>24.3f}{whole[name]:>24.3f}")
        print(f"{'page bytes':16}{size[0]:>24,}{size[1]:>24,}")
        print(f"data file bytes {(site / 'sessions.js').stat().st_size:,}")
        shutil.rmtree(site / "assets", ignore_errors=True)


if __name__ == "__main__":
    main()
