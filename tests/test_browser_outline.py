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


def prompt_top(page: Page, entry_id: str) -> float:
    """Where a prompt sits under the toolbar: 0 when a jump has put it right below it."""
    top: float = page.evaluate(
        f"document.getElementById('entry-{entry_id}').getBoundingClientRect().top"
        " - document.querySelector('.toolbar').getBoundingClientRect().bottom"
    )
    return top


_TOP = (
    "() => document.getElementById('entry-u3').getBoundingClientRect().top"
    " - document.querySelector('.toolbar').getBoundingClientRect().bottom"
)


def wait_landed(page: Page, entry_id: str) -> None:
    page.wait_for_function(
        f"() => {{ const r = document.getElementById('entry-{entry_id}').getBoundingClientRect();"
        " const bar = document.querySelector('.toolbar').getBoundingClientRect().bottom;"
        " return r.top >= bar - 2 && r.top < bar + 60; }"
    )


def test_j_and_k_step_between_prompts(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened

    def landed(entry_id: str) -> None:
        wait_landed(page, entry_id)

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


@pytest.mark.parametrize(("moved", "key", "expected"), [(120, "k", "u2"), (-120, "j", "u5")])
def test_a_key_steps_from_where_the_last_one_went_while_the_page_settles(
    opened: tuple[Page, PageWatch], moved: int, key: str, expected: str
) -> None:
    # While a jump settles, entries drawn around it move its prompt for a moment (a script's scroll here):
    # the next key still steps from the prompt the last one went to, as CI once showed it must.
    page, watch = opened
    page.evaluate("document.documentElement.style.overflowAnchor = 'none'")
    for _ in range(3):
        page.keyboard.press("j")
    wait_landed(page, "u3")
    # A few frames on, once the page has stopped placing u3, and well within the jump's settling time.
    page.evaluate(
        "async (moved) => { for (let i = 0; i < 4; i++) await new Promise(requestAnimationFrame);"
        " window.scrollBy(0, moved); }",
        moved,
    )
    assert abs(prompt_top(page, "u3") + moved) < 20
    page.keyboard.press(key)
    # The last prompt sits near the page's end, which keeps it from coming right under the toolbar.
    page.wait_for_function(
        f"() => {{ const r = document.getElementById('entry-{expected}').getBoundingClientRect();"
        " const bar = document.querySelector('.toolbar').getBoundingClientRect().bottom;"
        " return r.top >= bar - 2 && r.top < bar + 120; }"
    )
    assert_clean(watch)


def test_after_scrolling_into_a_long_turn_k_goes_back_to_its_prompt(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    for _ in range(3):
        page.keyboard.press("j")
    wait_landed(page, "u3")
    page.mouse.wheel(0, 150)
    page.wait_for_function(
        "() => document.getElementById('entry-u3').getBoundingClientRect().top"
        " < document.querySelector('.toolbar').getBoundingClientRect().bottom - 100"
    )
    page.keyboard.press("k")
    wait_landed(page, "u3")
    page.keyboard.press("k")
    wait_landed(page, "u2")
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


def test_a_jump_near_the_end_holds_when_the_page_grows_shorter_below_it(opened: tuple[Page, PageWatch]) -> None:
    # Entries below the target drawn smaller than guessed pull a page at its end back up: the browser's
    # scroll, which must not end the hold, or an entry drawn above later leaves the prompt off its place.
    page, watch = opened
    page.evaluate("document.documentElement.style.overflowAnchor = 'none'")
    for _ in range(3):
        page.keyboard.press("j")
    wait_landed(page, "u3")
    landed = prompt_top(page, "u3")
    pulled_up = page.evaluate(
        "async () => { const before = scrollY;"
        " let cut = document.documentElement.scrollHeight - innerHeight - before + 60;"
        " const target = document.getElementById('entry-u3');"
        " const below = [...document.querySelectorAll('#conversation .entry')].filter(e => e.offsetHeight > 0"
        "   && (target.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING) && !target.contains(e));"
        " while (cut > 0 && below.length) { const e = below.pop(); cut -= e.offsetHeight; e.style.display = 'none'; }"
        " await new Promise(requestAnimationFrame); await new Promise(requestAnimationFrame);"
        " return before - scrollY; }"
    )
    assert pulled_up > 30
    page.evaluate("document.getElementById('entry-u1').style.paddingTop = '300px'")
    page.wait_for_function(f"() => Math.abs(({_TOP})() - {landed}) < 2")
    assert_clean(watch)


def test_a_click_opens_the_prompt(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.click("#tab-outline")
    page.locator('#outline a[data-id="u3"]').click()
    assert page.evaluate("location.hash") == "#entry-u3"
    page.wait_for_function("() => document.getElementById('entry-u3').getBoundingClientRect().top < 200")
    assert_clean(watch)
