"""The command line: every command through typer's CliRunner, errors as one line with exit 1."""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from sessions import SessionBuilder, branching_session, text, tool_call
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.session.load import load_raw

runner = CliRunner()


def invoke(*args: str | Path, cwd: Path | None = None) -> tuple[int, str, str]:
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = runner.invoke(app, [str(a) for a in args])
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def tree_state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under folder with its content hash and mtime: proof nothing was written."""
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            state[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return state


@pytest.fixture
def agent_dir(isolated_home: Path) -> Path:
    """~/.pi/agent with two projects: /work/demo (two sessions) and /work/other (one)."""
    agent = isolated_home / ".pi" / "agent"
    sessions = agent / "sessions"
    branching_session().write(sessions / "--work-demo--" / "2026-01-01T00-00-00-000Z_aaaa1111-0000.jsonl")
    second = SessionBuilder(session_id="aaaa2222-0000")
    second.user("u1", "second session ZZ_SECOND_ZZ")
    second.assistant("a1", [text("ok")])
    second.write(sessions / "--work-demo--" / "2026-01-02T00-00-00-000Z_aaaa2222-0000.jsonl")
    other = SessionBuilder(session_id="bbbb3333-0000", cwd="/work/other")
    other.user("u1", "other project")
    other.write(sessions / "--work-other--" / "2026-01-03T00-00-00-000Z_bbbb3333-0000.jsonl")
    return agent


@pytest.fixture
def demo_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory whose path the sessions claim as their cwd (/work/demo is not writable)."""
    return tmp_path


def test_ls_json_lists_every_project_with_required_keys(agent_dir: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("ls", "--all", "--json", cwd=tmp_path)
    assert code == 0
    rows = orjson.loads(out)
    assert {r["id"] for r in rows} == {"sess-0001", "aaaa2222-0000", "bbbb3333-0000"}
    for key in (
        "path",
        "id",
        "cwd",
        "title",
        "created",
        "modified",
        "messageCount",
        "firstMessage",
        "parentSession",
    ):
        assert key in rows[0]
    second = next(r for r in rows if r["id"] == "aaaa2222-0000")
    assert second["firstMessage"] == "second session ZZ_SECOND_ZZ" and second["messageCount"] == 2


def test_ls_without_all_lists_only_this_directory(agent_dir: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("ls", cwd=tmp_path)
    assert code == 0 and "No sessions found" in out


def test_context_json_has_the_documented_keys(agent_dir: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("context", "sess", "--json", cwd=tmp_path)
    assert code == 0
    data = orjson.loads(out)
    assert set(data) == {
        "rules",
        "leafId",
        "messages",
        "thinkingLevel",
        "models",
        "injectedTtsrRules",
        "mode",
        "modeData",
    }
    assert data["leafId"] == "tres0003"
    assert data["messages"][0]["role"] == "compactionSummary"
    assert data["models"] == {"default": "anthropic/claude-test"}


def test_context_at_another_leaf(agent_dir: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("context", "sess-0001", "--leaf", "asst0002", "--json", cwd=tmp_path)
    roles = [m["role"] for m in orjson.loads(out)["messages"]]
    assert code == 0 and roles == ["user", "assistant", "toolResult", "assistant"]
    code, _, err = invoke("context", "sess-0001", "--leaf", "nope", cwd=tmp_path)
    assert code == 1 and "No entry 'nope'" in err


def test_ambiguous_prefix_lists_candidates(agent_dir: Path, tmp_path: Path) -> None:
    code, _, err = invoke("context", "aaaa", cwd=tmp_path)
    assert code == 1
    assert len(err.strip().splitlines()) == 1
    assert "aaaa2222-0000" in err and "Traceback" not in err


def test_missing_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    for command in ("export", "context", "dump", "migrate"):
        code, _, err = invoke(command, tmp_path / "nope.jsonl")
        assert code == 1, command
        assert err.strip() == f"File not found: {tmp_path / 'nope.jsonl'}"


def test_not_a_session_is_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "x.jsonl"
    bogus.write_text('{"type":"message"}\n')
    code, _, err = invoke("export", bogus)
    assert code == 1 and err.startswith("Not a session file") and "Traceback" not in err


def test_export_writes_page_next_to_cwd_and_never_touches_inputs(agent_dir: Path, tmp_path: Path) -> None:
    before = tree_state(agent_dir)
    code, out, _ = invoke("export", "sess-0001", cwd=tmp_path)
    assert code == 0
    target = tmp_path / "2026-01-01T00-00-00-000Z_aaaa1111-0000.html"
    assert out.strip() == f"Exported to: {target}"
    assert "ZZ_FIRST_USER_ZZ" in target.read_text()
    assert tree_state(agent_dir) == before


def test_export_to_named_output_and_open(agent_dir: Path, tmp_path: Path, no_browser: list[str]) -> None:
    out_file = tmp_path / "deep" / "page.html"
    code, _, _ = invoke("export", "sess-0001", out_file, "--open", cwd=tmp_path)
    assert code == 0 and out_file.is_file()
    assert no_browser == [out_file.resolve().as_uri()]


def test_an_export_in_a_process_that_goes_on_keeps_nothing_after_it(agent_dir: Path, tmp_path: Path) -> None:
    """Only the console entry, which ends the process without teardown, keeps the export's transcript
    until then (freeing it cost 40 ms): run as here, in a process that goes on, it is freed."""
    app_module = importlib.import_module("sitegen.cli.app")  # the module; sitegen.cli.app is also the Typer
    assert invoke("export", "sess-0001", cwd=tmp_path)[0] == 0
    assert app_module._kept_until_exit == []


def test_export_output_as_an_option(agent_dir: Path, tmp_path: Path) -> None:
    for flag in ("-o", "--out"):
        out_file = tmp_path / f"page{flag}.html"
        code, out, _ = invoke("export", "sess-0001", flag, out_file, cwd=tmp_path)
        assert code == 0 and out.strip() == f"Exported to: {out_file}"
        assert "ZZ_FIRST_USER_ZZ" in out_file.read_text()
    # The same file twice is fine; two different ones are a usage error, and nothing is written.
    same = tmp_path / "same.html"
    code, _, _ = invoke("export", "sess-0001", same, "--out", same, cwd=tmp_path)
    assert code == 0 and same.is_file()
    code, _, err = invoke("export", "sess-0001", tmp_path / "a.html", "-o", tmp_path / "b.html", cwd=tmp_path)
    assert code == 2 and "give the output file once" in err and "Internal error" not in err
    assert not (tmp_path / "a.html").exists() and not (tmp_path / "b.html").exists()


def test_dump_prints_the_context_as_text(agent_dir: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("dump", "sess-0001", cwd=tmp_path)
    assert code == 0
    assert "ZZ_SYSTEM_PROMPT_ZZ" in out and "# Conversation" in out
    assert "Summary ZZ_COMPACTION_ZZ" in out
    assert "[tool call edit id=call0003]" in out


def test_terminal_control_sequences_from_a_session_are_shown_not_obeyed(isolated_home: Path, tmp_path: Path) -> None:
    # OSC 52 writes the clipboard, OSC 0 sets the window title, \r hides what came before it.
    hostile = "\x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b]0;owned\x07 red \x1b[31mtext\x1b[0m\r over\x9b"
    b = SessionBuilder(session_id="ctl-1", cwd=f"/work/x{hostile}")
    b.user("u1", f"hello {hostile}")
    b.assistant("a1", [text(hostile)])
    b.add("ttsr_injection", "t1", injectedRules=[f"rule{hostile}"])
    b.assistant("a2", [text("ok")])
    path = b.write(isolated_home / ".pi" / "agent" / "sessions" / "--work-x--" / "2026-01-01T00-00-00-000Z_ctl-1.jsonl")
    outputs = [invoke(*args)[1] for args in (("dump", path), ("context", path), ("ls", "--all"))]
    for out in outputs:
        assert "\x1b" not in out and "\x07" not in out and "\r" not in out and "\x9b" not in out
    assert "␛]52;c;ZWNobyBwd25lZA==␇" in outputs[0] and "␍ over" in outputs[0]
    assert "rule␛]52" in outputs[1]
    assert "hello ␛]52" in outputs[2]


def test_warnings_show_control_characters_from_a_session(tmp_path: Path) -> None:
    # A missing image blob is warned about by its entry's id, which the session chose.
    b = SessionBuilder(session_id="ctl-3")
    image = {"type": "image", "mimeType": "image/png", "data": "blob:sha256:" + "ab" * 32}
    b.message("u1\x1b]0;owned\x07\x9b2J", "user", [text("see ZZ_WARN_ZZ"), image])
    path = b.write(tmp_path / "ctl-3.jsonl")
    for command in ("dump", "context"):
        done = subprocess.run(
            [sys.executable, "-m", "sitegen.cli", command, str(path)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert "missing blob" in done.stderr and "(entry u1␛]0;owned␇\ufffd2J)" in done.stderr
        assert not any(c in done.stderr for c in "\x1b\x07\x9b")


def test_error_lines_show_control_characters(tmp_path: Path) -> None:
    # The error lists the artifacts folder's outputs, whose names the agent chose.
    path = SessionBuilder(session_id="ctl-4").write(tmp_path / "ctl-4.jsonl")
    (tmp_path / "ctl-4").mkdir()
    (tmp_path / "ctl-4" / "Scout\x1b]0;owned\x07.md").write_text("ZZ_OUT_ZZ")
    code, _, err = invoke("resolve", "agent://Nope", "--session", path)
    assert code == 1 and err == "Not found: Nope. Available: Scout␛]0;owned␇\n"


def test_json_output_escapes_the_controls_json_allows_raw(isolated_home: Path) -> None:
    # JSON escapes C0 controls but lets DEL and the C1 controls through raw; U+009B is a one-character
    # CSI that terminals obey. Escaped, they print as text and load back as the same value.
    hostile = "go \x9b2J\x9b31m red \x7f \x85 \x1b]0;owned\x07 ZZ_JSON_ZZ"
    b = SessionBuilder(session_id="ctl-2", cwd="/work/y")
    b.user("u1", hostile)
    b.assistant("a1", [text("ok")])
    path = b.write(isolated_home / ".pi" / "agent" / "sessions" / "--work-y--" / "2026-01-01T00-00-00-000Z_ctl-2.jsonl")
    (code, context, _), (code2, listing, _) = invoke("context", path, "--json"), invoke("ls", "--all", "--json")
    assert code == code2 == 0
    for out in (context, listing):
        assert not any(c in out for c in "\x1b\x07\x7f\x85\x9b"), repr(out)
        assert "\\u009b2J" in out and "\\u007f" in out
    assert orjson.loads(context)["messages"][0]["content"][0]["text"] == hostile
    assert orjson.loads(listing)[0]["firstMessage"] == hostile


def test_dump_of_empty_session(tmp_path: Path) -> None:
    path = SessionBuilder().write(tmp_path / "empty.jsonl")
    code, out, _ = invoke("dump", path)
    assert code == 0 and out.strip() == "No messages to dump yet"


def test_resolve_artifact_and_agent_urls(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="make")])
    path = b.write(tmp_path / "s.jsonl")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "3.bash.log").write_text("ZZ_LOG_ZZ\n")
    (tmp_path / "s" / "Scout.md").write_text('{"found": {"files": ["a.py", "b.py"]}}')
    code, out, _ = invoke("resolve", "artifact://3", "--session", path)
    assert code == 0 and out == "ZZ_LOG_ZZ\n"
    code, out, _ = invoke("resolve", "agent://Scout/found/files/1", "--session", path)
    assert code == 0 and "b.py" in out
    code, _, err = invoke("resolve", "artifact://x", "--session", path)
    assert code == 1 and err.strip() == "artifact:// ID must be numeric, got: x"


def test_migrate_reports_then_writes_atomically(tmp_path: Path, real_fixtures: Path) -> None:
    path = tmp_path / "old.jsonl"
    shutil.copy(real_fixtures / "pi-before-compaction.v1.jsonl", path)
    original = path.read_bytes()
    code, out, _ = invoke("migrate", path)
    assert code == 0 and "version 1 -> 3" in out and "2 compactions" in out
    assert path.read_bytes() == original  # a report only
    code, out, _ = invoke("migrate", path, "--write")
    assert code == 0 and "Written." in out
    migrated = load_raw(path)
    assert migrated.header["version"] == 3
    assert all(isinstance(e.get("id"), str) for e in migrated.entries)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]  # no temp file left
    code, out, _ = invoke("migrate", path)
    assert "nothing to migrate" in out


def test_migrate_write_keeps_unreadable_lines(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    lines = [
        b'{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}',
        b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}',
        b"this line is not json ZZ_GARBAGE_ZZ",
        b'{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"x"}}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, _, _ = invoke("migrate", path, "--write")
    assert code == 0
    written = path.read_bytes().splitlines()
    assert written[2] == b"this line is not json ZZ_GARBAGE_ZZ"
    raw = load_raw(path)
    assert raw.malformed_lines == 1
    assert raw.entries[1]["message"]["role"] == "custom"
    assert raw.entries[1]["parentId"] == raw.entries[0]["id"]


def test_migrate_refuses_a_file_being_written(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(
        b'{"type":"session","id":"live","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}\n'
        b'{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}\n'
        b'{"type":"message","timest'
    )
    before = path.read_bytes()
    code, _, err = invoke("migrate", path, "--write")
    assert code == 1 and "being written" in err
    assert path.read_bytes() == before


def test_help_is_fast_and_lists_commands() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    for command in ("export", "build", "ls", "context", "dump", "migrate", "resolve"):
        assert command in out


def test_every_command_has_its_help() -> None:
    # Help text is rich markup: a bracket in it once made `resolve --help` fail with a traceback.
    for name in sorted(command.name or "" for command in app.registered_commands):
        code, out, err = invoke(name, "--help")
        assert code == 0 and "Usage" in out, (name, err)


def test_build_without_sessions_suggests_the_demo(tmp_path: Path) -> None:
    code, _, err = invoke("build", "--out", tmp_path / "site")
    assert code == 0 and "sitegen build --demo" in err


def test_missing_blobs_are_summed_up_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    b = SessionBuilder()
    refs = [{"type": "image", "data": "blob:sha256:" + f"{i:064x}", "mimeType": "image/png"} for i in range(3)]
    b.message("u1", "user", [text("look"), *refs])
    path = b.write(tmp_path / "agent" / "sessions" / "--w--" / "s.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "sitegen.cli", "export", str(path), str(tmp_path / "o.html")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "3 missing or unreadable image blobs" in warnings[0]
    assert "missing blob" in (tmp_path / "o.html").read_text()


def test_console_export_skips_teardown_but_keeps_its_output_and_exit_code(tmp_path: Path) -> None:
    """The console entry ends an export with os._exit (freeing a big session's heap took 0.3 s): the
    page is whole, what it printed arrives, and a failure keeps its exit code."""
    session = branching_session().write(tmp_path / "s.jsonl")
    script = "import atexit; atexit.register(print, 'ZZ_TEARDOWN_ZZ'); from sitegen.cli import main; main()"
    page = tmp_path / "s.html"
    done = subprocess.run(
        [sys.executable, "-c", script, "export", str(session), str(page)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Exported to: {page}\n"
    assert page.read_text(encoding="utf-8").rstrip().endswith("</html>")
    missing = subprocess.run(
        [sys.executable, "-c", script, "export", str(tmp_path / "none.jsonl"), str(page)],
        capture_output=True,
        text=True,
    )
    assert missing.returncode != 0 and "none.jsonl" in missing.stderr
    assert "ZZ_TEARDOWN_ZZ" not in done.stdout + missing.stdout
