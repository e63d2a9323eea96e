"""The stats page's charts in a real headless Chromium: no label is clipped, at a desktop's and a phone's size."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import assert_clean, chromium, open_page
from test_stats import record, usage

from sitegen.render.templates import template_environment
from sitegen.resources import resource_dir
from sitegen.site.pages.stats import render_stats_page

pytestmark = pytest.mark.browser

SITE_ASSETS = ("theme.css", "site.css", "stats.css", "site.js", "theme.js")
ASSETS = {name: f"assets/{name}" for name in SITE_ASSETS}
LONG_MODEL = "anthropic/claude-sonnet-4-5-20250929-with-a-long-deployment-name"
MODELS = [LONG_MODEL, "openai/gpt-5.1-codex-max", "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", "google/gemini-2.5-pro"]
PROJECTS = ["/Users/someone/workspaces/a-rather-deeply/nested/folder/pi-mono", "/home/dev/app", "/srv/Ünïcødé-项目"]
# Every text of every chart: its box inside the chart's and the viewport's, and a row's label clear of its value.
CLIPPED = """() => {
  const out = [];
  const width = document.documentElement.clientWidth;
  for (const svg of document.querySelectorAll('svg.chart')) {
    const box = svg.getBoundingClientRect();
    if (!box.width) continue;  // another time window's pane (tests/test_browser_analytics.py opens each)
    for (const text of svg.querySelectorAll('text')) {
      const r = text.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.left < 0 || r.right > width)
        out.push(`${text.textContent}: ${r.left}-${r.right} of ${box.left}-${box.right}`);
    }
    for (const row of svg.querySelectorAll('.chart-row')) {
      const label = row.querySelector('.chart-label').getBoundingClientRect();
      const value = row.querySelector('.chart-value').getBoundingClientRect();
      if (label.right > value.left - 4) out.push(`${row.querySelector('.chart-label').textContent} meets its value`);
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stats-site")
    (folder / "assets").mkdir()
    for name in SITE_ASSETS:
        shutil.copyfile(resource_dir("static") / name, folder / "assets" / name)
    days = [f"2026-0{1 + n % 3}-{10 + n:02d}" for n in range(8)]
    records = [
        record(f"s{n}", PROJECTS[n % 3], days[n], [usage(f"k{n}", days[n], model, 10**n * 997, 123.45 * n)])
        for n, model in enumerate(MODELS * 2)
    ]
    html = render_stats_page(template_environment(), records, root="", assets=ASSETS, version="0", problem_count=0)
    (folder / "stats.html").write_text(html, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as instance:
        yield instance


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_no_chart_label_is_clipped(site: Path, browser: object, size: tuple[int, int]) -> None:
    page, watch = open_page(browser, site / "stats.html", width=size[0], height=size[1], allow=site)  # type: ignore[arg-type]
    assert page.locator("svg.chart").count() == 10  # with active hours per day (issue 34)
    assert page.evaluate(CLIPPED) == []
    labels = page.locator("svg.chart .chart-label").all_text_contents()
    # Short enough names are whole; a long one is cut with "…" (a path or provider/model id keeps its end)
    # and is whole in its row's tooltip.
    assert "openai/gpt-5.1-codex-max" in labels and "google/gemini-2.5-pro" in labels
    assert any(label.startswith("…") and LONG_MODEL.endswith(label[1:]) for label in labels)
    assert any(label.startswith("…") and label.endswith("/pi-mono") for label in labels)
    assert any(label.startswith("WWWW") and label.endswith("…") for label in labels)
    tips = page.locator("svg.chart .chart-row > title").all_text_contents()
    assert any(tip.startswith(LONG_MODEL + ":") for tip in tips)
    assert_clean(watch)
    page.context.close()


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_demo_stats_charts_show_every_label_whole(browser: object, size: tuple[int, int], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sitegen.cli import app

    out = tmp_path / "site"
    assert CliRunner().invoke(app, ["build", "--demo", "--out", str(out)]).exit_code == 0
    page, watch = open_page(browser, out / "stats.html", width=size[0], height=size[1], allow=out)  # type: ignore[arg-type]
    assert page.evaluate(CLIPPED) == []
    labels = page.locator("svg.chart .chart-label").all_text_contents()
    assert "anthropic/claude-sonnet-4-5" in labels and "/home/mira/work/linkcheck" in labels
    assert not any("…" in label for label in labels)
    assert_clean(watch)
    page.context.close()
