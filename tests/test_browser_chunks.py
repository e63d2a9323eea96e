"""A long page in a real Chromium: entries past the first screen arrive as raw text and go into the page in
the background, and at once where the reader goes (deep links, tree rows, branches, find, print)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageWatch, assert_clean, export_session, open_page
from sessions import SessionBuilder, text, tool_call

from sitegen.render.page import LAZY_AFTER_NODES

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

TURNS = 600  # three entries a turn: past LAZY_AFTER_NODES


def long_session(path: Path) -> Path:
    """600 turns of prompt, bash call and result; a second branch forks from turn 580."""
    b = SessionBuilder(session_id="long-0001", cwd="/work/app")
    for n in range(TURNS):
        b.user(f"u{n:04d}", f"step {n}: run the tests ZZ_STEP_{n}_ZZ")
        b.assistant(f"a{n:04d}", [text(f"Running them, step {n}."), tool_call(f"c{n}", "bash", command=f"make t{n}")])
        b.tool_result(f"r{n:04d}", f"c{n}", "bash", f"ok {n}")
    b.user("old0", "ZZ_OLD_BRANCH_ZZ try the other way", parent="r0580")
    b.assistant("old1", [text("The other way.")])
    b.user("last", "ZZ_LAST_PROMPT_ZZ done?", parent=f"r{TURNS - 1:04d}")
    return b.write(path)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("chunks")
    page = export_session(long_session(folder / "long.jsonl"), folder / "long.html")
    html = page.read_text(encoding="utf-8")
    assert 3 * TURNS > LAZY_AFTER_NODES
    assert html.count('<script type="text/x-sitegen-entries"') > 20
    assert '<script type="application/json" id="entry-links">' in html
    return page


@pytest.fixture
def opened(browser: Browser, page_file: Path) -> Iterator[tuple[Page, PageWatch]]:
    page, watch = open_page(browser, page_file)
    yield page, watch
    page.context.close()


def on_screen(page: Page, entry_id: str) -> None:
    page.wait_for_function(
        f"() => {{ const e = document.getElementById('entry-{entry_id}'); if (!e) return false;"
        " const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.top < innerHeight; }"
    )


def test_the_rest_arrives_in_the_background(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.wait_for_function("() => window.sitegen.chunks.complete()", timeout=60_000)
    assert page.locator("#conversation [data-parent]").count() == 3 * TURNS + 3  # results sit in their calls
    assert page.locator('script[type="text/x-sitegen-entries"]').count() == 0
    # Entries of the older branch came in marked as not shown.
    assert not page.locator("#entry-old0").is_visible()
    assert page.locator("#entry-last").is_visible()
    assert_clean(watch)


def test_a_deep_link_to_a_late_entry(browser: Browser, page_file: Path) -> None:
    page, watch = open_page(browser, page_file, fragment="#entry-a0590")
    try:
        on_screen(page, "a0590")
        # Its tree row, drawn from the long page's raw rows, is marked and in the sidebar's view.
        row = page.locator('#tree li[data-id="a0590"]')
        row.wait_for()
        assert row.get_attribute("aria-current") == "true"
        assert_clean(watch)
    finally:
        page.context.close()


def tree_search(page: Page, words: str) -> None:
    page.locator("#tree-search").fill(words)


def test_tree_rows_and_branches_reach_late_entries(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    # The rows far down the tree are drawn when the tree gets there: the filter brings them up.
    tree_search(page, "ZZ_STEP_595_ZZ")
    page.locator('#tree li[data-id="u0595"] a').click()
    on_screen(page, "u0595")
    tree_search(page, "ZZ_OLD_BRANCH_ZZ")
    page.locator('#tree li[data-id="old0"] a').click()
    on_screen(page, "old0")
    assert page.locator("#entry-old1").is_visible()
    assert not page.locator("#entry-last").is_visible()
    assert not page.locator("#entry-u0590").is_visible()  # after the fork, on the other branch
    assert page.locator("#entry-u0580").is_visible()
    assert_clean(watch)


def tree_rows(page: Page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('#tree li[data-id]')].map(r => r.dataset.id)")


def wheel_to_tree_end(page: Page) -> None:
    box = page.locator("#tree").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 200)
    page.mouse.wheel(0, 10_000_000)
    page.wait_for_function(
        "() => { const tree = document.getElementById('tree');"
        " return tree.scrollTop > 0 && tree.scrollTop + tree.clientHeight >= tree.scrollHeight - 2; }"
    )


def test_the_tree_draws_the_rows_near_its_view(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    rows = 3 * TURNS + 3  # prompt, reply and result each turn; the fork's two entries; the last prompt
    assert page.locator("#tree-count").inner_text() == str(rows)
    drawn = tree_rows(page)
    assert drawn[0] == "u0000" and 40 < len(drawn) < 400
    # The wheel to the tree's end, as a reader does: the last rows are drawn, and the last one opens its entry.
    wheel_to_tree_end(page)
    page.wait_for_function("() => !!document.querySelector('#tree li[data-id=\"last\"]')")
    assert "u0000" not in tree_rows(page)
    page.locator('#tree li[data-id="last"] a').click()
    on_screen(page, "last")
    marks = (page.locator('#tree li[data-id="last"]').get_attribute("class") or "").split()
    assert {"kind-user", "on-path", "current"} <= set(marks)
    assert_clean(watch)


@pytest.fixture
def without_idle(browser: Browser, page_file: Path) -> Iterator[tuple[Page, list[str]]]:
    """The long page with no idle time for the background: every chunk stays text until something needs
    it, so a test sees what one action put in. Yields the page and its script errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script("window.requestIdleCallback = function () { return 0; };")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_file.resolve().as_uri())
    yield page, errors
    context.close()


def test_a_tree_click_puts_in_only_the_chunk_it_opens(without_idle: tuple[Page, list[str]]) -> None:
    page, errors = without_idle
    pending = "() => document.querySelectorAll('script[type=\"text/x-sitegen-entries\"]').length"
    before = page.evaluate(pending)
    wheel_to_tree_end(page)
    page.locator('#tree li[data-id="last"] a').click()
    on_screen(page, "last")
    # The last entry's chunk, and the one before when the chunk starts inside a tool call's message.
    assert before - 2 <= page.evaluate(pending) <= before - 1
    assert errors == []


def test_tree_search_and_filters_count_every_row(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    rows = 3 * TURNS + 3
    tree_search(page, "zz_step_")
    page.wait_for_function(f"() => document.getElementById('tree-count').textContent === '{TURNS} of {rows}'")
    # Only matching rows are drawn, the first of them at the top; Enter opens it.
    assert tree_rows(page)[:3] == ["u0000", "u0001", "u0002"]
    # Typed while the tree is scrolled to its end, the one match is drawn all the same.
    tree_search(page, "")
    wheel_to_tree_end(page)
    tree_search(page, "zz_step_599_zz")
    page.wait_for_function(f"() => document.getElementById('tree-count').textContent === '1 of {rows}'")
    assert tree_rows(page) == ["u0599"]
    page.locator("#tree-search").press("Enter")
    on_screen(page, "u0599")
    tree_search(page, "")
    # A view filter: the tree counts and draws only user prompts (the other branch's too).
    page.locator('button.filter[data-filter="user"]').click()
    page.wait_for_function(f"() => document.getElementById('tree-count').textContent === '{TURNS + 2} of {rows}'")
    assert all(row.startswith("u") or row in ("old0", "last") for row in tree_rows(page))
    assert_clean(watch)


def test_the_tree_follows_the_reading_position_on_a_long_page(browser: Browser, page_file: Path) -> None:
    page, watch = open_page(browser, page_file, fragment="#entry-u0590")
    try:
        on_screen(page, "u0590")
        # The reader scrolls a little: the row of the entry in view is drawn and scrolled into the tree's view.
        page.mouse.move(900, 500)
        page.mouse.wheel(0, 60)
        page.wait_for_function(
            "() => { const row = document.querySelector('#tree li.in-view');"
            " if (!row || !['u0590', 'a0590', 'u0591'].includes(row.dataset.id)) return false;"
            " const tree = document.getElementById('tree').getBoundingClientRect();"
            " const r = row.getBoundingClientRect();"
            " return r.top >= tree.top && r.bottom <= tree.bottom; }"
        )
        assert_clean(watch)
    finally:
        page.context.close()


def test_find_reaches_every_entry(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    # Find jumps to the first match once typing pauses (an Enter then would go on to the second).
    page.locator("#find").fill("ZZ_STEP_")
    page.wait_for_function(f"() => document.getElementById('find-status').textContent === '1 of {TURNS}'")
    page.locator("#find").press("Shift+Enter")
    page.wait_for_function(f"() => document.getElementById('find-status').textContent === '{TURNS} of {TURNS}'")
    on_screen(page, f"u{TURNS - 1:04d}")
    assert_clean(watch)


def test_find_reaches_the_last_entry(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.locator("#find").fill("ZZ_LAST_PROMPT_ZZ")
    page.locator("#find").press("Enter")
    page.wait_for_function("() => document.getElementById('find-status').textContent === '1 of 1'")
    on_screen(page, "last")
    assert_clean(watch)


def test_find_puts_in_only_the_chunks_that_hold_a_match(without_idle: tuple[Page, list[str]]) -> None:
    page, errors = without_idle
    before, matched, after, found = page.evaluate(
        """() => {
            const pending = () => document.querySelectorAll('script[type="text/x-sitegen-entries"]').length;
            const before = pending();
            const matched = window.sitegen.chunks.withText(/zz_step_59\\d_zz/i);
            const found = [...Array(10).keys()].every(n => document.getElementById('entry-u059' + n));
            return [before, matched, pending(), found];
        }"""
    )
    # Steps 590-599 are in one or two chunks of 64 entries; the others stay text until needed.
    assert before > 20 and 1 <= matched <= 2 and after == before - matched
    assert found
    # Find does the same: a word of one late entry, and the count is still exact.
    page.locator("#find").fill("ZZ_STEP_420_ZZ")
    page.wait_for_function("() => document.getElementById('find-status').textContent === '1 of 1'")
    assert (
        page.evaluate("() => document.querySelectorAll('script[type=\"text/x-sitegen-entries\"]').length") == after - 1
    )
    # Typing on: the next search finds what the chunks still to come hold, from their text kept by the first.
    page.locator("#find").fill("ZZ_STEP_300_ZZ")
    page.wait_for_function("() => document.getElementById('find-status').textContent === '1 of 1'")
    on_screen(page, "u0300")
    assert errors == []


def test_print_has_every_entry(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.evaluate("window.sitegen.chunks.complete()")
    assert page.locator("#conversation [data-parent]").count() == 3 * TURNS + 3  # results sit in their calls
    assert_clean(watch)


def test_without_javascript_the_first_entries_and_a_note(browser: Browser, page_file: Path) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(page_file.resolve().as_uri())
        assert page.locator("#entry-u0000").is_visible()
        assert "only its first entries without JavaScript" in page.locator("#conversation").inner_text()
    finally:
        context.close()
