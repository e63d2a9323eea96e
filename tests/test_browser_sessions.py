"""Every session within two clicks of home (All sessions, paged at 2,000), the Ctrl+K palette and the
]/[ keys between a project's sessions, from file:// in Chromium; nothing of them on an exported page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageWatch, assert_clean, export_session, open_page
from site_helpers import build, make_session

from sitegen.site.pages.all_sessions import FIRST_ROWS
from sitegen.site.pages.indexes import IndexWriter
from sitegen.site.state.records import SessionRecord

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

# (project, session id, title words, entries: more entries end later, so list newer)
SESSIONS = [
    ("/work/alpha", "alpha-1", "ZZ_ALPHA_OLD_ZZ parser", 2),
    ("/work/alpha", "alpha-2", "ZZ_ALPHA_MID_ZZ lexer", 4),
    ("/work/alpha", "alpha-3", "ZZ_ALPHA_NEW_ZZ printer", 6),
    ("/work/beta", "beta-1", "ZZ_BETA_ONE_ZZ importer", 3),
    ("/work/beta", "beta-2", "ZZ_BETA_TWO_ZZ exporter", 5),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sessions")
    agent = folder / "agent"
    for cwd, session_id, words, entries in SESSIONS:
        make_session(agent, cwd, session_id, words, entries=entries)
    out = folder / "site"
    assert len(build(out, agent).rendered) == len(SESSIONS)
    return out


def _page_of(site: Path, word: str) -> Path:
    return next(p for p in (site / "sessions").rglob("*.html") if word in p.read_text(encoding="utf-8"))


@pytest.fixture
def opened(browser: Browser, site: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Page, PageWatch]]:
    page, watch = open_page(browser, site / request.param, allow=site)
    yield page, watch
    page.context.close()


def test_every_session_is_two_clicks_from_home(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, site / "index.html", allow=site)
    try:
        page.click("a.all-sessions-link")  # one
        expect(page.locator("#all-sessions tbody tr")).to_have_count(len(SESSIONS))
        titles = page.locator("#all-sessions a.session-title").all_inner_texts()
        # Newest first across projects.
        assert [t.split()[0] for t in titles] == [
            "ZZ_ALPHA_NEW_ZZ",
            "ZZ_BETA_TWO_ZZ",
            "ZZ_ALPHA_MID_ZZ",
            "ZZ_BETA_ONE_ZZ",
            "ZZ_ALPHA_OLD_ZZ",
        ]
        page.fill("#all-filter", "beta importer")
        expect(page.locator("#all-sessions tbody tr")).to_have_count(1)
        expect(page.locator("#all-count")).to_have_text("1 of 5 sessions")
        page.click("#all-sessions a.session-title")  # two
        expect(page.locator("h1.title")).to_contain_text("ZZ_BETA_ONE_ZZ")
        assert_clean(watch)
    finally:
        page.context.close()


def _record(n: int) -> SessionRecord:
    project = f"/work/p{n % 40}"
    return SessionRecord(
        key=f"s{n:04d}", source=f"/x/s{n:04d}.jsonl", family="pi", session_id=f"s{n:04d}", project=project,
        project_slug=f"p{n % 40}", page=f"sessions/p{n % 40}/s{n:04d}.html", title=f"session ZZ_S{n:04d}_ZZ work",
        created_ms=1_000_000 + n, modified_ms=2_000_000 + n * 1000, messages=n % 50, tool_calls=0, branches=1,
        compactions=0, models=["anthropic/claude-test"], input=0, output=0, cache_read=0, cache_write=0, cost=0.01,
    )  # fmt: skip


def test_two_thousand_sessions_are_drawn_a_page_at_a_time(browser: Browser, site: Path, tmp_path: Path) -> None:
    assets = {p.name.split(".")[0] + "." + p.suffix[1:]: f"assets/{p.name}" for p in (site / "assets").iterdir()}
    (tmp_path / "assets").symlink_to(site / "assets")
    records = [_record(n) for n in range(2000)]
    IndexWriter(tmp_path, assets).write_all_sessions(records, {f"p{n}": f"/work/p{n}" for n in range(40)}, 0)
    page, watch = open_page(browser, tmp_path / "sessions.html", allow=tmp_path, height=800)
    try:
        expect(page.locator("#all-filter")).to_be_enabled()
        rows = page.locator("#all-sessions tbody tr")
        assert rows.count() == FIRST_ROWS
        assert rows.first.inner_text().startswith("session ZZ_S1999_ZZ")
        page.evaluate("scrollTo(0, document.body.scrollHeight)")
        expect(rows).to_have_count(2 * FIRST_ROWS)
        assert rows.nth(FIRST_ROWS).inner_text().startswith(f"session ZZ_S{1999 - FIRST_ROWS:04d}_ZZ")
        page.fill("#all-filter", "zz_s0007_zz")
        expect(rows).to_have_count(1)
        expect(page.locator("#all-count")).to_have_text("1 of 2,000 sessions")
        page.fill("#all-filter", "work")
        expect(rows).to_have_count(FIRST_ROWS)  # a filter matching all draws a page again, not 2,000
        assert_clean(watch)
    finally:
        page.context.close()


def _palette_opens(page: Page, words: str, expected: str) -> None:
    page.keyboard.press("Control+k")
    expect(page.locator("#palette")).to_have_attribute("open", "")
    page.keyboard.type(words)
    expect(page.locator("#palette-results [role=option]").first).to_contain_text(expected)
    page.keyboard.press("Enter")
    expect(page.locator("h1.title")).to_contain_text(expected)


def test_palette_finds_sessions_by_title_words_from_a_session_page(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, _page_of(site, "ZZ_ALPHA_OLD_ZZ"), allow=site)
    try:
        # Site pages carry the copy buttons too.
        expect(page.locator(".tool-head > button.copy").first).to_be_visible()
        _palette_opens(page, "exporter zz_beta", "ZZ_BETA_TWO_ZZ")
        assert_clean(watch)
    finally:
        page.context.close()


def test_palette_works_from_index_pages(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, site / "stats.html", allow=site)
    try:
        _palette_opens(page, "lexer", "ZZ_ALPHA_MID_ZZ")
        assert_clean(watch)
    finally:
        page.context.close()


def test_brackets_step_through_the_project_in_listing_order(browser: Browser, site: Path) -> None:
    page, watch = open_page(browser, _page_of(site, "ZZ_ALPHA_NEW_ZZ"), allow=site)
    try:
        page.keyboard.press("]")
        expect(page.locator("h1.title")).to_contain_text("ZZ_ALPHA_MID_ZZ")  # beta's sessions are skipped
        page.wait_for_load_state("load")
        page.keyboard.press("]")
        expect(page.locator("h1.title")).to_contain_text("ZZ_ALPHA_OLD_ZZ")
        page.wait_for_load_state("load")
        page.keyboard.press("]")
        expect(page.locator("#session-step")).to_have_text(re.compile("oldest"))
        page.keyboard.press("[")
        expect(page.locator("h1.title")).to_contain_text("ZZ_ALPHA_MID_ZZ")
        page.wait_for_load_state("load")
        page.keyboard.press("?")
        expect(page.locator("#keys-dialog")).to_be_visible()
        keys = page.locator("#keys-dialog dt").all_inner_texts()
        assert {"]", "[", "Ctrl+K"} <= set(keys)
        assert_clean(watch)
    finally:
        page.context.close()


def test_exported_page_has_no_site_keys(browser: Browser, tmp_path: Path) -> None:
    session = make_session(tmp_path / "agent", "/work/alpha", "solo", "ZZ_SOLO_ZZ")
    page, watch = open_page(browser, export_session(session, tmp_path / "solo.html"))
    try:
        page.keyboard.press("Control+k")
        page.keyboard.press("]")
        page.keyboard.press("?")
        expect(page.locator("#keys-dialog")).to_be_visible()
        assert page.locator("#palette").count() == 0
        assert "Ctrl+K" not in page.locator("#keys-dialog").inner_text()
        assert page.url.endswith("solo.html")
        assert_clean(watch)
    finally:
        page.context.close()
