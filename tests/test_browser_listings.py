"""Session listings in a real Chromium: the home page's recent sessions across projects, project tables
whose rows stay two lines on a desktop with the title taking the width, and nothing sideways on a phone."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import assert_clean, open_page
from sessions import BASE_MS, SessionBuilder, iso, text, tool_call
from site_helpers import build

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

HOUR = 3_600_000
LONG_MODEL = "claude-sonnet-4-5-20250929-with-a-very-long-provider-suffix-preview"
PROJECTS = ["/home/dev/webapp", "/home/dev/api-gateway-with-a-long-name", "/srv/ml"]
SESSIONS = 26


def prompt(n: int) -> str:
    if n % 3 == 0:
        return f"## Fix `parse_config` number {n}\n\nIt fails with **KeyError** on every run; " + "details " * 40
    return f"Session {n}: make the upload handler stream files instead of reading them whole " + "and more " * 20


def write_sessions(agent: Path) -> None:
    for n in range(SESSIONS):
        cwd = PROJECTS[n % len(PROJECTS)]
        b = SessionBuilder(session_id=f"sess-{n:04d}", cwd=cwd)
        # Session n was active n hours after the first: the newest are the highest numbers.
        b.clock = BASE_MS + n * HOUR
        b.header["timestamp"] = iso(b.clock)
        b.user("u1", prompt(n))
        model = {"model": LONG_MODEL} if n % 2 else {"model": "gpt-5.1-codex", "provider": "openai"}
        b.assistant("a1", [text("On it."), tool_call("c1", "bash", command="pytest -q")], **model)
        b.tool_result("r1", "c1", "bash", "3 passed\n")
        b.assistant("a2", [text("Done.")], **model)
        folder = agent / "sessions" / ("--" + cwd.strip("/").replace("/", "-") + "--")
        b.write(folder / f"2026-01-01T00-00-00-000Z_sess-{n:04d}.jsonl")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("listings")
    write_sessions(root / "agent")
    build(root / "site", root / "agent")
    return root / "site"


def project_page(site: Path, name: str) -> Path:
    return next(page for page in (site / "projects").glob("*.html") if name in page.read_text(encoding="utf-8"))


def test_home_lists_the_twenty_newest_sessions_of_all_projects(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, site / "index.html", allow=site)
    try:
        rows = page.locator("#recent tbody tr")
        assert rows.count() == 20
        values = page.eval_on_selector_all("#recent td.last", "cells => cells.map(c => c.dataset.value)")
        times = [int(v) for v in values]
        assert times == sorted(times, reverse=True)
        titles = rows.locator(".session-title").all_inner_texts()
        # The newest is session 25; markdown is stripped and the title is one line of at most 80 characters.
        assert titles[0].startswith("Session 25: make the upload handler")
        assert "Fix parse_config number 24" in titles
        assert all(len(title) <= 80 and "`" not in title and "#" not in title for title in titles)
        projects = set(rows.locator(".session-project").all_inner_texts())
        assert projects == {"webapp", "api-gateway-with-a-long-name", "ml"}
        # Each session links to its page and its project's page.
        first = rows.nth(0)
        assert first.locator(".session-title").get_attribute("href", timeout=1000).startswith("sessions/")
        assert first.locator(".session-project").get_attribute("href", timeout=1000).startswith("projects/")
        assert_clean(watch)
    finally:
        page.context.close()


def row_heights(page: Page, table: str) -> list[float]:
    return page.eval_on_selector_all(f"{table} tbody tr", "rows => rows.map(r => r.getBoundingClientRect().height)")


def test_project_rows_are_two_lines_with_the_title_taking_the_width(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, project_page(site, PROJECTS[1]), allow=site)
    try:
        line = page.evaluate("parseFloat(getComputedStyle(document.querySelector('#sessions td')).lineHeight)")
        # Two lines of text and the cell's padding; a wrapped third line would exceed it.
        assert max(row_heights(page, "#sessions")) < 2.9 * line + 16
        table = page.locator("#sessions").bounding_box()
        cell = page.locator("#sessions td.session-cell").first.bounding_box()
        assert table is not None and cell is not None
        assert cell["width"] > 0.45 * table["width"]
        headers = page.locator("#sessions thead th").all_inner_texts()
        assert [h.strip(" ↕") for h in headers] == [
            "Session",
            "Started",
            "Last activity",
            "Duration",
            "Msgs",
            "Tools",
            "Cost",
            "Size",
        ]
        # A long model id is shortened, the full id on hover.
        model = page.locator("#sessions .model", has_text="claude-sonnet").first
        assert model.inner_text() == LONG_MODEL
        assert model.get_attribute("title") == "anthropic/" + LONG_MODEL
        sizes = page.eval_on_selector_all("#sessions tbody td:last-child", "cells => cells.map(c => +c.dataset.value)")
        assert all(size > 500 for size in sizes)
        # Sorting by size and filtering still work on the new columns.
        page.locator("#sessions th", has_text="Size").locator("button").click()
        # Sessions 4, 10, 16 and 22 of this project ran on gpt-5.1-codex: the model line is filtered too.
        page.locator("input.table-filter").fill("gpt-5.1")
        assert page.locator("#sessions tbody tr:not([hidden])").count() == 4
        assert_clean(watch)
    finally:
        page.context.close()


@pytest.mark.parametrize("which", ["home", "project"])
def test_a_phone_shows_title_and_date_without_sideways_scrolling(browser: Browser, site: Path, which: str) -> None:
    path = site / "index.html" if which == "home" else project_page(site, PROJECTS[1])
    page, watch = open_page(browser, path, allow=site, width=390, height=844)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        table = "#recent" if which == "home" else "#sessions"
        boxes = page.eval_on_selector_all(
            f"{table} tbody tr",
            "rows => rows.map(r => [r.querySelector('.session-title'), r.querySelector('td.last')]"
            ".map(e => { const b = e.getBoundingClientRect(); return [b.left, b.right, b.width]; }))",
        )
        assert boxes
        for title, date in boxes:
            assert title[2] > 100 and date[2] > 0
            assert title[0] >= 0 and date[1] <= 390
        assert_clean(watch)
    finally:
        page.context.close()
