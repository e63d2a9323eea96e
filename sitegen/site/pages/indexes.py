"""The site's index pages as HTML: home, one page per project, all sessions, problems, stats and search;
what they show of the site is made once per build (Listing). The generators are in index_pages.py."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
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
from sitegen.site.pages.index_pages import PromptsSummary
from sitegen.site.pages.stats import Stats, compute_stats, render_stats_page
from sitegen.site.state.jobs import NEWEST_FIRST
from sitegen.site.state.manifest import SiteManifest
from sitegen.site.state.records import SessionRecord

__all__ = [
    "RECENT_SESSIONS",
    "IndexWriter",
    "Listing",
    "ProjectSummary",
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


class Listing:
    """What the index pages show of the site, made once per pass and each figure only when a page asks
    for it: the sessions, the problems, the stats and the per-project figures the home page shows."""

    def __init__(self, manifest: SiteManifest, prompts: PromptsSummary) -> None:
        self.records = manifest.records()
        self.prompts = prompts
        self.session_problems = manifest.problems()
        self.defects = manifest.defects()
        # Counted together in every page's navigation; listed apart on the problems page.
        self.problem_count = len(self.session_problems) + len(self.defects) + len(prompts.problems)

    @cached_property
    def stats(self) -> Stats:
        return compute_stats(self.records)

    @cached_property
    def windows(self) -> list[Analytics]:
        """All time, the last 30 and 7 days: the home page shows the last, the stats page all three."""
        return compute_windows(self.records, windows_to(self.stats.last_day))

    @cached_property
    def projects(self) -> list[ProjectSummary]:
        return self._summary[0]

    @cached_property
    def totals(self) -> Totals:
        return self._summary[1]

    @cached_property
    def _summary(self) -> tuple[list[ProjectSummary], Totals]:
        return summarise_projects(self.records, self.stats, self.windows)

    @cached_property
    def names(self) -> dict[str, str]:
        """Project slug -> name."""
        return {p.slug: p.name for p in self.projects}

    @cached_property
    def shown(self) -> dict[str, list[object]]:
        """What each project's page shows of it (SiteManifest.projects): a page whose project still shows
        the same and has no changed session is not made again."""
        return {p.slug: [p.name, p.sessions, p.last, p.tokens, p.cost, p.usage_known] for p in self.projects}


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

    def write_project(self, project: ProjectSummary, sessions: list[SessionRecord], problem_count: int) -> list[str]:
        """One project's page, its sessions newest first."""
        ordered = sorted(sessions, key=lambda r: (-(r.modified_ms or 0), r.key))
        html = self._render("project.html.j2", "../", problem_count, project=project, sessions=ordered)
        return self._write(f"projects/{project.slug}.html", html)

    def write_home(self, listing: Listing, building: str = "") -> list[str]:
        """The home page: the newest sessions, the projects, the prompts; with `building`, a note that
        the build is under way."""
        home = self._render(
            "home.html.j2",
            "",
            listing.problem_count,
            projects=listing.projects,
            totals=listing.totals,
            recent=recent_sessions(listing.records),
            prompts=listing.prompts,
            project_names=listing.names,
            building=building,
            all_sessions=ALL_SESSIONS_PAGE,
        )
        return self._write("index.html", home)

    def write_problems(self, listing: Listing) -> list[str]:
        html = self._render(
            "problems.html.j2",
            "",
            listing.problem_count,
            problems=listing.session_problems,
            defects=listing.defects,
            prompt_problems=listing.prompts.problems,
            repairs=repaired_sessions(listing.records),
        )
        return self._write("problems.html", html)

    def write_search_page(self, problem_count: int) -> list[str]:
        return self._write("search.html", self._render("search.html.j2", "", problem_count))

    def write_stats(self, listing: Listing) -> list[str]:
        html = render_stats_page(
            self.env,
            listing.records,
            root="",
            assets=self.assets,
            version=__version__,
            problem_count=listing.problem_count,
            stats=listing.stats,
            windows=listing.windows,
        )
        return self._write("stats.html", html)

    def remove_stale_projects(self, listing: Listing) -> None:
        """The pages of projects that have no session now."""
        live = {f"{p.slug}.html" for p in listing.projects}
        folder = self.site_dir / "projects"
        if folder.is_dir():
            for page in folder.glob("*.html"):
                if page.name not in live:
                    remove_file(page)
