"""Odd but valid input and misuse: one-line errors, nothing overwritten, nothing lost."""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest
from sessions import SessionBuilder, text
from site_helpers import build, make_session, run_sitegen
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.resources import resource_dir
from sitegen.session.load import load_raw
from sitegen.site.live.serve import make_server

runner = CliRunner()


def session(tmp_path: Path) -> Path:
    b = SessionBuilder(session_id="edge-1")
    b.user("u1", "ZZ_EDGE_ZZ")
    b.assistant("a1", [text("ok")])
    return b.write(tmp_path / "edge.jsonl")


def test_export_never_writes_over_a_session_file(tmp_path: Path) -> None:
    path = session(tmp_path)
    before = path.read_bytes()
    for target in (path, tmp_path / "other.jsonl"):
        result = runner.invoke(app, ["export", str(path), str(target)])
        assert result.exit_code == 1 and "Refusing to write the page over a session file" in result.stderr
    assert path.read_bytes() == before and not (tmp_path / "other.jsonl").exists()


def test_export_never_writes_into_the_sessions_artifacts(tmp_path: Path) -> None:
    path = session(tmp_path)
    artifacts = path.with_suffix("")
    artifacts.mkdir()
    log = artifacts / "0.bash.log"
    log.write_text("ZZ_ARTIFACT_ZZ")
    for target in (log, artifacts, artifacts / "page.html"):
        result = runner.invoke(app, ["export", str(path), str(target)])
        assert result.exit_code == 1 and "artifacts folder" in result.stderr, target
    assert log.read_text() == "ZZ_ARTIFACT_ZZ" and sorted(artifacts.iterdir()) == [log]


def test_export_to_a_place_that_cannot_hold_a_page_names_that_place(tmp_path: Path) -> None:
    path = session(tmp_path)
    (tmp_path / "plain.txt").write_text("x")
    target = tmp_path / "plain.txt" / "deeper" / "p.html"
    result = runner.invoke(app, ["export", str(path), str(target)])
    assert result.exit_code == 1
    assert result.stderr == f"Cannot write {target}: {tmp_path / 'plain.txt'} is not a folder\n"
    result = runner.invoke(app, ["export", str(path), "/proc/sitegen-page.html"])
    assert result.exit_code == 1 and result.stderr.startswith("Cannot write /proc/sitegen-page.html: ")
    assert ".tmp" not in result.stderr  # never the temporary name the page was being written under


def test_export_into_a_folder_writes_stem_html_there(tmp_path: Path) -> None:
    path = session(tmp_path)
    folder = tmp_path / "pages"
    folder.mkdir()
    result = runner.invoke(app, ["export", str(path), str(folder)])
    assert result.exit_code == 0 and (folder / "edge.html").is_file()


def test_export_with_a_very_long_file_name(tmp_path: Path) -> None:
    path = session(tmp_path)
    long = tmp_path / ("x" * 240 + ".html")
    result = runner.invoke(app, ["export", str(path), str(long)])
    assert result.exit_code == 0, result.stderr
    assert long.is_file()


def test_migrate_write_through_a_symlink_rewrites_the_target(tmp_path: Path) -> None:
    real = tmp_path / "old.jsonl"
    real.write_bytes(
        b'{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}\n'
        b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}\n'
    )
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    result = runner.invoke(app, ["migrate", str(link), "--write"])
    assert result.exit_code == 0
    assert link.is_symlink() and load_raw(real).header["version"] == 3


def test_odek_sessions_in_ls_all_and_by_case_insensitive_prefix(isolated_home: Path) -> None:
    shutil.copytree(resource_dir("demo") / "odek" / "sessions", isolated_home / ".odek" / "sessions")
    rows = orjson.loads(runner.invoke(app, ["ls", "--all", "--json"]).stdout)
    assert sum(1 for r in rows if r["path"].endswith(".json")) == 3
    result = runner.invoke(app, ["dump", "20260517-1D7B"])
    assert result.exit_code == 0 and "# Conversation" in result.stdout
    ambiguous = runner.invoke(app, ["dump", "20260518"])
    assert ambiguous.exit_code == 1 and "20260518-3f9a" in ambiguous.stderr and "20260518-8c2e" in ambiguous.stderr
    odek_context = runner.invoke(app, ["context", "20260517"])
    assert odek_context.exit_code == 1 and "odek session" in odek_context.stderr


def test_context_json_of_deeply_nested_arguments(tmp_path: Path) -> None:
    import json

    nested: object = "deep"
    for _ in range(600):
        nested = [nested]
    b = SessionBuilder()
    b.user("u1", "go")
    path = b.write(tmp_path / "deep.jsonl")
    call = {"type": "toolCall", "id": "c1", "name": "x", "arguments": {"v": nested}}
    entry = {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:01:00.000Z"}
    entry["message"] = {"role": "assistant", "content": [call]}
    with open(path, "a") as handle:
        handle.write(json.dumps(entry) + "\n")
    result = runner.invoke(app, ["context", str(path), "--json"])
    assert result.exit_code == 0 and '"deep"' in result.stdout


def test_export_and_share_of_values_nested_a_thousand_deep(tmp_path: Path) -> None:
    # Deeper than Python's recursion limit and orjson's writer, within what orjson reads.
    opened = '{"a":' * 1000
    deep = opened + '{"v":"ZZ_BOTTOM_ZZ"}' + "}" * 1000
    b = SessionBuilder()
    b.user("u1", "go")
    path = b.write(tmp_path / "deep.jsonl")
    stamp = '"timestamp":"2026-01-01T00:01:00.000Z"'
    call = '{"type":"toolCall","id":"c1","name":"x","arguments":' + deep + "}"
    lines = [
        '{"type":"message","id":"a1","parentId":"u1",'
        + stamp
        + ',"message":{"role":"assistant",'
        + '"content":['
        + call
        + "]}}",
        '{"type":"custom","id":"x1","parentId":"a1",' + stamp + ',"customType":"t","data":' + deep + "}",
    ]
    with open(path, "a") as handle:
        handle.write("\n".join(lines) + "\n")
    assert load_raw(path).malformed_lines == 0
    for extra in ([], ["--redact"]):
        out = tmp_path / "deep.html"
        result = runner.invoke(app, ["export", str(path), str(out), *extra])
        assert result.exit_code == 0, result.stderr
        page = out.read_text()
        assert 'id="entry-a1"' in page and 'id="entry-x1"' in page and "…" in page
    agent = tmp_path / "agent" / "sessions" / "--work-demo--"
    agent.mkdir(parents=True)
    shutil.copy(path, agent / "2026-01-01T00-00-00-000Z_deep.jsonl")
    result = build(tmp_path / "site", tmp_path / "agent")
    assert result.rendered and not result.problems


def test_watch_port_out_of_range_is_a_usage_error() -> None:
    result = runner.invoke(app, ["watch", "--demo", "--port", "99999"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_build_stopped_half_way_can_be_resumed(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    make_session(agent, "/work/a", "a-1", "ZZ_A_ZZ")
    site = tmp_path / "site"
    build(site, agent)
    (site / ".sitegen" / "manifest.json").unlink()  # as if stopped before the manifest was written
    result = build(site, agent)
    assert result.rendered and (site / "index.html").is_file()


def test_file_names_that_are_not_utf8_are_left_out_and_said(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    good = make_session(agent, "/work/a", "good-1", "ZZ_GOOD_ZZ")
    bad = os.fsencode(good.parent) + b"/2026-01-02T00-00-00-000Z_bad\xff.jsonl"
    with open(bad, "wb") as handle:
        handle.write(good.read_bytes())
    result = build(tmp_path / "site", agent)
    assert len(result.rendered) == 1
    assert result.problems == [
        f"{good.parent}/2026-01-02T00-00-00-000Z_bad\ufffd.jsonl: the file name is not UTF-8, so it has no page"
        " (rename it to include it)"
    ]


def test_absurd_usage_numbers_do_not_break_the_build(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    b = SessionBuilder(session_id="huge-1", cwd="/work/h")
    b.user("u1", "hi")
    b.message("a1", "assistant", [text("ok")], usage={"input": 1e20, "output": -5, "cost": {"total": 1e30}})
    b.write(agent / "sessions" / "--work-h--" / "2026-01-01T00-00-00-000Z_huge-1.jsonl")
    result = build(tmp_path / "site", agent)
    assert result.rendered and not result.problems


def test_server_refuses_foreign_host_names(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<html><body>ZZ_SITE_ZZ</body></html>")
    server = make_server(tmp_path, "127.0.0.1", 0)
    server.start()
    try:
        with urllib.request.urlopen(server.url + "index.html", timeout=5) as response:
            assert b"ZZ_SITE_ZZ" in response.read()
        request = urllib.request.Request(server.url + "index.html", headers={"Host": "rebind.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 403
    finally:
        server.close()


def test_build_options_that_cannot_work_are_refused(tmp_path: Path) -> None:
    demo_with_dirs = runner.invoke(app, ["build", "--demo", "--agent-dir", str(tmp_path), "--out", str(tmp_path / "s")])
    assert demo_with_dirs.exit_code == 1 and "--demo builds only" in demo_with_dirs.stderr
    assert runner.invoke(app, ["build", "--jobs", "0", "--out", str(tmp_path / "s")]).exit_code == 2
    for command in ("build", "watch"):
        for option in ("--agent-dir", "--odek-dir"):
            typo = runner.invoke(app, [command, option, str(tmp_path / "no-such"), "--out", str(tmp_path / "s")])
            assert typo.exit_code == 1 and typo.stderr == f"Not a folder: {option} {tmp_path / 'no-such'}\n"
    assert not (tmp_path / "s").exists()


def test_exporting_a_pipe_named_like_a_session_is_a_one_line_error(tmp_path: Path) -> None:
    # build lists such a pipe as a problem: tests/test_robustness.py
    folder = make_session(tmp_path / "agent", "/work/odd", "good-1", "ZZ_GOOD_ZZ").parent
    os.mkfifo(folder / "pipe.jsonl")
    pipe = run_sitegen("export", str(folder / "pipe.jsonl"), "p.html", cwd=tmp_path)
    assert pipe.returncode == 1 and len(pipe.stderr.splitlines()) == 1 and not (tmp_path / "p.html").exists()


def test_artifacts_that_are_pipes_devices_or_links_out_of_their_folder_are_refused(tmp_path: Path) -> None:
    b = SessionBuilder(session_id="art-1")
    b.user("u1", "go")
    session = b.write(tmp_path / "art.jsonl")
    artifacts = session.with_suffix("")
    artifacts.mkdir()
    os.mkfifo(artifacts / "0.bash.log")
    (artifacts / "1.bash.log").symlink_to("/dev/zero")
    (tmp_path / "secret.txt").write_text("ZZ_OUTSIDE_ZZ")
    (artifacts / "2.bash.log").symlink_to(tmp_path / "secret.txt")
    (artifacts / "kept.txt").write_text("ZZ_INSIDE_ZZ")
    (artifacts / "3.bash.log").symlink_to("kept.txt")
    expected = {0: "not a regular file", 1: f"links outside {artifacts}", 2: f"links outside {artifacts}"}
    for number, message in expected.items():
        done = run_sitegen("resolve", f"artifact://{number}", "--session", str(session), cwd=tmp_path)
        assert done.returncode == 1 and done.stderr.strip().endswith(message), done.stderr
    done = run_sitegen("resolve", "artifact://3", "--session", str(session), cwd=tmp_path)
    assert done.returncode == 0 and "ZZ_INSIDE_ZZ" in done.stdout  # a link within the folder is fine
