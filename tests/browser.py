"""Drive Debian's Chromium through Playwright: launch it, open a page, record errors and requests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Route

__all__ = [
    "CHROMIUM",
    "LAUNCH_ARGS",
    "PageWatch",
    "assert_clean",
    "chromium",
    "export_session",
    "open_page",
    "open_pages",
    "top_of",
]

CHROMIUM = Path("/usr/bin/chromium")
# Headless in a shared container: no sandbox or GPU, and none of the browser's own network chatter.
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium for the duration of the block; skips the test when it is not installed."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PageWatch:
    """What a page did that a test may object to: console errors, uncaught exceptions, requests."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    # The document watched (no query or fragment); set by open_pages, whose tab visits several.
    document: str = ""

    def error(self, text: str, url: str) -> None:
        """Record an error the tab reported while at url: one of a page left before (Playwright hands
        events over at the test's next call, after open_pages has moved on) names its own page."""
        shown = _document(url)
        self.errors.append(text if not self.document or shown == self.document else f"{shown}: {text}")


def open_page(
    browser: Browser,
    path: Path,
    *,
    fragment: str = "",
    width: int = 1280,
    height: int = 900,
    color_scheme: Literal["light", "dark", "no-preference"] = "light",
    allow: Path | None = None,
) -> tuple[Page, PageWatch]:
    """Open a local file in a fresh context; any request other than the file itself (or a file in the
    folder `allow`, for a site's pages) is recorded and blocked."""
    context = browser.new_context(
        viewport={"width": width, "height": height},
        color_scheme=color_scheme,
    )
    page = context.new_page()
    watch = PageWatch()
    own_url = path.resolve().as_uri()
    allowed = allow.resolve().as_uri() + "/" if allow is not None else None

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watch.error(message.text, page.url)

    def on_route(route: Route) -> None:
        url = route.request.url
        if url.split("#", 1)[0] == own_url or (allowed is not None and url.startswith(allowed)):
            route.continue_()
        else:
            watch.requests.append(url)
            route.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda error: watch.error(f"uncaught: {error}", page.url))
    page.route("**/*", on_route)
    page.goto(own_url + fragment)
    return page, watch


def open_pages(
    browser: Browser,
    site: Path,
    relatives: Sequence[str],
    *,
    width: int = 1280,
    height: int = 900,
    color_scheme: Literal["light", "dark", "no-preference"] = "light",
) -> Iterator[tuple[str, Page, PageWatch]]:
    """Open pages of a site one after another in one tab, as a reader going from page to page (a new
    context per page costs a renderer process); each page gets a fresh watch. A relative path may end in
    a query or fragment ("search.html?q=x")."""
    if not relatives:
        return
    first_path, query = _split_query(relatives[0])
    page, watch = open_page(
        browser, site / first_path, fragment=query, width=width, height=height, color_scheme=color_scheme, allow=site
    )
    try:
        for number, relative in enumerate(relatives):
            path, query = _split_query(relative)
            url = (site / path).resolve().as_uri()
            watch.document = url
            if number:
                watch.errors.clear()
                watch.requests.clear()
                page.goto(url + query)
            yield relative, page, watch
    finally:
        page.context.close()


def _document(url: str) -> str:
    """A page's URL without its query or fragment."""
    return url.partition("#")[0].partition("?")[0]


def _split_query(relative: str) -> tuple[str, str]:
    for mark in ("?", "#"):
        if mark in relative:
            path, _, rest = relative.partition(mark)
            return path, mark + rest
    return relative, ""


def assert_clean(watch: PageWatch) -> None:
    """No console error, no uncaught exception, no request beyond the page itself."""
    assert watch.errors == [], watch.errors
    assert watch.requests == [], watch.requests


def top_of(page: Page, selector: str) -> float:
    """Where the first element matching selector starts, from the top of the page, in CSS pixels."""
    return float(page.evaluate(f"document.querySelector({selector!r}).getBoundingClientRect().top + scrollY"))


def export_session(session: Path, out: Path) -> Path:
    """Export a session file to a self-contained page, as `sitegen export` does; returns the page."""
    from sitegen.render.export import export_page, load_transcript

    export_page(load_transcript(session), out)
    return out
