"""The tree in a real Chromium: rows that say what happened, filtering as you type and by the view filters,
forks and the branch list, and a mark that follows the reading position."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageWatch, assert_clean, export_session, open_page
from sessions import reader_session

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tree")
    session = reader_session().write(folder / "reader.jsonl")
    return export_session(session, folder / "reader.html")


@pytest.fixture
def opened(browser: Browser, page_file: Path) -> Iterator[tuple[Page, PageWatch]]:
    # A low window, so that the short test page can scroll any entry to the top.
    page, watch = open_page(browser, page_file, height=420)
    yield page, watch
    page.context.close()


def row(page: Page, entry_id: str) -> str:
    return f'#tree li[data-id="{entry_id}"]'


def shown_rows(page: Page) -> list[str]:
    return page.evaluate(
        "[...document.querySelectorAll('#tree li[data-id]')].filter(r => r.offsetParent).map(r => r.dataset.id)"
    )


def test_rows_say_what_happened(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    assert page.locator(row(page, "r1")).inner_text().startswith("bash")
    assert "npm test" in page.locator(row(page, "r1")).inner_text()
    assert "failed" in (page.locator(row(page, "r1")).get_attribute("class") or "")
    # The path is two boxes (.mid: folders that give way, the file name whole): the same text.
    assert page.locator(row(page, "r2")).text_content() == "read src/login.ts"
    assert page.locator(row(page, "u1")).inner_text() == "Fix the login bug"
    assert page.locator(row(page, "a2")).count() == 0  # only tool calls: its calls have the rows
    # A tool row opens the call's card, with the result in it, its head below the toolbar.
    page.locator(row(page, "r2") + " a").click()
    page.wait_for_function(
        "() => { const top = document.querySelector('#entry-r2').closest('.tool').getBoundingClientRect().top;"
        " return top >= document.querySelector('.toolbar').getBoundingClientRect().bottom && top < 200; }"
    )
    assert_clean(watch)


def test_search_keeps_matching_rows_and_enter_jumps(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    total = len(shown_rows(page))
    search = page.locator("#tree-search")
    search.fill("login")
    assert shown_rows(page) == ["u1", "r2", "r4", "r5", "c1mp"]  # the compaction's summary names the fix
    assert page.locator("#tree-count").inner_text() == f"5 of {total}"
    search.fill("LOGIN edit")  # every word, any case
    assert shown_rows(page) == ["r4"]
    search.press("Enter")
    assert "current" in (page.locator(row(page, "r4")).get_attribute("class") or "")
    assert page.evaluate("location.hash") == "#entry-r4"
    search.press("Escape")
    assert len(shown_rows(page)) == total
    # Failed steps are found by the word.
    search.fill("failed")
    assert shown_rows(page) == ["r1"]
    assert_clean(watch)


def test_view_filters_apply_to_the_tree(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.click('button.filter[data-filter="no-tools"]')
    assert not {"r1", "r2", "r3", "r4"} & set(shown_rows(page))
    assert "u1" in shown_rows(page) and "a4" in shown_rows(page)
    page.click('button.filter[data-filter="user"]')
    assert shown_rows(page) == ["u1", "u4", "u2", "u3", "u5"]
    assert page.locator("#tree-count").inner_text() == f"5 of {page.locator('#tree li').count()}"
    page.locator("#tree-search").fill("signup")
    assert shown_rows(page) == ["u3"]
    assert page.locator("#tree-count").inner_text().startswith("1 of 5")
    assert_clean(watch)


def test_forks_are_marked_and_the_branch_list_switches_branch(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    fork = page.locator("#tree li.fork")
    assert fork.count() == 1 and fork.get_attribute("data-id") == "a4"
    assert fork.locator(".forks").inner_text() == "2"
    page.click("#tab-branches")
    links = page.locator("#branches a[data-leaf]")
    assert links.count() == 2
    assert "Actually, revert it" in links.nth(0).inner_text()
    assert "2026-01-01" in links.nth(0).inner_text()
    assert "shown" in (page.locator("#branches li").nth(1).get_attribute("class") or "")
    links.nth(0).click()
    assert page.locator("#entry-u4").is_visible() and not page.locator("#entry-u2").is_visible()
    assert "shown" in (page.locator("#branches li").nth(0).get_attribute("class") or "")
    assert "on-path" in (page.locator(row(page, "a8")).get_attribute("class") or "")
    assert "on-path" not in (page.locator(row(page, "a9")).get_attribute("class") or "")
    # The jump lands where the branch starts: its first entry on screen, below the toolbar.
    page.wait_for_function(
        "() => { const r = document.getElementById('entry-u4').getBoundingClientRect();"
        " return r.top >= document.querySelector('.toolbar').getBoundingClientRect().bottom"
        " && r.top < innerHeight - 40; }"
    )
    assert "current" in (page.locator(row(page, "u4")).get_attribute("class") or "")
    assert_clean(watch)


def test_the_tree_follows_the_reading_position(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.evaluate("document.getElementById('entry-u3').scrollIntoView()")
    page.wait_for_function("() => document.querySelector('#tree li.in-view') !== null")
    assert page.locator("#tree li.in-view").get_attribute("data-id") == "u3"
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_function("() => document.querySelector('#tree li.in-view').dataset.id === 'init0001'")
    assert_clean(watch)
