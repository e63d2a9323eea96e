"""`sitegen stats`: the stats page's figures per model and per tool, read straight from the session files."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePath
from typing import Any

from sitegen.errors import SitegenError
from sitegen.site.build.worker import session_record
from sitegen.site.pages.analytics import Window, compute_analytics
from sitegen.site.pages.stats import Tally, compute_stats
from sitegen.site.state.jobs import RenderJob
from sitegen.site.state.records import SessionRecord
from sitegen.site.state.sources import find_sources, is_utf8_path, project_slug, unique_key
from sitegen.transcript.load import load_transcript

__all__ = ["StatsReport", "read_records", "stats_report"]


@dataclass(slots=True)
class StatsReport:
    """The figures as one JSON-ready document, and the files that could not be read."""

    document: dict[str, Any]
    problems: list[str]


def read_records(
    pi_dirs: list[Path], odek_dirs: list[Path], *, use_env: bool = True
) -> tuple[list[SessionRecord], list[str]]:
    """A record per readable session, as the build makes them; and `path: reason` per unreadable one."""
    records: list[SessionRecord] = []
    problems: list[str] = []
    taken: set[str] = set()
    for source in find_sources(pi_dirs, odek_dirs, use_env=use_env):
        if source.problem is not None or not is_utf8_path(source.path):
            continue
        try:
            transcript = load_transcript(source.path, pi_dirs)
        except (SitegenError, OSError, ValueError) as error:
            problems.append(f"{source.path}: {error}")
            continue
        key = unique_key(source.path, taken)
        taken.add(key)
        project = transcript.cwd or ("odek" if transcript.family == "odek" else "")
        job = RenderJob(str(source.path), source.family, key, project_slug(project), "", "", {})
        records.append(session_record(job, transcript, {}))
    return records, problems


def _within(project: str, folder: PurePath) -> bool:
    if not project:
        return False
    path = PurePath(project)
    return path == folder or folder in path.parents


def _known(tally: Tally, value: float) -> Any:
    """A usage figure, or None when no session of it recorded usage (odek records none); a /fork copy
    whose usage counts in its original's is known (0), as the stats page says."""
    return value if tally.usage_known else None


def _model_row(tally: Tally, speed: float | None) -> dict[str, Any]:
    return {
        "model": tally.name,
        "sessions": tally.sessions,
        "messages": _known(tally, tally.messages),
        "input": _known(tally, tally.input),
        "output": _known(tally, tally.output),
        "cache_read": _known(tally, tally.cache_read),
        "cache_write": _known(tally, tally.cache_write),
        "cost": _known(tally, round(tally.cost, 6)),
        "cache_hit_rate": tally.cache_hit_rate,
        "output_tokens_per_second": speed,
    }


def stats_report(
    records: Sequence[SessionRecord],
    *,
    project: Path | None = None,
    since: date | None = None,
    until: date | None = None,
) -> dict[str, Any]:
    """Per model and per tool, with totals and active time, of the sessions of `project` (and below)
    between `since` and `until` (UTC days, both included)."""
    if since is not None and until is not None and since > until:
        raise SitegenError(f"--since {since.isoformat()} is after --until {until.isoformat()}")
    chosen: Iterable[SessionRecord] = records
    if project is not None:
        folder = PurePath(project)
        chosen = [r for r in records if _within(r.project, folder)]
    chosen = list(chosen)
    window = Window(
        "range", "range", since.isoformat() if since is not None else None, until.isoformat() if until else None
    )
    stats = compute_stats(chosen, window)
    analytics = compute_analytics(chosen, window)
    totals = stats.totals
    return {
        "since": window.first,
        "until": window.last,
        "project": str(project) if project is not None else None,
        "sessions": totals.sessions,
        "totals": {**_model_row(totals, None), "model": None, "active_seconds": analytics.active.ms / 1000},
        "models": [_model_row(m, _speed(analytics.model_speed, m.name)) for m in stats.models],
        "tools": [tool.as_json() for tool in analytics.tools],
        "projects": [
            {"project": p.name, "active_seconds": p.ms / 1000, "days": len(p.days)} for p in analytics.projects
        ],
        "active_rule": "time between consecutive entries counts as active up to a gap of 10 minutes",
    }


def _speed(speeds: dict[str, Any], model: str) -> float | None:
    tally = speeds.get(model)
    value = tally.tokens_per_second if tally is not None else None
    return round(value, 3) if value is not None else None
