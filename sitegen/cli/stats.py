"""`sitegen stats`: per model and per tool figures on the terminal, or as one JSON document."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from sitegen.cli.text import json_text, visible

__all__ = ["stats_command"]


def _day(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)", param_hint=option) from None


def _number(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[n]) for row in [header, *rows]) for n in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return lines


def _text(report: dict[str, Any]) -> str:
    """The report as two aligned tables and a line of totals."""
    totals = report["totals"]
    since, until = report["since"], report["until"]
    span = f"{since or 'the start'} to {until or 'the end'}" if since or until else "all time"
    active = totals["active_seconds"] / 3600
    lines = [
        f"{report['sessions']:,} sessions, {span}: {_number(totals['cost'], 2)} dollars, "
        f"{active:,.1f} h active (gaps of at most 10 minutes between entries count)",
        "",
    ]
    models = [
        [
            m["model"],
            _number(m["messages"]),
            _number(m["input"]),
            _number(m["output"]),
            _number(m["cache_read"]),
            _number(m["cache_write"]),
            _number(m["cost"], 4),
            _number(None if m["cache_hit_rate"] is None else m["cache_hit_rate"] * 100, 1),
            _number(m["output_tokens_per_second"], 1),
        ]
        for m in report["models"]
    ]
    lines += _table(
        ["model", "messages", "input", "output", "cache read", "cache write", "cost", "cache %", "out tok/s"], models
    )
    tools = [
        [
            t["tool"],
            _number(t["calls"]),
            _number(t["failures"]),
            _number(None if t["failure_rate"] is None else t["failure_rate"] * 100, 1),
            _number(t["median_seconds"], 2),
            _number(t["p95_seconds"], 2),
        ]
        for t in report["tools"]
    ]
    lines += ["", *_table(["tool", "calls", "failures", "failed %", "median s", "p95 s"], tools)]
    return "\n".join(visible(line) for line in lines)


def stats_command(
    project: Annotated[
        Path | None, typer.Option("--project", help="Only sessions whose directory is this folder or below it.")
    ] = None,
    since: Annotated[str | None, typer.Option("--since", help="From this UTC day (YYYY-MM-DD), included.")] = None,
    until: Annotated[str | None, typer.Option("--until", help="To this UTC day (YYYY-MM-DD), included.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON document: models, tools, projects, totals.")
    ] = False,
    agent_dir: Annotated[
        list[Path] | None,
        typer.Option("--agent-dir", help="An agent dir to read besides ~/.pi/agent, ~/.omp/agent, ~/.xcsh/agent."),
    ] = None,
    odek_dir: Annotated[
        list[Path] | None, typer.Option("--odek-dir", help="An odek session store besides ~/.odek/sessions.")
    ] = None,
) -> None:
    """Tokens, cost and speed per model, calls, failures and durations per tool, as the stats page."""
    from sitegen.odek.store import default_odek_dirs
    from sitegen.session.discover import agent_dirs
    from sitegen.site.stats_report import read_records, stats_report

    first, last = _day(since, "--since"), _day(until, "--until")
    for option, given in (("--agent-dir", agent_dir), ("--odek-dir", odek_dir)):
        for given_dir in given or []:
            if not given_dir.expanduser().is_dir():
                typer.echo(visible(f"Not a folder: {option} {given_dir}"), err=True)
                raise typer.Exit(1)
    pi_dirs = agent_dirs([p.expanduser() for p in agent_dir or []])
    records, problems = read_records(pi_dirs, default_odek_dirs(odek_dir or []))
    for problem in problems:
        typer.echo(visible(f"warning: {problem}"), err=True)
    folder: Path | None = project.expanduser().resolve() if project is not None else None
    report = stats_report(records, project=folder, since=first, until=last)
    typer.echo(json_text(report) if as_json else _text(report))
