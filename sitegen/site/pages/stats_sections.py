"""The stats page's windows (all, 30 and 7 days), its tools and active-time sections, and their formats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from markupsafe import Markup

from sitegen.render.base.text import human_size
from sitegen.render.header import duration_text
from sitegen.site.pages.analytics import Analytics, SpeedTally, Window, compute_windows, windows_to
from sitegen.site.pages.charts import Category, Period, category_chart, period_index
from sitegen.site.pages.stats import Stats, compute_stats
from sitegen.site.state.records import SessionRecord

__all__ = [
    "FORMATS",
    "WindowView",
    "period_activity",
    "window_views",
]


@dataclass(slots=True)
class WindowView:
    """One window's figures and charts, as the template shows them in its pane."""

    window: Window
    stats: Stats
    analytics: Analytics
    suffix: str  # "" for all time, else "-30d", "-7d": the window's tables' ids end with it
    charts: dict[str, Markup]


def seconds_text(value: float | None) -> str:
    """A tool's duration: "0.4 s", "12.0 s", "3 min" past a minute; "—" when unknown."""
    if value is None:
        return "—"
    if value < 60:
        return f"{value:.1f} s"
    return duration_text(round(value * 1000))


def percent_text(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def speed_text(tally: SpeedTally | None) -> str:
    value = tally.tokens_per_second if tally is not None else None
    return "—" if value is None else f"{value:,.1f}"


def active_text(ms: int) -> str:
    return duration_text(ms) if ms > 0 else "—"


FORMATS = {
    "seconds": seconds_text,
    "percent": percent_text,
    "speed": speed_text,
    "active": active_text,
    "size": human_size,
}


def _hours(value: float) -> str:
    return active_text(round(value * 3_600_000))


def _calls(value: float) -> str:
    count = round(value)
    return f"{count:,} call" + ("" if count == 1 else "s")


def _charts(analytics: Analytics, root: str) -> dict[str, Markup]:
    tools = [Category(t.tool, t.calls) for t in analytics.tools]
    failures = [Category(t.tool, t.failures) for t in analytics.tools if t.failures]
    projects = [Category(p.name, p.ms / 3_600_000, f"{root}projects/{p.key}.html") for p in analytics.projects]
    return {
        "tool_calls": category_chart(tools, label="Calls per tool", fmt=_calls),
        "tool_failures": category_chart(failures, label="Failed calls per tool", fmt=_calls),
        "project_active": category_chart(projects, label="Active time per project", fmt=_hours),
    }


def window_views(
    records: Sequence[SessionRecord], stats: Stats, root: str, windows: list[Analytics] | None = None
) -> list[WindowView]:
    """All time (with `stats`, already made) and the last 30 and 7 days up to the last active day;
    `windows`: compute_windows(records, windows_to(stats.last_day)) when already made."""
    last: date | None = stats.last_day
    if windows is None:
        windows = compute_windows(records, windows_to(last))
    views = []
    for analytics in windows:
        window = analytics.window
        windowed = stats if window.key == "all" else compute_stats(records, window)
        suffix = "" if window.key == "all" else f"-{window.key}"
        views.append(WindowView(window, windowed, analytics, suffix, _charts(analytics, root)))
    return views


def period_activity(periods: Sequence[Period], analytics: Analytics) -> list[tuple[int, SpeedTally]]:
    """Active ms and output speed per period, as the time charts bucket days."""
    rows = [(0, SpeedTally()) for _ in periods]
    active = [0] * len(periods)
    for day, ms in analytics.active.days.items():
        position = period_index(periods, date.fromisoformat(day))
        if position is not None:
            active[position] += ms
    for day, speed in analytics.day_speed.items():
        try:
            position = period_index(periods, date.fromisoformat(day))
        except ValueError:  # "unknown"
            continue
        if position is not None:
            rows[position][1].output += speed.output
            rows[position][1].ms += speed.ms
    return [(ms, speed) for ms, (_, speed) in zip(active, rows, strict=True)]
