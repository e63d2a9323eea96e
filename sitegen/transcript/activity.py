"""Where a session's time went: each tool call with its duration, active time, and the model's output speed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import NamedTuple

from sitegen.transcript.model import Node, ToolResult, Transcript

__all__ = [
    "ACTIVE_GAP_MS",
    "ToolUse",
    "active_by_day",
    "active_runs",
    "call_duration",
    "call_durations",
    "day_of_ms",
    "generation_ms",
    "median",
    "merge_runs",
    "percentile",
    "tool_uses",
]

# Time between two consecutive entries counts as active up to this gap; a longer one is idle.
ACTIVE_GAP_MS = 10 * 60 * 1000
_DAY_MS = 86_400_000


class ToolUse(NamedTuple):
    """One tool call: its tool, the entries that made and answered it, when, how long, how it ended."""

    name: str
    call_node: str
    result_node: str | None
    start_ms: int | None
    duration_ms: int | None  # call_duration's: None when not known
    failed: bool
    output_bytes: int


@lru_cache(maxsize=4096)
def _day_of(number: int) -> str:
    return datetime.fromtimestamp(number * 86_400, UTC).strftime("%Y-%m-%d")


def day_of_ms(ms: int | None) -> str | None:
    """The UTC day (YYYY-MM-DD) of a time in ms; None when unknown or out of datetime's range."""
    if ms is None:
        return None
    try:
        return _day_of(int(ms // _DAY_MS))
    except (OverflowError, OSError, ValueError):
        return None


def call_duration(transcript: Transcript, call_node: Node, result: ToolResult | None) -> int | None:
    """How long a tool call took, in ms: from the assistant message that made it (call_node) to the
    entry holding its result, as the session's timestamps say. None without a result, when either time
    is unknown (or the result's entry is not in the transcript), or when the result is older than the
    call (a clock that went back); a result stamped with its call's time took 0 ms."""
    start = call_node.time_ms
    if result is None or start is None:
        return None
    answer = transcript.by_id.get(result.node_id)
    end = answer.time_ms if answer is not None else None
    return end - start if end is not None and end >= start else None


def tool_uses(transcript: Transcript, nodes: Sequence[Node] | None = None) -> list[ToolUse]:
    """Every tool call of the given nodes (default: the whole file), in order."""
    uses = []
    for node in transcript.nodes if nodes is None else nodes:
        for call in node.tool_calls:
            result = call.result
            size = 0
            if result is not None:
                size = sum(len(part.text.encode("utf-8", "surrogatepass")) for part in result.parts)
            uses.append(
                ToolUse(
                    name=call.name or "(unnamed)",
                    call_node=node.id,
                    result_node=result.node_id if result is not None else None,
                    start_ms=node.time_ms,
                    duration_ms=call_duration(transcript, node, result),
                    failed=result is not None and result.is_error,
                    output_bytes=size,
                )
            )
    return uses


def call_durations(transcript: Transcript) -> dict[str, int]:
    """Result entry id -> call_duration of the call it answers, for the tool cards (where it is known):
    tool_uses' durations, without measuring every output in UTF-8 as it does (a page works this out
    before its rendering can start)."""
    durations: dict[str, int] = {}
    for node in transcript.nodes:
        for part in node.parts:  # not node.tool_calls, which makes a list per node
            call = part.call
            result = call.result if call is not None else None
            if result is not None and (took := call_duration(transcript, node, result)) is not None:
                durations[result.node_id] = took
    return durations


def active_runs(times: Iterable[int | None]) -> list[list[int]]:
    """[start, end] of each run of entries no more than ACTIVE_GAP_MS apart, in time order: the time
    between consecutive entries counts as active up to that gap, a longer one is idle."""
    runs: list[list[int]] = []
    for moment in sorted(t for t in times if t is not None):
        if runs and moment - runs[-1][1] <= ACTIVE_GAP_MS:
            runs[-1][1] = moment
        else:
            runs.append([moment, moment])
    return [run for run in runs if run[1] > run[0]]


def merge_runs(runs: Iterable[Sequence[int]]) -> list[list[int]]:
    """The union of runs: time two sessions were active at once (or a /fork copy) counts once."""
    merged: list[list[int]] = []
    for start, end in sorted((int(run[0]), int(run[1])) for run in runs):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def active_by_day(runs: Iterable[Sequence[int]]) -> dict[str, int]:
    """Active milliseconds per UTC day; a run over midnight counts on both days, each its part."""
    active: dict[str, int] = {}
    for start, end in runs:
        at = int(start)
        while at < end:
            cut = min(int(end), (at // _DAY_MS + 1) * _DAY_MS)
            day = day_of_ms(at)
            if day is not None:
                active[day] = active.get(day, 0) + cut - at
            at = cut
    return active


def generation_ms(transcript: Transcript, node: Node) -> int | None:
    """How long the model took to write an assistant message: from the entry before it on its branch
    (the prompt or a tool result) to the message; None when unknown or longer than an active gap."""
    if node.time_ms is None or node.parent_id is None:
        return None
    parent = transcript.by_id.get(node.parent_id)
    if parent is None or parent.time_ms is None:
        return None
    took = node.time_ms - parent.time_ms
    return took if 0 < took <= ACTIVE_GAP_MS else None


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The value at `fraction` of the sorted values, interpolated linearly; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    place = (len(ordered) - 1) * fraction
    low = int(place)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (place - low)


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 0.5)
