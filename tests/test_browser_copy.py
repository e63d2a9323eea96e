"""Copy buttons, folds that offer to show less, and a sidebar the toolbar never covers, in Chromium."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import PageWatch, assert_clean, export_session, open_page
from sessions import SessionBuilder, text, tool_call

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

LONG_OUTPUT = "".join(f"ZZ_OUT_{n:03d}_ZZ\n" for n in range(300))
COMMAND = "grep -rn 'ZZ_CMD_ZZ' src/ | head -n 5"
REPLY = (
    "Here is **the fix** for `parse_day`:\n\n```python\ndef parse_day(text):\n    return ZZ_CODE_ZZ\n```\n\n"
    "- first [link](https://example.com/a)\n- second\n"
)


def _session(path: Path) -> Path:
    b = SessionBuilder(session_id="copy-0001", cwd="/work/demo")
    b.user("u1", "ZZ_PROMPT_ZZ please look")
    b.assistant("a1", [text("Running it."), tool_call("c1", "bash", command=COMMAND)])
    b.tool_result("r1", "c1", "bash", LONG_OUTPUT)
    b.assistant("a2", [text(REPLY), tool_call("c2", "grep", pattern="ZZ_PAT_ZZ", path="src")])
    b.tool_result("r2", "c2", "grep", "src/a.py:1: ZZ_PAT_ZZ\n")
    return b.write(path)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("copy")
    return export_session(_session(folder / "copy.jsonl"), folder / "copy.html")


@pytest.fixture
def opened(browser: Browser, exported: Path) -> Iterator[tuple[Page, PageWatch]]:
    page, watch = open_page(browser, exported)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.wait_for_selector("button.copy-markdown")
    yield page, watch
    page.context.close()


def _copied(page: Page, button: str) -> str:
    page.locator(button).first.click()
    expect(page.locator(button).first).to_have_class(re.compile(r"\bcopied\b"))
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_output_copies_whole_even_where_folded(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    assert page.locator(".tool-bash .tool-output details.fold").count() == 1
    assert page.locator(".tool-bash .tool-output details.fold[open]").count() == 0
    assert _copied(page, ".tool-bash .tool-output > button.copy") == LONG_OUTPUT
    assert page.locator(".tool-bash .tool-output > button.copy.copied").count() == 1
    assert_clean(watch)


def test_command_arguments_and_code_block(opened: tuple[Page, PageWatch]) -> None:
    page, _ = opened
    assert _copied(page, ".tool-bash > .tool-head > button.copy") == COMMAND
    arguments = _copied(page, ".tool-generic > .tool-head > button.copy")
    assert '"pattern": "ZZ_PAT_ZZ"' in arguments and "Copy" not in arguments
    assert _copied(page, ".md .code-block > button.copy") == "def parse_day(text):\n    return ZZ_CODE_ZZ\n"


def test_message_as_markdown(opened: tuple[Page, PageWatch]) -> None:
    page, _ = opened
    markdown = _copied(page, "#entry-a2 > .entry-head > button.copy-markdown")
    assert markdown.startswith("Here is **the fix** for `parse_day`:\n\n```python\ndef parse_day(text):")
    assert "- first [link](https://example.com/a)\n- second" in markdown
    assert _copied(page, "#entry-u1 > .entry-head > button.copy-markdown") == "ZZ_PROMPT_ZZ please look\n"


def test_buttons_are_reached_by_keyboard_and_their_labels_are_not_text(opened: tuple[Page, PageWatch]) -> None:
    page, _ = opened
    # No label in the page's text: find, the outline and selections never meet "Copy".
    assert "Copy" not in page.inner_text("#conversation").replace("Copying", "")
    page.focus("#entry-u1 > .entry-head > button.copy-markdown")
    page.keyboard.press("Enter")
    assert page.evaluate("navigator.clipboard.readText()") == "ZZ_PROMPT_ZZ please look\n"
    labels = page.eval_on_selector_all("button.copy", "bs => bs.map(b => getComputedStyle(b, '::before').content)")
    assert set(labels) <= {'"Copy"', '"Copy as Markdown"', '"Copied"'}


def test_opened_fold_offers_to_show_less(opened: tuple[Page, PageWatch]) -> None:
    page, _ = opened
    summary = page.locator(".tool-bash details.fold > summary")
    assert summary.inner_text().startswith("Show ")
    summary.click()
    expect(summary).to_have_text("Show less")
    page.locator(".tool-bash details.fold > button.fold-less").click()
    assert page.locator(".tool-bash details.fold[open]").count() == 0
    expect(summary).to_have_text("Show 276 more lines (300 lines in all)")


def _long_session(path: Path) -> Path:
    b = SessionBuilder(session_id="tabs-0001", cwd="/work/demo")
    for n in range(40):
        b.user(f"u{n}", f"question {n} about ZZ_WORD_ZZ")
        b.assistant(f"a{n}", [text("answer " * 80), tool_call(f"c{n}", "bash", command=f"ls dir{n}")])
        b.tool_result(f"r{n}", f"c{n}", "bash", "file\n" * 10)
    return b.write(path)


@pytest.mark.parametrize("search", ["", "?q=ZZ_WORD_ZZ"])
@pytest.mark.parametrize("size", [(1024, 768), (1280, 800)])
def test_toolbar_never_covers_the_sidebar_tabs(
    browser: Browser, tmp_path: Path, size: tuple[int, int], search: str
) -> None:
    page_file = export_session(_long_session(tmp_path / "tabs.jsonl"), tmp_path / "tabs.html")
    page, watch = open_page(browser, page_file, fragment=search, width=size[0], height=size[1], allow=tmp_path)
    try:
        if search:
            page.wait_for_selector(".search-marks")
        page.evaluate("scrollTo(0, 2500)")
        page.wait_for_timeout(100)
        covered = page.evaluate(
            """() => [...document.querySelectorAll('#sidebar [role=tab]')].filter(tab => {
                const box = tab.getBoundingClientRect();
                const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
                return !(hit === tab || tab.contains(hit));
            }).map(tab => tab.id)"""
        )
        assert covered == []
        assert_clean(watch)
    finally:
        page.context.close()


def test_no_width_between_700_and_1400_overlaps_or_clips(browser: Browser, tmp_path: Path) -> None:
    page_file = export_session(_long_session(tmp_path / "tabs.jsonl"), tmp_path / "tabs.html")
    page, _ = open_page(browser, page_file, fragment="?q=ZZ_WORD_ZZ", width=700, height=800, allow=tmp_path)
    try:
        for width in range(700, 1401, 50):
            page.set_viewport_size({"width": width, "height": 800})
            page.evaluate("scrollTo(0, 2500)")
            page.wait_for_timeout(60)
            found = page.evaluate(
                """() => {
                const bar = document.querySelector('.toolbar').getBoundingClientRect();
                const out = e => e.getBoundingClientRect().right > innerWidth
                    || e.getBoundingClientRect().bottom > bar.bottom + 1;
                const clipped = [...document.querySelectorAll('.toolbar > *')].filter(e => e.offsetParent && out(e));
                const side = document.getElementById('sidebar').getBoundingClientRect();
                const main = document.getElementById('conversation').getBoundingClientRect();
                const drawer = getComputedStyle(document.getElementById('toggle-sidebar')).display !== 'none';
                return {clipped: clipped.length, overlap: !drawer && side.right > main.left,
                        underBar: !drawer && side.top < bar.bottom,
                        wide: document.documentElement.scrollWidth > innerWidth};
            }"""
            )
            assert found == {"clipped": 0, "overlap": False, "underBar": False, "wide": False}, width
    finally:
        page.context.close()
