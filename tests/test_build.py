"""sitegen build on generated multi-project trees: pages, incremental rebuilds, problems, safety."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from sessions import SessionBuilder, text, tool_call
from site_helpers import build, crawl, make_session, page_text
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.site.search import store as search_store
from sitegen.site.state.lock import LOCK_PATH
from sitegen.site.state.manifest import MANIFEST_PATH


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file's hash and mtime, but the lock file's (each build writes its own name into it)."""
    return {
        str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder) != Path(LOCK_PATH)
    }


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "alpha-1", "ZZ_ALPHA1_ZZ")
    make_session(agent, "/work/alpha", "alpha-2", "ZZ_ALPHA2_ZZ")
    make_session(agent, "/work/beta", "beta-1", "ZZ_BETA1_ZZ")
    return agent


def session_page(site: Path, session_id: str) -> Path:
    return next(site.glob(f"sessions/*/*_{session_id}.html"))


def test_cold_build_makes_every_page(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    result = build(site, agent)
    assert result.sessions == 3 and len(result.rendered) == 3 and not result.problems
    home = page_text(site / "index.html")
    assert "/work/alpha" in home and "/work/beta" in home
    alpha = next(site.glob("projects/*alpha-*.html"))
    assert "ZZ_ALPHA1_ZZ" in page_text(alpha) and "ZZ_ALPHA2_ZZ" in page_text(alpha)
    assert "ZZ_BETA1_ZZ" not in page_text(alpha)
    page = page_text(session_page(site, "beta-1"))
    assert "ZZ_BETA1_ZZ answer" in page
    assert "<style>" not in page and 'href="../../assets/page.' in page
    assert crawl(site) == []
    # The index pages come last: while the home page says a build is under way (watch), the search
    # and related lists it promises are still being made.
    others = [site / "search" / "index.js", *site.glob("sessions/*/*.related.js")]
    assert len(others) == 4 and (site / "index.html").stat().st_mtime_ns >= max(p.stat().st_mtime_ns for p in others)


def test_noop_rebuild_writes_nothing(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    before = snapshot(site)
    result = build(site, agent)
    assert not result.changed and result.rendered == []
    assert snapshot(site) == before


def test_the_same_agent_dir_spelled_another_way_is_a_noop(
    tmp_path: Path, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    build(site, agent)
    before = snapshot(site)
    monkeypatch.chdir(tmp_path)
    for spelling in (Path("agent"), Path("./agent/"), Path("agent/../agent")):
        result = build(site, spelling)
        assert result.rendered == [] and not result.changed, spelling
    assert snapshot(site) == before


def test_touched_but_unchanged_file_is_not_rendered(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    path = next(agent.rglob("*_alpha-1.jsonl"))
    path.touch()
    assert build(site, agent).rendered == []


def test_appended_session_is_the_only_one_rendered(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    beta_page = session_page(site, "beta-1")
    beta_before = beta_page.stat().st_mtime_ns
    path = next(agent.rglob("*_alpha-2.jsonl"))
    with open(path, "ab") as handle:
        entry = {
            "type": "message",
            "id": "late0001",
            "parentId": "r1",
            "timestamp": "2026-02-01T00:00:00.000Z",
            "message": {"role": "user", "content": "ZZ_APPENDED_ZZ", "timestamp": 1},
        }
        handle.write(orjson.dumps(entry) + b"\n")
    unchanged = {name: (site / name).stat().st_mtime_ns for name in ("search.html", "problems.html")}
    result = build(site, agent)
    assert result.rendered == ["2026-01-01T00-00-00-000Z_alpha-2"]
    assert "ZZ_APPENDED_ZZ" in page_text(session_page(site, "alpha-2"))
    assert beta_page.stat().st_mtime_ns == beta_before
    # Index pages are written where they changed: the home page lists the session as the newest; the
    # search and problems pages stay as they were (and `watch` does not reload them in a browser).
    assert "index.html" in result.written and not set(unchanged) & set(result.written)
    assert {name: (site / name).stat().st_mtime_ns for name in unchanged} == unchanged


def test_partial_trailing_line_is_tolerated(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    path = next(agent.rglob("*_alpha-1.jsonl"))
    with open(path, "ab") as handle:
        handle.write(b'{"type":"message","id":"half"')
    result = build(site, agent)
    assert not result.problems
    assert "incomplete" in page_text(session_page(site, "alpha-1"))


def test_deleted_session_loses_its_page(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    page = session_page(site, "alpha-1")
    next(agent.rglob("*_alpha-1.jsonl")).unlink()
    result = build(site, agent)
    assert result.removed == ["2026-01-01T00-00-00-000Z_alpha-1"]
    assert not page.exists()
    alpha = next(site.glob("projects/*alpha-*.html"))
    assert "ZZ_ALPHA1_ZZ" not in page_text(alpha)
    assert crawl(site) == []


def test_deleting_a_whole_project_removes_its_page(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    next(agent.rglob("*_beta-1.jsonl")).unlink()
    build(site, agent)
    assert not list(site.glob("projects/*beta-*.html"))
    assert not list(site.glob("sessions/*beta*"))  # nor an empty folder where its pages were
    assert "/work/beta" not in page_text(site / "index.html")


def test_template_or_version_change_rebuilds_everything(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    manifest_path = site / MANIFEST_PATH
    manifest = orjson.loads(manifest_path.read_bytes())
    manifest["templates"] = "something-else"
    manifest_path.write_bytes(orjson.dumps(manifest))
    result = build(site, agent)
    assert result.full and len(result.rendered) == 3


def test_broken_file_is_a_problem_not_a_failure(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    broken = agent / "sessions" / "--work-alpha--" / "2026-01-05T00-00-00-000Z_broken.jsonl"
    broken.write_bytes(
        b'{"type":"session","id":"broken","cwd":"/work/alpha"}\n{"type":"message","id":"x","message":7}\n'
    )
    broken2 = agent / "sessions" / "--work-alpha--" / "2026-01-06T00-00-00-000Z_notjson.jsonl"
    broken2.write_bytes(b"\x00\x01 not a session\n")
    result = build(site, agent)
    assert len(result.rendered) >= 3
    assert any("notjson" in p for p in result.problems)
    problems = page_text(site / "problems.html")
    assert "notjson" in problems
    runner = CliRunner()
    strict = runner.invoke(app, ["build", "--out", str(site), "--agent-dir", str(agent), "--strict"])
    assert strict.exit_code == 1 and "notjson" in strict.stderr


def test_a_bug_met_by_one_session_is_a_problem_not_a_failure(
    tmp_path: Path, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.site.build import worker

    real = worker.analyse_transcript

    def buggy(transcript: Any) -> Any:  # stands for a bug that one odd session meets
        if transcript.session_id == "beta-1":
            raise TypeError("'int' object is not iterable")
        return real(transcript)

    monkeypatch.setattr(worker, "analyse_transcript", buggy)
    site = tmp_path / "site"
    result = build(site, agent)
    assert len(result.rendered) == 2
    assert len(result.problems) == 1 and result.problems[0].startswith(str(next(agent.rglob("*_beta-1.jsonl"))))
    assert "sitegen could not render it (TypeError: 'int' object is not iterable)" in result.problems[0]
    assert "beta-1" in page_text(site / "problems.html")


def test_console_build_keeps_its_exit_code_and_output_when_it_skips_teardown(tmp_path: Path, agent: Path) -> None:
    """The console entry ends a build with os._exit: what it printed must still arrive, through
    pipes, and --strict must still exit 1."""
    broken = agent / "sessions" / "--work-alpha--" / "2026-01-06T00-00-00-000Z_notjson.jsonl"
    broken.write_bytes(b"\x00\x01 not a session\n")
    # The atexit handler stands for the teardown that is skipped.
    script = "import atexit; atexit.register(print, 'ZZ_TEARDOWN_ZZ'); from sitegen.cli import main; main()"
    command = [sys.executable, "-c", script, "build", "--agent-dir", str(agent)]
    site = tmp_path / "site"
    done = subprocess.run([*command, "--out", str(site), "--strict"], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout.startswith(f"Built {site}: 4 sessions, 3 rendered") and done.stdout.endswith("s\n")
    assert "ZZ_TEARDOWN_ZZ" not in done.stdout
    assert "problem:" in done.stderr and "notjson" in done.stderr
    again = subprocess.run([*command, "--out", str(site)], capture_output=True, text=True)
    assert again.returncode == 0 and "is up to date" in again.stdout


def test_hostile_cwd_is_escaped_everywhere(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    cwd = "/tmp/<script>alert('ZZ_CWD_ZZ')</script>"
    b = SessionBuilder(session_id="evil-1", cwd=cwd)
    b.user("u1", "<img src=x onerror=alert(1)> ZZ_EVIL_ZZ")
    b.assistant("a1", [text("ok")])
    b.write(agent / "sessions" / "--tmp-evil--" / "2026-01-01T00-00-00-000Z_evil-1.jsonl")
    site = tmp_path / "site"
    build(site, agent)
    for page in site.rglob("*.html"):
        html = page.read_text()
        assert "<script>alert" not in html, page
        assert "<img src=x" not in html, page
    assert "&lt;script&gt;alert(" in (site / "index.html").read_text()
    assert crawl(site) == []


def test_build_never_writes_to_the_agent_dir(tmp_path: Path, agent: Path) -> None:
    before = snapshot(agent)
    build(tmp_path / "site", agent)
    assert snapshot(agent) == before


def test_output_inside_an_agent_dir_is_refused(tmp_path: Path, agent: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["build", "--out", str(agent / "site"), "--agent-dir", str(agent)])
    assert result.exit_code == 1 and "overlaps" in result.stderr
    assert not (agent / "site").exists()


def _fork_copy(original: Path) -> Path:
    """What /fork writes: the session's entries under a new header that names the original."""
    copy = original.with_name("2026-01-02T00-00-00-000Z_copy-1.jsonl")
    lines = original.read_bytes().splitlines()
    header = orjson.loads(lines[0])
    header.update(id="copy-1", parentSession="orig-1", timestamp="2026-01-02T00:00:00.000Z")
    copy.write_bytes(b"\n".join([orjson.dumps(header), *lines[1:]]) + b"\n")
    return copy


def test_forked_copies_are_counted_once_in_totals(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _fork_copy(make_session(agent, "/work/fork", "orig-1", "ZZ_FORK_ZZ"))
    site = tmp_path / "site"
    build(site, agent)
    home = page_text(site / "index.html")
    # One assistant message of $0.0125: the copy shares it, so the total stays $0.01, not $0.03.
    assert "2 sessions" in home and "$0.01" in home and "$0.03" not in home


def _site_files(site: Path) -> dict[str, bytes]:
    """Every file of the site but its build state."""
    return {
        str(p.relative_to(site)): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file() and p.relative_to(site).parts[0] != ".sitegen"
    }


def test_old_v1_copies_share_their_entries_in_totals(tmp_path: Path) -> None:
    # v1 entries have no ids: migration makes them up per file, so the copy's differ from the original's.
    folder = tmp_path / "agent" / "sessions" / "--work-old--"
    folder.mkdir(parents=True)
    usage = {"input": 1000, "output": 100, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.25}}
    entries = [
        {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": {"role": "user", "content": "go"}},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {"role": "assistant", "content": [], "provider": "p", "model": "m", "usage": usage},
        },
    ]
    for name, extra in (("orig", {}), ("copy", {"branchedFrom": "orig.jsonl"})):
        header = {"type": "session", "id": f"old-{name}", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/work/old"}
        lines = [orjson.dumps({**header, **extra}), *(orjson.dumps(e) for e in entries)]
        (folder / f"2025-01-01T00-00-00-000Z_old-{name}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    site = tmp_path / "site"
    build(site, tmp_path / "agent")
    assert "2 sessions in 1 projects · 1,100 tokens · $0.25" in page_text(site / "index.html")


def test_incremental_site_equals_a_cold_build_of_the_same_sessions(tmp_path: Path) -> None:
    """Index, stats and related files come from what the manifest keeps: after sessions were
    appended to, added and removed, they must read exactly as a cold build makes them."""
    agent = tmp_path / "agent"
    copy = _fork_copy(make_session(agent, "/work/fork", "orig-1", "ZZ_FORK_ZZ postgres vacuum"))
    make_session(agent, "/work/alpha", "alpha-1", "postgres replication vacuum", entries=4)
    gone = make_session(agent, "/work/beta", "beta-1", "react hooks")
    site = tmp_path / "site"
    build(site, agent)

    b = SessionBuilder(session_id="alpha-2", cwd="/work/alpha")
    b.user("u1", "postgres vacuum replication index")
    b.assistant("a1", [text("vacuum the index")], model="claude-other")
    b.write(agent / "sessions" / "--work-alpha--" / "2026-01-03T00-00-00-000Z_alpha-2.jsonl")
    gone.unlink()
    usage = {"input": 7, "output": 3, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.5}}
    late = {"type": "message", "id": "late0001", "parentId": "r1", "timestamp": "2026-02-01T00:00:00.000Z"}
    late["message"] = {"role": "assistant", "content": [{"type": "text", "text": "vacuum again"}], "timestamp": 1}
    late["message"].update(provider="anthropic", model="claude-test", usage=usage)
    with open(copy, "ab") as handle:
        handle.write(orjson.dumps(late) + b"\n")
    result = build(site, agent)
    assert sorted(result.rendered) == ["2026-01-02T00-00-00-000Z_copy-1", "2026-01-03T00-00-00-000Z_alpha-2"]

    cold = tmp_path / "cold"
    build(cold, agent)
    assert _site_files(site) == _site_files(cold)
    assert "$0.51" in page_text(site / "index.html")  # the copy's own usage counted, its shared row not


def test_deleting_the_original_updates_the_totals_of_a_fork_in_another_project(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    original = make_session(agent, "/work/orig", "orig-1", "ZZ_FORK_ZZ")
    copy = _fork_copy(original)
    header = orjson.loads(copy.read_bytes().splitlines()[0])
    header["cwd"] = "/work/other"
    moved = agent / "sessions" / "--work-other--" / copy.name
    moved.parent.mkdir()
    moved.write_bytes(orjson.dumps(header) + b"\n" + copy.read_bytes().split(b"\n", 1)[1])
    copy.unlink()
    site = tmp_path / "site"
    build(site, agent)
    other = next(site.glob("projects/*other*.html"))
    assert "1 session · 0 tokens · $0.00" in page_text(other)  # its entries are the original's

    original.unlink()
    result = build(site, agent)
    assert result.rendered == []  # the copy itself did not change
    assert "1 session · 1,130 tokens · $0.01" in page_text(other)  # but its project now owns them
    cold = tmp_path / "cold"
    build(cold, agent)
    assert _site_files(site) == _site_files(cold)


def test_subagent_pages_link_both_ways(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path = make_session(agent, "/work/sub", "parent-1", "ZZ_PARENT_ZZ")
    artifacts = path.with_suffix("")
    artifacts.mkdir()
    (artifacts / "Scout.md").write_text("found it")
    sub = SessionBuilder(session_id="sub-1", cwd="/work/sub")
    sub.user("s1", "ZZ_SUBTASK_ZZ")
    sub.write(artifacts / "Scout.jsonl")
    b = SessionBuilder(session_id="parent-1", cwd="/work/sub")
    b.user("u1", "delegate")
    from sessions import tool_call

    b.assistant("a1", [tool_call("c1", "task", task="scout")])
    b.tool_result("r1", "c1", "task", "see agent://Scout")
    b.write(path)
    site = tmp_path / "site"
    build(site, agent)
    parent = session_page(site, "parent-1")
    sub_page = parent.with_suffix("") / "Scout.html"
    assert sub_page.is_file() and "ZZ_SUBTASK_ZZ" in sub_page.read_text()
    assert 'href="2026-01-01T00-00-00-000Z_parent-1/Scout.html"' in parent.read_text()
    assert "../2026-01-01T00-00-00-000Z_parent-1.html#entry-r1" in sub_page.read_text()
    assert crawl(site) == []


def _parent_with_scout(agent: Path, number: int, words: str) -> tuple[Path, Path]:
    """A session in /work/sub with a subagent "Scout" whose sidecar transcript says words: (session, sidecar)."""
    path = make_session(agent, "/work/sub", f"parent-{number}", "ZZ_PARENT_ZZ")
    artifacts = path.with_suffix("")
    artifacts.mkdir()
    sidecar = SessionBuilder(session_id=f"sub-{number}", cwd="/work/sub")
    sidecar.user("s1", words)
    return path, sidecar.write(artifacts / "Scout.jsonl")


def test_subagent_page_is_rendered_again_only_when_its_inputs_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    path, _ = _parent_with_scout(agent, 2, "ZZ_SUBTASK_ZZ")
    artifacts = path.with_suffix("")
    site = tmp_path / "site"
    build(site, agent)
    sub_page = session_page(site, "parent-2").with_suffix("") / "Scout.html"
    sub_page.write_text("ZZ_KEPT_ZZ")  # stands for the page the last build wrote

    _append_user_line(path, "late0001", "r1")
    result = build(site, agent)
    assert result.rendered == ["2026-01-01T00-00-00-000Z_parent-2"]
    assert sub_page.read_text() == "ZZ_KEPT_ZZ"  # the parent grew; its subagent did not

    _append_user_line(artifacts / "Scout.jsonl", "late0002", "s1")
    _append_user_line(path, "late0003", "late0001")
    build(site, agent)
    assert "ZZ_late0002_ZZ" in sub_page.read_text()

    sub_page.write_text("ZZ_KEPT_ZZ")
    manifest_path = site / MANIFEST_PATH
    manifest = orjson.loads(manifest_path.read_bytes())
    manifest["templates"] = "something-else"
    manifest_path.write_bytes(orjson.dumps(manifest))
    monkeypatch.setattr("sitegen.site.build.worker._templates_hash", lambda: "changed templates")
    build(site, agent)
    assert "ZZ_SUBTASK_ZZ" in sub_page.read_text()


def test_nested_subagent_appending_in_place_renders_the_page_again(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path = make_session(agent, "/work/sub", "parent-4", "ZZ_PARENT_ZZ")
    artifacts = path.with_suffix("")
    (artifacts / "Alpha").mkdir(parents=True)
    for name in ("Alpha", "Alpha/Child"):
        sidecar = SessionBuilder(session_id=name, cwd="/work/sub")
        sidecar.user("s1", f"ZZ_{name}_ZZ")
        sidecar.write(artifacts / f"{name}.jsonl")
    site = tmp_path / "site"
    build(site, agent)
    stamps = {p: p.stat().st_mtime_ns for p in (path, artifacts, artifacts / "Alpha", artifacts / "Alpha.jsonl")}

    _append_user_line(artifacts / "Alpha" / "Child.jsonl", "late0005", "s1")  # only the child's file moves
    for folder, stamp in stamps.items():
        os.utime(folder, ns=(stamp, stamp))
    assert build(site, agent).rendered == ["2026-01-01T00-00-00-000Z_parent-4"]
    assert build(site, agent).rendered == []


def test_subagent_pages_are_searchable_documents_kept_across_rebuilds(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path, _ = _parent_with_scout(agent, 5, "zzsidecarword here")
    site = tmp_path / "site"

    def indexed() -> tuple[str, bool]:
        index = (site / "search" / "index.js").read_text()
        shards = "".join(p.read_text() for p in (site / "search" / "t").glob("*.js"))
        return index, '"zzsidecarword":' in shards

    build(site, agent)
    index, found = indexed()
    assert found and '"Scout"' in index and "subagent of ZZ_PARENT_ZZ first question" in index
    _append_user_line(path, "late0009", "r1")  # the parent grows; its subagent page is not rendered again
    result = build(site, agent)
    assert not any(p.endswith("Scout.html") for p in result.written)
    index, found = indexed()
    assert found and '"Scout"' in index
    path.unlink()
    build(site, agent)
    index, found = indexed()
    assert not found and '"Scout"' not in index


def test_subagent_search_entries_of_an_older_release_are_extracted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    path, _ = _parent_with_scout(agent, 6, "zzsidecarword here")
    site = tmp_path / "site"
    with monkeypatch.context() as older:
        older.setattr(search_store, "VERSION", search_store.VERSION + 1)
        build(site, agent)
    search_store.close_connections()  # as a new process of this release opens it
    # The parent grows, so its segment is exported again; the subagent did not change, but the
    # database is of another layout, so it is made again and the subagent's entries are stored again (once).
    _append_user_line(path, "late0006", "r1")
    build(site, agent)
    shards = "".join(p.read_text() for p in (site / "search" / "t").glob("*.js"))
    assert '"zzsidecarword":' in shards
    assert build(site, agent).rendered == []


def test_subagent_appending_in_place_renders_its_page_again(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path, sidecar_path = _parent_with_scout(agent, 3, "ZZ_SUBTASK_ZZ")
    artifacts = path.with_suffix("")
    site = tmp_path / "site"
    build(site, agent)
    folder_mtime = artifacts.stat().st_mtime_ns
    session_mtime = path.stat().st_mtime_ns

    _append_user_line(sidecar_path, "late0004", "s1")  # a running subagent writes; nothing else moves
    os.utime(artifacts, ns=(folder_mtime, folder_mtime))
    assert path.stat().st_mtime_ns == session_mtime
    result = build(site, agent)
    assert result.rendered == ["2026-01-01T00-00-00-000Z_parent-3"]
    sub_page = session_page(site, "parent-3").with_suffix("") / "Scout.html"
    assert "ZZ_late0004_ZZ" in sub_page.read_text()
    assert build(site, agent).rendered == []


def test_demo_build_has_pi_and_odek_sessions(tmp_path: Path) -> None:
    runner = CliRunner()
    site = tmp_path / "site"
    result = runner.invoke(app, ["build", "--demo", "--out", str(site), "--jobs", "2"])
    assert result.exit_code == 0, result.stderr
    pages = list(site.glob("sessions/*/*.html"))
    assert any("odek" in str(p) for p in pages) and len(pages) >= 8
    # An odek session has no working directory: its page's way back names the project it is listed in.
    odek_page = next(p for p in pages if "odek" in p.parent.name).read_text(encoding="utf-8")
    assert '.html">odek</a>' in odek_page and '.html">project</a>' not in odek_page
    assert crawl(site) == []
    shutil.rmtree(site)


def test_lost_search_cache_is_rebuilt(tmp_path: Path, agent: Path) -> None:
    site = tmp_path / "site"
    build(site, agent)
    shutil.rmtree(site / ".sitegen" / "search")
    next(agent.rglob("*_beta-1.jsonl")).touch()  # any change makes the build look at the index again
    make_session(agent, "/work/beta", "beta-2", "ZZ_BETA2_ZZ")
    build(site, agent)
    index = (site / "search" / "index.js").read_text()
    assert index.count("sessions/") >= 4
    db = sqlite3.connect(site / ".sitegen" / "search" / "index.db")
    # Every session's entries again (the prompts typed in them are found as those entries: the
    # Prompts page's chunk of them is not a search document of its own).
    assert db.execute("SELECT count(*) FROM docs").fetchone() == (4,)
    db.close()
    assert not list((site / ".sitegen" / "search").glob("*.json"))
    assert '"beta2":' in "".join(p.read_text() for p in (site / "search" / "t").glob("*.js"))


def test_mixed_pi_omp_and_odek_site_has_no_broken_links(
    tmp_path: Path, isolated_home: Path, real_fixtures: Path
) -> None:
    """Sessions found automatically in ~/.pi/agent, ~/.omp/agent and ~/.odek/sessions, in one site."""
    pi = isolated_home / ".pi" / "agent" / "sessions" / "--work-pi--"
    pi.mkdir(parents=True)
    shutil.copy(real_fixtures / "pi-before-compaction.v1.jsonl", pi / "2025-12-09T00-53-29-825Z_ffae836b.jsonl")
    omp = isolated_home / ".omp" / "agent" / "sessions" / "--work-omp--"
    omp.mkdir(parents=True)
    shutil.copy(real_fixtures / "omp-large-session.title-v3.jsonl", omp / "2025-11-20T23-33-50-805Z_d703a1a9.jsonl")
    from sitegen.resources import resource_dir

    shutil.copytree(resource_dir("demo") / "odek" / "sessions", isolated_home / ".odek" / "sessions")
    site = tmp_path / "site"
    result = CliRunner().invoke(app, ["build", "--out", str(site)])
    assert result.exit_code == 0, result.stderr
    pages = list(site.glob("sessions/*/*.html"))
    assert len(pages) == 5  # one pi, one omp, three odek
    assert any("odek" in p.parent.name for p in pages)
    assert crawl(site) == []
    home = page_text(site / "index.html")
    assert "/Users/badlogic/workspaces/pi-mono" in home and "odek" in home


def test_a_folder_sitegen_did_not_make_is_left_alone(tmp_path: Path, agent: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "projects").mkdir(parents=True)
    (mine / "projects" / "notes.html").write_text("ZZ_MY_NOTES_ZZ")
    result = CliRunner().invoke(app, ["build", "--out", str(mine), "--agent-dir", str(agent)])
    assert result.exit_code == 1 and "not made by sitegen" in result.stderr
    assert (mine / "projects" / "notes.html").read_text() == "ZZ_MY_NOTES_ZZ"
    assert sorted(p.name for p in mine.iterdir()) == ["projects"]


def _append_user_line(path: Path, entry_id: str, parent: str) -> None:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-02-01T00:00:00.000Z",
        "message": {"role": "user", "content": f"ZZ_{entry_id}_ZZ", "timestamp": 1},
    }
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(entry) + b"\n")


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

    _append_user_line(path, "late0001", "r1")
    _cli_build(site, agent)
    page = page_text(session_page(site, "code-1"))
    assert "ZZ_late0001_ZZ" in page and "ZZ_FROM_STORE_ZZ" in page  # not highlighted again

    data["namespace"] = "made by an older sitegen"
    store.write_bytes(orjson.dumps(data))
    _append_user_line(path, "late0002", "late0001")
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

    _append_user_line(path, "late0001", "a1")
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
    _append_user_line(path, "late0001", "r39")
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
