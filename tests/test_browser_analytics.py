"""Issue 34 in a real headless Chromium: the stats page's tool and active-time charts in every time window,
and the session timeline, with every label whole at a desktop's and a phone's width; windows switch
without a script; a timeline span names itself and opens its entry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import assert_clean, chromium, open_page
from sessions import SessionBuilder, text, tool_call
from test_analytics import timed_session, write_agent
from typer.testing import CliRunner

from sitegen.cli import app

pytestmark = pytest.mark.browser

SIZES = [(1280, 800), (390, 844)]
# Every text of every visible chart and of the timeline: its box inside its SVG's and the viewport's.
CLIPPED = """() => {
  const out = [];
  const width = document.documentElement.clientWidth;
  for (const svg of document.querySelectorAll('svg.chart, svg.timeline-strip')) {
    const box = svg.getBoundingClientRect();
    if (!box.width) continue;  // a pane of another window
    for (const text of svg.querySelectorAll('text')) {
      const r = text.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.left < 0 || r.right > width)
        out.push(`${text.textContent}: ${r.left}-${r.right} of ${box.left}-${box.right}`);
    }
  }
  return out;
}"""


def many_tools() -> SessionBuilder:
    b = timed_session("tools-0001", "/Users/someone/workspaces/a-rather-deeply/nested/folder/tools", hours_later=5)
    for n, name in enumerate(["mcp__github__create_pull_request_with_a_long_name", "web_fetch", "grep", "task"]):
        b.assistant(f"x{n}", [tool_call(f"k{n}", name, query="q")])
        b.tool_result(f"y{n}", f"k{n}", name, "ok", isError=n == 1)
    b.assistant("z", [text("All done.")])
    return b


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("analytics-site")
    agent = write_agent(folder, timed_session(), many_tools())
    out = folder / "site"
    result = CliRunner().invoke(app, ["build", "--agent-dir", str(agent), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as instance:
        yield instance


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_stats_charts_are_whole_in_every_window(site: Path, browser: object, size: tuple[int, int]) -> None:
    page, watch = open_page(browser, site / "stats.html", width=size[0], height=size[1], allow=site)  # type: ignore[arg-type]
    for key in ("all", "30d", "7d"):
        page.click(f'label[for="window-{key}"]')
        assert page.locator(f"#tool-stats{'' if key == 'all' else '-' + key}").is_visible()
        others = [k for k in ("all", "30d", "7d") if k != key]
        assert not any(page.locator(f".pane-{k}").first.is_visible() for k in others)
        assert page.locator("#tools svg.chart:visible").count() == 2
        assert page.evaluate(CLIPPED) == []
    labels = page.locator("#tools svg.chart .chart-label").all_text_contents()
    assert "bash" in labels and any(label.endswith("…") for label in labels)
    page.context.close()
    assert_clean(watch)


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_timeline_is_whole_and_opens_its_entries(site: Path, browser: object, size: tuple[int, int]) -> None:
    session = next(site.rglob("*tools-0001.html"))
    page, watch = open_page(browser, session, width=size[0], height=size[1], allow=site)  # type: ignore[arg-type]
    strip = page.locator("#timeline svg.timeline-strip")
    assert strip.is_visible()
    assert page.evaluate(CLIPPED) == []
    span = page.locator('#timeline a[href="#entry-r1"] rect')
    assert span.locator("title").text_content() == "bash (failed) · 3.0 s"
    span.click()
    page.wait_for_function("() => location.hash === '#entry-r1'")
    page.wait_for_function(
        "() => { const r = document.getElementById('entry-r1').getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }"
    )
    page.context.close()
    assert_clean(watch)
