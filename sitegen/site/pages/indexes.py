"""The site's index pages: home (projects), one page per project, problems, stats and search."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from sitegen import __version__
from sitegen.fileio import remove_file, replace_file_if_changed
from sitegen.render.base.text import human_size
from sitegen.render.entries import UNKNOWN_USAGE, format_cost, format_time, format_tokens
from sitegen.render.header import duration_text, minute_text, short_model
from sitegen.render.navigation import path_html
from sitegen.render.templates import template_environment
from sitegen.site.pages.all_sessions import (
    ALL_SESSIONS_DATA,
    ALL_SESSIONS_PAGE,
    FIRST_ROWS,
    listing_order,
    session_index_script,
)
from sitegen.site.pages.analytics import Analytics, compute_analytics, compute_windows, windows_to
from sitegen.site.pages.stats import Stats, compute_stats, render_stats_page
from sitegen.site.state.jobs import NEWEST_FIRST
from sitegen.site.state.manifest import SiteManifest
from sitegen.site.state.records import SessionRecord

__all__ = [
    "RECENT_SESSIONS",
    "IndexWriter",
    "ProjectSummary",
    "PromptsSummary",
    "recent_sessions",
    "repaired_sessions",
    "summarise_projects",
]

# The home page lists this many of the newest sessions across all projects above the projects (the
# build renders them first).
RECENT_SESSIONS = NEWEST_FIRST


@dataclass(slots=True)
class ProjectSummary:
    slug: str
    name: str
    sessions: int = 0
    last: int | None = None
    tokens: int = 0
    cost: float = 0.0
    usage_known: bool = False  # a message of its sessions recorded its usage
    # Active in the 7 days up to the site's last day with activity (sitegen.site.pages.analytics.windows_to).
    active_week_ms: int = 0


@dataclass(slots=True)
class Totals:
    sessions: int = 0
    tokens: int = 0
    cost: float = 0.0
    last: int | None = None
    usage_known: bool = False
    week: str = ""  # the last of the 7 days the projects' active time is of (YYYY-MM-DD)


def summarise_projects(
    records: list[SessionRecord], stats: Stats | None = None, windows: list[Analytics] | None = None
) -> tuple[list[ProjectSummary], Totals]:
    """Per-project and overall figures, as the stats page counts them (`stats`: compute_stats(records),
    `windows`: compute_windows(records, windows_to(stats.last_day)), when already made); usage that
    /fork copied into several files counts once."""
    stats = stats if stats is not None else compute_stats(records)
    projects = {
        tally.key: ProjectSummary(
            tally.key, tally.name, tally.sessions, None, tally.tokens, tally.cost, usage_known=tally.usage_known
        )
        for tally in stats.projects
    }
    totals = Totals(
        sessions=len(records), tokens=stats.totals.tokens, cost=stats.totals.cost, usage_known=stats.totals.usage_known
    )
    week = windows[-1] if windows is not None else compute_analytics(records, windows_to(stats.last_day)[-1])
    if week.window.last is not None:
        totals.week = week.window.last
        for tally in week.projects:
            if tally.key in projects:
                projects[tally.key].active_week_ms = tally.ms
    for record in records:
        if record.modified_ms is not None:
            project = projects[record.project_slug]
            project.last = max(project.last or 0, record.modified_ms)
            totals.last = max(totals.last or 0, record.modified_ms)
    ordered = sorted(projects.values(), key=lambda p: (-(p.last or 0), p.name))
    return ordered, totals


def repaired_sessions(records: list[SessionRecord]) -> list[tuple[SessionRecord, str]]:
    """Sessions rendered after a repair the agents would not make, with one line saying which."""
    return [
        (record, f"{record.ids_chained} entries without an id, shown in file order")
        for record in sorted(records, key=lambda r: r.source)
        if record.ids_chained
    ]


def recent_sessions(records: list[SessionRecord], count: int = RECENT_SESSIONS) -> list[SessionRecord]:
    """The sessions with the newest activity, newest first (ties by key, so the order is stable)."""
    return sorted(records, key=lambda r: (-(r.modified_ms or 0), r.key))[:count]


def _duration(ms: int) -> str:
    return duration_text(ms) if ms > 0 else ""


@dataclass(slots=True)
class PromptsSummary:
    """What the index pages say of the prompt history (sitegen.site.prompts.page)."""

    count: int = 0
    latest: str = ""  # the newest prompt, one line
    problems: list[tuple[str, str]] = field(default_factory=list)  # (store, message)


class IndexWriter:
    """Renders the index pages into the site folder, each written to a temp name and renamed."""

    def __init__(self, site_dir: Path, assets: dict[str, str]) -> None:
        self.site_dir = site_dir
        self.assets = assets
        self.env = template_environment()
        self.env.globals.update(
            fmt_time=format_time,
            fmt_minute=minute_text,
            fmt_duration=_duration,
            fmt_size=human_size,
            fmt_tokens=format_tokens,
            fmt_cost=format_cost,
            unknown_usage=UNKNOWN_USAGE,
            short_model=short_model,
            path_html=lambda path: Markup(path_html(path)),
            version=__version__,
        )

    def _write(self, relative: str, html: str) -> list[str]:
        """The page, unless it is already there as it is: [relative] if written, else []."""
        return [relative] if replace_file_if_changed(self.site_dir / relative, html) else []

    def _render(self, template: str, root: str, problem_count: int, **context: object) -> str:
        return self.env.get_template(template).render(
            root=root, assets=self.assets, problem_count=problem_count, **context
        )

    def write_all_sessions(
        self, records: list[SessionRecord], names: dict[str, str], problem_count: int, first_rows: int = FIRST_ROWS
    ) -> list[str]:
        """The All sessions page and its data file (first: the page, the palette and the keys read it);
        `names`: project slug -> name; `first_rows`: rows the page carries itself."""
        written = self._write(ALL_SESSIONS_DATA, session_index_script(records, names))
        html = self._render(
            "all_sessions.html.j2",
            "",
            problem_count,
            sessions=listing_order(records),
            project_names=names,
            project_count=len({record.project_slug for record in records}),
            first_rows=first_rows,
            data=ALL_SESSIONS_DATA,
        )
        return written + self._write(ALL_SESSIONS_PAGE, html)

    def write_all(
        self,
        manifest: SiteManifest,
        touched_projects: set[str] | None,
        prompts: PromptsSummary | None = None,
        *,
        building: str = "",
    ) -> list[str]:
        """Home, problems, stats and the project pages (all, or only touched ones); stale ones removed.
        With `building` (a long build's progress in words, sitegen.site.pages.early), only the project pages
        and the home page, which shows it in a note: the rest waits for the build's end."""
        records = manifest.records()
        prompts = prompts or PromptsSummary()
        session_problems = manifest.problems()
        defects = manifest.defects()
        # Counted together in every page's navigation; listed apart on the problems page.
        problems = [*session_problems, *defects, *prompts.problems]
        stats = compute_stats(records)
        # All time, the last 30 and 7 days: the home page shows the last, the stats page all three.
        windows = compute_windows(records, windows_to(stats.last_day))
        projects, totals = summarise_projects(records, stats, windows)
        written: list[str] = []
        by_project: dict[str, list[SessionRecord]] = {}
        for record in records:
            by_project.setdefault(record.project_slug, []).append(record)
        shown = {p.slug: [p.name, p.sessions, p.last, p.tokens, p.cost, p.usage_known] for p in projects}
        for project in projects:
            unchanged = manifest.projects.get(project.slug) == shown[project.slug]
            if touched_projects is not None and project.slug not in touched_projects and unchanged and not building:
                continue
            sessions = sorted(by_project[project.slug], key=lambda r: (-(r.modified_ms or 0), r.key))
            html = self._render("project.html.j2", "../", len(problems), project=project, sessions=sessions)
            written += self._write(f"projects/{project.slug}.html", html)
        # Every page's navigation links the list of all sessions, written with the home page (in a long
        # build too), its data file first: the page, the palette and the session pages' keys read it.
        names = {p.slug: p.name for p in projects}
        written += self.write_all_sessions(records, names, len(problems))
        # After the project pages, which it links to: a build stopped in between links to none missing.
        home = self._render(
            "home.html.j2",
            "",
            len(problems),
            projects=projects,
            totals=totals,
            recent=recent_sessions(records),
            prompts=prompts,
            project_names=names,
            building=building,
            all_sessions=ALL_SESSIONS_PAGE,
        )
        written += self._write("index.html", home)
        if building:
            return written
        for relative, html in (
            (
                "problems.html",
                self._render(
                    "problems.html.j2",
                    "",
                    len(problems),
                    problems=session_problems,
                    defects=defects,
                    prompt_problems=prompts.problems,
                    repairs=repaired_sessions(records),
                ),
            ),
            ("search.html", self._render("search.html.j2", "", len(problems))),
            (
                "stats.html",
                render_stats_page(
                    self.env,
                    records,
                    root="",
                    assets=self.assets,
                    version=__version__,
                    problem_count=len(problems),
                    stats=stats,
                    windows=windows,
                ),
            ),
        ):
            written += self._write(relative, html)
        manifest.projects = shown
        live = {f"{p.slug}.html" for p in projects}
        folder = self.site_dir / "projects"
        if folder.is_dir():
            for page in folder.glob("*.html"):
                if page.name not in live:
                    remove_file(page)
        return written
