"""When a long page becomes usable in Chromium: find, a tree click on the last entry, a view filter.

Run alone to compare pages of the same session turn about (old and new code, say):
python bench/long_usable.py PAGE.html [PAGE.html ...] [--runs 3] [--pi PI_PAGE.html]"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# Long enough for the slowest page under load; a figure past it is reported as never.
TIMEOUT_MS = 120_000

# Each tool's page: when its scripts answer, its find, its last tree row, its "user only" filter.
_READY = {
    "sitegen": "() => !!(window.sitegen.page && window.sitegen.tree)",
    "pi": "() => document.readyState !== 'loading' && !!document.querySelector('#tree-container .tree-node')",
}
_FILTER = {"sitegen": 'button.filter[data-filter="user"]', "pi": '.filter-btn[data-filter="user-only"]'}
_FILTER_ON = {
    "sitegen": "() => document.body.classList.contains('filter-user')",
    "pi": "() => document.querySelector('.filter-btn[data-filter=\"user-only\"]').classList.contains('active')",
}
_ROW = {"sitegen": '#tree li[data-id="{id}"] > a', "pi": '#tree-container .tree-node[data-id="{id}"]'}
_TREE_BOX = {"sitegen": "#tree", "pi": "#tree-container"}
# True once the entry's box crosses the window (the page's clock then says when).
_IN_VIEW = (
    "id => { const e = document.getElementById('entry-' + id); if (!e) return false;"
    " const r = e.getBoundingClientRect(); return r.height > 0 && r.top < innerHeight && r.bottom > 0; }"
)
# sitegen's find marks the current match with a highlight; in view and inside the entry is found.
_FOUND = (
    "id => { const h = window.CSS && CSS.highlights && CSS.highlights.get('find-current'); if (!h) return false;"
    " for (const range of h) { const e = document.getElementById('entry-' + id);"
    " if (!e || !e.contains(range.startContainer)) return false; const r = range.getBoundingClientRect();"
    " return r.height > 0 && r.top < innerHeight && r.bottom > 0; } return false; }"
)
_NOW = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))))"


def last_entry(page: Path) -> tuple[str, str]:
    """The last entry of a sitegen page (its tree's last row) and a phrase found only in it, to find."""
    text = page.read_text(encoding="utf-8", errors="replace")
    links = re.search(r'<script type="application/json" id="entry-links">(.*?)</script>', text, re.S)
    if links:
        last = json.loads(links.group(1))[-1][0]
    else:
        last = re.findall(r'<article id="entry-([^"]+)"', text)[-1]
    start = text.index(f'id="entry-{last}"')
    body = text[text.index('class="entry-body"', start) : text.index("</article>", start)]
    words = html.unescape(re.sub(r"<[^>]*>", " ", body)).split()
    plain = html.unescape(re.sub(r"<[^>]*>", " ", text))
    for size in range(2, 9):
        for at in range(len(words) - size, -1, -1):
            phrase = " ".join(words[at : at + size])
            if len(phrase) > 12 and plain.count(phrase) == 1:
                return last, phrase
    return last, " ".join(words[-8:])


def _open(context: Any, page: Path, tool: str, errors: list[str]) -> Any:
    """Open the page and wait until its scripts answer; a page that fails first is given up on."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab = context.new_page()
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(page.resolve().as_uri(), wait_until="commit", timeout=TIMEOUT_MS)
    for _ in range(TIMEOUT_MS // 1000):
        try:
            tab.wait_for_function(_READY[tool], timeout=1000, polling=50)
            return tab
        except PlaywrightTimeout:
            if errors and tab.evaluate("() => document.readyState") == "complete":
                raise
    raise PlaywrightTimeout("the page never answered")


def _figure(browser: Any, page: Path, tool: str, action: str, entry: str, phrase: str) -> tuple[float | None, str]:
    """Seconds from navigation until one action has done what it should, or None with why not."""
    from playwright.sync_api import Error as PlaywrightError

    context = browser.new_context(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    try:
        tab = _open(context, page, tool, errors)
        if action == "find" and tool == "sitegen":
            tab.fill("#find", phrase)
            tab.wait_for_function(_FOUND, arg=entry, timeout=TIMEOUT_MS, polling="raf")
        elif action == "find":
            # pi's page has no find of its own: the browser's find in page, on what the page has drawn.
            tab.wait_for_function(
                "p => window.find(p, false, false, true)", arg=phrase, timeout=TIMEOUT_MS, polling=100
            )
        elif action == "tree":
            # As a reader does: the pointer on the tree, its wheel to the tree's end, a click on the last row.
            box = tab.locator(_TREE_BOX[tool]).bounding_box(timeout=TIMEOUT_MS)
            tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"], 400) / 2)
            tab.mouse.wheel(0, 10_000_000)
            tab.click(_ROW[tool].format(id=entry), timeout=TIMEOUT_MS)
            tab.wait_for_function(_IN_VIEW, arg=entry, timeout=TIMEOUT_MS, polling="raf")
        else:
            tab.click(_FILTER[tool], timeout=TIMEOUT_MS)
            tab.wait_for_function(_FILTER_ON[tool], timeout=TIMEOUT_MS, polling="raf")
        seconds: float = tab.evaluate(_NOW) / 1000
        return seconds, ""
    except PlaywrightError as error:
        why = errors[0] if errors else str(error).splitlines()[0]
        return None, why[:120]
    finally:
        context.close()


def usable_times(page: Path, tool: str, entry: str, phrase: str) -> dict[str, tuple[float | None, str]]:
    """Find, tree click and filter, each on a fresh load of the page, in seconds after navigation."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            return {
                action: _figure(browser, page, tool, action, entry, phrase) for action in ("find", "tree", "filter")
            }
        finally:
            browser.close()


def format_figure(figure: tuple[float | None, str]) -> str:
    seconds, why = figure
    return f"{seconds:.2f}" if seconds is not None else f"never ({why})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pages", type=Path, nargs="+", help="sitegen pages of one session")
    parser.add_argument("--pi", type=Path, help="pi's page of the same session")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    entry, phrase = last_entry(args.pages[0])
    print(f"last entry {entry}; find {phrase!r}")
    pages = [(page, "sitegen") for page in args.pages] + ([(args.pi, "pi")] if args.pi else [])
    for run in range(args.runs):
        for page, tool in pages:
            figures = usable_times(page, tool, entry, phrase)
            shown = ", ".join(f"{action} {format_figure(figure)}" for action, figure in figures.items())
            print(f"run {run + 1} {page.name}: {shown}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
