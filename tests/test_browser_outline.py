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
    """Where a prompt sits under the toolbar: 16 (its scroll margin) when a jump has put it right below it."""
    top: float = page.evaluate(
        "(id) => document.getElementById('entry-' + id).getBoundingClientRect().top"
        " - document.querySelector('.toolbar').getBoundingClientRect().bottom",
        entry_id,
    )
    return top


def wait_landed(page: Page, entry_id: str, below: int = 60) -> None:
    page.wait_for_function(
        "([id, below]) => { const r = document.getElementById('entry-' + id).getBoundingClientRect();"
        " const bar = document.querySelector('.toolbar').getBoundingClientRect().bottom;"
        " return r.top >= bar - 2 && r.top < bar + below; }",
        arg=[entry_id, below],
    )


# Until the page has stopped moving: the entries drawn on the way have their heights, the jump is done.
_STILL = (
    "async () => { let still = 0, last = '';"
    " while (still < 5) { await new Promise(requestAnimationFrame);"
    "   const now = scrollY + ' ' + document.documentElement.scrollHeight;"
    "   still = now === last ? still + 1 : 0; last = now; } }"
)


def wait_still(page: Page) -> None:
    page.evaluate(_STILL)


def grow_above(page: Page, pixels: int) -> None:
    """Make the first prompt taller (or shorter, back) by `pixels`: what an entry drawn late does."""
    page.evaluate(
        "(px) => { document.getElementById('entry-u1').style.paddingTop = `calc(0.6rem + ${px}px)`; }", pixels
    )


def test_j_and_k_step_between_prompts(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.keyboard.press("j")
    wait_landed(page, "u1")
    page.keyboard.press("j")
    wait_landed(page, "u2")
    page.keyboard.press("j")
    wait_landed(page, "u3")
    page.keyboard.press("k")
    wait_landed(page, "u2")
    assert page.locator("#outline li.in-view a").get_attribute("data-id") == "u2"
    # Typing in a field is not a key press for the page.
    page.locator("#find").focus()
    page.keyboard.press("j")
    assert page.locator("#find").input_value() == "j"
    assert_clean(watch)


@pytest.mark.parametrize(("before", "after", "key", "expected"), [(120, 0, "k", "u2"), (0, 120, "j", "u5")])
def test_a_key_steps_from_where_the_last_one_went_while_the_page_settles(
    opened: tuple[Page, PageWatch], before: int, after: int, key: str, expected: str
) -> None:
    # While a jump settles, an entry above it drawn at its real height moves its prompt until the page puts it
    # back, a frame later: a key pressed in between (as CI once did) steps from where the last one went.
    page, watch = opened
    page.evaluate("document.documentElement.style.overflowAnchor = 'none'")
    grow_above(page, before)
    for _ in range(3):
        page.keyboard.press("j")
    wait_landed(page, "u3")
    wait_still(page)
    moved = page.evaluate(
        "([px, key]) => { const u3 = document.getElementById('entry-u3'), top = u3.getBoundingClientRect().top;"
        " document.getElementById('entry-u1').style.paddingTop = `calc(0.6rem + ${px}px)`;"
        " const moved = u3.getBoundingClientRect().top - top;"
        " document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));"
        " return moved; }",
        [after, key],
    )
    assert abs(moved - (after - before)) < 2
    # The last prompt sits near the page's end, which keeps it from coming right under the toolbar.
    wait_landed(page, expected, below=120)
    assert_clean(watch)


@pytest.mark.parametrize("scroll", ["wheel", "bar"])
def test_after_scrolling_into_a_long_turn_k_goes_back_to_its_prompt(
    opened: tuple[Page, PageWatch], scroll: str
) -> None:
    page, watch = opened
    for _ in range(3):
        page.keyboard.press("j")
    wait_landed(page, "u3")
    wait_still(page)
    # A scroll bar drag sends nothing but its scrolls, as a script's scroll does.
    if scroll == "wheel":
        page.mouse.wheel(0, 150)
    else:
        page.evaluate("scrollBy(0, 150)")
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


# What keeps a prompt in place while an entry above it grows by 200 px: a script that scrolls by as much (as
# a long page's chunks do), or the browser (scroll anchoring), its scroll event coming as the next entry grows.
KEEPERS = {
    "script": "() => { const u3 = document.getElementById('entry-u3'), top = u3.getBoundingClientRect().top;"
    " document.documentElement.style.overflowAnchor = 'none';"
    " document.getElementById('entry-u1').style.paddingTop = 'calc(0.6rem + 200px)';"
    " scrollBy(0, u3.getBoundingClientRect().top - top); }",
    "browser": "() => { const u1 = document.getElementById('entry-u1');"
    " addEventListener('scroll', () => { document.documentElement.style.overflowAnchor = 'none';"
    "   u1.style.paddingTop = 'calc(0.6rem + 500px)'; }, { capture: true, once: true });"
    " u1.style.paddingTop = 'calc(0.6rem + 200px)'; }",
}


@pytest.mark.parametrize("keeper", KEEPERS)
def test_a_jump_holds_while_its_prompt_is_kept_in_place(opened: tuple[Page, PageWatch], keeper: str) -> None:
    # Entries above drawn at their real heights while a jump holds: a scroll that keeps its prompt in place is
    # not the page's own but not the reader's either, and must not end the hold: the next entry drawn moves
    # the prompt for real, and the page puts it back.
    page, watch = opened
    for _ in range(3):
        page.keyboard.press("j")
    # In the page, frame by frame, well within the jump's hold, however slow the machine; the entry grows in a
    # task of its own, between frames, as a long page's chunks come in.
    landed, scrolled, kept = page.evaluate(
        "async () => { const u3 = document.getElementById('entry-u3'), bar = document.querySelector('.toolbar');"
        " const top = () => u3.getBoundingClientRect().top - bar.getBoundingClientRect().bottom;"
        " while (!(top() > -2 && top() < 60)) await new Promise(requestAnimationFrame);"
        f" await ({_STILL})();"
        " const landed = top(), y = scrollY;"
        f" await new Promise((done) => setTimeout(() => done(({KEEPERS[keeper]})())));"
        f" await ({_STILL})();"
        " const kept = [landed, scrollY - y, top() - landed];"
        " document.documentElement.style.overflowAnchor = 'none';"
        " document.getElementById('entry-u1').style.paddingTop = 'calc(0.6rem + 800px)';"
        " return kept; }"
    )
    assert scrolled > 150
    assert abs(kept) < 2
    page.wait_for_function(
        "(landed) => Math.abs(document.getElementById('entry-u3').getBoundingClientRect().top"
        " - document.querySelector('.toolbar').getBoundingClientRect().bottom - landed) < 2",
        arg=landed,
    )
    assert_clean(watch)


def test_a_click_opens_the_prompt(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.click("#tab-outline")
    page.locator('#outline a[data-id="u3"]').click()
    assert page.evaluate("location.hash") == "#entry-u3"
    page.wait_for_function("() => document.getElementById('entry-u3').getBoundingClientRect().top < 200")
    assert_clean(watch)
