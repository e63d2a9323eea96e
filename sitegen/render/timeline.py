"""A session's timeline: one SVG strip over its wall-clock time: model turns, tool calls, subagents, idle gaps."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress
from operator import attrgetter, lt, sub

from markupsafe import Markup, escape

from sitegen.render.cards import took_text
from sitegen.render.header import duration_text
from sitegen.transcript.activity import ACTIVE_GAP_MS, call_duration, generation_ms
from sitegen.transcript.model import Node, Transcript

__all__ = ["LANES", "MAX_SPANS", "Span", "timeline_spans", "timeline_svg"]

# Top to bottom; each lane's spans share a class (and a colour).
LANES = ("model", "tools", "subagents", "idle")
# Past this many spans in a lane, neighbours closer than a pixel of a wide screen are drawn as one.
MAX_SPANS = 1500
_SUBAGENT_TOOLS = frozenset({"task", "agent", "subagent", "spawn_agent"})
_TOOL_KINDS = {"bash": "bash", "shell": "bash", "read": "read", "edit": "edit", "write": "write"}
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_LANE_H, _GAP, _AXIS = 12, 3, 16


@dataclass(slots=True)
class Span:
    lane: str
    kind: str  # a CSS class: model, bash, read, edit, write, tool, subagent, idle
    start: int
    end: int
    what: str  # what took the time: the model, the tool ("bash (failed)"), "idle"
    target: str  # entry id the span links to
    count: int = 1  # spans drawn as this one (_thinned)

    @property
    def title(self) -> str:
        """What took how long ("bash · 3.0 s", "idle · 25 min"), or how many spans this one stands for.
        Made when drawn: a long session's spans are mostly merged, and their own titles never shown."""
        if self.count > 1:
            return f"{self.count} spans · from {_clock(self.start, False)}"
        took = self.end - self.start
        return f"{self.what} · {duration_text(took) if self.lane == 'idle' else took_text(took)}"


def _e(text: str) -> str:
    return str(escape(_NOT_XML.sub("\ufffd", text)))


def _clock(ms: int, with_day: bool) -> str:
    moment = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%d %H:%M" if with_day else "%H:%M", moment)


def _call_spans(node: Node, transcript: Transcript) -> list[Span]:
    spans: list[Span] = []
    start = node.time_ms
    if start is None:
        return spans
    for part in node.parts:  # not node.tool_calls, which makes a list per message
        call = part.call
        if call is None:
            continue
        result = call.result
        took = call_duration(transcript, node, result)
        if result is None or took is None:
            continue
        name = call.name or "tool"
        subagent = name.lower() in _SUBAGENT_TOOLS
        kind = "subagent" if subagent else _TOOL_KINDS.get(name.lower(), "tool")
        what = f"{name} (failed)" if result.is_error else name
        spans.append(Span("subagents" if subagent else "tools", kind, start, start + took, what, result.node_id))
    return spans


def timeline_spans(transcript: Transcript, nodes: Sequence[Node]) -> list[Span]:
    """The spans of the given nodes (a branch, in order): the model writing each assistant message, each
    tool call from its message to its result, and each gap between entries longer than ACTIVE_GAP_MS."""
    spans: list[Span] = []
    times: list[tuple[int, str]] = []
    for node in nodes:
        if node.time_ms is not None:
            times.append((node.time_ms, node.id))
        if node.kind == "assistant" and node.time_ms is not None:
            took = generation_ms(transcript, node)
            if took is not None:
                spans.append(Span("model", "model", node.time_ms - took, node.time_ms, node.model or "model", node.id))
            spans.extend(_call_spans(node, transcript))
    times.sort()
    moments = [moment for moment, _ in times]
    # The gaps are measured and compared in C (a long branch has tens of thousands): the few that are
    # idle come back as their places in times.
    idle = compress(range(1, len(moments)), map(partial(lt, ACTIVE_GAP_MS), map(sub, moments[1:], moments)))
    for at in idle:
        before, (after, entry) = moments[at - 1], times[at]
        spans.append(Span("idle", "idle", before, after, "idle", entry))
    return spans


def _by_lane(spans: list[Span]) -> dict[str, list[Span]]:
    """The spans of each lane that has any, in LANES order, each lane's in their order."""
    lanes: dict[str, list[Span]] = {lane: [] for lane in LANES}
    for span in spans:
        lanes[span.lane].append(span)
    return {lane: mine for lane, mine in lanes.items() if mine}


_START_END = attrgetter("start", "end")


def _thinned(lanes: dict[str, list[Span]], total: int) -> list[Span]:
    """At most about MAX_SPANS per lane: neighbours less than a 1,500th of the strip apart are merged."""
    out: list[Span] = []
    for spans in lanes.values():
        mine = sorted(spans, key=_START_END)
        if len(mine) <= MAX_SPANS:
            out.extend(mine)
            continue
        reach = total / MAX_SPANS
        merged: list[Span] = []
        last: Span | None = None
        for span in mine:
            if last is not None and span.start - last.end <= reach and span.end - last.start <= reach * 4:
                last.end = max(last.end, span.end)
                last.count += 1
                last.kind = last.kind if last.kind == span.kind else "tool"
            else:
                last = Span(span.lane, span.kind, span.start, span.end, span.what, span.target)
                merged.append(last)
        out.extend(merged)
    return out


def _pc(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return (text if text != "-0" else "0") + "%"


def timeline_svg(transcript: Transcript, nodes: Sequence[Node]) -> Markup | None:
    """The strip, drawn from its spans (never one element per entry); None when the branch has no times."""
    spans = timeline_spans(transcript, nodes)
    moments = [node.time_ms for node in nodes if node.time_ms is not None]
    if not spans or len(moments) < 2:
        return None
    first, last = min(moments), max(moments)
    total = last - first
    if total <= 0:
        return None
    lanes = _by_lane(spans)
    used = list(lanes)
    row = {lane: n for n, lane in enumerate(used)}
    height = len(used) * (_LANE_H + _GAP) + _AXIS + 2
    label = (
        f"Timeline of the shown branch, {_clock(first, True)} to {_clock(last, True)} UTC ({duration_text(total)}): "
        + ", ".join(f"{sum(s.count for s in lanes[lane])} {lane} spans" for lane in used)
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline-strip" width="100%" height="{height}" '
        f'role="img" aria-label="{_e(label)}"><title>{_e(label)}</title>'
    ]
    for lane in used:
        y = row[lane] * (_LANE_H + _GAP)
        parts.append(f'<rect class="lane" x="0" y="{y}" width="100%" height="{_LANE_H}"/>')
    for span in _thinned(lanes, total):
        x = (span.start - first) / total * 100
        width = max((span.end - span.start) / total * 100, 0.15)
        y = row[span.lane] * (_LANE_H + _GAP)
        parts.append(
            f'<a href="#entry-{_e(span.target)}"><rect class="span span-{span.kind}" x="{_pc(min(x, 99.85))}" '
            f'y="{y}" width="{_pc(width)}" height="{_LANE_H}"><title>{_e(span.title)}</title></rect></a>'
        )
    base = len(used) * (_LANE_H + _GAP) + _AXIS - 4
    many_days = time.gmtime(first // 1000)[:3] != time.gmtime(last // 1000)[:3]
    parts.append(
        f'<text x="0" y="{base}">{_clock(first, many_days)}</text>'
        f'<text x="50%" y="{base}" text-anchor="middle">{_e(duration_text(total))}</text>'
        f'<text x="100%" y="{base}" text-anchor="end">{_clock(last, many_days)} UTC</text></svg>'
    )
    return Markup("".join(parts))
