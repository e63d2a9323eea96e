"""Rows keep the file name (paths shortened in the middle, the whole on hover), and on a phone no
header, badge or label is cut without an ellipsis and its full text, nor drawn in a glyph fonts lack."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import assert_clean, export_session, open_page
from sessions import SessionBuilder, text, tool_call
from site_helpers import build, make_session

from sitegen.resources import resource_dir

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

DEEP = "/work/demo/packages/coding-agent/src/modes/interactive/components/very/deep/folder/"
NAMES = ("user-message-selector.ts", "user-message-renderer.ts")


def _paths_session(path: Path) -> Path:
    b = SessionBuilder(session_id="paths-0001", cwd="/work/demo")
    b.user("u1", "read the selectors")
    for n, name in enumerate(NAMES):
        b.assistant(f"a{n}", [tool_call(f"c{n}", "read", path=DEEP + name)])
        b.tool_result(f"r{n}", f"c{n}", "read", "export const x = 1;\n")
    # A fork, so that the tree draws its mark.
    b.assistant("a9", [text("one way")], parent="r1")
    b.assistant("a8", [text("another way")], parent="r1")
    return b.write(path)


def test_tree_rows_keep_the_file_name_whole(browser: Browser, tmp_path: Path) -> None:
    page_file = export_session(_paths_session(tmp_path / "paths.jsonl"), tmp_path / "paths.html")
    page, watch = open_page(browser, page_file, width=1024, height=768)
    try:
        rows = page.eval_on_selector_all(
            "ol.tree .mid",
            """ms => ms.map(m => ({title: m.title, name: m.querySelector('.pf').textContent,
                nameWhole: m.querySelector('.pf').scrollWidth <= m.querySelector('.pf').clientWidth,
                foldersCut: m.querySelector('.pd').scrollWidth > m.querySelector('.pd').clientWidth,
                ellipsis: getComputedStyle(m.querySelector('.pd')).textOverflow}))""",
        )
        assert [row["name"] for row in rows] == list(NAMES)
        for row, name in zip(rows, NAMES, strict=True):
            assert row["title"].endswith("very/deep/folder/" + name)
            assert row["nameWhole"] and row["foldersCut"] and row["ellipsis"] == "ellipsis"
        # The card names the whole path: it wraps rather than cutting.
        cut = page.eval_on_selector_all(".tool-summary", "cs => cs.filter(c => c.scrollWidth > c.clientWidth).length")
        assert cut == 0
        # The fork mark is drawn, not a glyph that fonts may lack.
        mark = page.eval_on_selector("ol.tree .forks", "f => getComputedStyle(f, '::before')")
        assert mark is not None
        assert page.eval_on_selector(
            "ol.tree .forks", "f => getComputedStyle(f, '::before').maskImage.startsWith('url(')"
        )
        assert_clean(watch)
    finally:
        page.context.close()


def test_no_glyph_that_common_fonts_lack() -> None:
    for sheet in resource_dir("static").glob("*.css"):
        assert "⑂" not in sheet.read_text(encoding="utf-8"), sheet.name


CLIPPED_JS = """() => {
  const found = [];
  for (const e of document.querySelectorAll('th, .badge, label, .session-meta, .crumbs, .facts span, summary')) {
    if (!e.checkVisibility()) continue;
    const style = getComputedStyle(e);
    const cut = e.scrollWidth > e.clientWidth + 1 && style.overflowX !== 'visible';
    const explained = style.textOverflow === 'ellipsis' && (e.title || e.closest('[title]'));
    if (cut && !explained) found.push(e.tagName + '.' + e.className + ': ' + e.textContent.trim().slice(0, 30));
  }
  // A table wider than its box scrolls sideways: it must show that more is there.
  for (const t of document.querySelectorAll('table')) {
    if (t.checkVisibility() && t.scrollWidth > t.clientWidth + 1 && getComputedStyle(t).backgroundImage === 'none')
      found.push('table without a scroll cue: ' + (t.id || t.className));
  }
  if (document.documentElement.scrollWidth > innerWidth + 1) found.push('the page scrolls sideways');
  return found;
}"""


def test_phone_pages_cut_nothing_without_a_cue(browser: Browser, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    long_cwd = "/home/someone/workspaces/clients/a-rather-long-project-folder-name/service"
    for n in range(3):
        make_session(agent, long_cwd, f"phone-{n}", f"ZZ_PHONE_{n}_ZZ question", entries=2 + n)
    make_session(agent, "/w", "short-1", "short project")
    out = tmp_path / "site"
    build(out, agent)
    pages = ["index.html", "sessions.html", "stats.html", "prompts.html", "search.html"]
    pages += [str(p.relative_to(out)) for p in (out / "projects").glob("*.html")]
    pages += [str(p.relative_to(out)) for p in (out / "sessions").rglob("*.html")][:2]
    found = {}
    for relative in pages:
        page, watch = open_page(browser, out / relative, width=390, height=844, allow=out)
        try:
            page.wait_for_load_state("load")
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            problems = page.evaluate(CLIPPED_JS)
            if problems:
                found[relative] = problems
            assert_clean(watch)
        finally:
            page.context.close()
    assert found == {}
