"""Per-tool figures, active time and output speed over many sessions, within a window of days."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from sitegen.site.records import SessionRecord
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
from sitegen.transcript.model import Transcript

__all__ = [
    "ALL_TIME",
    "ActiveTally",
    "Analytics",
    "SpeedTally",
    "ToolTally",
    "Window",
    "compute_analytics",
    "record_activity",
    "windows_to",
]

UsageKey = Callable[[Transcript, Any], str]


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


def record_activity(transcript: Transcript, usage_key: UsageKey) -> dict[str, Any]:
    """The record's tools, active and speed fields (sitegen.site.records.SessionRecord)."""
    tools = [
        [
            f"{use.call_node}@{use.start_ms}:{use.result_node}",
            day_of_ms(use.start_ms) or "unknown",
            use.name,
            int(use.failed),
            use.output_bytes,
            use.duration_ms,
        ]
        for use in tool_uses(transcript)
    ]
    speed = []
    for node in transcript.nodes:
        if node.kind != "assistant" or node.usage is None or node.usage.output <= 0:
            continue
        took = generation_ms(transcript, node)
        if took is not None:
            speed.append(
                [
                    usage_key(transcript, node),
                    node.model or "unknown",
                    day_of_ms(node.time_ms) or "unknown",
                    node.usage.output,
                    took,
                ]
            )
    return {"tools": tools, "active": active_runs(node.time_ms for node in transcript.nodes), "speed": speed}


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

    def add(self, failed: int, size: int, duration: int | None) -> None:
        self.calls += 1
        self.failures += failed
        self.output_bytes += size
        if duration is not None:
            self.durations.append(duration)

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


def _clip(runs: list[list[int]], window: Window) -> dict[str, int]:
    return {day: ms for day, ms in active_by_day(runs).items() if window.holds(day)}


def compute_analytics(records: Sequence[SessionRecord], window: Window = ALL_TIME) -> Analytics:
    """Tools, active time and speed of the records within `window`; a /fork copy of a call or message
    counts once, in the oldest session that has it, and time two sessions were active at once, once."""
    result = Analytics(window)
    tools: dict[str, ToolTally] = {}
    per_project: dict[str, dict[str, ToolTally]] = {}
    runs: dict[str, list[list[int]]] = {}
    names: dict[str, str] = {}
    seen: set[str] = set()
    for record in sorted(records, key=lambda r: (r.created_ms or 0, r.key)):
        slug = record.project_slug
        names.setdefault(slug, record.project or "(unknown)")
        project = per_project.setdefault(slug, {})
        for key, day, tool, failed, size, duration in record.tools:
            if key in seen or not window.holds(day):
                continue
            seen.add(key)
            tools.setdefault(tool, ToolTally(tool)).add(failed, size, duration)
            project.setdefault(tool, ToolTally(tool)).add(failed, size, duration)
        runs.setdefault(slug, []).extend(record.active)
        for key, model, day, output, ms in record.speed:
            if key in seen or not window.holds(day):
                continue
            seen.add(key)
            for tally in (
                result.model_speed.setdefault(model, SpeedTally()),
                result.day_speed.setdefault(day, SpeedTally()),
            ):
                tally.output += output
                tally.ms += ms
    result.tools = _sorted_tools(tools)
    result.project_tools = {slug: _sorted_tools(t) for slug, t in per_project.items() if t}
    every: list[list[int]] = []
    for slug, project_runs in runs.items():
        merged = merge_runs(project_runs)
        every.extend(merged)
        days = _clip(merged, window)
        if days:
            result.projects.append(ActiveTally(names[slug], slug, days))
    result.projects.sort(key=lambda t: (-t.ms, t.name, t.key))
    result.active = ActiveTally("all", "", dict(sorted(_clip(merge_runs(every), window).items())))
    return result
