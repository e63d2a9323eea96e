"""Golden pages: the conversation of every page stays exactly what it was when the goldens were made.

Speed work (caches, fast paths, lazier highlighting) must not change what a reader sees. A site is
built from a fixed copy of the demo sessions (tests/fixtures/golden/demo) and, when present, the real
fixtures; the `<main id="conversation">` part of each session and subagent page is compared with
tests/golden/. Only the conversation is compared: the page's frame (header, tree, scripts) is free to
change without touching the goldens.

After an intentional change to what entries look like, regenerate the goldens and review their diff:

    SITEGEN_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py

Goldens are gzipped (the real fixtures' pages are megabytes); a failing test prints a diff of the
first place a page differs, and `zcat tests/golden/<page>.gz` shows a whole one.
"""

from __future__ import annotations

import difflib
import gzip
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REAL_FIXTURES

from sitegen.render.page import PageOptions, PageRenderer
from sitegen.site.build.pipeline import BuildConfig, build_site
from sitegen.transcript.attachments import resolve_attachments
from sitegen.transcript.load import load_transcript

HERE = Path(__file__).resolve().parent
DEMO = HERE / "fixtures" / "golden" / "demo"
GOLDEN = HERE / "golden"
REAL = REAL_FIXTURES
UPDATE = os.environ.get("SITEGEN_UPDATE_GOLDEN") == "1"
# The real fixtures' project: the cwd their headers name.
REAL_PROJECT = "sessions/workspaces-pi-mono-"

_CONVERSATION = re.compile(r'<main id="conversation">\n?(.*?)</main>', re.DOTALL)


def test_installed_libraries_are_the_releases_the_goldens_cover() -> None:
    """The pages' bytes depend on pygments' and markdown-it-py's releases: a newcomer's pip must resolve the
    ones the goldens were made with (pyproject.toml's ranges), and a new release means refreshed goldens."""
    import json
    from importlib.metadata import version

    made_with = json.loads((GOLDEN / "versions.json").read_text(encoding="utf-8"))
    for library, golden_version in made_with.items():
        installed = version(library)
        assert installed.split(".")[:2] == golden_version.split(".")[:2], (
            f"{library} {installed} is installed; the goldens cover {golden_version}: "
            "move pyproject.toml's range and run python -m tools.refresh_goldens"
        )


def conversation(html: str) -> str:
    match = _CONVERSATION.search(html)
    assert match is not None, "the page has no <main id=conversation>"
    return match.group(1)


def first_difference(expected: str, actual: str, context: int = 3, limit: int = 60) -> str:
    """A unified diff of the first place two renders differ, short enough to read in a test report."""
    diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "golden", "now", n=context, lineterm="")
    lines = []
    for line in diff:
        lines.append(line if len(line) < 400 else line[:400] + " …")
        if len(lines) >= limit:
            lines.append("…")
            break
    return "\n".join(lines)


def read_golden(name: str) -> str | None:
    path = GOLDEN / f"{name}.gz"
    return gzip.decompress(path.read_bytes()).decode("utf-8") if path.is_file() else None


def write_golden(name: str, html: str) -> None:
    path = GOLDEN / f"{name}.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same page gives the same bytes, so git sees no change where there is none.
    path.write_bytes(gzip.compress(html.encode("utf-8"), compresslevel=9, mtime=0))


def check(renders: dict[str, str], group: str) -> None:
    """Compare renders (golden name -> conversation HTML) with the goldens of one group, or write them."""
    if UPDATE:
        for stale in (GOLDEN / group).rglob("*.gz") if (GOLDEN / group).is_dir() else []:
            if str(stale.relative_to(GOLDEN))[: -len(".gz")] not in renders:
                stale.unlink()
        for name, html in renders.items():
            if read_golden(name) != html:
                write_golden(name, html)
        return
    stored = {str(p.relative_to(GOLDEN))[: -len(".gz")] for p in (GOLDEN / group).rglob("*.gz")}
    assert stored, f"no goldens under tests/golden/{group}: run SITEGEN_UPDATE_GOLDEN=1 pytest {__file__}"
    assert sorted(renders) == sorted(stored), "the pages made are not the pages the goldens hold"
    for name, html in sorted(renders.items()):
        expected = read_golden(name)
        if expected != html:  # pytest's own diff of megabyte strings is unreadable
            pytest.fail(f"{name} differs from its golden:\n{first_difference(expected or '', html)}")


@dataclass(frozen=True)
class Built:
    site: Path
    sources: Path
    real: bool


def _site_pages(site: Path, real: bool) -> dict[str, dict[str, str]]:
    """Golden name -> conversation of every session and subagent page, grouped demo / real."""
    groups: dict[str, dict[str, str]] = {"site-demo": {}, "site-real": {}}
    for page in sorted((site / "sessions").rglob("*.html")):
        relative = page.relative_to(site).as_posix()
        group = "site-real" if relative.startswith(REAL_PROJECT) else "site-demo"
        groups[group][f"{group}/{relative}"] = conversation(page.read_text(encoding="utf-8"))
    assert bool(groups["site-real"]) == real
    return groups


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """One cold build of the demo copy and (when present) the real fixtures, with two workers."""
    root = tmp_path_factory.mktemp("golden")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(root / "home"))
        patch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        sources = root / "sources"
        shutil.copytree(DEMO, sources)
        agent_dirs = [sources / "pi"]
        real = REAL.is_dir()
        if real:
            folder = root / "real" / "sessions" / "--real--"
            folder.mkdir(parents=True)
            for session in sorted(REAL.glob("*.jsonl")):
                shutil.copyfile(session, folder / session.name)
            agent_dirs.append(root / "real")
        config = BuildConfig(
            out=root / "site",
            agent_dirs=agent_dirs,
            odek_dirs=[sources / "odek" / "sessions"],
            use_default_dirs=False,
            jobs=2,
        )
        result = build_site(config)
        assert result.problems == []
        yield Built(root / "site", sources, real)


def test_demo_site_pages_match_golden(built: Built) -> None:
    check(_site_pages(built.site, built.real)["site-demo"], "site-demo")


def test_real_fixture_pages_match_golden(built: Built) -> None:
    if not built.real:
        pytest.skip(f"real fixtures not found at {REAL} (../shared is absent)")
    check(_site_pages(built.site, built.real)["site-real"], "site-real")


def test_pages_rendered_from_stored_fragments_match_golden(built: Built, tmp_path: Path) -> None:
    """A rebuild takes highlighted code and markdown from .sitegen/fragments: the pages stay the same."""
    site = tmp_path / "site"
    shutil.copytree(built.site, site)
    (site / ".sitegen" / "manifest.json").unlink()  # every session is rendered again
    for page in (site / "sessions").rglob("*.html"):
        page.unlink()
    config = BuildConfig(
        out=site,
        agent_dirs=[built.sources / "pi", *([built.site.parent / "real"] if built.real else [])],
        odek_dirs=[built.sources / "odek" / "sessions"],
        use_default_dirs=False,
        jobs=1,
    )
    build_site(config)
    if UPDATE:
        return  # the goldens were just written from the cold build
    groups = _site_pages(site, built.real)
    check(groups["site-demo"], "site-demo")
    if built.real:
        check(groups["site-real"], "site-real")


def test_exported_pages_match_golden(built: Built) -> None:
    """Export inlines subagent transcripts (site pages link to them) and renders long pages on two
    cores: each demo session's exported conversation has its own golden, and each real fixture's,
    made with the site's choice of colouring, equals its site page's."""
    renderer = PageRenderer()
    renders = {}
    sessions = sorted((built.sources / "pi" / "sessions").glob("*/*.jsonl"))
    sessions += sorted((built.sources / "odek" / "sessions").glob("*.json"))
    sessions = [s for s in sessions if s.name != "index.json"]
    for session in sessions:
        transcript = resolve_attachments(load_transcript(session, [built.sources / "pi"]))
        html = renderer.render(transcript, PageOptions(parallel=True))
        renders[f"export-demo/{session.stem}.html"] = conversation(html)
    check(renders, "export-demo")
    if not built.real or UPDATE:
        return
    for session in sorted(REAL.glob("*.jsonl")):
        # As a site page is made: its code past the first screen left to the page's highlighter.
        options = PageOptions(parallel=True, highlight_later_short=True)
        html = renderer.render(resolve_attachments(load_transcript(session, [])), options)
        [name] = [str(p.relative_to(GOLDEN))[:-3] for p in (GOLDEN / "site-real").rglob(f"{session.stem}.html.gz")]
        expected, exported = read_golden(name), conversation(html)
        # Where a lexer's table lands depends on which process first needed it: compared as a set.
        if _without_lexers(expected) != _without_lexers(exported) or _lexers(expected) != _lexers(exported):
            pytest.fail(f"export of {session.name} differs from its site page's golden ({name})")


_LEXER_SCRIPT = re.compile(r'<script type="application/json" class="sitegen-lexer" data-lang="([^"]+)".*?</script>\n')


def _without_lexers(html: str) -> str:
    return _LEXER_SCRIPT.sub("", html)


def _lexers(html: str) -> set[str]:
    return set(_LEXER_SCRIPT.findall(html))
