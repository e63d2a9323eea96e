"""What would move the cold build's floor: the same build with parts of its work taken out, beside pi-transcript.

Each variant is `sitegen build` in a fresh process with some of sitegen's functions replaced before the
command runs (design_variants.py). They are not designs to ship, only the cost left when a part's work
is gone:

- "entries as data": every entry of a page written as its JSON (orjson, in C) where its HTML was: the
  least a build pays when the page's own script makes the entries' HTML (markdown, tool views,
  highlighting), as a browser-side renderer would;
- "no search": no search entries extracted or stored, no index exported;
- both together.

Run after bench_build.py has made its corpus:

    python bench/bench_design.py --runs 3 [--corpus team|plain] [--scratch /dev/shm/bench]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from agent_sessions import ensure_corpus
from bench_export import pi_transcript_command
from cold_builds import cold_build_run, pi_transcript_run
from output_folders import OUT
from step_series import Series

from sitegen.site.search.store import DB_FILE

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VARIANTS = ("as shipped", "entries as data", "no search", "entries as data, no search")
PI_TRANSCRIPT = "pi-transcript --all"


def variant_command(variant: str) -> list[str]:
    """The sitegen CLI in a fresh interpreter, the variant's replacements made before it runs."""
    script = (
        f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(HERE)!r}]; import design_variants; "
        f"design_variants.apply({variant!r}); from sitegen.cli import main; sys.exit(main())"
    )
    return [sys.executable, "-c", script]


def took_effect(variant: str, site: Path) -> str:
    """What the built site shows of the variant's replacements ("" when it shows all of them): a worker
    started by a fork server would have rendered without them, and the figures would lie. Every page
    is looked at: a worker that died is replaced from a fork server once the build runs threads, and
    would leave only some pages without them."""
    pages = sorted(site.glob("sessions/*/*.html"))
    # An entry's HTML carries its id; the JSON written in its place does not.
    with_html = sum(b'id="entry-' in page.read_bytes() for page in pages)
    problems = []
    if "entries as data" in variant and with_html:
        problems.append(f"entries as HTML on {with_html} of {len(pages)} pages")
    if "entries as data" not in variant and with_html < len(pages):
        problems.append(f"entries as data on {len(pages) - with_html} of {len(pages)} pages")
    # The workers store each session's search entries; the build's own process exports the index.
    searched = stored_search_documents(site) > 0 or any((site / "search" / "t").glob("*.js"))
    if searched == ("no search" in variant):
        problems.append("search index written" if searched else "no search index")
    return ", ".join(problems)


def stored_search_documents(site: Path) -> int:
    """How many sessions' search entries the site's store holds (read only, so that none is made)."""
    path = site / DB_FILE
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT count(*) FROM docs").fetchone()[0])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--corpus", choices=("team", "plain"), default="team")
    parser.add_argument("--pi-transcript-bin", help="pi-transcript's CLI (default: $PI_TRANSCRIPT_BIN)")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=OUT / "build",
        help="where the sites are written (a tmpfs such as /dev/shm/bench leaves the disk's own costs out)",
    )
    args = parser.parse_args(argv)
    pi_transcript = pi_transcript_command(args.pi_transcript_bin)
    if not pi_transcript:
        raise SystemExit("pi-transcript not found: pass --pi-transcript-bin")
    agent = ensure_corpus(200, 120.0, 1, 18.0, plain=args.corpus == "plain")
    site = args.scratch / "design-site"
    series: dict[str, Series] = {name: Series() for name in (*VARIANTS, PI_TRANSCRIPT)}
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    # Turn about, so a busy moment on the machine weighs on every variant alike.
    for index in range(1, args.runs + 1):
        for name in (*VARIANTS, PI_TRANSCRIPT):
            if name == PI_TRANSCRIPT:
                run = pi_transcript_run(pi_transcript, agent, args.scratch / "design-pt", sample=False)
            else:
                run = cold_build_run(variant_command(name), agent, site, args.jobs, sample=False)
                wrong = "" if run.returncode else took_effect(name, site)
                if wrong:
                    raise SystemExit(f"{name}: the build did not run as the variant says ({wrong})")
            failed = f"  FAILED: {run.stderr.strip()[-300:]}" if run.returncode else ""
            print(f"  run {index}: {name:<28} {run.seconds:6.2f} s {run.cpu:6.2f} CPU s{failed}", flush=True)
            series[name].add(run)
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    theirs = series[PI_TRANSCRIPT]
    print(f"\n{args.corpus} corpus, best of {args.runs}; --jobs {args.jobs}; sites written under {args.scratch}")
    print(f"{'variant':<28} {'wall s':>8} {'CPU s':>8} {'wall ratio':>11} {'CPU ratio':>10}")
    for name in (*VARIANTS, PI_TRANSCRIPT):
        best = series[name]
        wall, cpu = best.best("seconds"), best.best("cpu")
        ratios = f"{wall / theirs.best('seconds'):>10.2f}x {cpu / theirs.best('cpu'):>9.2f}x"
        print(f"{name:<28} {wall:8.2f} {cpu:8.2f} {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
