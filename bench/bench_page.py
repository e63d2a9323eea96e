"""The session page beside pi's, on the real fixtures: export time and page size, what the tree's rows say,
and where the conversation starts on a desktop and a phone screen.

Run: python bench/bench_page.py [--runs 3] [--pi PATH] [--fixtures DIR]
Prints one table; every figure is measured in this run, pi's beside sitegen's."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "real"
PI = Path("/tmp/ref/node_modules/.bin/pi")
CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

# A tree row that does not say what happened: a bare tool name, "... result", "(no text)" or nothing.
_PI_ROLE = re.compile(r"^(?:user|assistant|toolResult|tool|bash|custom|compaction|branch summary):\s*", re.I)
_BARE_TOOL = re.compile(r"^\[?[\w.-]+:?\s*\]?$")


def bare(text: str, tool: str = "") -> bool:
    line = _PI_ROLE.sub("", " ".join(text.split()))
    if not line or line in ("(no text)", "(empty)") or line.endswith(" result") or line == tool:
        return True
    return tool == "" and line.startswith("[") and _BARE_TOOL.fullmatch(line) is not None


def best_time(command: list[str], runs: int, env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
        times.append(time.perf_counter() - start)
    return min(times)


def page_figures(page_file: Path, ours: bool) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    figures: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        for width, height, name in ((1280, 800, "desk"), (390, 844, "phone")):
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            page.goto(page_file.resolve().as_uri())
            page.wait_for_timeout(300 if ours else 1500)
            first = ".entry" if ours else "#messages > *:not(.header-container), .user-message, .assistant-message"
            figures[f"first_{name}"] = page.evaluate(
                f"(() => {{ const e = document.querySelector('#conversation > .entry') || "
                f"document.querySelector({first!r}); return e ? e.getBoundingClientRect().top + scrollY : -1; }})()"
            )
            if name == "desk":
                if ours:
                    rows = page.evaluate(
                        "[...document.querySelectorAll('#tree li[data-id]')].filter(r => r.offsetParent)"
                        ".map(r => [r.querySelector('a').textContent, (r.querySelector('.t') || {}).textContent || ''])"
                    )
                    texts = [(text[len(tool) :].strip() if tool else text, tool) for text, tool in rows]
                else:
                    texts = [(t, "") for t in page.evaluate(
                        "[...document.querySelectorAll('.tree-content')].map(e => e.textContent)"
                    )]  # fmt: skip
                figures["rows"] = len(texts)
                figures["bare"] = sum(1 for text, tool in texts if bare(text, tool))
            context.close()
        browser.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pi", type=Path, default=PI)
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    args = parser.parse_args(argv)
    if not args.fixtures.is_dir():
        print(f"no fixtures at {args.fixtures}", file=sys.stderr)
        return 1
    have_pi = args.pi.exists()
    print("| session | sitegen s | pi s | page MB (sitegen / pi) | tree rows | bare rows | first entry px |")
    print("|" + "---|" * 7)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for source in sorted(args.fixtures.glob("*.jsonl")):
            ours = work / f"{source.stem}.sitegen.html"
            command = [sys.executable, "-m", "sitegen.cli", "export", str(source), str(ours)]
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            sitegen_s = best_time(command, args.runs, env=env)
            figures = page_figures(ours, ours=True)
            line = f"| {source.stem} | {sitegen_s:.2f} | "
            if have_pi:
                # pi rewrites old files in place: it gets a copy, and a HOME of its own.
                copy = work / source.name
                pi_page = work / f"{source.stem}.pi.html"
                pi_env = {**os.environ, "HOME": str(work / "home")}

                def pi_export(
                    copy: Path = copy, source: Path = source, pi_page: Path = pi_page, pi_env: dict[str, str] = pi_env
                ) -> None:
                    shutil.copyfile(source, copy)
                    subprocess.run([str(args.pi), "--export", copy.name, pi_page.name], cwd=work, env=pi_env,
                                   check=True, capture_output=True)  # fmt: skip

                times = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    pi_export()
                    times.append(time.perf_counter() - start)
                theirs = page_figures(pi_page, ours=False)
                line += (
                    f"{min(times):.2f} | {ours.stat().st_size / 1e6:.2f} / {pi_page.stat().st_size / 1e6:.2f} | "
                    f"{figures['rows']:.0f} / {theirs['rows']:.0f} | "
                    f"{figures['bare']:.0f} ({figures['bare'] / max(1, figures['rows']):.1%}) / "
                    f"{theirs['bare']:.0f} ({theirs['bare'] / max(1, theirs['rows']):.1%}) | "
                    f"{figures['first_desk']:.0f} / {figures['first_phone']:.0f} vs "
                    f"{theirs['first_desk']:.0f} / {theirs['first_phone']:.0f} |"
                )
            else:
                line += (
                    f"- | {ours.stat().st_size / 1e6:.2f} / - | {figures['rows']:.0f} / - | "
                    f"{figures['bare']:.0f} / - | "
                    f"{figures['first_desk']:.0f} / {figures['first_phone']:.0f} |"
                )
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
