"""SVG bar charts drawn at build time: values over days (bucketed by week, month or year) and per category."""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from markupsafe import Markup, escape

__all__ = [
    "MAX_BARS",
    "PHONE_WIDTH",
    "Category",
    "Period",
    "bucket_values",
    "category_chart",
    "period_index",
    "periods_for",
    "text_width",
    "time_chart",
]

MAX_BARS = 120
# The narrowest a chart is drawn: a 390 px phone less the page's margins.
PHONE_WIDTH = 358
# English month names, not strftime("%b"): the output must not depend on the build machine's locale.
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Characters XML 1.0 forbids; session text can carry them and one would make the SVG unparsable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_SVG_NS = "http://www.w3.org/2000/svg"

Format = Callable[[float], str]


@dataclass(frozen=True, slots=True)
class Period:
    """One bar of a time chart: a day, an ISO week (from Monday), a month or a year; `end` is inclusive."""

    start: date
    end: date
    grain: str  # "day", "week", "month" or "year"

    @property
    def label(self) -> str:
        if self.grain == "day":
            return self.start.isoformat()
        if self.grain == "week":
            return f"week of {self.start.isoformat()}"
        if self.grain == "month":
            return f"{self.start.year:04d}-{self.start.month:02d}"
        return f"{self.start.year:04d}"


@dataclass(frozen=True, slots=True)
class Category:
    """One bar of a category chart; `href` makes the row a link (a project page, say)."""

    label: str
    value: float
    href: str | None = None


def _month_start(day: date, months_later: int = 0) -> date:
    index = day.year * 12 + day.month - 1 + months_later
    return date(index // 12, index % 12 + 1, 1)


def periods_for(first: date, last: date, max_bars: int = MAX_BARS) -> list[Period]:
    """Every period from `first` to `last`, empty ones included, in the finest grain that fits `max_bars`."""
    if last < first:
        return []
    days = (last - first).days + 1
    if days <= max_bars:
        return [Period(first + timedelta(n), first + timedelta(n), "day") for n in range(days)]
    monday = first - timedelta(first.weekday())
    weeks = (last - monday).days // 7 + 1
    if weeks <= max_bars:
        return [Period(monday + timedelta(7 * n), monday + timedelta(7 * n + 6), "week") for n in range(weeks)]
    months = (last.year - first.year) * 12 + last.month - first.month + 1
    if months <= max_bars:
        starts = [_month_start(first, n) for n in range(months + 1)]
        return [Period(starts[n], starts[n + 1] - timedelta(1), "month") for n in range(months)]
    return [Period(date(year, 1, 1), date(year, 12, 31), "year") for year in range(first.year, last.year + 1)]


def period_index(periods: Sequence[Period], day: date) -> int | None:
    """The position of the period that holds `day`, or None when it is outside them all."""
    position = bisect_right([p.start for p in periods], day) - 1
    if position < 0 or day > periods[position].end:
        return None
    return position


def bucket_values(periods: Sequence[Period], values: Mapping[date, float]) -> list[float]:
    """Sum per-day values into the periods; days outside every period are left out."""
    sums = [0.0] * len(periods)
    for day, value in values.items():
        position = period_index(periods, day)
        if position is not None:
            sums[position] += value
    return sums


def _e(text: object) -> str:
    """Escaped for both HTML and XML: quotes included, and characters XML cannot hold replaced."""
    return str(escape(_NOT_XML.sub("\ufffd", str(text))))


def _n(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros, the same on every machine."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _nice_ticks(top: float, integer: bool, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least `top`: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if integer:
        step = max(1.0, math.ceil(step))
    steps = math.ceil(round(top / step, 9))
    return [round(step * n, 10) for n in range(steps + 1)]


# Advance widths at 12 px of DejaVu Sans, the widest of the usual UI fonts, so a label measured here is never
# wider in the browser; characters not listed count as wide.
_NARROW = dict.fromkeys(" ,.:;'|!ilIjJ", 4.0) | dict.fromkeys("()[]-/\\ftr", 4.8)
_WIDE = dict.fromkeys("mwMW@%#&+<=>~^", 12.0) | {"…": 12.0}


def text_width(text: str) -> float:
    """About how wide `text` is at 12 px in the site's sans-serif font, rounded up."""
    width = 0.0
    for char in text:
        if char in _NARROW:
            width += _NARROW[char]
        elif char in _WIDE:
            width += _WIDE[char]
        elif char.isascii() or (char.isalpha() and ord(char) < 0x2E80):
            width += 9.5 if char.isupper() else 7.7
        else:  # CJK and other full-width characters
            width += 12.0
    return width * 1.04


def _shorten(label: str, width: float) -> str:
    """Fit a label in `width` pixels; paths keep their end, where the project's name is."""
    # No character is narrower than 4 px: a longer text cannot fit, and trying each cut from the
    # label's length down made a 60,000-character model name cost minutes (a cut ending in spaces
    # that rstrip() removes gives the same text at this bound).
    longest = int(width / (min(_NARROW.values()) * 1.04)) + 1
    if len(label) <= longest and text_width(label) <= width:
        return label
    keep_end = "/" in label or "\\" in label
    longest = min(len(label) - 1, longest)
    for cut in range(longest, 0, -1):
        short = "…" + label[-cut:] if keep_end else label[:cut].rstrip() + "…"
        if text_width(short) <= width:
            return short
    return "…"


def _svg_open(kind: str, height: int, label: str) -> str:
    """No viewBox: the chart is as wide as its figure and its text stays 12 px at any width, so a phone
    shows every label whole; x positions are percentages of the width, y positions pixels."""
    return (
        f'<svg xmlns="{_SVG_NS}" class="chart {kind}" width="100%" height="{height}" role="img" '
        f'aria-label="{_e(label)}"><title>{_e(label)}</title>'
    )


def _tick_labels(periods: Sequence[Period]) -> list[int]:
    """Which periods get an x-axis label: calendar boundaries, thinned to about ten."""
    grain = periods[0].grain
    count = len(periods)
    if (grain == "day" and count <= 16) or grain == "year" or (grain == "month" and count <= 12):
        chosen = list(range(count))
    elif grain == "day" and count <= 62:
        chosen = [n for n, p in enumerate(periods) if p.start.weekday() == 0]
    elif grain in ("day", "week"):
        # The period holding the first of a month.
        chosen = [n for n, p in enumerate(periods) if p.start.day == 1 or p.end.month != p.start.month]
    elif count <= 36:
        chosen = [n for n, p in enumerate(periods) if p.start.month in (1, 4, 7, 10)]
    else:
        chosen = [n for n, p in enumerate(periods) if p.start.month == 1]
    chosen = chosen or [0]
    # At most seven, so they stay apart on a phone's width.
    stride = math.ceil(len(chosen) / 7)
    return chosen[::stride]


def _tick_text(period: Period, last_year: int | None) -> tuple[str, str, int]:
    """Two lines under a bar, the day or month and then the year where it is new; and that year."""
    start = period.start
    if period.grain == "year":
        return f"{start.year}", "", start.year
    holds_first = start.day == 1 or period.end.month != start.month
    if period.grain == "week" and holds_first:
        # A week that holds the first of a month stands for that month.
        start = _month_start(period.end)
        first = _MONTHS[start.month - 1]
    elif period.grain == "month":
        first = _MONTHS[start.month - 1]
    else:
        first = f"{_MONTHS[start.month - 1]} {start.day}"
    return first, ("" if start.year == last_year else f"{start.year}"), start.year


def _empty(kind: str, height: int, label: str) -> Markup:
    return Markup(
        _svg_open(kind, height, f"{label}: no data")
        + f'<text class="chart-empty" x="50%" y="{height // 2}" text-anchor="middle">No data</text></svg>'
    )


def _pc(value: float) -> str:
    return _n(value) + "%"


def time_chart(
    periods: Sequence[Period],
    values: Sequence[float],
    *,
    label: str,
    fmt: Format,
    tip: Format | None = None,
    integer: bool = False,
    height: int = 200,
) -> Markup:
    """A vertical bar per period; empty periods leave a gap. `fmt` writes axis values, `tip` (else `fmt`) tooltips.

    The y axis's values sit at the left above their gridlines where no bar covers them."""
    if len(periods) != len(values):
        raise ValueError("time_chart needs one value per period")
    if not periods or not any(v > 0 for v in values):
        return _empty("chart-time", height, label)
    top, bottom = 18, 40
    plot_h = height - top - bottom
    ticks = _nice_ticks(max(values), integer)
    scale = plot_h / ticks[-1]
    slot = 100 / len(periods)
    gap = min(slot * 0.2, 0.8)
    tip = tip or fmt
    peak = max(range(len(values)), key=lambda n: (values[n], -n))
    summary = (
        f"{label}, {periods[0].label} to {periods[-1].label}, by {periods[0].grain}: "
        f"highest {tip(values[peak])} ({periods[peak].label})"
    )
    parts = [_svg_open("chart-time", height, summary), '<g class="chart-gridlines">']
    base = top + plot_h
    for tick in ticks:
        y = base - tick * scale
        parts.append(f'<line x1="0" x2="100%" y1="{_n(y)}" y2="{_n(y)}"/>')
    parts.append('</g><g class="chart-bars">')
    for n, (period, value) in enumerate(zip(periods, values, strict=True)):
        if value <= 0:
            continue
        # A small but real value still shows as a sliver, unlike an empty day.
        bar_h = max(value * scale, 1.0)
        parts.append(
            f'<rect class="chart-bar" x="{_pc(slot * n + gap / 2)}" y="{_n(base - bar_h)}" '
            f'width="{_pc(slot - gap)}" height="{_n(bar_h)}">'
            f"<title>{_e(period.label)}: {_e(tip(value))}</title></rect>"
        )
    parts.append(
        f'</g><line class="chart-axis" x1="0" x2="100%" y1="{base}" y2="{base}"/><g class="chart-axis-labels">'
    )
    # A value sits above its gridline at the left edge; one a bar there would cover is left out (the top one
    # never is: no bar is taller than the top gridline). The left edge is 13% of a phone's chart.
    edge = [v for n, v in enumerate(values) if slot * n < 13]
    for tick in ticks:
        y = base - tick * scale
        if tick == ticks[-1] or max(edge) * scale < (base - y) - 16:
            parts.append(f'<text class="chart-y" x="0" y="{_n(y - 4)}">{_e(fmt(tick))}</text>')
    last_year: int | None = None
    for n in _tick_labels(periods):
        # Labels at the edges are anchored inside the chart rather than centred past its border.
        x, anchor = slot * (n + 0.5), "middle"
        if x < 8:
            x, anchor = slot * n, "start"
        elif x > 92:
            x, anchor = slot * (n + 1), "end"
        line1, line2, last_year = _tick_text(periods[n], last_year)
        text = f'<text x="{_pc(x)}" y="{base + 15}" text-anchor="{anchor}">{_e(line1)}'
        if line2:
            text += f'<tspan x="{_pc(x)}" dy="13">{_e(line2)}</tspan>'
        parts.append(text + "</text>")
    parts.append("</g></svg>")
    return Markup("".join(parts))


def _top(items: Sequence[Category], limit: int) -> tuple[list[Category], Category | None]:
    """The `limit` largest categories, or `limit - 1` and one bar for the rest."""
    ordered = sorted(items, key=lambda c: (-c.value, c.label))
    if len(ordered) <= limit:
        return ordered, None
    kept, rest = ordered[: limit - 1], ordered[limit - 1 :]
    return kept, Category(f"{len(rest)} others", sum(c.value for c in rest))


def category_chart(
    items: Sequence[Category],
    *,
    label: str,
    fmt: Format,
    tip: Format | None = None,
    limit: int = 10,
) -> Markup:
    """One horizontal bar per category, largest first; past `limit` the smallest share one "others" bar.

    Each row is its label with the value at the right end, and the bar under them, so a label has the
    chart's whole width and is cut (with "…", whole in the tooltip) only where a phone could not show it.
    `fmt` writes the value, `tip` (else `fmt`) the value in its tooltip."""
    tip = tip or fmt
    kept, other = _top(items, max(limit, 2))
    rows = [*kept, *([other] if other else [])]
    row_h, bar_h, pad = 34, 10, 4
    height = pad * 2 + row_h * max(len(rows), 1)
    if not rows or not any(c.value > 0 for c in rows):
        return _empty("chart-categories", height, label)
    peak = max(c.value for c in rows)
    # Room for a label beside the widest value on a 360 px wide chart, the narrowest a phone gives it.
    room = max(120.0, PHONE_WIDTH - max(text_width(fmt(c.value)) for c in rows) - 16)
    summary = f"{label}: " + ", ".join(f"{c.label} {tip(c.value)}" for c in rows)
    parts = [_svg_open("chart-categories", height, summary)]
    for n, category in enumerate(rows):
        y = pad + row_h * n
        width = category.value / peak * 100 if category.value > 0 else 0.0
        if category.value > 0:
            width = max(width, 0.4)
        classes = "chart-bar chart-other" if category is other else "chart-bar"
        row = (
            f'<g class="chart-row"><title>{_e(category.label)}: {_e(tip(category.value))}</title>'
            f'<text class="chart-label" x="0" y="{y + 13}">{_e(_shorten(category.label, room))}</text>'
            f'<text class="chart-value" x="100%" y="{y + 13}" text-anchor="end">{_e(fmt(category.value))}</text>'
            f'<rect class="{classes}" x="0" y="{y + 18}" width="{_pc(width)}" height="{bar_h}" rx="2"/></g>'
        )
        if category.href:
            row = f'<a href="{_e(category.href)}">{row}</a>'
        parts.append(row)
    parts.append("</svg>")
    return Markup("".join(parts))
