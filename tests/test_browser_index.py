"""The index pages' tables and charts in a real headless Chromium: sort, filter, counts, themes, no JS."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_stats import record, usage

from sitegen.render.templates import template_environment
from sitegen.resources import resource_dir
from sitegen.site.pages.stats import render_stats_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Route

pytestmark = pytest.mark.browser

SITE_ASSETS = ("theme.css", "site.css", "stats.css", "site.js", "theme.js")
ASSETS = {name: f"assets/{name}" for name in SITE_ASSETS}
CSP = (
    "default-src 'none'; img-src data: 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; object-src 'none'"
)
# (title, created ms, messages, cost text): the cost column has no data-value, so it sorts by its text.
ROWS = [
    ("ZZ_ALPHA_ONE_ZZ fix the parser", 1_700_000_300_000, 12, "$1,234.50"),
    ("ZZ_BETA_ZZ write docs", 1_700_000_100_000, 3, "$0.25"),
    ("ZZ_ALPHA_TWO_ZZ refactor", 1_700_000_500_000, 40, "$9.00"),
    ("ZZ_GAMMA_ZZ tests", 1_700_000_200_000, 7, "$12.00"),
    ("Zeta review <b>not bold</b>", 1_700_000_400_000, 100, "—"),
]


def table_page() -> str:
    """A project-style page with the lead's table conventions, under the same CSP as the site."""
    rows = "\n".join(
        f'<tr><td><a href="#s{n}">{title.replace("<", "&lt;")}</a></td><td data-value="{created}">t{created}</td>'
        f'<td data-value="{messages}">{messages}</td><td>{cost}</td></tr>'
        for n, (title, created, messages, cost) in enumerate(ROWS)
    )
    return f"""<!DOCTYPE html>
<html lang="en" class="no-js" data-theme="auto">
<head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>Table</title><script src="assets/theme.js"></script><link rel="stylesheet" href="assets/theme.css">
<link rel="stylesheet" href="assets/site.css"></head>
<body class="site"><main class="site-main">
<button id="toggle-theme" type="button">Theme</button>
<p class="table-tools"><input type="search" class="table-filter" data-table="sessions" aria-label="Filter">
<span data-count-for="sessions">{len(ROWS)} sessions</span></p>
<table id="sessions" class="sortable listing">
<thead><tr><th data-sort="text">Session</th><th data-sort="date">Created</th><th data-sort="number">Messages</th>
<th data-sort="number">Cost</th></tr></thead>
<tbody>
{rows}
</tbody></table></main>
<script src="assets/site.js"></script></body></html>
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("index-site")
    (folder / "assets").mkdir()
    for name in SITE_ASSETS:
        shutil.copyfile(resource_dir("static") / name, folder / "assets" / name)
    (folder / "table.html").write_text(table_page(), encoding="utf-8")
    records = [
        record("a", "/home/dev/app", "2026-01-01", [usage("k1", "2026-01-01", "ZZ_SMALL_MODEL_ZZ", 10, 0.1)]),
        record("b", "/tmp/<script>x</script>", "2026-01-09", [usage("k2", "2026-01-09", "ZZ_BIG_MODEL_ZZ", 9000, 3)]),
        record("c", "/srv/api", "2026-02-20", [usage("k3", "2026-02-20", "ZZ_MID_MODEL_ZZ", 500, 1)]),
    ]
    records[2].flagged_turns = [{"turn": 1, "userNodeId": "u1", "suspiciousResources": ["/etc/passwd"]}]
    html = render_stats_page(template_environment(), records, root="", assets=ASSETS, version="0", problem_count=0)
    (folder / "stats.html").write_text(html, encoding="utf-8")
    return folder


@dataclass
class Watch:
    errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)


def open_local(
    browser: Browser, site: Path, name: str, *, scheme: str = "light", script: bool = True
) -> tuple[Page, Watch]:
    """Open a page of the test site; files in its folder load, anything else is blocked and recorded."""
    context = browser.new_context(
        viewport={"width": 1200, "height": 900},
        color_scheme=scheme,  # type: ignore[arg-type]
        java_script_enabled=script,
    )
    page = context.new_page()
    watch = Watch()
    prefix = site.resolve().as_uri() + "/"

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watch.errors.append(message.text)

    def on_route(route: Route) -> None:
        if route.request.url.startswith(prefix):
            route.continue_()
        else:
            watch.blocked.append(route.request.url)
            route.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda error: watch.errors.append(f"uncaught: {error}"))
    page.route("**/*", on_route)
    page.goto(prefix + name)
    return page, watch


def column(page: Page, table: str, index: int) -> list[str]:
    cells: list[str] = page.eval_on_selector_all(
        f"#{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].textContent.trim())"
    )
    return cells


def shown(page: Page, table: str) -> list[str]:
    cells: list[str] = page.eval_on_selector_all(
        f"#{table} tbody tr:not([hidden])", "rows => rows.map(r => r.cells[0].textContent.trim())"
    )
    return cells


def sort_by(page: Page, table: str, header: str) -> None:
    page.locator(f"#{table} thead th").filter(has_text=header).locator("button").click()


def aria_sort(page: Page, table: str, header: str) -> str | None:
    return page.locator(f"#{table} thead th").filter(has_text=header).get_attribute("aria-sort")


@pytest.fixture
def table(browser: Browser, site: Path) -> Iterator[Page]:
    page, watch = open_local(browser, site, "table.html")
    yield page
    assert watch.errors == [] and watch.blocked == []
    page.context.close()


def test_scripts_run_without_errors(table: Page) -> None:
    assert "no-js" not in (table.get_attribute("html", "class") or "")
    assert table.locator("#sessions thead button.sort-button").count() == 4


def test_number_column_sorts_both_ways(table: Page) -> None:
    sort_by(table, "sessions", "Messages")
    assert column(table, "sessions", 2) == ["100", "40", "12", "7", "3"]
    assert aria_sort(table, "sessions", "Messages") == "descending"
    sort_by(table, "sessions", "Messages")
    assert column(table, "sessions", 2) == ["3", "7", "12", "40", "100"]
    assert aria_sort(table, "sessions", "Messages") == "ascending"


def test_cells_without_data_value_sort_by_their_number_and_blanks_go_last(table: Page) -> None:
    sort_by(table, "sessions", "Cost")
    assert column(table, "sessions", 3) == ["$1,234.50", "$12.00", "$9.00", "$0.25", "—"]
    sort_by(table, "sessions", "Cost")
    assert column(table, "sessions", 3) == ["$0.25", "$9.00", "$12.00", "$1,234.50", "—"]


def test_text_and_date_columns(table: Page) -> None:
    sort_by(table, "sessions", "Session")
    # Case-insensitive: "Zeta" comes before "ZZ_".
    assert [t.split()[0] for t in column(table, "sessions", 0)] == [
        "Zeta",
        "ZZ_ALPHA_ONE_ZZ",
        "ZZ_ALPHA_TWO_ZZ",
        "ZZ_BETA_ZZ",
        "ZZ_GAMMA_ZZ",
    ]
    assert aria_sort(table, "sessions", "Session") == "ascending"
    sort_by(table, "sessions", "Created")
    # Only one header carries the order.
    assert aria_sort(table, "sessions", "Session") is None
    assert [t.split()[0] for t in column(table, "sessions", 0)] == [
        "ZZ_ALPHA_TWO_ZZ",
        "Zeta",
        "ZZ_ALPHA_ONE_ZZ",
        "ZZ_GAMMA_ZZ",
        "ZZ_BETA_ZZ",
    ]


def test_filter_hides_rows_and_updates_the_count(table: Page) -> None:
    box = table.locator("input.table-filter")
    count = table.locator('[data-count-for="sessions"]')
    box.fill("zz_alpha")
    assert [t.split()[0] for t in shown(table, "sessions")] == ["ZZ_ALPHA_ONE_ZZ", "ZZ_ALPHA_TWO_ZZ"]
    assert count.text_content() == "2 of 5 sessions"
    box.fill("ALPHA refactor")
    assert [t.split()[0] for t in shown(table, "sessions")] == ["ZZ_ALPHA_TWO_ZZ"]
    assert count.text_content() == "1 of 5 sessions"
    # The filter reads the row's text, not its markup.
    box.fill("<b>")
    assert shown(table, "sessions") == ["Zeta review <b>not bold</b>"]
    box.fill("nothing matches this")
    assert shown(table, "sessions") == [] and count.text_content() == "0 of 5 sessions"
    box.press("Escape")
    assert len(shown(table, "sessions")) == 5 and count.text_content() == "5 sessions"


def test_sorting_keeps_the_filter(table: Page) -> None:
    table.locator("input.table-filter").fill("zz_")
    sort_by(table, "sessions", "Messages")
    assert [t.split()[0] for t in shown(table, "sessions")] == [
        "ZZ_ALPHA_TWO_ZZ",
        "ZZ_ALPHA_ONE_ZZ",
        "ZZ_GAMMA_ZZ",
        "ZZ_BETA_ZZ",
    ]


def test_theme_toggle_cycles(table: Page) -> None:
    button = table.locator("#toggle-theme")
    themes = []
    for _ in range(3):
        button.click()
        themes.append(table.get_attribute("html", "data-theme"))
    assert themes == ["light", "dark", "auto"]
    assert button.text_content() == "Theme: system"


def test_without_javascript_the_table_is_whole_and_the_filter_hidden(browser: Browser, site: Path) -> None:
    page, watch = open_local(browser, site, "table.html", script=False)
    assert len(shown(page, "sessions")) == 5
    assert not page.locator("input.table-filter").is_visible()
    assert page.locator("#sessions thead button").count() == 0
    assert watch.errors == []
    page.context.close()


def test_stats_page_charts_and_tables(browser: Browser, site: Path) -> None:
    page, watch = open_local(browser, site, "stats.html")
    assert page.locator("svg.chart").count() == 10  # with active hours per day (issue 34)
    assert page.locator("svg.chart").first.bounding_box()["height"] > 50  # type: ignore[index]
    sort_by(page, "models", "Tokens")
    assert column(page, "models", 0) == ["ZZ_BIG_MODEL_ZZ", "ZZ_MID_MODEL_ZZ", "ZZ_SMALL_MODEL_ZZ"]
    sort_by(page, "models", "Tokens")
    assert column(page, "models", 0) == ["ZZ_SMALL_MODEL_ZZ", "ZZ_MID_MODEL_ZZ", "ZZ_BIG_MODEL_ZZ"]
    page.locator('input[data-table="project-stats"]').fill("<script>")
    assert shown(page, "project-stats") == ["/tmp/<script>x</script>"]
    assert page.locator('[data-count-for="project-stats"]').text_content() == "1 of 3 projects"
    assert page.locator("#flagged a", has_text="turn 1").get_attribute("href") == "sessions/srv-api/c.html#entry-u1"
    # A CSP violation (an inline style or script) would show up here as a console error.
    assert watch.errors == [] and watch.blocked == []
    page.context.close()


def test_charts_follow_the_colour_scheme(browser: Browser, site: Path) -> None:
    fills = []
    for scheme in ("light", "dark"):
        page, watch = open_local(browser, site, "stats.html", scheme=scheme)
        fills.append(page.eval_on_selector("svg.chart .chart-bar", "bar => getComputedStyle(bar).fill"))
        background = page.eval_on_selector("body", "body => getComputedStyle(body).backgroundColor")
        assert background == ("rgb(255, 255, 255)" if scheme == "light" else "rgb(13, 17, 23)")
        assert watch.errors == []
        page.context.close()
    assert fills[0] != fills[1]
