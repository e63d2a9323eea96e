"""A message of one unbroken 200,000-character token against the same text with spaces: the exported
page's load event in headless Chromium, side by side (issue 31: within 2 x).

Run: python bench/bench_long_token.py [--chars 200000] [--runs 7] [--width 1280]
Prints the median load-event time of each page and the ratio token / spaced."""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from sessions import SessionBuilder, text, tool_call  # noqa: E402  (tests/ is not a package)

from sitegen.render.export import export_html, load_transcript  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def write_page(folder: Path, name: str, body: str) -> Path:
    """A session whose user message, assistant text and tool output are `body`, exported."""
    b = SessionBuilder(session_id=name)
    b.user("u1", body)
    b.assistant("a1", [text(body), tool_call("c1", "bash", command="cat token.txt")])
    b.tool_result("r1", "c1", "bash", body)
    page = folder / f"{name}.html"
    page.write_text(export_html(load_transcript(b.write(folder / f"{name}.jsonl"))), encoding="utf-8")
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rng = random.Random(31)
    token = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(args.chars))
    spaced = " ".join(token[i : i + 8] for i in range(0, len(token), 8))
    with tempfile.TemporaryDirectory(prefix="sitegen-token-") as folder:
        pages = {
            "token": write_page(Path(folder), "token", token),
            "spaced": write_page(Path(folder), "spaced", spaced),
        }
        times: dict[str, list[float]] = {name: [] for name in pages}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            for _ in range(args.runs):
                for name, page_path in pages.items():  # side by side: the machine's load hits both alike
                    context = browser.new_context(viewport={"width": args.width, "height": 900})
                    page = context.new_page()
                    page.goto(page_path.as_uri(), wait_until="load", timeout=120_000)
                    times[name].append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
                    context.close()
            browser.close()
    token_ms, spaced_ms = statistics.median(times["token"]), statistics.median(times["spaced"])
    print(f"{args.chars:,}-character token: load event {token_ms:.0f} ms, with spaces {spaced_ms:.0f} ms")
    print(f"ratio {token_ms / spaced_ms:.2f} (median of {args.runs} loads each, {args.width} px wide)")


if __name__ == "__main__":
    main()
