"""What a build makes once and reuses (shared page options, encoded entries, fragments); what rebuilds never import."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from sessions import SessionBuilder, text, tool_call
from site_helpers import append_user_line, build, make_agent, make_session, page_text, session_page

from sitegen import __version__
from sitegen.render.page import PageOptions
from sitegen.site.build import worker
from sitegen.site.build.pipeline import BuildConfig, BuildResult, claim_site
from sitegen.site.build.plan import open_site, plan_sessions
from sitegen.site.build.sessions import render_sessions
from sitegen.site.state import checkpoint
from sitegen.site.state.jobs import RenderJob
from sitegen.site.state.manifest import MANIFEST_PATH, ManifestEntry, SiteManifest
from sitegen.timings import PhaseClock


def _old_digest(job: RenderJob, sidecar: Path, options: PageOptions) -> str:
    """The digest as it was made before the shared options' text was kept: repr of the whole tuple."""
    stat = sidecar.stat()
    folder = sidecar.with_suffix("").stat().st_mtime_ns if sidecar.with_suffix("").exists() else 0
    parts = (
        __version__,
        worker._templates_hash(),
        stat.st_size,
        stat.st_mtime_ns,
        folder,
        job.default_agent_dirs,
        options,
    )
    return hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def test_subagent_inputs_digest_is_the_repr_of_its_parts(tmp_path: Path) -> None:
    """The digest kept in the fragment store must not change with how it is made: a site built before
    would render every subagent page again (and its stored digests are compared byte for byte)."""
    sidecar = tmp_path / "session" / "Alpha.jsonl"
    sidecar.parent.mkdir()
    sidecar.write_text('{"type": "session"}\n')
    (tmp_path / "session" / "Alpha").mkdir()
    job = RenderJob(
        str(tmp_path / "s.jsonl"), "pi", "k", "p", "sessions/p/k.html", str(tmp_path), {"page.css": "a/p.css"}
    )
    urls = {"Alpha": "Alpha.html", "Beta.Ünï 'q'": "Beta.%C3%9C.html"}
    options = worker._options(job, "sessions/p/k/Alpha.html")
    options.subagent_urls = urls
    options.parent_link = ("Started by the task call in “x”", "../k.html#entry-1")
    shared = {id(urls): repr(urls), id(options.asset_urls): repr(options.asset_urls)}
    expected = _old_digest(job, sidecar, options)
    assert worker._subagent_inputs(job, sidecar, options, shared) == expected
    assert worker._subagent_inputs(job, sidecar, options, {}) == expected


def _entry(key: str, problem: str) -> ManifestEntry:
    return ManifestEntry([1, 2, 3], "hash", key, "project", f"sessions/project/{key}.html", None, problem, "")


def test_a_save_reuses_the_bytes_of_entries_it_encoded_before_and_only_theirs(tmp_path: Path) -> None:
    manifest = SiteManifest("1", "t", "s", {"b": _entry("b", "first"), "a": _entry("a", "x")}, complete=False)
    encoded: dict[str, tuple[ManifestEntry, bytes]] = {}
    manifest.save(tmp_path, encoded)
    first = (tmp_path / MANIFEST_PATH).read_bytes()
    assert set(encoded) == {"a", "b"}
    manifest.save(tmp_path)
    assert (tmp_path / MANIFEST_PATH).read_bytes() == first

    # A session finished again is a new entry object: encoded again, not taken from the last save.
    manifest.sessions["b"] = _entry("b", "second")
    manifest.sessions["c"] = _entry("c", "new")
    manifest.save(tmp_path, encoded)
    kept = (tmp_path / MANIFEST_PATH).read_bytes()
    manifest.save(tmp_path)
    assert (tmp_path / MANIFEST_PATH).read_bytes() == kept
    assert b'"second"' in kept and b'"first"' not in kept
    assert SiteManifest.load(tmp_path).sessions["b"].problem == "second"


def test_the_checkpoints_let_go_of_their_encoded_entries_once_the_sessions_are_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the checkpoints keep to save faster is the manifest's size: not held through the rest of
    the build (the index pages and the search, where its memory peaks)."""
    monkeypatch.setattr(checkpoint, "CHECKPOINT_S", 0.0)  # a save after every session
    agent = tmp_path / "agent"
    for number in range(3):
        make_session(agent, "/work/keep", f"s{number}", f"words {number}")
    config = BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1)
    saved: list[int] = []
    monkeypatch.setattr(checkpoint.Checkpoints, "due", lambda self: saved.append(self.kept_bytes) or True)
    with claim_site(config):
        site = open_site(config)
        result = BuildResult(full=site.full)
        plan = plan_sessions(config, site, result)
        render_sessions(config, site, plan, result, None, PhaseClock())
    assert len(saved) == 3 and saved[-1] > 0  # the saves kept their entries' bytes meanwhile
    assert site.checkpoints.kept_bytes == 0
    assert set(SiteManifest.load(tmp_path / "site").sessions) == set(plan.current)


# ---- Fragments and imports a rebuild saves ----


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return make_agent(tmp_path / "agent")


def _cli_build(site: Path, agent: Path) -> None:
    """A build in a fresh process: only the disk can carry fragments over from the last one."""
    command = [sys.executable, "-c", "import sys; from sitegen.cli import main; sys.exit(main())"]
    subprocess.run([*command, "build", "--out", str(site), "--agent-dir", str(agent)], check=True, cwd=site.parent)


def _replace_only_fragment(store: Path, replacement: str) -> tuple[str, str, dict[str, Any]]:
    """The store's one fragment as (key, html), replaced on disk by `replacement`; and the store's data."""
    data = orjson.loads(store.read_bytes())
    # (Keys starting with "@" remember other things, such as which lexer a file name gets.)
    [(key, html)] = [(k, v) for k, v in data["fragments"].items() if not k.startswith("@")]
    data["fragments"][key] = replacement
    store.write_bytes(orjson.dumps(data))
    return key, html, data


def test_highlighted_code_is_reused_by_the_next_build_and_dropped_with_its_session(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    b = SessionBuilder(session_id="code-1", cwd="/work/code")
    b.user("u1", "show me the file")
    b.assistant("a1", [tool_call("c1", "read", path="src/app.py")])
    b.tool_result("r1", "c1", "read", "def answer():\n    return 42\n")
    path = b.write(agent / "sessions" / "--work-code--" / "2026-01-01T00-00-00-000Z_code-1.jsonl")
    site = tmp_path / "site"

    _cli_build(site, agent)
    store = site / ".sitegen" / "fragments" / "2026-01-01T00-00-00-000Z_code-1.json"
    key, html, data = _replace_only_fragment(store, "ZZ_FROM_STORE_ZZ")
    assert key.startswith("python:") and "<span class=k>def" in html

    append_user_line(path, "late0001", "r1")
    _cli_build(site, agent)
    page = page_text(session_page(site, "code-1"))
    assert "ZZ_late0001_ZZ" in page and "ZZ_FROM_STORE_ZZ" in page  # not highlighted again

    data["namespace"] = "made by an older sitegen"
    store.write_bytes(orjson.dumps(data))
    append_user_line(path, "late0002", "late0001")
    _cli_build(site, agent)
    page = page_text(session_page(site, "code-1"))
    assert "ZZ_FROM_STORE_ZZ" not in page and "<span class=k>def" in page

    path.unlink()
    build(site, agent)
    assert not store.exists()


def test_rendered_markdown_is_reused_by_the_next_build(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    b = SessionBuilder(session_id="md-1", cwd="/work/md")
    b.user("u1", "explain")
    b.assistant("a1", [text("It is **fast** because of `cache`.")])
    path = b.write(agent / "sessions" / "--work-md--" / "2026-01-01T00-00-00-000Z_md-1.jsonl")
    site = tmp_path / "site"
    _cli_build(site, agent)
    store = site / ".sitegen" / "fragments" / "2026-01-01T00-00-00-000Z_md-1.json"
    key, html, _data = _replace_only_fragment(store, "ZZ_MARKDOWN_FROM_STORE_ZZ")
    assert key.startswith("#markdown:") and "<strong>fast</strong>" in html

    append_user_line(path, "late0001", "a1")
    _cli_build(site, agent)
    page = page_text(session_page(site, "md-1"))
    assert "ZZ_late0001_ZZ" in page and "ZZ_MARKDOWN_FROM_STORE_ZZ" in page  # not parsed again


def _loaded_by_one_session_rebuild(site: Path, agent: Path, modules: set[str]) -> list[str]:
    """Which of these modules a build in a fresh process loads, that renders one session again."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from sitegen.site.build.pipeline import BuildConfig, build_site\n"
        f"result = build_site(BuildConfig(out=Path({str(site)!r}), agent_dirs=[Path({str(agent)!r})],"
        " use_default_dirs=False))\n"
        "assert len(result.rendered) == 1\n"
        f"print(sorted({sorted(modules)!r} & sys.modules.keys()))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded: list[str] = orjson.loads(done.stdout.strip().replace("'", '"'))
    return loaded


def test_rebuild_of_one_session_loads_neither_parsers_nor_a_pool(tmp_path: Path) -> None:
    """A session that grew by a plain line takes its markdown, its highlighted code and its files'
    lexers from the store: markdown-it and pygments' lexers stay unloaded; and one session renders
    in this process, without a pool."""
    agent = tmp_path / "agent"
    b = SessionBuilder(session_id="md-2", cwd="/work/md")
    b.user("u1", "explain")
    b.assistant("a1", [text("It is **fast** because of `cache`."), tool_call("c1", "read", path="src/app.py")])
    b.tool_result("r1", "c1", "read", "def answer():\n    return 42\n")
    path = b.write(agent / "sessions" / "--work-md--" / "2026-01-01T00-00-00-000Z_md-2.jsonl")
    site = tmp_path / "site"
    _cli_build(site, agent)
    entry = {"type": "message", "id": "late0001", "parentId": "r1", "timestamp": "2026-02-01T00:00:00.000Z"}
    entry["message"] = {"role": "user", "content": "one more plain line", "timestamp": 1}
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(entry) + b"\n")
    heavy = {"markdown_it", "multiprocessing", "pygments.lexer", "pygments.lexers"}
    assert _loaded_by_one_session_rebuild(site, agent, heavy) == []
    assert "one more plain line" in page_text(session_page(site, "md-2"))
    assert "<strong>fast</strong>" in page_text(session_page(site, "md-2"))
    assert "<span class=k>def" in page_text(session_page(site, "md-2"))  # highlighted, from the store


def test_rebuild_of_a_page_past_its_first_screen_loads_no_lexer_either(tmp_path: Path) -> None:
    """Its code past the 64th entry is left to the page's highlighter: which lexers those are, and
    their tables, come from the fragment store and the user's cache, not from pygments."""
    agent = tmp_path / "agent"
    b = SessionBuilder(session_id="md-3", cwd="/work/md")
    for n in range(40):
        b.user(f"u{n}", f"step {n}")
        b.assistant(f"a{n}", [text("Now:\n\n```python\nprint(1)\n```\n"), tool_call(f"c{n}", "read", path="app.py")])
        b.tool_result(f"r{n}", f"c{n}", "read", "def answer():\n    return 42\n")
    path = b.write(agent / "sessions" / "--work-md--" / "2026-01-01T00-00-00-000Z_md-3.jsonl")
    site = tmp_path / "site"
    _cli_build(site, agent)
    append_user_line(path, "late0001", "r39")
    assert _loaded_by_one_session_rebuild(site, agent, {"markdown_it", "pygments.lexer", "pygments.lexers"}) == []
    page = page_text(session_page(site, "md-3"))
    assert "ZZ_late0001_ZZ" in page
    assert '<span class=hl-later data-lang="python">' in page and 'class="sitegen-lexer" data-lang="python"' in page


def test_noop_build_loads_neither_the_renderer_nor_a_process_pool(tmp_path: Path, agent: Path) -> None:
    """A site that is up to date costs start-up only: the render stack and multiprocessing stay unloaded."""
    site = tmp_path / "site"
    build(site, agent)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from sitegen.site.build.pipeline import BuildConfig, build_site\n"
        f"result = build_site(BuildConfig(out=Path({str(site)!r}), agent_dirs=[Path({str(agent)!r})],"
        " use_default_dirs=False, jobs=2))\n"
        "assert not result.changed\n"
        "heavy = {'sitegen.render.page', 'jinja2', 'pygments.lexer', 'markdown_it', 'multiprocessing'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
