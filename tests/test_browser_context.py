"""What the model saw, in a real Chromium: entries a compaction replaced are dimmed and marked, "Kept from"
names its entry, and the model's view shows only what `sitegen context` returns at the shown leaf."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageWatch, assert_clean, export_session, open_page
from sessions import reader_session

from sitegen.session.context import build_session_context
from sitegen.session.session import open_session

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def session_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return reader_session().write(tmp_path_factory.mktemp("context") / "reader.jsonl")


@pytest.fixture
def opened(browser: Browser, session_file: Path) -> Iterator[tuple[Page, PageWatch]]:
    page_file = export_session(session_file, session_file.with_suffix(".html"))
    page, watch = open_page(browser, page_file)
    yield page, watch
    page.context.close()


def visible_entries(page: Page) -> list[str]:
    """Ids of the conversation's entries a reader sees, in the order they are painted."""
    return page.evaluate(
        "[...document.querySelectorAll('#conversation > article.entry')].filter(e => e.getClientRects().length)"
        ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)"
        ".map(e => e.id.slice(6))"
    )


def summarised(page: Page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('article.summarised')].map(e => e.id.slice(6))")


def test_replaced_entries_are_dimmed_and_marked(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    assert summarised(page) == ["init0001", "u1", "a1", "a2", "a3", "a4"]
    label = page.evaluate("getComputedStyle(document.getElementById('entry-u1'), '::before').content")
    assert label == '"summarised by compaction"'
    # Marked by a dashed edge, not faded (issue 33: faded text fell under 4.5:1 contrast).
    style = "getComputedStyle(document.getElementById('entry-{}'))"
    assert float(page.evaluate(style.format("u1") + ".opacity")) == 1
    assert page.evaluate(style.format("u1") + ".borderLeftStyle") == "dashed"
    assert page.evaluate(style.format("u2") + ".borderLeftStyle") == "solid"
    kept = page.locator("#entry-c1mp a.kept-from")
    assert kept.inner_text().startswith("User: “Add a test for the expiry ZZ_KEPT_ZZ” · 2026-01-01")
    kept.click()
    assert page.evaluate("location.hash") == "#entry-u2"
    # On the other branch the compaction is not on the path: nothing is summarised.
    page.evaluate("window.location.hash = '#entry-a8'")
    page.wait_for_function("() => document.querySelectorAll('article.summarised').length === 0")
    assert_clean(watch)


def test_the_models_view_shows_what_sitegen_context_returns(opened: tuple[Page, PageWatch], session_file: Path) -> None:
    page, watch = opened
    page.click("#toggle-context")
    assert page.locator("#toggle-context").get_attribute("aria-pressed") == "true"
    entries = open_session(session_file).raw.entries
    context = build_session_context(entries)
    assert context.messages[0]["role"] == "compactionSummary"
    # The summary comes first, then the messages the model was sent (results are inside their calls).
    by_message = {id(e["message"]): e["id"] for e in entries if isinstance(e.get("message"), dict)}
    kept_ids = [by_message[id(m)] for m in context.messages[1:]]
    shown = visible_entries(page)
    assert shown[0] == "c1mp"
    assert [i for i in kept_ids if not i.startswith("r")] == shown[1:]
    assert page.locator("#entry-c1mp details.summary").evaluate("d => d.open")
    page.keyboard.press("c")
    assert page.locator("#toggle-context").get_attribute("aria-pressed") == "false"
    assert "u1" in visible_entries(page)
    assert not page.locator("#entry-c1mp details.summary").evaluate("d => d.open")
    assert_clean(watch)
