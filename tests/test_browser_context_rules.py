"""The model's view in a real Chromium follows the writing agent's rules at every leaf: for each omp
rule file (and the real omp file), the entries shown are those `sitegen context` sends, in its order,
and each shown turn keeps only the tool calls the context keeps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import assert_clean, chromium, export_session, open_page
from conftest import REAL_FIXTURES
from context_rule_files import OMP_RULE_FILES, OTHER_RULE_FILES, RuleFile

from sitegen.session.context import build_session_context
from sitegen.session.session import Session, open_session

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

SHOWN = """() => [...document.querySelectorAll('#conversation > article.entry')]
  .filter(e => e.getClientRects().length)
  .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
  .map(e => [e.id.slice(6), [...e.querySelectorAll('section.tool[data-call]')]
    .filter(t => t.getClientRects().length).map(t => t.getAttribute('data-call'))])"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def expected_view(session: Session, leaf: str, articles: set[str]) -> list[list[Any]]:
    """[entry id, tool calls kept] for each message `sitegen context` sends that the page shows as an
    article (tool results are shown inside their calls)."""
    context = build_session_context(session.entries, leaf, session.by_id, session.context_rules)
    out: list[list[Any]] = []
    for entry_id, message in zip(context.entry_ids, context.messages, strict=True):
        if entry_id not in articles:
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        out.append([entry_id, [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"]])
    return out


def check_every_leaf(browser: Browser, source: Path, tmp_path: Path) -> int:
    session = open_session(source)
    page_file = export_session(source, tmp_path / f"{source.stem}.html")
    page, watch = open_page(browser, page_file)
    page.wait_for_function("() => !window.sitegen.chunks || window.sitegen.chunks.complete()")
    articles = set(
        page.evaluate("[...document.querySelectorAll('#conversation > article.entry')].map(e => e.id.slice(6))")
    )
    assert page.evaluate("document.body.dataset.rules") == session.context_rules
    assert not page.locator("#context-rules").is_visible()
    leaves = session.tree.leaves()
    for leaf in leaves:
        show_leaf(page, leaf)
        page.click("#toggle-context")
        assert page.locator("#context-rules").inner_text() == (
            f"What the model saw at the shown leaf, by {session.context_rules} rules."
        )
        shown = page.evaluate(SHOWN)
        assert shown == expected_view(session, leaf, articles), (source.name, leaf)
        page.click("#toggle-context")
    assert_clean(watch)
    page.context.close()
    return len(leaves)


def show_leaf(page: Page, leaf: str) -> None:
    page.evaluate(f"window.location.hash = '#entry-{leaf}'")
    page.wait_for_function(f"() => window.sitegen.page.shownLeaf() === {leaf!r}")


@pytest.mark.parametrize("make", OMP_RULE_FILES + OTHER_RULE_FILES, ids=lambda make: make.__name__)
def test_the_view_follows_the_rules_at_every_leaf(
    browser: Browser, make: Callable[[], RuleFile], tmp_path: Path
) -> None:
    assert check_every_leaf(browser, make().write(tmp_path), tmp_path) >= 1


def test_the_real_omp_file_at_every_leaf(browser: Browser, tmp_path: Path) -> None:
    source = REAL_FIXTURES / "omp-large-session.title-v3.jsonl"
    if not source.is_file():
        pytest.skip(f"real fixtures not found at {REAL_FIXTURES} (../shared is absent)")
    assert check_every_leaf(browser, source, tmp_path) == 1
