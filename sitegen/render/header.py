"""The session header's facts, said in a line or two: where, when and for how long, which models, how much."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sitegen.transcript.model import Totals, Transcript, activity_times

__all__ = ["HeaderFacts", "duration_text", "header_facts", "minute_text", "short_model"]

# The seconds of years 1 to 9999 (datetime's range); a time outside them is shown as unknown.
_FIRST_SECOND, _LAST_SECOND = -62_135_596_800, 253_402_300_799


@dataclass(slots=True)
class HeaderFacts:
    span: str  # "2025-11-20 23:33 – 02:14 UTC"
    duration: str  # "2 h 41 min"
    models: list[tuple[str, str]]  # (short name, full id)
    messages: int
    tool_calls: int
    cost: str
    branches: int


def short_model(model: str) -> str:
    """A model id without its provider: "anthropic/claude-sonnet-4-5" -> "claude-sonnet-4-5"."""
    return model.rsplit("/", 1)[-1] or model


def _minute(ms: int) -> tuple[str, str] | None:
    seconds = ms // 1000
    if not _FIRST_SECOND <= seconds <= _LAST_SECOND:
        return None
    try:
        moment = time.gmtime(seconds)
    except (OSError, OverflowError, ValueError):
        return None
    return time.strftime("%Y-%m-%d", moment), time.strftime("%H:%M", moment)


def minute_text(ms: int | None) -> str:
    """A UTC time to the minute, as listings show it: "2025-09-01 14:05" ("" when unknown)."""
    moment = _minute(ms) if ms is not None else None
    return f"{moment[0]} {moment[1]}" if moment else ""


def duration_text(ms: int) -> str:
    """A duration the way a reader says it: "45 s", "12 min", "2 h 41 min", "3 d 4 h"."""
    seconds = max(0, ms // 1000)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def _span(start_ms: int | None, end_ms: int | None) -> str:
    start = _minute(start_ms) if start_ms is not None else None
    end = _minute(end_ms) if end_ms is not None else None
    if start is None and end is None:
        return ""
    if start is None or end is None or start == end:
        day, clock = start or end  # type: ignore[misc]
        return f"{day} {clock} UTC"
    if start[0] == end[0]:
        return f"{start[0]} {start[1]} – {end[1]} UTC"
    return f"{start[0]} {start[1]} – {end[0]} {end[1]} UTC"


def header_facts(transcript: Transcript, totals: Totals) -> HeaderFacts:
    """The facts of the whole file: its time span from first to last entry, models, counts and cost."""
    times = activity_times(transcript.nodes)
    start = min(times, default=transcript.created_ms)
    end = max(times, default=transcript.modified_ms)
    if transcript.created_ms is not None and (start is None or transcript.created_ms < start):
        start = transcript.created_ms
    children = transcript.tree.children
    return HeaderFacts(
        span=_span(start, end),
        duration=duration_text(end - start) if start is not None and end is not None and end > start else "",
        models=[(short_model(model), model) for model in totals.models],
        messages=totals.messages,
        tool_calls=totals.tool_calls,
        cost=f"${totals.usage.cost:,.2f}" if totals.usage.cost else "",
        branches=sum(1 for kids in children.values() if not kids),
    )
