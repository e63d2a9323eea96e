"""Keys and images in a real Chromium: "?" lists every key the page's modules registered, and an image
opens enlarged in a dialog that Esc closes."""

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


@pytest.fixture
def opened(browser: Browser, tmp_path: Path) -> Iterator[tuple[Page, PageWatch]]:
    page_file = export_session(reader_session().write(tmp_path / "reader.jsonl"), tmp_path / "reader.html")
    page, watch = open_page(browser, page_file)
    yield page, watch
    page.context.close()


def test_question_mark_lists_the_keys(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    page.keyboard.press("?")
    dialog = page.locator("#keys-dialog")
    assert dialog.is_visible()
    keys = dialog.locator("kbd").all_inner_texts()
    assert keys == ["?", "t", "o", "/", "j", "k", "c"]
    assert "Next prompt" in dialog.inner_text()
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert_clean(watch)


def test_an_image_opens_enlarged_and_esc_closes_it(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    image = page.locator("#entry-u5 img.msg-image")
    image.scroll_into_view_if_needed()
    image.click()
    dialog = page.locator("#image-dialog")
    assert dialog.is_visible()
    big = dialog.locator("img")
    assert big.get_attribute("src") == image.get_attribute("src")
    box = big.bounding_box()
    small = image.bounding_box()
    assert box is not None and small is not None and box["width"] > small["width"]
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    # A click beside the image closes it too, and so does its close button.
    image.click()
    page.mouse.click(5, 5)
    assert not dialog.is_visible()
    image.click()
    dialog.locator("button.close").click()
    assert not dialog.is_visible()
    assert_clean(watch)
