"""sitegen build on generated multi-project trees: pages, incremental rebuilds, problems, safety."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from sessions import SessionBuilder, text
from site_helpers import build, crawl, make_agent, make_session, page_text, session_page
from typer.testing import CliRunner

from sitegen.cli import app
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
    return make_agent(tmp_path / "agent")


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
