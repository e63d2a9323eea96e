"""The prompt outline in a real Chromium: one link per prompt of the shown branch with its turn's figures,
j and k between prompts, and the turn in view marked."""

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
    folder = tmp_path_factory.mktemp("outline")
    return export_session(reader_session().write(folder / "reader.jsonl"), folder / "reader.html")


@pytest.fixture
def opened(browser: Browser, page_file: Path) -> Iterator[tuple[Page, PageWatch]]:
    page, watch = open_page(browser, page_file, height=420)
    yield page, watch
    page.context.close()


def outline_ids(page: Page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('#outline a[data-id]')].map(a => a.dataset.id)")


def test_one_link_per_prompt_of_the_shown_branch_with_its_turn(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    assert outline_ids(page) == ["u1", "u2", "u3", "u5"]
    assert page.locator("#tab-outline").inner_text() == "Prompts (4)"
    page.click("#tab-outline")
    first = page.locator("#outline li").nth(0)
    assert first.locator(".outline-text").inner_text() == "Fix the login bug"
    # Four replies of 100 in + 20 out + 1,000 cache read + 10 cache write, $0.0125 each; four calls, one per
    # tool, the bash one failed; eight seconds from the prompt to the last reply (issue 34).
    assert first.locator(".outline-stats").inner_text() == (
        "1 bash · 1 edit · 1 grep · 1 read · 1 failed · 8 s · 4,520 tok · $0.050"
    )
    # Another branch has its own prompts.
    page.evaluate("window.location.hash = '#entry-a8'")
    page.wait_for_function("() => document.querySelectorAll('#outline a[data-id]').length === 2")
    assert outline_ids(page) == ["u1", "u4"]
    assert_clean(watch)


def test_j_and_k_step_between_prompts(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened

    def landed(entry_id: str) -> None:
        page.wait_for_function(
            f"() => {{ const r = document.getElementById('entry-{entry_id}').getBoundingClientRect();"
            " const bar = document.querySelector('.toolbar').getBoundingClientRect().bottom;"
            " return r.top >= bar - 2 && r.top < bar + 60; }"
        )

    page.keyboard.press("j")
    landed("u1")
    page.keyboard.press("j")
    landed("u2")
    page.keyboard.press("j")
    landed("u3")
    page.keyboard.press("k")
    landed("u2")
    assert page.locator("#outline li.in-view a").get_attribute("data-id") == "u2"
    # Typing in a field is not a key press for the page.
    page.locator("#find").focus()
    page.keyboard.press("j")
    assert page.locator("#find").input_value() == "j"
    assert_clean(watch)


def test_a_jump_holds_its_target_until_the_reader_moves(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    top = (
        "() => document.getElementById('entry-u3').getBoundingClientRect().top"
        " - document.querySelector('.toolbar').getBoundingClientRect().bottom"
    )
    # Without the browser's scroll anchoring, as when the entries drawn late sit outside its anchor.
    page.evaluate("document.documentElement.style.overflowAnchor = 'none'")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.wait_for_function(f"() => Math.abs(({top})()) < 20")
    landed = page.evaluate(top)
    # An entry above gets its real height after the jump has settled: the target is landed on again.
    page.evaluate("document.getElementById('entry-u1').style.paddingTop = '300px'")
    page.wait_for_function(f"() => Math.abs(({top})() - {landed}) < 2")
    # Once the reader scrolls, a later change above is theirs to see: the page does not scroll back.
    page.mouse.wheel(0, 40)
    page.wait_for_function(f"() => ({top})() < {landed} - 20")
    moved = page.evaluate("scrollY")
    page.evaluate("document.getElementById('entry-u1').style.paddingTop = '600px'")
    page.wait_for_timeout(300)
    assert page.evaluate("scrollY") == moved
    assert_clean(watch)


def test_a_click_opens_the_prompt(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.click("#tab-outline")
    page.locator('#outline a[data-id="u3"]').click()
    assert page.evaluate("location.hash") == "#entry-u3"
    page.wait_for_function("() => document.getElementById('entry-u3').getBoundingClientRect().top < 200")
    assert_clean(watch)
