"""The stats page: sessions, tokens and cost per day, model and project, and the audit's flagged turns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from sitegen.render.page import format_tokens
from sitegen.site.pages.analytics import ALL_TIME, Analytics, Window
from sitegen.site.pages.charts import Category, Period, category_chart, period_index, periods_for, time_chart
from sitegen.site.state.records import SessionRecord, UsageGroup, UsageLog

__all__ = [
    "FlaggedTurn",
    "Stats",
    "Tally",
    "compute_stats",
    "flagged_turns",
    "format_cost",
    "period_tallies",
    "render_stats_page",
]

UNKNOWN_MODEL = "(unknown model)"


@dataclass(slots=True)
class Tally:
    """Sessions, assistant messages, tokens and cost of one day, period, model or project, or of all."""

    name: str = ""
    key: str = ""
    sessions: int = 0
    messages: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    # A session of it recorded its usage: its figures are known (maybe 0), else unknown ("—"), as odek's.
    usage_known: bool = False

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def cache_hit_rate(self) -> float | None:
        """Cache reads over all input (fresh, cache read and cache written); None without input."""
        fed = self.input + self.cache_read + self.cache_write
        return self.cache_read / fed if fed else None

    def add_group(self, group: UsageGroup) -> None:
        self.messages += group.messages
        self.input += group.input
        self.output += group.output
        self.cache_read += group.cache_read
        self.cache_write += group.cache_write
        self.cost += group.cost

    def merge(self, other: Tally) -> None:
        self.sessions += other.sessions
        self.messages += other.messages
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.cost += other.cost
        self.usage_known = self.usage_known or other.usage_known


@dataclass(slots=True)
class Stats:
    """Everything the stats page shows except the flagged turns; usage copied by /fork counts once."""

    totals: Tally = field(default_factory=Tally)
    # Only days with a session or usage, in order; the charts fill the gaps.
    days: dict[date, Tally] = field(default_factory=dict)
    models: list[Tally] = field(default_factory=list)
    projects: list[Tally] = field(default_factory=list)
    # Usage rows skipped because an older session already counted the same entry.
    duplicates: int = 0
    # Sessions with no time at all: in the totals but on no day.
    undated: int = 0

    @property
    def first_day(self) -> date | None:
        return min(self.days) if self.days else None

    @property
    def last_day(self) -> date | None:
        return max(self.days) if self.days else None


@dataclass(frozen=True, slots=True)
class FlaggedTurn:
    """A user turn the audit flagged, with a link (relative to the site root) to the entry in its page."""

    session_key: str
    session_title: str
    project: str
    project_slug: str
    modified_ms: int | None
    page: str
    turn: int
    user_text: str
    resources: tuple[str, ...]
    sources: tuple[str, ...]
    href: str
    call_href: str | None


def _day_of_ms(ms: int | None) -> date | None:
    if ms is None:
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).date()
    except (OverflowError, OSError, ValueError):
        return None


def _day_of_text(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except (TypeError, ValueError):
        return None


def _session_day(record: SessionRecord) -> date | None:
    """The UTC day a session started: created, else modified, else its first usage."""
    day = _day_of_ms(record.created_ms) or _day_of_ms(record.modified_ms)
    if day is not None:
        return day
    days = [d for d in (_day_of_text(g.day) for g in record.usage.groups) if d is not None]
    return min(days) if days else None


def _new_usage(record: SessionRecord, seen: set[str], stats: Stats) -> list[UsageGroup]:
    """The session's usage per (model, day) without rows an older session already counted."""
    usage = record.usage
    if seen.isdisjoint(usage.keys):
        # Shares nothing with older sessions (most do): its stored sums are the answer.
        seen.update(usage.keys)
        return usage.groups
    fresh = []
    for row in usage.rows():
        if row.key in seen:
            stats.duplicates += 1
        else:
            seen.add(row.key)
            fresh.append(row)
    return UsageLog.of(fresh).groups


def _sorted_tallies(tallies: Mapping[str, Tally]) -> list[Tally]:
    return sorted(tallies.values(), key=lambda t: (-t.tokens, -t.cost, -t.sessions, t.name, t.key))


def compute_stats(records: Sequence[SessionRecord], window: Window = ALL_TIME) -> Stats:
    """Per-day, per-model and per-project figures and totals; each usage key is counted once. Within a
    window, usage counts on its day and a session when it started or used a model in the window."""
    stats = Stats()
    models: dict[str, Tally] = {}
    projects: dict[str, Tally] = {}
    seen: set[str] = set()
    # Oldest first, as the home page counts: a copied entry belongs to the session it was first written to.
    for record in sorted(records, key=lambda r: (r.created_ms or 0, r.key)):
        day = _session_day(record)
        groups = _new_usage(record, seen, stats)
        if window is not ALL_TIME:
            groups = [g for g in groups if window.holds(g.day)]
            if not groups and not window.holds(day.isoformat() if day else None):
                continue
        stats.totals.sessions += 1
        project = projects.setdefault(record.project_slug, Tally(name=record.project_name, key=record.project_slug))
        project.sessions += 1
        known = record.usage_known
        stats.totals.usage_known |= known
        project.usage_known |= known
        if day is None:
            stats.undated += 1
        elif window.holds(day.isoformat()):
            tally = stats.days.setdefault(day, Tally(key=day.isoformat()))
            tally.sessions += 1
            tally.usage_known |= known
        recorded = {g.model or UNKNOWN_MODEL for g in record.usage.groups}
        used = {m or UNKNOWN_MODEL for m in record.models} | recorded
        for name in used:
            tally = models.setdefault(name, Tally(name=name, key=name))
            tally.sessions += 1
            tally.usage_known |= name in recorded
        # Summed per (model, day): a session has thousands of usage rows but few such groups.
        for group in groups:
            stats.totals.add_group(group)
            project.add_group(group)
            model = group.model or UNKNOWN_MODEL
            models.setdefault(model, Tally(name=model, key=model)).add_group(group)
            usage_day = _day_of_text(group.day)
            if usage_day is not None:
                tally = stats.days.setdefault(usage_day, Tally(key=usage_day.isoformat()))
                tally.add_group(group)
                tally.usage_known = True
    stats.days = dict(sorted(stats.days.items()))
    stats.models = _sorted_tallies(models)
    stats.projects = _sorted_tallies(projects)
    return stats


def _text(turn: Mapping[str, Any], *names: str) -> str:
    """A string field of a stored audit turn under any of its spellings, "" when absent or not text."""
    for name in names:
        value = turn.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _texts(turn: Mapping[str, Any], *names: str) -> tuple[str, ...]:
    for name in names:
        value = turn.get(name)
        if isinstance(value, list):
            return tuple(str(item) for item in value)
    return ()


def _snippet(text: str, limit: int = 140) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def flagged_turns(records: Sequence[SessionRecord]) -> list[FlaggedTurn]:
    """Every flagged turn of every session, newest session first, each linked to its entry."""
    rows: list[FlaggedTurn] = []
    for record in records:
        for stored in record.flagged_turns:
            # TurnAudit.to_json writes camelCase; snake_case is read too so hand-made records work.
            user_node = _text(stored, "userNodeId", "user_node_id")
            first_node = _text(stored, "firstSuspiciousNodeId", "first_suspicious_node_id")
            target = user_node or first_node
            turn = stored.get("turn")
            rows.append(
                FlaggedTurn(
                    session_key=record.key,
                    session_title=record.title or record.session_id or record.key,
                    project=record.project_name,
                    project_slug=record.project_slug,
                    modified_ms=record.modified_ms,
                    page=record.page,
                    turn=turn if isinstance(turn, int) else 0,
                    user_text=_snippet(_text(stored, "userText", "user_text")),
                    resources=_texts(stored, "suspiciousResources", "suspicious_resources"),
                    sources=_texts(stored, "ingestSources", "ingest_sources"),
                    href=f"{record.page}#entry-{target}" if target else record.page,
                    call_href=f"{record.page}#entry-{first_node}" if first_node else None,
                )
            )
    rows.sort(key=lambda r: (-(r.modified_ms or 0), r.session_key, r.turn))
    return rows


def format_cost(cost: float) -> str:
    """Dollars with cents; amounts under a cent keep four decimals so they do not read as nothing."""
    if 0 < abs(cost) < 0.01:
        return f"${cost:.4f}"
    return f"${cost:,.2f}"


def _format_count(value: float) -> str:
    return f"{round(value):,}"


def _format_tokens(value: float) -> str:
    return format_tokens(round(value))


def _sessions_tip(value: float) -> str:
    count = round(value)
    return f"{count:,} session" + ("" if count == 1 else "s")


def _tokens_tip(value: float) -> str:
    return f"{_format_tokens(value)} tokens"


def period_tallies(stats: Stats) -> list[tuple[Period, Tally]]:
    """The days between the first and the last, bucketed as the time charts draw them."""
    first, last = stats.first_day, stats.last_day
    if first is None or last is None:
        return []
    periods = periods_for(first, last)
    tallies = [Tally(key=p.label, name=p.label) for p in periods]
    for day, tally in stats.days.items():
        position = period_index(periods, day)
        if position is not None:
            tallies[position].merge(tally)
    return list(zip(periods, tallies, strict=True))


def _active_tip(value: float) -> str:
    return f"{value:,.1f} h active"


def _charts(stats: Stats, root: str, active_hours: Sequence[float]) -> dict[str, Markup]:
    """The page's SVG charts, by name; markup that jinja must not escape again."""
    rows = period_tallies(stats)
    periods = [period for period, _ in rows]
    projects = [Category(t.name, t.tokens, f"{root}projects/{t.key}.html") for t in stats.projects]
    project_costs = [Category(t.name, t.cost, f"{root}projects/{t.key}.html") for t in stats.projects]
    project_sessions = [Category(t.name, t.sessions, f"{root}projects/{t.key}.html") for t in stats.projects]
    return {
        "day_sessions": time_chart(
            periods,
            [t.sessions for _, t in rows],
            label="Sessions started",
            fmt=_format_count,
            tip=_sessions_tip,
            integer=True,
        ),
        "day_tokens": time_chart(
            periods, [t.tokens for _, t in rows], label="Tokens", fmt=_format_tokens, tip=_tokens_tip, integer=True
        ),
        "day_cost": time_chart(periods, [t.cost for _, t in rows], label="Cost", fmt=format_cost),
        "day_active": time_chart(
            periods, list(active_hours), label="Active hours", fmt=lambda v: f"{v:g} h", tip=_active_tip
        ),
        "model_sessions": category_chart(
            [Category(t.name, t.sessions) for t in stats.models],
            label="Sessions per model",
            fmt=_format_count,
            tip=_sessions_tip,
        ),
        "model_tokens": category_chart(
            [Category(t.name, t.tokens) for t in stats.models],
            label="Tokens per model",
            fmt=_format_tokens,
            tip=_tokens_tip,
        ),
        "model_cost": category_chart(
            [Category(t.name, t.cost) for t in stats.models], label="Cost per model", fmt=format_cost
        ),
        "project_sessions": category_chart(
            project_sessions, label="Sessions per project", fmt=_format_count, tip=_sessions_tip
        ),
        "project_tokens": category_chart(projects, label="Tokens per project", fmt=_format_tokens, tip=_tokens_tip),
        "project_cost": category_chart(project_costs, label="Cost per project", fmt=format_cost),
    }


def render_stats_page(
    env: Environment,
    records: Sequence[SessionRecord],
    *,
    root: str,
    assets: Mapping[str, str],
    version: str,
    problem_count: int,
    stats: Stats | None = None,
    windows: list[Analytics] | None = None,
) -> str:
    """The stats page's HTML, from templates/stats.html.j2 in `env` (autoescape on); `stats` and
    `windows`, when given, are compute_stats(records) and compute_windows(records,
    windows_to(stats.last_day)) already made."""
    # Here, not at the top: the sections compute their windows with compute_stats.
    from sitegen.site.pages.stats_sections import FORMATS, period_activity, window_views

    stats = stats if stats is not None else compute_stats(records)
    views = window_views(records, stats, root, windows)
    periods = period_tallies(stats)
    activity = period_activity([period for period, _ in periods], views[0].analytics)
    return env.get_template("stats.html.j2").render(
        root=root,
        assets=assets,
        version=version,
        problem_count=problem_count,
        stats=stats,
        periods=periods,
        activity=activity,
        windows=views,
        fmt=FORMATS,
        charts=_charts(stats, root, [ms / 3_600_000 for ms, _ in activity]),
        flagged=flagged_turns(records),
        tokens=format_tokens,
        cost=format_cost,
    )
