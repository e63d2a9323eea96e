"""Per-tool figures, active time and output speed over many sessions, within a window of days."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from sitegen.site.state.records import SessionRecord
from sitegen.transcript.activity import (
    active_by_day,
    active_runs,
    day_of_ms,
    generation_ms,
    median,
    merge_runs,
    percentile,
    tool_uses,
)
from sitegen.transcript.model import Node, Transcript

__all__ = [
    "ALL_TIME",
    "ActiveTally",
    "Analytics",
    "SpeedTally",
    "ToolTally",
    "Window",
    "compute_analytics",
    "compute_windows",
    "record_activity",
    "windows_to",
]


@dataclass(frozen=True, slots=True)
class Window:
    """A range of UTC days, both ends included; None leaves that end open."""

    key: str
    label: str
    first: str | None = None  # YYYY-MM-DD
    last: str | None = None

    def holds(self, day: str | None) -> bool:
        if self.first is None and self.last is None:
            return True
        if day is None:
            return False
        return (self.first is None or day >= self.first) and (self.last is None or day <= self.last)


ALL_TIME = Window("all", "All time")


def windows_to(last: date | None) -> list[Window]:
    """All time, and the 30 and 7 days up to `last` (the last day with activity: the page must not
    change with the day it is built)."""
    if last is None:
        return [ALL_TIME]
    end = last.isoformat()
    return [
        ALL_TIME,
        Window("30d", "Last 30 days", (last - timedelta(29)).isoformat(), end),
        Window("7d", "Last 7 days", (last - timedelta(6)).isoformat(), end),
    ]


def record_activity(transcript: Transcript, usage_nodes: Sequence[Node]) -> dict[str, Any]:
    """The session's tools, active and speed details (sitegen.site.state.details.SessionDetails). `usage_nodes` are
    the nodes whose usage the record keeps, in its order: a call names its message by that position, so
    that a /fork copy of the message (same usage key) is known for one without a key of its own."""
    position = {node.id: n for n, node in enumerate(usage_nodes)}
    names: dict[str, int] = {}
    days: dict[str, int] = {}
    rows = [
        [
            position.get(use.call_node, -1),
            days.setdefault(day_of_ms(use.start_ms) or "unknown", len(days)),
            names.setdefault(use.name, len(names)),
            int(use.failed),
            use.output_bytes,
            -1 if use.duration_ms is None else use.duration_ms,
        ]
        for use in tool_uses(transcript)
    ]
    speed: dict[tuple[str, str], list[Any]] = {}
    for node in usage_nodes:
        if node.kind != "assistant" or node.usage is None or node.usage.output <= 0:
            continue
        took = generation_ms(transcript, node)
        if took is not None:
            group = (node.model or "unknown", day_of_ms(node.time_ms) or "unknown")
            total = speed.setdefault(group, [*group, 0, 0])
            total[2] += node.usage.output
            total[3] += took
    return {
        "tools": {"names": list(names), "days": list(days), "rows": rows} if rows else {},
        "active": active_runs(node.time_ms for node in transcript.nodes),
        "speed": list(speed.values()),
    }


@dataclass(slots=True)
class ToolTally:
    """One tool's calls, failures, output and durations (ms) over the sessions counted."""

    tool: str
    calls: int = 0
    failures: int = 0
    output_bytes: int = 0
    durations: list[int] = field(default_factory=list)

    @property
    def failure_rate(self) -> float | None:
        return self.failures / self.calls if self.calls else None

    @property
    def median_seconds(self) -> float | None:
        value = median(self.durations)
        return None if value is None else value / 1000

    @property
    def p95_seconds(self) -> float | None:
        value = percentile(self.durations, 0.95)
        return None if value is None else value / 1000

    def merge(self, other: ToolTally) -> None:
        self.calls += other.calls
        self.failures += other.failures
        self.output_bytes += other.output_bytes
        self.durations.extend(other.durations)

    def as_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "calls": self.calls,
            "failures": self.failures,
            "failure_rate": self.failure_rate,
            "median_seconds": self.median_seconds,
            "p95_seconds": self.p95_seconds,
            "output_bytes": self.output_bytes,
        }


@dataclass(slots=True)
class SpeedTally:
    """Output tokens and the milliseconds the model took to write them; None when nothing was timed."""

    output: int = 0
    ms: int = 0

    @property
    def tokens_per_second(self) -> float | None:
        return self.output * 1000 / self.ms if self.ms > 0 else None


@dataclass(slots=True)
class ActiveTally:
    """Active time of a project (or of all), per day and in all."""

    name: str
    key: str
    days: dict[str, int] = field(default_factory=dict)

    @property
    def ms(self) -> int:
        return sum(self.days.values())


@dataclass(slots=True)
class Analytics:
    """What the stats page and `sitegen stats` show of tools, time and speed, within one window."""

    window: Window
    tools: list[ToolTally] = field(default_factory=list)
    project_tools: dict[str, list[ToolTally]] = field(default_factory=dict)  # project slug -> its tools
    active: ActiveTally = field(default_factory=lambda: ActiveTally("all", ""))
    projects: list[ActiveTally] = field(default_factory=list)  # most active first
    model_speed: dict[str, SpeedTally] = field(default_factory=dict)
    day_speed: dict[str, SpeedTally] = field(default_factory=dict)

    def weeks(self) -> list[tuple[str, int]]:
        """(Monday, active ms) of each ISO week with activity, in order."""
        weeks: dict[str, int] = {}
        for day, ms in self.active.days.items():
            moment = date.fromisoformat(day)
            monday = (moment - timedelta(moment.weekday())).isoformat()
            weeks[monday] = weeks.get(monday, 0) + ms
        return sorted(weeks.items())


def _sorted_tools(tallies: dict[str, ToolTally]) -> list[ToolTally]:
    return sorted(tallies.values(), key=lambda t: (-t.calls, t.tool))


def compute_windows(records: Sequence[SessionRecord], windows: Sequence[Window]) -> list[Analytics]:
    """Tools, active time and speed of the records within each window, in one pass over them. A tool call
    of a message that /fork copied counts once, in the oldest session that has it; time two sessions of a
    project were active at once counts once. (A copied message's writing speed counts in each copy: the
    record keeps speed per model and day, and a ratio barely moves.)"""
    results = [Analytics(window) for window in windows]
    tools: list[dict[str, ToolTally]] = [{} for _ in windows]
    per_project: list[dict[str, dict[str, ToolTally]]] = [{} for _ in windows]
    runs: dict[str, list[list[int]]] = {}
    names: dict[str, str] = {}
    seen: set[str] = set()
    for record in sorted(records, key=lambda r: (r.created_ms or 0, r.key)):
        slug = record.project_slug
        names.setdefault(slug, record.project or "(unknown)")
        details = record.read_details("activity")
        runs.setdefault(slug, []).extend(details.active)
        keys = record.usage.keys
        # Most sessions share no message with an older one: then no call needs looking up.
        copied = set() if seen.isdisjoint(keys) else {n for n, key in enumerate(keys) if key in seen}
        seen.update(keys)
        log = details.tools
        if log:
            # Summed per (day, tool) first: a session has thousands of calls but few such groups.
            groups: dict[tuple[int, int], ToolTally] = {}
            for message, day, name, failed, size, duration in log["rows"]:
                if message in copied:
                    continue
                group = groups.get((day, name))
                if group is None:
                    group = groups[(day, name)] = ToolTally(log["names"][name])
                group.calls += 1
                group.failures += failed
                group.output_bytes += size
                if duration >= 0:
                    group.durations.append(duration)
            days = log["days"]
            for (day, _), group in groups.items():
                for n, window in enumerate(windows):
                    if window.holds(days[day]):
                        tools[n].setdefault(group.tool, ToolTally(group.tool)).merge(group)
                        per_project[n].setdefault(slug, {}).setdefault(group.tool, ToolTally(group.tool)).merge(group)
        for model, day, output, ms in details.speed:
            for result in results:
                if result.window.holds(day):
                    for tally in (
                        result.model_speed.setdefault(model, SpeedTally()),
                        result.day_speed.setdefault(day, SpeedTally()),
                    ):
                        tally.output += output
                        tally.ms += ms
    merged = {slug: merge_runs(project_runs) for slug, project_runs in runs.items()}
    project_days = {slug: active_by_day(project_runs) for slug, project_runs in merged.items()}
    all_days = active_by_day(merge_runs(run for project_runs in merged.values() for run in project_runs))
    for n, result in enumerate(results):
        window = result.window
        result.tools = _sorted_tools(tools[n])
        result.project_tools = {slug: _sorted_tools(t) for slug, t in per_project[n].items() if t}
        for slug, days in project_days.items():
            inside = {day: ms for day, ms in days.items() if window.holds(day)}
            if inside:
                result.projects.append(ActiveTally(names[slug], slug, inside))
        result.projects.sort(key=lambda t: (-t.ms, t.name, t.key))
        result.active = ActiveTally("all", "", {day: ms for day, ms in sorted(all_days.items()) if window.holds(day)})
    return results


def compute_analytics(records: Sequence[SessionRecord], window: Window = ALL_TIME) -> Analytics:
    """compute_windows for one window."""
    return compute_windows(records, [window])[0]
