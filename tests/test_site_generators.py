"""The build's site pages: one generator per index-like output, each timed under its own phase,
writing only what it reads changed and saying exactly which files it wrote (watch reloads those)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from site_helpers import build, page_text

from sitegen.history.store import history_stores
from sitegen.site.build.assets import publish_assets
from sitegen.site.pages.early import EarlyPages, LiveHooks
from sitegen.site.pages.generator import SiteContext, run_generators
from sitegen.site.pages.index_pages import IndexPages, PromptsSummary, index_generators
from sitegen.site.pages.site_pages import PromptsPage, SearchExport, site_generators
from sitegen.site.state.jobs import related_script
from sitegen.site.state.manifest import SiteManifest
from sitegen.timings import PHASES, PhaseClock

GOLDEN_DEMO = Path(__file__).resolve().parent / "fixtures" / "golden" / "demo" / "pi"


def _never(keys: Sequence[str]) -> list[str]:
    raise AssertionError(f"nothing is to be rendered again: {keys}")


def _files(site: Path) -> dict[str, tuple[int, int]]:
    """Every file of the site (not the build's own state) by path, with what says it was replaced."""
    return {
        path.relative_to(site).as_posix(): (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in site.rglob("*")
        if path.is_file() and ".sitegen" not in path.relative_to(site).parts
    }


def _context(site: Path, *, changed: bool) -> SiteContext:
    return SiteContext(site, publish_assets(site), SiteManifest.load(site), sessions_changed=changed)


def test_each_output_is_a_generator_timed_under_its_own_phase() -> None:
    generators = site_generators(PromptsPage([]), _never)
    names = [generator.name for generator in generators]
    # The prompts first (the search indexes them, every page counts their problems), home last.
    assert names == ["prompts", "search", "home"]
    # What reads neither the search index nor the home page is made while the search's processes work.
    [search] = [generator for generator in generators if isinstance(generator, SearchExport)]
    meanwhile = [generator.name for generator in search.meanwhile]
    assert meanwhile == ["related", "stats", "problems", "projects", "all-sessions"]
    assert set(names + meanwhile) <= set(PHASES)
    # A long build's early pages are the build's own generators of the pages that list sessions.
    early = index_generators(IndexPages(PromptsSummary), building=True)
    assert [generator.name for generator in early] == ["projects", "all-sessions", "home"]


def test_the_generators_say_exactly_which_files_they_wrote(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(site, GOLDEN_DEMO)
    stores = history_stores([GOLDEN_DEMO])
    manifest = SiteManifest.load(site)
    record = manifest.records()[0]
    gone = [
        "index.html",
        "stats.html",
        "problems.html",
        "search.html",
        "sessions.html",
        "sessions.js",
        "search/index.js",
        f"projects/{record.project_slug}.html",
        related_script(record.page),
    ]
    kept = {relative: page_text(site / relative) for relative in gone}
    for relative in gone:
        (site / relative).unlink()
    before = _files(site)
    clock = PhaseClock()
    generators = site_generators(PromptsPage(stores), _never, clock=clock)
    written = run_generators(generators, _context(site, changed=True), clock)
    after = _files(site)
    replaced = sorted(path for path, stamp in after.items() if before.get(path) != stamp)
    assert sorted(written) == replaced == sorted(gone)
    assert {relative: page_text(site / relative) for relative in gone} == kept
    assert set(clock.seconds) == {
        "prompts",
        "related",
        "search",
        "stats",
        "problems",
        "projects",
        "all-sessions",
        "home",
    }


def test_nothing_changed_writes_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(site, GOLDEN_DEMO)
    (site / "stats.html").unlink()  # not read back: a generator whose inputs are unchanged does not look
    before = _files(site)
    generators = site_generators(PromptsPage(history_stores([GOLDEN_DEMO])), _never)
    assert run_generators(generators, _context(site, changed=False)) == []
    assert _files(site) == before


def test_early_pages_list_the_sessions_written_so_far_and_nothing_else(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(site, GOLDEN_DEMO)
    manifest = SiteManifest.load(site)
    project = f"projects/{manifest.records()[0].project_slug}.html"
    for relative in (project, "index.html", "stats.html", "sessions.html", "sessions.js"):
        (site / relative).unlink()
    shown: list[tuple[list[str], str | None]] = []
    hooks = LiveHooks(ready=lambda: None, published=lambda written, progress: shown.append((list(written), progress)))
    early = EarlyPages(site, publish_assets(site), {}, 12, [], hooks)
    early.start(manifest.sessions)
    [(written, progress)] = shown
    assert written == [project, "sessions.js", "sessions.html", "index.html"]
    assert progress is not None and progress in page_text(site / "index.html")
    assert not (site / "stats.html").exists()  # the build's end writes it
