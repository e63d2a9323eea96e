"""A long session with heavy artifacts, exported by sitegen and by pi, then opened in Chromium: export time,
page size, first paint and load, and when the page is usable (find reaches the last entry, a tree click on
the last entry shows it, a view filter toggles: bench/long_usable.py), side by side in one run.

Run: python bench/bench_long.py [--mb 50] [--turns 8000] [--artifact-mb 400] [--seed 0] [--runs 2]
           [--artifacts budget|full|none] [--session FILE]
The session is generated once under bench/out/long-<mb>mb-<turns>t-<artifact-mb>a-s<seed>/ (bench/corpus.py
writes it; its artifact logs are then grown to --artifact-mb with build-log lines from the same seed)."""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_export import (  # noqa: E402  (bench/ is not a package)
    MB,
    OUT,
    PIREF,
    child_env,
    run_measured,
    sitegen_command,
    tool_command,
)
from corpus import write_big_session  # noqa: E402
from long_usable import format_figure, last_entry, usable_times  # noqa: E402
from output_folders import made_once  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# Lines a long build log is made of: compiler chatter, test lines, warnings, progress.
_LOG_LINES = (
    "[{n:>5}/{total}] Compiling {crate} v0.{minor}.{patch} ({path})",
    "   Compiling {crate}-{suffix} v1.{minor}.{patch}",
    "test {module}::tests::{name} ... ok",
    "test {module}::tests::{name} ... ignored",
    "warning: unused variable: `{name}` --> src/{module}.rs:{line}:{col}",
    "  --> src/{module}/{name}.rs:{line}:{col}",
    "{module}/{name}.ts({line},{col}): error TS2345: Argument of type 'string' is not assignable",
    "PASS src/{module}/{name}.test.ts ({ms} ms)",
    "    ✓ {name} handles {module} ({ms} ms)",
    "npm WARN deprecated {crate}@{minor}.{patch}.0: use {suffix} instead",
    "[{ms:>6} ms] bundling {path} -> dist/{name}.js ({kb} kB)",
)
_WORDS = (
    "session", "render", "parser", "lexer", "index", "store", "cache", "tree", "branch", "blob", "writer",
    "reader", "shard", "token", "batch", "queue", "watch", "server", "client", "config", "layout", "theme",
)  # fmt: skip


def _log_text(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    total = 0
    n = 0
    while total < size:
        n += 1
        line = rng.choice(_LOG_LINES).format(
            n=n, total=9999, crate=rng.choice(_WORDS), suffix=rng.choice(_WORDS), minor=rng.randint(0, 40),
            patch=rng.randint(0, 20), path=f"/home/dev/work/monorepo/{rng.choice(_WORDS)}", module=rng.choice(_WORDS),
            name=f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}", line=rng.randint(1, 900), col=rng.randint(1, 80),
            ms=rng.randint(1, 90_000), kb=rng.randint(1, 4000),
        )  # fmt: skip
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts) + "\n"


def ensure_long_session(mb: float, turns: int, artifact_mb: float, seed: int) -> Path:
    """Generate the session once: about `turns` turns in `mb` MB, its artifact logs grown to `artifact_mb` MB."""
    folder = OUT / f"long-{mb:g}mb-{turns}t-{artifact_mb:g}a-s{seed}"
    session = folder / "sessions" / "--home-dev-work-monorepo--" / "long.jsonl"
    made_once(folder, lambda: _write_long_session(session, mb, turns, artifact_mb, seed))
    return session


def _write_long_session(session: Path, mb: float, turns: int, artifact_mb: float, seed: int) -> None:
    # A turn is a prompt, a reply and a tool call with its result: about two and a half entries.
    write_big_session(session, target_mb=mb, seed=seed, deep_chain=False, entries=int(turns * 2.5))
    logs = sorted(session.with_suffix("").glob("*.log"))
    rng = random.Random(f"long-artifacts:{seed}")
    if logs and artifact_mb > 0:
        # Long omp sessions hold a few huge build logs and many small ones.
        weights = [rng.paretovariate(1.2) for _ in logs]
        scale = artifact_mb * MB / sum(weights)
        for log, weight in zip(logs, weights, strict=True):
            extra = int(weight * scale) - log.stat().st_size
            if extra > 0:
                with open(log, "a", encoding="utf-8") as handle:
                    handle.write(_log_text(rng, extra))


def open_times(page: Path) -> dict[str, float]:
    """First contentful paint and the load event, in seconds after navigation start, in Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        tab = context.new_page()
        tab.goto(page.resolve().as_uri(), wait_until="load", timeout=600_000)
        timings = tab.evaluate(
            "(() => { const nav = performance.getEntriesByType('navigation')[0];"
            " const paint = performance.getEntriesByName('first-contentful-paint')[0];"
            " return [paint ? paint.startTime : -1, nav.loadEventEnd]; })()"
        )
        browser.close()
    return {"first_paint": timings[0] / 1000, "load": timings[1] / 1000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--turns", type=int, default=8000)
    parser.add_argument("--artifact-mb", type=float, default=400.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--artifacts", choices=("budget", "full", "none"), default="budget")
    parser.add_argument("--session", type=Path, help="an existing session instead of the generated one")
    parser.add_argument("--sitegen-bin")
    parser.add_argument("--pi-bin")
    args = parser.parse_args(argv)
    session = args.session or ensure_long_session(args.mb, args.turns, args.artifact_mb, args.seed)
    artifacts = session.with_suffix("")
    artifact_bytes = sum(p.stat().st_size for p in artifacts.rglob("*") if p.is_file()) if artifacts.is_dir() else 0
    size = session.stat().st_size
    print(f"session {session} {size / MB:.1f} MB, artifacts {artifact_bytes / MB:.0f} MB")
    sitegen = sitegen_command(args.sitegen_bin)
    pi = tool_command(args.pi_bin, "PI_BIN", PIREF / "pi")
    rows: list[tuple[str, float, int, dict[str, float]]] = []
    usable: list[tuple[str, dict[str, tuple[float | None, str]]]] = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        ours = work / "sitegen.html"
        times = []
        for _ in range(args.runs):
            run = run_measured(
                [*sitegen, "export", str(session), str(ours), "--artifacts", args.artifacts],
                env=child_env(work / "home"),
                sample=False,  # only time is reported: polling memory would slow the run
            )
            if run.returncode != 0:
                print(run.stderr, file=sys.stderr)
                return 1
            times.append(run.seconds)
        rows.append(("sitegen", min(times), ours.stat().st_size, open_times(ours)))
        entry, phrase = last_entry(ours)
        usable.append(("sitegen", usable_times(ours, "sitegen", entry, phrase)))
        if pi is not None:
            theirs = work / "pi.html"
            times = []
            for _ in range(args.runs):
                copy = work / "copy.jsonl"
                shutil.copyfile(session, copy)
                run = run_measured(
                    [*pi, "--export", str(copy), str(theirs)], env=child_env(work / "pihome"), sample=False
                )
                times.append(run.seconds)
            rows.append(("pi", min(times), theirs.stat().st_size, open_times(theirs)))
            usable.append(("pi", usable_times(theirs, "pi", entry, phrase)))
    print(f"| tool | export s | × pi | page MB | × session | first paint s | load s |  (--artifacts {args.artifacts})")
    print("|---|---|---|---|---|---|---|")
    pi_seconds = rows[1][1] if len(rows) > 1 else None
    for tool, seconds, page_bytes, opened in rows:
        ratio = f"{seconds / pi_seconds:.2f}" if pi_seconds else "-"
        print(
            f"| {tool} | {seconds:.2f} | {ratio} | {page_bytes / MB:.1f} | {page_bytes / size:.2f} | "
            f"{opened['first_paint']:.2f} | {opened['load']:.2f} |"
        )
    print()
    print("| tool | usable: find in the last entry s | tree click on the last entry, in view s | filter s |")
    print("|---|---|---|---|")
    for tool, figures in usable:
        shown = " | ".join(format_figure(figures[action]) for action in ("find", "tree", "filter"))
        print(f"| {tool} | {shown} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
