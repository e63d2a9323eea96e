"""Every page of `sitegen build --demo` in a real headless Chromium: no script errors, and titles that read well."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import assert_clean, chromium, open_page, open_pages
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.resources import resource_dir
from sitegen.transcript.load import load_transcript

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "site"
    result = CliRunner().invoke(app, ["build", "--demo", "--out", str(out), "--jobs", "2"])
    assert result.exit_code == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as instance:
        yield instance


def demo_titles() -> dict[str, str]:
    """Session id -> the title the site gives it, for every session of the demo (subagents included)."""
    demo = resource_dir("demo")
    paths = [*(demo / "pi" / "sessions").rglob("*.jsonl"), *(demo / "odek" / "sessions").glob("2*.json")]
    return {load_transcript(p).session_id: load_transcript(p).display_title for p in paths}


def test_demo_titles_read_well() -> None:
    titles = demo_titles()
    assert len(titles) == 9 and len(set(titles.values())) == 9  # five pi sessions, a subagent, three odek
    for title in titles.values():
        assert 10 <= len(title) <= 80 and title[0].isalnum()
        assert not any(mark in title for mark in ("`", "**", "##", "\n"))


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_every_demo_page_opens_clean(site: Path, browser: object, size: tuple[int, int]) -> None:
    pages = sorted(site.rglob("*.html"))
    sessions = [p for p in pages if p.relative_to(site).parts[0] == "sessions"]
    assert len(sessions) == 9
    titles = set(demo_titles().values())
    relatives = [str(path.relative_to(site)) for path in pages]
    for relative, page, watch in open_pages(browser, site, relatives, width=size[0], height=size[1]):  # type: ignore[arg-type]
        page.wait_for_load_state("load")
        assert_clean(watch)
        if site / relative in sessions:
            heading = page.locator("h1").first.inner_text()
            assert page.title() == heading and heading in titles, relative


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_audit_is_a_closed_section_under_the_header(site: Path, browser: object, size: tuple[int, int]) -> None:
    path = next(site.glob("sessions/odek-*/20260518-8c2e*.html"))
    page, watch = open_page(browser, path, width=size[0], height=size[1], allow=site)  # type: ignore[arg-type]
    audit = page.locator("details.audit")
    assert audit.evaluate("d => !d.open && !d.closest('header') && d.parentElement.matches('.page-details')")
    assert "1 flagged turn" in audit.locator("summary").inner_text()
    audit.locator("summary").click()
    box, main = audit.bounding_box(), page.locator("#conversation").bounding_box()
    assert box is not None and main is not None
    assert box["width"] >= 0.9 * (size[0] - 2 * 16)  # the page's width, not a column of the header
    assert page.evaluate("() => document.documentElement.scrollWidth") <= size[0]
    assert "/home/dev/.netrc" in audit.inner_text()
    assert_clean(watch)
    page.context.close()
