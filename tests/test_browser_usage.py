"""Usage a session did not record reads "—" in the page's totals, on the server and after a branch switch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest
from browser import PageWatch, open_page

from sitegen.render.export import export_page, load_transcript

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

DASHES = ["—"] * 5


def _message(entry_id: str, parent: str | None, role: str, words: str) -> dict[str, object]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-03-01T10:00:00.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": words}]},
    }


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two branches, no message recording its usage (as odek's sessions, or a hand-made file)."""
    folder = tmp_path_factory.mktemp("browser-usage")
    session = folder / "no-usage.jsonl"
    records = [
        {"type": "session", "version": 3, "id": "no-usage", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w"},
        _message("u1", None, "user", "ZZ_FIRST_ZZ"),
        _message("a1", "u1", "assistant", "one"),
        _message("u2", "a1", "user", "ZZ_OLD_BRANCH_ZZ"),
        _message("a2", "u2", "assistant", "two"),
        _message("u3", "a1", "user", "ZZ_NEW_BRANCH_ZZ"),
        _message("a3", "u3", "assistant", "three"),
    ]
    session.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    out = folder / "no-usage.html"
    export_page(load_transcript(session), out)
    return out


@pytest.fixture
def opened(browser: Browser, page_file: Path) -> Iterator[tuple[Page, PageWatch]]:
    page, watch = open_page(browser, page_file)
    yield page, watch
    page.context.close()


def test_unknown_usage_stays_a_dash_on_another_branch(opened: tuple[Page, PageWatch]) -> None:
    page, watch = opened
    cells = page.locator("td.branch-stat")
    assert cells.all_text_contents()[2:] == DASHES
    page.locator('#tree li[data-id="a2"] a').click()
    assert page.locator("#entry-a2").is_visible()
    shown = cells.all_text_contents()
    assert shown[:2] == ["4", "0"] and shown[2:] == DASHES
    assert watch.errors == []
