"""Every text on every kind of page reads at WCAG AA contrast (4.5:1) against what is behind it, in the
light and dark themes, with entries a compaction summarised included; measured in Chromium from the
computed styles (text colour against each ancestor's background, opacity composited)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import open_page, open_pages
from typer.testing import CliRunner

from sitegen.cli import app

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")
AA = 4.5


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("contrast") / "site"
    result = CliRunner().invoke(app, ["build", "--demo", "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.stderr
    return out


def _kinds(site: Path) -> dict[str, str]:
    """One page of each kind, as a path under the site with its query."""
    sessions = sorted((site / "sessions").rglob("*.html"))
    compacted = next(p for p in sessions if 'class="entry' in p.read_text() and " summarised" in p.read_text())
    project = sorted((site / "projects").glob("*.html"))[0]
    return {
        "session": str(compacted.relative_to(site)),
        "odek session": str(next(p for p in sessions if "odek" in str(p)).relative_to(site)),
        "home": "index.html",
        "project": str(project.relative_to(site)),
        "stats": "stats.html",
        "prompts": "prompts.html",
        "search": "search.html?q=import",
        "problems": "problems.html",
        "all sessions": "sessions.html",
    }


def _measured(page: Page, relative: str) -> list[str]:
    """The texts of an open page under AA contrast, once its data files and copy buttons are in."""
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)  # data files and the copy buttons
    found = page.evaluate(CONTRAST_JS, AA)
    assert found["checked"] > 5, relative
    return [str(f) for f in found["failures"]]


def _failures(browser: Browser, site: Path, relative: str, scheme: str, width: int = 1280) -> list[str]:
    path, _, query = relative.partition("?")
    page, _ = open_page(
        browser, site / path, fragment=f"?{query}" if query else "", color_scheme=scheme, width=width, allow=site
    )  # type: ignore[arg-type]
    try:
        return _measured(page, relative)
    finally:
        page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_kind_reads_at_aa_contrast(browser: Browser, site: Path, scheme: str) -> None:
    kinds = _kinds(site)
    kind_of = {relative: kind for kind, relative in kinds.items()}
    failures = {}
    for relative, page, _ in open_pages(browser, site, list(kinds.values()), color_scheme=scheme):  # type: ignore[arg-type]
        found = _measured(page, relative)
        if found:
            failures[kind_of[relative]] = found
    assert failures == {}


def test_summarised_entries_are_marked_without_fading(browser: Browser, site: Path) -> None:
    relative = _kinds(site)["session"]
    page, _ = open_page(browser, site / relative, allow=site)
    try:
        marks = page.eval_on_selector_all(
            "#conversation > .entry.summarised",
            "es => es.map(e => [getComputedStyle(e).opacity, getComputedStyle(e, '::before').content])",
        )
        assert marks and all(m == ["1", '"summarised by compaction"'] for m in marks)
    finally:
        page.context.close()


@pytest.fixture(scope="module")
def real_site(tmp_path_factory: pytest.TempPathFactory, real_fixtures: Path) -> Path:
    root = tmp_path_factory.mktemp("contrast-real")
    agent = root / "agent" / "sessions" / "--work-pi-mono--"
    agent.mkdir(parents=True)
    shutil.copy(real_fixtures / "pi-before-compaction.v1.jsonl", agent)
    out = root / "site"
    result = CliRunner().invoke(app, ["build", "--agent-dir", str(root / "agent"), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.stderr
    return out


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_real_compacted_session_reads_at_aa_contrast(browser: Browser, real_site: Path, scheme: str) -> None:
    page = next((real_site / "sessions").rglob("pi-before-compaction.v1.html"))
    assert _failures(browser, real_site, str(page.relative_to(real_site)), scheme) == []
