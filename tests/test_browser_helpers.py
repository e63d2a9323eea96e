"""The browser tests' own helpers (tests/browser.py): what they report is what the pages did."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageWatch, assert_clean, chromium, open_pages

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

# An error thrown a moment after the page loaded: when it reaches the test, the tab may have moved on.
_LATE = (
    "<!doctype html><title>late</title><p>late</p><script>addEventListener('load', () =>"
    " setTimeout(() => {{ window.thrown = true; throw new Error('ZZ_LATE_{0}_ZZ') }}, {1}));</script>"
)
_CLEAN = "<!doctype html><title>clean</title><p>clean</p>"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_open_pages_names_the_page_an_error_came_from(browser: Browser, tmp_path: Path) -> None:
    """A page's error that arrives while open_pages shows the next one fails that next page's check (it
    is not dropped) but names the page it came from; the next page's own errors are its own."""
    (tmp_path / "late.html").write_text(_LATE.format("A", 20))
    (tmp_path / "clean.html").write_text(_CLEAN)
    (tmp_path / "own.html").write_text(_LATE.format("B", 0))
    seen = {}
    for relative, page, watch in open_pages(browser, tmp_path, ["late.html", "clean.html", "own.html"]):
        page.wait_for_load_state("load")
        if relative == "own.html":
            page.wait_for_timeout(200)
        if relative == "late.html":
            # Thrown before the tab moves on (under load the timer could come after): whether its
            # report reaches this page's watch or the next page's is Playwright's timing.
            page.wait_for_function("window.thrown === true")
        seen[relative] = list(watch.errors)
    late = (tmp_path / "late.html").resolve().as_uri()
    # The late page's error came after its check; it is shown with the next page, by its own name.
    assert seen["late.html"] == [] or seen["late.html"] == ["uncaught: ZZ_LATE_A_ZZ"], seen
    if not seen["late.html"]:
        assert seen["clean.html"] == [f"{late}: uncaught: ZZ_LATE_A_ZZ"], seen
    assert seen["own.html"] == ["uncaught: ZZ_LATE_B_ZZ"], seen


def test_open_pages_gives_each_page_a_clean_watch(browser: Browser, tmp_path: Path) -> None:
    (tmp_path / "one.html").write_text(_CLEAN)
    (tmp_path / "two.html").write_text(_CLEAN)
    visited = []
    for relative, page, watch in open_pages(browser, tmp_path, ["one.html", "two.html?q=x#top"]):
        page.wait_for_load_state("load")
        assert_clean(watch)
        visited.append((relative, page.url.rpartition("/")[2]))
    assert visited == [("one.html", "one.html"), ("two.html?q=x#top", "two.html?q=x#top")]


def test_an_error_reported_after_the_tab_moved_on_names_its_page() -> None:
    """Playwright hands a page's events over at the test's next call: one from the page before is named."""
    watch = PageWatch()
    watch.document = "file:///site/b.html"
    watch.error("uncaught: ZZ_A_ZZ", "file:///site/a.html#entry-1")
    watch.error("uncaught: ZZ_B_ZZ", "file:///site/b.html?q=x#top")
    assert watch.errors == ["file:///site/a.html: uncaught: ZZ_A_ZZ", "uncaught: ZZ_B_ZZ"]
