"""The session header in a real Chromium: title and a line or two of facts, everything else folded, so the
conversation starts on the first screen at desktop and phone sizes, and nothing is wider than the screen."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest
from browser import assert_clean, export_session, open_page, top_of
from sessions import reader_session

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

REAL_FILES = (
    "omp-large-session.title-v3.jsonl",
    "pi-before-compaction.v1.jsonl",
    "pi-large-session.v1.jsonl",
)
CORPUS_PY = Path(__file__).resolve().parent.parent / "bench" / "corpus.py"
# (width, height, where the first entry must start at the latest)
SCREENS = ((1280, 800, 320.0), (390, 844, 0.6 * 844))


def _corpus() -> ModuleType:
    """bench/ is not a package: load corpus.py by path."""
    spec = importlib.util.spec_from_file_location("bench_corpus_header", CORPUS_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The reader session, a generated one (long title, several models, an audit), and the real files."""
    folder = tmp_path_factory.mktemp("header")
    sessions = [reader_session().write(folder / "reader.jsonl")]
    sessions.append(_corpus().write_session(folder / "agent", seed=7, target_bytes=300_000).path)
    real = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "real"
    sessions += [real / name for name in REAL_FILES if (real / name).is_file()]
    return [export_session(session, folder / f"page{n}.html") for n, session in enumerate(sessions)]


@pytest.mark.parametrize(("width", "height", "limit"), SCREENS)
def test_the_conversation_starts_on_the_first_screen(
    browser: Browser, pages: list[Path], width: int, height: int, limit: float
) -> None:
    for page_file in pages:
        page, watch = open_page(browser, page_file, width=width, height=height)
        try:
            first = top_of(page, "#conversation > .entry")
            assert first <= limit, (page_file.name, first)
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            widest = page.evaluate(
                "Math.max(...[...document.querySelectorAll('.session-header *, .page-details *, .toolbar *')]"
                ".filter(e => e.checkVisibility()).map(e => e.getBoundingClientRect().right))"
            )
            assert widest <= width, (page_file.name, widest)
            # Totals, system prompt, tools and the audit fold into closed sections under the header.
            assert page.evaluate("[...document.querySelectorAll('.page-details > details')].every(d => !d.open)")
            assert page.locator(".session-header details").count() == 0
            # Opened, each section stays within the screen (wide tables scroll inside it).
            page.evaluate("document.querySelectorAll('.page-details > details').forEach(d => d.open = true)")
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            sections = page.evaluate(
                "Math.max(...[...document.querySelectorAll('.page-details > details, .page-details table')]"
                ".map(e => e.getBoundingClientRect().right))"
            )
            assert sections <= width, (page_file.name, sections)
            assert_clean(watch)
        finally:
            page.context.close()


def test_the_facts_line(browser: Browser, pages: list[Path]) -> None:
    page, watch = open_page(browser, pages[0])
    try:
        assert page.locator("h1.title").inner_text() == "Fix the login bug"
        facts = page.locator(".session-header .facts").first.inner_text()
        for fact in ("/work/shop", "2026-01-01 00:00 UTC", "claude-test", "14 messages", "6 tool calls", "$0.11"):
            assert fact in facts, (fact, facts)
        page.click("#totals summary")
        assert page.locator("#totals table.totals").is_visible()
        assert_clean(watch)
    finally:
        page.context.close()
