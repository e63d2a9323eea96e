"""`sitegen search` (every agent's sessions, from the terminal) and `sitegen doctor` (its SQLite, FTS5)."""

from __future__ import annotations

import os
import re
import sys
from datetime import datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sitegen.cli.common import AgentDirOption, OdekDirOption, check_given_dirs, fail, user_errors
from sitegen.cli.text import json_line, visible

if TYPE_CHECKING:
    from sitegen.site.search.sessions_db import Hit, Query

__all__ = ["doctor_command", "search_command"]

SNIPPET_BEFORE = 60
SNIPPET_LENGTH = 240
# Marks around matched words: reverse video on a terminal, nothing in a pipe (--json never marks).
_MARK = ("\x1b[1;33m", "\x1b[0m")
_RUN = re.compile(r"[^\W_]+")


def _date_ms(value: str, option: str, *, end: bool) -> int:
    """A --since/--until value (2026-05-01, or a date and time) in local time, as milliseconds; a
    bare date means the start of that day for --since, and its end for --until."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM)", param_hint=option
        ) from None
    if end and len(value) <= 10:
        moment = datetime.combine(moment.date(), time.max)
    elif len(value) <= 10:
        moment = datetime.combine(moment.date(), time.min)
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return int(moment.timestamp() * 1000)


def _matches(text: str, terms: list[str], last_is_prefix: bool) -> list[tuple[int, int]]:
    """Where the query's terms are in text as written: whole runs (the last may be a prefix), and CJK
    terms anywhere."""
    spans = []
    cjk = [t for t in terms if _has_cjk(t)]
    plain = [t for t in terms if t not in cjk]
    for run in _RUN.finditer(text):
        lowered = run.group().lower()
        for number, term in enumerate(plain):
            prefix = last_is_prefix and number == len(plain) - 1 and term == terms[-1]
            if lowered == term or (prefix and lowered.startswith(term)):
                spans.append(run.span())
                break
    for term in cjk:
        start = text.find(term)
        while start >= 0:
            spans.append((start, start + len(term)))
            start = text.find(term, start + len(term))
    return sorted(set(spans))


def _has_cjk(term: str) -> bool:
    from sitegen.site.search.fts import has_cjk

    return has_cjk(term)


def snippet(text: str, terms: list[str], last_is_prefix: bool, colour: bool) -> str:
    """About SNIPPET_LENGTH characters of text around its first match, whitespace collapsed, words marked."""
    flat = " ".join(text.split())
    spans = _matches(flat, terms, last_is_prefix)
    start = max(0, spans[0][0] - SNIPPET_BEFORE) if spans else 0
    end = min(len(flat), start + SNIPPET_LENGTH)
    out = ["…" if start else ""]
    cursor = start
    for low, high in spans:
        if low < cursor or high > end:
            continue
        out.append(visible(flat[cursor:low]))
        word = visible(flat[low:high])
        out.append(f"{_MARK[0]}{word}{_MARK[1]}" if colour else word)
        cursor = high
    out.append(visible(flat[cursor:end]))
    out.append("…" if end < len(flat) else "")
    return "".join(out)


def _when(time_ms: int | None) -> str:
    if time_ms is None:
        return "(no time)"
    return datetime.fromtimestamp(time_ms / 1000).astimezone().strftime("%Y-%m-%d %H:%M")


@user_errors
def search_command(
    words: Annotated[
        list[str],
        typer.Argument(
            help="Words every result holds (any order, case-insensitive; the last may be a prefix).", show_default=False
        ),
    ],
    project: Annotated[Path | None, typer.Option("--project", help="Only sessions of this folder or below it.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only entries from this date on (YYYY-MM-DD).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Only entries up to this date (YYYY-MM-DD).")] = None,
    role: Annotated[
        str | None, typer.Option("--role", help="Only this role: user, assistant, thinking or tool.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Only entries of a model whose name holds this.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many results.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line, one per result.")] = False,
    site: Annotated[
        Path, typer.Option("--site", help="The site whose pages results link to (url), when it exists.")
    ] = Path("site"),
    agent_dir: AgentDirOption = None,
    odek_dir: OdekDirOption = None,
) -> None:
    """Search every session of every agent, best match first (an index in the cache folder, kept current)."""
    from sitegen.site.search.sessions_db import ROLES, Query

    if role is not None and role not in ROLES:
        raise typer.BadParameter(f"{role!r} is not one of {', '.join(ROLES)}", param_hint="--role")
    from sitegen.site.search.fts import query_terms

    text = " ".join(words)
    terms = list(dict.fromkeys(query_terms(text)))
    if not terms:
        raise typer.BadParameter(f"{text!r} has no word to search for (two letters or digits, or one CJK character)")
    check_given_dirs(agent_dir, odek_dir)
    query = Query(
        terms=terms,
        last_is_prefix=bool(_RUN.search(text[-1:])),
        project=os.path.abspath(project.expanduser()) if project is not None else None,
        since_ms=_date_ms(since, "--since", end=False) if since else None,
        until_ms=_date_ms(until, "--until", end=True) if until else None,
        role=role,
        model=model,
        limit=limit,
    )
    hits, urls = _run(query, agent_dir or [], odek_dir or [], site)
    colour = not as_json and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    out = sys.stdout
    for hit in hits:
        page = urls.get(hit.session)
        url = (site.resolve() / page).as_uri() + f"#entry-{hit.entry}" if page else None
        shown = snippet(hit.text, terms, query.last_is_prefix, colour)
        if as_json:
            out.write(json_line({**hit.to_json(), "snippet": shown, "url": url}) + "\n")
            continue
        head = f"{hit.title}  ·  {hit.project or '?'}  ·  {_when(hit.time_ms)}  ·  {hit.role}"
        lines = [visible(head), f"  {shown}", f"  {visible(url or hit.session)}"]
        out.write("\n".join(lines) + "\n\n")
    if not hits:
        if not as_json:
            typer.echo("No entries match.", err=True)
        raise typer.Exit(1)


def _run(query: Query, agent_dirs: list[Path], odek_dirs: list[Path], site: Path) -> tuple[list[Hit], dict[str, str]]:
    """Bring the index up to date and query it; a database found damaged on the way is made again once."""
    import sqlite3

    try:
        return _query(query, agent_dirs, odek_dirs), _page_urls(site)
    except sqlite3.DatabaseError as error:
        from sitegen.site.search.fts import is_damage, remove_database

        if not is_damage(error):
            raise

        path = _database()
        typer.echo(f"warning: search database {visible(str(path))} is damaged ({error}): rebuilding it", err=True)
        remove_database(path)
        return _query(query, agent_dirs, odek_dirs), _page_urls(site)


def _page_urls(site: Path) -> dict[str, str]:
    from sitegen.site.search.sessions_db import page_urls

    return page_urls(site)


def _database() -> Path:
    from sitegen.resources import cache_folder
    from sitegen.site.search.sessions_db import DB_NAME

    folder = cache_folder("search")
    if folder is None:
        raise fail("The cache folder ($XDG_CACHE_HOME or ~/.cache) cannot be written: search keeps its index there")
    return folder / DB_NAME


def _query(query: Query, agent_dirs: list[Path], odek_dirs: list[Path]) -> list[Hit]:
    from sitegen.odek.store import default_odek_dirs
    from sitegen.session.discover import agent_dirs as all_agent_dirs
    from sitegen.session.discover import given_dirs
    from sitegen.site.search.sessions_db import open_index, search, sync
    from sitegen.site.state.sources import find_sources
    from sitegen.transcript.load import load_transcript

    pi_dirs = all_agent_dirs(given_dirs([p.expanduser() for p in agent_dirs]))
    stores = default_odek_dirs(given_dirs([p.expanduser() for p in odek_dirs]))
    db = open_index(_database(), lambda line: typer.echo(f"warning: {visible(line)}", err=True))
    try:
        report = sync(db, find_sources(pi_dirs, stores), lambda path: load_transcript(path, pi_dirs))
        for problem in report.unreadable or []:
            typer.echo(f"warning: skipped {visible(problem)}", err=True)
        return search(db, query)
    finally:
        db.close()


@user_errors
def doctor_command() -> None:
    """Say which Python, SQLite and FTS5 sitegen runs with, and where search keeps its index."""
    import platform

    from sitegen import __version__
    from sitegen.resources import cache_folder
    from sitegen.site.search.fts import FIX, fts5_status

    version, fts5 = fts5_status()
    typer.echo(f"sitegen {__version__}")
    typer.echo(f"Python {platform.python_version()} ({sys.executable})")
    typer.echo(f"SQLite {version}, FTS5 {'available' if fts5 else 'missing'}")
    folder = cache_folder("search")
    typer.echo(f"search index: {folder / 'search.db' if folder is not None else 'no writable cache folder'}")
    if not fts5:
        typer.echo(f"Search needs FTS5: {FIX}", err=True)
        raise typer.Exit(1)
