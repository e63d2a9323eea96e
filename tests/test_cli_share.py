"""sitegen share / export --redact / dump --copy through the CLI, with real stand-in executables."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sessions import SessionBuilder, text, tool_call
from share_fixtures import GIST_ID, gh_calls
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.resources import resource_dir

runner = CliRunner()
AWS_KEY = "AKIA" + "Q3EGRT5XJ7MNBV2C"  # split so secret scanners leave the repo alone
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def secret_session(tmp_path: Path) -> Path:
    b = SessionBuilder(session_id="share-1")
    b.user("u1", f"deploy with AWS_ACCESS_KEY_ID={AWS_KEY} ZZ_SHARE_ZZ")
    b.assistant("a1", [text("ok"), tool_call("c1", "bash", command=f"curl -H 'Authorization: token {GITHUB_TOKEN}'")])
    b.tool_result("r1", "c1", "bash", f"token was {GITHUB_TOKEN}")
    return b.write(tmp_path / "agent" / "sessions" / "--work--" / "2026-01-01T00-00-00-000Z_share-1.jsonl")


def test_share_through_a_handler_prints_its_url(tmp_path: Path, temp_dir: Path, no_browser: list[str]) -> None:
    session = secret_session(tmp_path)
    handler = tmp_path / "h.py"
    seen = tmp_path / "seen.html"
    handler.write_text(
        "import shutil\n"
        f"def share(html_path):\n    shutil.copy(html_path, {str(seen)!r})\n    return 'https://share.example/p/1'\n"
    )
    result = runner.invoke(app, ["share", str(session), "--handler", str(handler), "--open"])
    assert result.exit_code == 0, result.stderr
    assert "https://share.example/p/1" in result.stdout
    assert "Redacted 3 secrets" in result.stdout
    page = seen.read_text()
    assert "ZZ_SHARE_ZZ" in page and AWS_KEY not in page and GITHUB_TOKEN not in page
    assert "[REDACTED:aws-access-key-id]" in page
    assert no_browser == ["https://share.example/p/1"]
    assert list(temp_dir.iterdir()) == []
    assert AWS_KEY in session.read_text()  # the session itself is never changed


def test_share_without_redaction_keeps_text(tmp_path: Path, temp_dir: Path) -> None:
    session = secret_session(tmp_path)
    handler = tmp_path / "h.py"
    seen = tmp_path / "seen.html"
    handler.write_text(f"import shutil\ndef share(p):\n    shutil.copy(p, {str(seen)!r})\n")
    result = runner.invoke(app, ["share", str(session), "--handler", str(handler), "--no-redact"])
    assert result.exit_code == 0 and "Session shared" in result.stdout
    assert AWS_KEY in seen.read_text()


def test_failing_handler_is_one_line_and_no_gist(tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path]) -> None:
    session = secret_session(tmp_path)
    handler = tmp_path / "h.py"
    handler.write_text("def share(p):\n    raise RuntimeError('ZZ_BOOM_ZZ')\n")
    folder = fake_gh()
    result = runner.invoke(app, ["share", str(session), "--handler", str(handler)])
    assert result.exit_code == 1 and "ZZ_BOOM_ZZ" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert gh_calls(folder) == []


def test_share_as_gist_with_the_stand_in_gh(tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path]) -> None:
    session = secret_session(tmp_path)
    folder = fake_gh()
    result = runner.invoke(app, ["share", str(session)])
    assert result.exit_code == 0, result.stderr
    assert f"Preview: https://gistpreview.github.io/?{GIST_ID}" in result.stdout
    assert f"Gist: https://gist.github.com/{GIST_ID}" in result.stdout
    create = next(c for c in gh_calls(folder) if c["args"][:2] == ["gist", "create"])
    assert "--public=false" in create["args"]
    (name, uploaded), *_ = create["files"].items()  # type: ignore[union-attr]
    assert name.endswith(".html") and "deploy" in name
    # The title (the first message) names the gist and its file: redacted there too.
    assert not any(AWS_KEY in arg for arg in create["args"]) and AWS_KEY not in name  # type: ignore[union-attr]
    assert "--desc=deploy with AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id] ZZ_SHARE_ZZ" in create["args"]  # type: ignore[operator]
    assert GITHUB_TOKEN not in uploaded and "[REDACTED:github-token]" in uploaded


def test_gist_auth_failure_says_what_to_do(tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path]) -> None:
    session = secret_session(tmp_path)
    fake_gh(auth_rc=1)
    result = runner.invoke(app, ["share", str(session)])
    assert result.exit_code == 1 and "gh auth login" in result.stderr


def test_ctrl_c_while_gh_runs_kills_it(tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path]) -> None:
    session = secret_session(tmp_path)
    folder = fake_gh(create="hang")
    env = {**os.environ, "TMPDIR": str(temp_dir)}
    process = subprocess.Popen(
        [sys.executable, "-m", "sitegen.cli", "share", str(session)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 30
    while not (folder / "gh.pid").exists():
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.05)
    gh_pid = int((folder / "gh.pid").read_text())
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130 and "Share cancelled" in err
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(gh_pid, 0)
            time.sleep(0.1)
    assert list(temp_dir.iterdir()) == []


def test_export_redact_reports_counts(tmp_path: Path) -> None:
    session = secret_session(tmp_path)
    out = tmp_path / "page.html"
    result = runner.invoke(app, ["export", str(session), str(out), "--redact"])
    assert result.exit_code == 0 and "Redacted 3 secrets" in result.stdout
    assert AWS_KEY not in out.read_text()


def test_redaction_reaches_labels_paths_subagents_and_the_odek_audit(tmp_path: Path) -> None:
    b = SessionBuilder(session_id="share-2", cwd=f"/work/{GITHUB_TOKEN}")
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "task", task="scout")])
    b.tool_result("r1", "c1", "task", "see agent://Scout")
    b.add("label", "l1", targetId="u1", label=f"key {AWS_KEY}")
    session = b.write(tmp_path / "share-2.jsonl")
    artifacts = session.with_suffix("")
    artifacts.mkdir()
    (artifacts / "Scout.md").write_text("scouted")
    sub = SessionBuilder(session_id="sub-2")
    sub.user("s1", "log in")
    sub.assistant("s2", [tool_call("c9", "login", user="me", password="ZZhunter2-secret-pw")])
    sub.write(artifacts / "Scout.jsonl")
    out = tmp_path / "page.html"
    result = runner.invoke(app, ["export", str(session), str(out), "--redact"])
    assert result.exit_code == 0, result.stderr
    page = out.read_text()
    assert "ZZhunter2-secret-pw" not in page and "scouted" in page  # a key-named value in an embedded subagent
    assert AWS_KEY not in page and GITHUB_TOKEN not in page  # the label badge, the cwd

    odek = resource_dir("demo") / "odek" / "sessions"
    store = tmp_path / "odek"
    shutil.copytree(odek, store)
    audit = store / "audit" / "20260518-8c2e4a6b0d1f3e5a7c9b2d4f6a8c0e1b.json"
    data = json.loads(audit.read_text())
    data["turns"][1]["user_message"] = f"ZZ_AUDIT_ZZ my token is {GITHUB_TOKEN}"
    audit.write_text(json.dumps(data))
    result = runner.invoke(app, ["export", str(store / audit.name), str(out), "--redact"])
    assert result.exit_code == 0, result.stderr
    page = out.read_text()
    assert "ZZ_AUDIT_ZZ my token is [REDACTED:github-token]" in page and GITHUB_TOKEN not in page


def test_dump_copy_uses_a_clipboard_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = secret_session(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sink = tmp_path / "clip.txt"
    tool = bin_dir / "xclip"
    tool.write_text(f"#!/bin/sh\n/bin/cat > {sink}\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = runner.invoke(app, ["dump", str(session), "--copy"])
    assert result.exit_code == 0 and "Copied to the clipboard (xclip)" in result.stdout
    assert "ZZ_SHARE_ZZ" in sink.read_text()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = runner.invoke(app, ["dump", str(session), "--copy"])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1


def test_redaction_reaches_ids_models_roles_tool_names_and_argument_keys(tmp_path: Path, temp_dir: Path) -> None:
    # Each spot gets its own token, so a failure names the spot that leaked.
    def token(n: int) -> str:
        return GITHUB_TOKEN[:-2] + f"{n:02d}"

    b = SessionBuilder(session_id=f"id-{token(1)}")
    b.add("model_change", "mc", model=f"prov/{token(2)}")
    b.user("u1", "go ZZ_SHARE_ZZ")
    b.assistant("a1", [tool_call("c1", f"tool-{token(3)}", **{token(4): "v", "env": {token(5): 1}})], model=token(6))
    b.tool_result("r1", "c1", f"tool-{token(3)}", "done")
    b.message("m1", token(7), [text("odd role")])
    session = b.write(tmp_path / "share-3.jsonl")
    handler = tmp_path / "h.py"
    seen = tmp_path / "seen.html"
    handler.write_text(f"import shutil\ndef share(p):\n    shutil.copy(p, {str(seen)!r})\n")
    result = runner.invoke(app, ["share", str(session), "--handler", str(handler)])
    assert result.exit_code == 0, result.stderr
    page = seen.read_text()
    assert "ZZ_SHARE_ZZ" in page and "[REDACTED:github-token]" in page
    assert [n for n in range(1, 8) if token(n) in page] == []


def test_gist_title_is_redacted_before_it_is_shortened(
    tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path]
) -> None:
    # The title is the first line of the first message, cut: a key's header on that line, its body
    # below, is no longer a whole key there, so the whole message is redacted first.
    body = "".join(f"{n:02d}Zq9" + "Ab3+Cd5/" * 7 for n in range(6))
    key = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    b = SessionBuilder(session_id="share-4")
    pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{key}\n-----END OPENSSH PRIVATE KEY-----"
    b.user("u1", f"ZZ_TITLE_ZZ my deploy key: {pem}")
    session = b.write(tmp_path / "share-4.jsonl")
    folder = fake_gh()
    result = runner.invoke(app, ["share", str(session)])
    assert result.exit_code == 0, result.stderr
    create = next(c for c in gh_calls(folder) if c["args"][:2] == ["gist", "create"])
    desc = next(arg for arg in create["args"] if arg.startswith("--desc="))  # type: ignore[union-attr]
    assert desc == "--desc=ZZ_TITLE_ZZ my deploy key: [REDACTED:private-key]"
    (name, _), *_ = create["files"].items()  # type: ignore[union-attr]
    assert name == "ZZ_TITLE_ZZ-my-deploy-key-REDACTED-private-key.html"
