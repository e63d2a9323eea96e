"""Stats math (per day, model and project; fork copies once), the SVG charts, and the stats page."""

from __future__ import annotations

import itertools
import os
import re
import xml.etree.ElementTree as ET
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.render.templates import template_environment
from sitegen.site.pages.charts import (
    PHONE_WIDTH,
    Category,
    Period,
    bucket_values,
    category_chart,
    period_index,
    periods_for,
    text_width,
    time_chart,
)
from sitegen.site.pages.stats import compute_stats, flagged_turns, format_cost, period_tallies, render_stats_page
from sitegen.site.state.records import SessionRecord, UsageLog, UsageRecord

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("SITEGEN_UPDATE_SNAPSHOTS") == "1"
SVG = "{http://www.w3.org/2000/svg}"
ASSETS = {
    "site.css": "assets/site.0123456789.css",
    "theme.css": "assets/theme.0123456789.css",
    "stats.css": "assets/stats.0123456789.css",
    "site.js": "assets/site.0123456789.js",
    "theme.js": "assets/theme.0123456789.js",
}
HOSTILE_PROJECT = "/tmp/<script>alert('ZZ_PROJECT_ZZ')</script>"
HOSTILE_MODEL = '<img src=x onerror="ZZ_MODEL_ZZ()">'


def ms(day: str, hour: int = 12) -> int:
    return int(datetime.fromisoformat(f"{day}T{hour:02d}:00:00").replace(tzinfo=UTC).timestamp() * 1000)


def usage(key: str, day: str, model: str = "model-a", tokens: int = 100, cost: float = 0.5) -> UsageRecord:
    return UsageRecord(
        key=key, day=day, model=model, input=tokens, output=tokens // 2, cache_read=0, cache_write=0, cost=cost
    )


def record(
    key: str,
    project: str,
    created: str | None,
    rows: list[UsageRecord],
    *,
    flagged: list[dict[str, Any]] | None = None,
    models: list[str] | None = None,
) -> SessionRecord:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", project).strip("-") or "unknown"
    created_ms = ms(created) if created else None
    return SessionRecord(
        key=key,
        source=f"/agent/{key}.jsonl",
        family="pi",
        session_id=f"id-{key}",
        project=project,
        project_slug=slug,
        page=f"sessions/{slug}/{key}.html",
        title=f"Session {key}",
        created_ms=created_ms,
        modified_ms=created_ms,
        messages=len(rows) * 2,
        tool_calls=0,
        branches=1,
        compactions=0,
        models=models if models is not None else sorted({u.model for u in rows}),
        input=sum(u.input for u in rows),
        output=sum(u.output for u in rows),
        cache_read=0,
        cache_write=0,
        cost=sum(u.cost for u in rows),
        usage=UsageLog.of(rows),
        flagged_turns=flagged or [],
    )


@pytest.fixture
def records() -> list[SessionRecord]:
    """Two projects, two models, three days with a gap, and a fork that copied two usage rows."""
    original = record("orig", "/home/dev/app", "2026-01-01", [usage("e1", "2026-01-01"), usage("e2", "2026-01-01")])
    fork = record(
        "fork",
        "/home/dev/app",
        "2026-01-03",
        [usage("e1", "2026-01-01"), usage("e2", "2026-01-01"), usage("e3", "2026-01-03", "model-b", 1000, 2.0)],
    )
    other = record("other", "/srv/api", "2026-01-04", [usage("e4", "2026-01-04", "model-b", 10, 0.25)])
    return [fork, other, original]


# ---- Stats math ----


def test_totals_count_fork_copies_once(records: list[SessionRecord]) -> None:
    stats = compute_stats(records)
    assert stats.totals.sessions == 3
    assert stats.totals.messages == 4
    assert stats.duplicates == 2
    assert stats.totals.tokens == 150 + 150 + 1500 + 15
    assert stats.totals.cost == pytest.approx(0.5 + 0.5 + 2.0 + 0.25)


def test_usage_log_keeps_sums_per_model_and_day_and_gives_the_rows_back() -> None:
    rows = [usage("k1", "2026-01-01"), usage("k2", "2026-01-01", tokens=10, cost=0.25), usage("k1", "2026-01-01")]
    rows.append(usage("k3", "2026-01-02", "model-b"))
    log = UsageLog.of(rows)
    assert log.rows() == rows and log.keys == ["k1", "k2", "k1", "k3"]
    # k1's repeat is not summed again.
    assert [(g.model, g.day, g.messages, g.input, g.cost) for g in log.groups] == [
        ("model-a", "2026-01-01", 2, 110, 0.75),
        ("model-b", "2026-01-02", 1, 100, 0.5),
    ]
    assert UsageLog.from_json(orjson.loads(orjson.dumps(log, default=list))) == log
    # Rows as an earlier version kept them, each with its day and model, in a manifest of the same version.
    earlier = {"keys": log.keys, "groups": log.groups, "rows_json": orjson.dumps([row[1:] for row in rows]).decode()}
    assert UsageLog.from_json(orjson.loads(orjson.dumps(earlier, default=list))).rows() == rows


def test_per_day(records: list[SessionRecord]) -> None:
    days = compute_stats(records).days
    assert [d.isoformat() for d in days] == ["2026-01-01", "2026-01-03", "2026-01-04"]
    first, third, fourth = days.values()
    assert (first.sessions, first.messages, first.tokens, first.cost) == (1, 2, 300, 1.0)
    assert (third.sessions, third.messages, third.tokens, third.cost) == (1, 1, 1500, 2.0)
    assert (fourth.sessions, fourth.messages, fourth.tokens) == (1, 1, 15)


def test_per_model(records: list[SessionRecord]) -> None:
    models = {m.name: m for m in compute_stats(records).models}
    assert set(models) == {"model-a", "model-b"}
    # The fork used model-a too (its copied rows), so both its and the original's sessions count.
    assert (models["model-a"].sessions, models["model-a"].messages, models["model-a"].tokens) == (2, 2, 300)
    assert (models["model-b"].sessions, models["model-b"].messages, models["model-b"].tokens) == (2, 2, 1515)
    assert [m.name for m in compute_stats(records).models] == ["model-b", "model-a"]


def test_per_project_gives_copies_to_the_older_session(records: list[SessionRecord]) -> None:
    projects = {p.name: p for p in compute_stats(records).projects}
    app, api = projects["/home/dev/app"], projects["/srv/api"]
    assert (app.sessions, app.messages, app.tokens, app.cost) == (2, 3, 1800, 3.0)
    assert (api.sessions, api.messages, api.tokens, api.cost) == (1, 1, 15, 0.25)
    assert app.key == "home-dev-app"


def test_order_of_records_does_not_change_the_result(records: list[SessionRecord]) -> None:
    assert compute_stats(records) == compute_stats(list(reversed(records)))


def test_empty_input() -> None:
    stats = compute_stats([])
    assert stats.totals.sessions == 0 and stats.totals.tokens == 0 and stats.totals.cost == 0
    assert stats.days == {} and stats.models == [] and stats.projects == []
    assert stats.first_day is None and period_tallies(stats) == []
    assert flagged_turns([]) == []


def test_session_without_times_counts_on_its_first_usage_day_or_on_none() -> None:
    dated = record("late", "/p", None, [usage("x2", "2026-02-03"), usage("x1", "2026-02-01")])
    undated = record("none", "/p", None, [], models=[])
    stats = compute_stats([dated, undated])
    assert stats.undated == 1
    assert stats.days[date(2026, 2, 1)].sessions == 1
    assert stats.totals.sessions == 2


def test_unknown_model_and_project_and_bad_day() -> None:
    rows = [usage("k1", "not-a-day", model=""), usage("k2", "2026-03-01", model="")]
    stats = compute_stats([record("r", "", "2026-03-01", rows, models=[""])])
    assert [m.name for m in stats.models] == ["(unknown model)"]
    assert stats.models[0].messages == 2
    assert [p.name for p in stats.projects] == ["(unknown)"]
    # The usage with an unreadable day is in the totals but on no day.
    assert stats.totals.messages == 2 and stats.days[date(2026, 3, 1)].messages == 1


def test_period_tallies_bucket_long_ranges_by_week() -> None:
    rows = [usage("a", "2025-01-01"), usage("b", "2025-01-02"), usage("c", "2025-12-31")]
    stats = compute_stats([record("r", "/p", "2025-01-01", rows)])
    buckets = period_tallies(stats)
    assert {p.grain for p, _ in buckets} == {"week"}
    assert len(buckets) <= 120
    assert buckets[0][1].messages == 2 and buckets[0][1].sessions == 1
    assert sum(t.messages for _, t in buckets) == 3


# ---- Flagged turns ----


def test_flagged_turns_rows_and_deep_links() -> None:
    camel = {
        "turn": 3,
        "userNodeId": "u42",
        "userText": "summarize   the\nREADME",
        "suspiciousResources": ["/etc/passwd", "https://evil.example/x"],
        "ingestSources": ["https://news.example"],
        "firstSuspiciousNodeId": "a43",
    }
    snake = {"turn": 1, "first_suspicious_node_id": "a7", "suspicious_resources": ["main.go"]}
    old = record("old", "/home/dev/app", "2026-01-01", [], flagged=[camel])
    new = record("new", "/srv/api", "2026-02-01", [], flagged=[snake, {"turn": "bad"}])
    rows = flagged_turns([old, new])
    assert [(r.session_key, r.turn) for r in rows] == [("new", 0), ("new", 1), ("old", 3)]
    first = rows[2]
    assert first.href == "sessions/home-dev-app/old.html#entry-u42"
    assert first.call_href == "sessions/home-dev-app/old.html#entry-a43"
    assert first.resources == ("/etc/passwd", "https://evil.example/x")
    assert first.sources == ("https://news.example",)
    assert first.user_text == "summarize the README"
    assert first.project == "/home/dev/app" and first.session_title == "Session old"
    # No user node: the link goes to the first suspicious call; no ids at all: to the page.
    assert rows[1].href == "sessions/srv-api/new.html#entry-a7"
    assert rows[0].href == "sessions/srv-api/new.html" and rows[0].call_href is None


# ---- Periods ----


@pytest.mark.parametrize(
    ("first", "last", "grain", "count"),
    [
        (date(2026, 1, 1), date(2026, 1, 1), "day", 1),
        (date(2026, 1, 1), date(2026, 4, 30), "day", 120),
        (date(2026, 1, 1), date(2026, 5, 1), "week", 18),
        (date(2024, 1, 1), date(2026, 3, 1), "week", 113),
        (date(2020, 1, 1), date(2026, 3, 1), "month", 75),
        (date(1990, 6, 1), date(2026, 3, 1), "year", 37),
    ],
)
def test_periods_cover_the_range_without_gaps(first: date, last: date, grain: str, count: int) -> None:
    periods = periods_for(first, last)
    assert {p.grain for p in periods} == {grain}
    assert len(periods) == count <= 120
    assert periods[0].start <= first and periods[-1].end >= last
    for before, after in itertools.pairwise(periods):
        assert (after.start - before.end).days == 1
    assert period_index(periods, first) == 0 and period_index(periods, last) == count - 1


def test_week_periods_start_on_monday_and_buckets_sum() -> None:
    periods = periods_for(date(2026, 1, 1), date(2026, 6, 1))
    assert all(p.start.weekday() == 0 for p in periods)
    assert period_index(periods, date(2025, 1, 1)) is None
    sums = bucket_values(periods, {date(2026, 1, 1): 2.0, date(2026, 1, 4): 3.0, date(2026, 1, 5): 1.0})
    assert sums[:2] == [5.0, 1.0] and sum(sums) == 6.0
    assert periods[0].label == "week of 2025-12-29"


def test_empty_range() -> None:
    assert periods_for(date(2026, 1, 2), date(2026, 1, 1)) == []


# ---- Charts ----


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img" and root.get("aria-label")
    return root


def days(first: date, count: int) -> list[Period]:
    return periods_for(first, date.fromordinal(first.toordinal() + count - 1))


def test_time_chart_is_well_formed_with_a_gap_per_empty_day() -> None:
    periods = days(date(2026, 1, 1), 10)
    values = [3, 0, 0, 1, 0, 0, 0, 0, 0, 7.0]
    root = parse(time_chart(periods, values, label="Sessions", fmt=lambda v: f"{v:g}", tip=lambda v: f"{v:g} sessions"))
    bars = root.findall(f".//{SVG}rect")
    assert len(bars) == 3
    titles = [bar.findtext(f"{SVG}title") for bar in bars]
    assert titles == ["2026-01-01: 3 sessions", "2026-01-04: 1 sessions", "2026-01-10: 7 sessions"]
    xs = [float(bar.get("x", "").rstrip("%")) for bar in bars]  # percentages of the chart's width
    # Bars sit in their day's slot: the empty days between them leave room.
    assert xs[1] - xs[0] == pytest.approx(3 * (xs[2] - xs[1]) / 6, rel=0.01)
    heights = [float(bar.get("height", "")) for bar in bars]
    assert heights[2] > heights[0] > heights[1] > 0
    assert "highest 7 sessions (2026-01-10)" in (root.get("aria-label") or "")


def test_time_chart_axis_labels() -> None:
    periods = periods_for(date(2025, 11, 20), date(2026, 2, 10))
    values = [1.0] * len(periods)
    root = parse(time_chart(periods, values, label="Tokens", fmt=lambda v: f"{v:g}", integer=True))
    labels = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    # The y axis's top value is named (0 is the axis line); the x axis names each month's first day once,
    # with the year where it changes.
    assert "1" in labels and "0" not in labels
    assert "Dec 12025" in labels and "Jan 12026" in labels and "Feb 1" in labels
    assert len([label for label in labels if label[:3] in ("Nov", "Dec", "Jan", "Feb")]) <= 10


def test_time_chart_monthly_labels_and_at_most_120_bars() -> None:
    periods = periods_for(date(2016, 1, 1), date(2025, 12, 31))
    assert len(periods) == 120 and periods[0].grain == "month"
    root = parse(time_chart(periods, [float(n) for n in range(120)], label="Cost", fmt=format_cost))
    assert len(root.findall(f".//{SVG}rect")) == 119
    labels = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "Jan2016" in labels and "$150.00" in labels


def test_time_chart_without_data() -> None:
    root = parse(time_chart([], [], label="Sessions", fmt=str))
    assert root.findall(f".//{SVG}rect") == []
    assert "No data" in "".join(root.itertext())
    with pytest.raises(ValueError):
        time_chart(days(date(2026, 1, 1), 2), [1.0], label="x", fmt=str)


def test_category_chart_top_n_and_others() -> None:
    items = [Category(f"project-{n:02d}", float(n)) for n in range(1, 15)]
    root = parse(category_chart(items, label="Tokens per project", fmt=lambda v: f"{v:g}", limit=5))
    rows = root.findall(f"{SVG}g")
    assert [row.findtext(f"{SVG}title") for row in rows] == [
        "project-14: 14",
        "project-13: 13",
        "project-12: 12",
        "project-11: 11",
        "10 others: 55",
    ]
    widths = [float(row.find(f"{SVG}rect").get("width", "").rstrip("%")) for row in rows]  # type: ignore[union-attr]
    assert widths[-1] == max(widths)
    assert "chart-other" in (rows[-1].find(f"{SVG}rect").get("class") or "")  # type: ignore[union-attr]


def test_category_chart_shortens_paths_from_the_left_and_links() -> None:
    long_path = "/Users/someone/with/a/very/deep/folder/structure/the-project"
    svg = category_chart([Category(long_path, 5.0, "projects/a&b.html")], label="Sessions", fmt=str)
    root = parse(svg)
    link = root.find(f"{SVG}a")
    assert link is not None and link.get("href") == "projects/a&b.html"
    label = link.find(f".//{SVG}text")
    assert label is not None and label.text is not None
    # Cut to what a phone's chart has room for beside the value, whole in the tooltip.
    assert label.text.startswith("…") and label.text.endswith("/the-project") and len(label.text) < len(long_path)
    assert text_width(label.text) <= PHONE_WIDTH - text_width("5.0") - 16
    assert link.findtext(f".//{SVG}title") == f"{long_path}: 5.0"


def test_hostile_labels_are_escaped() -> None:
    hostile = "</title></svg><script>ZZ_EVIL_ZZ</script>\x00\x1b&\"'"
    chart = category_chart([Category(hostile, 1.0, 'x" onclick="ZZ_CLICK_ZZ')], label=hostile, fmt=str)
    assert "<script>" not in chart and 'onclick="' not in chart
    root = parse(chart)
    assert (
        root.findtext(f"{SVG}a/{SVG}g/{SVG}title") == "</title></svg><script>ZZ_EVIL_ZZ</script>\ufffd\ufffd&\"': 1.0"
    )
    periods = [Period(date(2026, 1, 1), date(2026, 1, 1), "day")]
    timed = time_chart(periods, [1.0], label=hostile, fmt=lambda v: hostile, tip=lambda v: hostile)
    assert "<script>" not in timed
    parse(timed)


def test_charts_are_deterministic() -> None:
    periods = days(date(2026, 1, 1), 40)
    values = [float((n * 7) % 5) / 3 for n in range(40)]
    assert time_chart(periods, values, label="a", fmt=format_cost) == time_chart(
        periods, values, label="a", fmt=format_cost
    )
    items = [Category("b", 1.0), Category("a", 1.0), Category("c", 2.0)]
    first = category_chart(items, label="x", fmt=str)
    assert first == category_chart(list(reversed(items)), label="x", fmt=str)
    assert first.index(">c<") < first.index(">a<") < first.index(">b<")


# ---- The page ----


def render(records: list[SessionRecord], problem_count: int = 0) -> str:
    return render_stats_page(
        template_environment(), records, root="", assets=ASSETS, version="9.9.9", problem_count=problem_count
    )


def svgs(html: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", html, flags=re.S)


def test_page_escapes_hostile_project_and_model(records: list[SessionRecord]) -> None:
    flagged = [{"turn": 1, "userNodeId": "u1", "suspiciousResources": ["<b>ZZ_RES_ZZ</b>"], "ingestSources": []}]
    hostile = record("evil", HOSTILE_PROJECT, "2026-01-05", [usage("h1", "2026-01-05", HOSTILE_MODEL)], flagged=flagged)
    html = render([*records, hostile])
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>ZZ_RES_ZZ" not in html
    assert "&lt;script&gt;alert(&#39;ZZ_PROJECT_ZZ&#39;)" in html
    assert "&lt;img src=x onerror=&#34;ZZ_MODEL_ZZ()&#34;&gt;" in html
    assert "&lt;b&gt;ZZ_RES_ZZ&lt;/b&gt;" in html
    charts = svgs(html)
    assert len(charts) == 10  # with active hours per day (issue 34)
    for chart in charts:
        parse(chart)


def test_page_lists_figures_and_flagged_turns(records: list[SessionRecord]) -> None:
    flagged = [{"turn": 2, "userNodeId": "ZZ_USER_NODE_ZZ", "firstSuspiciousNodeId": "ZZ_CALL_NODE_ZZ"}]
    records[1].flagged_turns = flagged
    html = render(records, problem_count=2)
    assert 'href="sessions/srv-api/other.html#entry-ZZ_USER_NODE_ZZ"' in html
    assert 'href="sessions/srv-api/other.html#entry-ZZ_CALL_NODE_ZZ"' in html
    assert '<table id="models" class="sortable listing">' in html
    for caption in ("Sessions per model", "Tokens per model", "Cost per model", "Sessions per project"):
        assert f"<figcaption>{caption}</figcaption><svg" in html
    assert 'data-count-for="flagged">1 flagged turns<' in html
    assert 'href="projects/home-dev-app.html"' in html
    assert "Problems (2)" in html and 'href="assets/site.0123456789.css"' in html
    assert "2 assistant messages that <code>/fork</code> copied" in html
    assert " style=" not in html and "onclick" not in html


def test_page_without_sessions() -> None:
    html = render([])
    assert "No sessions yet" in html and "No flagged turns." in html
    assert svgs(html) == []


def test_snapshot_stats_page(records: list[SessionRecord]) -> None:
    records[0].flagged_turns = [
        {"turn": 1, "userNodeId": "u9", "userText": "fetch the docs", "suspiciousResources": ["/etc/hosts"]}
    ]
    target = SNAPSHOTS / "stats.html"
    page = render(records)
    if UPDATE or not target.exists():
        target.write_text(page, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"snapshot {target.name} was missing and has been written; run again")
    assert page == target.read_text(encoding="utf-8"), f"{target.name} differs (SITEGEN_UPDATE_SNAPSHOTS=1)"
