"""What tool output points at is resolved into the transcript before a page is made: artifacts as handles to
their files, agent outputs, subagents' transcripts (nested, as deep as a page embeds them) and odek frames."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from markupsafe import escape
from sessions import SessionBuilder, text, tool_call
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.redact import Redactor
from sitegen.render.export import export_html
from sitegen.render.page import PageOptions, PageRenderer
from sitegen.resources import resource_dir
from sitegen.transcript.attachments import (
    MAX_SUBAGENT_DEPTH,
    FileOutput,
    FilteredFileOutput,
    resolve_attachments,
)
from sitegen.transcript.load import load_transcript

ROOT = Path(__file__).resolve().parent.parent
AWS_KEY = "AKIA" + "Q3EGRT5XJ7MNBV2C"  # split so secret scanners leave the repo alone


def subagent(folder: Path, agent_id: str, marker: str, child: str | None = None) -> None:
    """<agent_id>.md and .jsonl in folder; the subagent's own call names child's output when given."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{agent_id}.md").write_text(f"output of {agent_id}", encoding="utf-8")
    b = SessionBuilder(session_id=f"sub-{agent_id}")
    b.user("s1", "go on")
    b.assistant("s2", [text(marker), tool_call("t1", "task", task="deeper")])
    b.tool_result("s3", "t1", "task", f"see agent://{child}" if child else "done")
    b.write(folder / f"{agent_id}.jsonl")


def session_with_places(folder: Path) -> Path:
    """A session naming an artifact log, a missing artifact, and a subagent that starts subagents in turn."""
    b = SessionBuilder(session_id="places-1")
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="make"), tool_call("c2", "task", task="scout")])
    b.tool_result("r1", "c1", "bash", "tail...\n[full output: artifact://0] and artifact://7")
    b.tool_result("r2", "c2", "task", "done, see agent://Scout")
    session = b.write(folder / "places.jsonl")
    artifacts = session.with_suffix("")
    artifacts.mkdir()
    (artifacts / "0.bash.log").write_text("ZZ_LOG_ZZ é\n", encoding="utf-8")
    # Scout -> Deep1 -> Deep2 -> Deep3: each in the folder named like its parent's file.
    subagent(artifacts, "Scout", "ZZ_SCOUT_ZZ", "Deep1")
    subagent(artifacts / "Scout", "Deep1", "ZZ_DEEP1_ZZ", "Deep2")
    subagent(artifacts / "Scout" / "Deep1", "Deep2", "ZZ_DEEP2_ZZ", "Deep3")
    subagent(artifacts / "Scout" / "Deep1" / "Deep2", "Deep3", "ZZ_DEEP3_ZZ")
    return session


def test_artifacts_outputs_and_subagents_are_resolved_into_the_transcript(tmp_path: Path) -> None:
    transcript = load_transcript(session_with_places(tmp_path))
    assert transcript.attachments == {}  # loading reads only the session file
    resolve_attachments(transcript)
    assert sorted(transcript.attachments) == ["agent://Scout", "artifact://0"]  # artifact://7 is not there
    log = transcript.attachments["artifact://0"].output
    assert isinstance(log, FileOutput) and log.size == len("ZZ_LOG_ZZ é\n".encode())  # bytes, as on disk
    scout = transcript.attachments["agent://Scout"]
    # A whole output is a handle to its file too, read only when a page shows it.
    assert isinstance(scout.output, FileOutput) and scout.output.text() == "output of Scout"
    chain = []
    sub = scout.subagent
    while sub is not None and sub.transcript is not None:
        chain.append(sub.agent_id)
        attached = next(iter(sub.transcript.attachments.values()), None)
        sub = attached.subagent if attached is not None else None
    # Each level is resolved in its own folder; embedding stops where the page stops embedding.
    assert chain == ["Scout", "Deep1", "Deep2"] and len(chain) == MAX_SUBAGENT_DEPTH


def test_a_subagent_with_a_page_of_its_own_is_not_read(tmp_path: Path) -> None:
    transcript = resolve_attachments(load_transcript(session_with_places(tmp_path)), linked=frozenset({"Scout"}))
    scout = transcript.attachments["agent://Scout"]
    assert scout.output.text() == "output of Scout" and scout.subagent is None


def test_an_unreadable_subagent_is_a_problem_on_the_page(tmp_path: Path) -> None:
    session = session_with_places(tmp_path)
    (session.with_suffix("") / "Scout.jsonl").write_bytes(b"\xff\xfe not a session\n")
    transcript = resolve_attachments(load_transcript(session))
    scout = transcript.attachments["agent://Scout"].subagent
    assert scout is not None and scout.transcript is None and scout.problem
    assert f'<p class="problem">{escape(scout.problem)}</p>' in export_html(load_transcript(session))


def test_the_page_reads_no_session_file_but_the_outputs_it_shows(tmp_path: Path) -> None:
    # The page is rendered after the audit hook is set: every file it opens is recorded. Subagents'
    # transcripts were read before; artifact logs and agent outputs stay handles, read as far as shown.
    session = session_with_places(tmp_path)
    script = f"""
import sys
from pathlib import Path
from sitegen.render.page import PageOptions, PageRenderer
from sitegen.transcript.attachments import resolve_attachments
from sitegen.transcript.load import load_transcript

session = Path({str(session)!r})
renderer = PageRenderer()
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].startswith(str(session.parent)):
        opened.append(Path(args[0]).name)
for mode in ("budget", "none"):
    transcript = resolve_attachments(load_transcript(session))
    if not opened:
        sys.addaudithook(hook)
    opened[:] = ["-"]
    html = renderer.render(transcript, PageOptions(artifacts=mode))
    assert "ZZ_DEEP2_ZZ" in html and ("output of Deep1" in html) == (mode == "budget"), mode
    print(mode, sorted(set(opened[1:])))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    shown = "['0.bash.log', 'Deep1.md', 'Deep2.md', 'Deep3.md', 'Scout.md']"
    assert result.stdout.splitlines() == [f"budget {shown}", "none []"]


def test_redaction_reaches_what_the_artifacts_hold(tmp_path: Path) -> None:
    session = session_with_places(tmp_path)
    (session.with_suffix("") / "0.bash.log").write_text(f"ZZ_HEAD_ZZ\nkey {AWS_KEY}\n" + "x" * 400_000 + "\nZZ_END_ZZ")
    (session.with_suffix("") / "Scout.md").write_text(f"found {AWS_KEY}")
    redactor = Redactor()
    transcript = resolve_attachments(load_transcript(session), text_filter=redactor.redact)
    log = transcript.attachments["artifact://0"].output
    assert isinstance(log, FilteredFileOutput) and AWS_KEY not in log.text() and AWS_KEY not in log.text()
    out = tmp_path / "page.html"
    result = CliRunner().invoke(app, ["export", str(session), str(out), "--redact"])
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    # Over the budget for one output: its head and tail, measured and cut after redaction.
    assert "ZZ_HEAD_ZZ" in page and "ZZ_END_ZZ" in page and 'class="artifact-cut"' in page
    assert AWS_KEY not in page and "found " in page


def test_a_redacted_agent_output_is_looked_up_and_read_once_and_shown_redacted(tmp_path: Path, temp_dir: Path) -> None:
    # Through a text filter a whole agent:// output is text: read once while resolving, not first opened
    # as a handle and then looked up again. Every open of the output's file is counted by an audit hook.
    session = session_with_places(tmp_path)
    (session.with_suffix("") / "Scout.md").write_text(f"ZZ_FOUND_ZZ {AWS_KEY}")
    script = f"""
import sys
from pathlib import Path
from sitegen.redact import Redactor
from sitegen.transcript.attachments import TextOutput, resolve_attachments
from sitegen.transcript.load import load_transcript

session = Path({str(session)!r})
transcript = load_transcript(session)
opened = []
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and Path(args[0]).name == "Scout.md":
        opened.append(args[0])
sys.addaudithook(hook)
resolve_attachments(transcript, text_filter=Redactor().redact)
output = transcript.attachments["agent://Scout"].output
assert isinstance(output, TextOutput), output
print(len(opened), output.text())
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1 ZZ_FOUND_ZZ [REDACTED:aws-access-key-id]\n"
    # The pages that leave the machine show it so: export --redact, and share.
    out = tmp_path / "page.html"
    handler = tmp_path / "handler.py"
    handler.write_text(f"import shutil\ndef share(p):\n    shutil.copy(p, {str(tmp_path / 'shared.html')!r})\n")
    for args in (["export", str(session), str(out), "--redact"], ["share", str(session), "--handler", str(handler)]):
        assert CliRunner().invoke(app, args).exit_code == 0, args
    for page in (out, tmp_path / "shared.html"):
        html = page.read_text(encoding="utf-8")
        assert "ZZ_FOUND_ZZ [REDACTED:aws-access-key-id]" in html and AWS_KEY not in html, page.name


def test_an_artifact_swapped_for_a_link_after_it_was_resolved_leaves_only_itself_off_the_page(
    tmp_path: Path,
) -> None:
    # Resolving opens each file for its size; the page reads it later, as far as it shows it. A file
    # swapped in between for a link out of the folder is not followed: neither a log over the budget
    # (read at its two ends) nor an output shown whole; the rest of the page is made as before.
    session = session_with_places(tmp_path)
    folder = session.with_suffix("")
    (folder / "0.bash.log").write_text("ZZ_HEAD_ZZ\n" + "x" * 400_000 + "\nZZ_END_ZZ")
    (folder / "7.bash.log").write_text("ZZ_SEVEN_ZZ\n")
    transcript = resolve_attachments(load_transcript(session))
    assert sorted(transcript.attachments) == ["agent://Scout", "artifact://0", "artifact://7"]
    secret = tmp_path / "secret.txt"
    secret.write_text("ZZ_SECRET_HEAD_ZZ\n" + "y" * 400_000 + "\nZZ_SECRET_TAIL_ZZ")
    for name in ("0.bash.log", "Scout.md"):
        (folder / name).unlink()
        (folder / name).symlink_to(secret)
    html = PageRenderer().render(transcript, PageOptions())
    assert "ZZ_SECRET_HEAD_ZZ" not in html and "ZZ_SECRET_TAIL_ZZ" not in html and "yyyy" not in html
    # The log the link took the place of is not shown either; the other log and the session's own text are.
    assert "ZZ_HEAD_ZZ" not in html and "ZZ_SEVEN_ZZ" in html and "done, see agent://Scout" in html


def test_odek_frames_are_parsed_when_resolved() -> None:
    path = next(
        p for p in sorted((resource_dir("demo") / "odek" / "sessions").glob("*.json")) if p.name != "index.json"
    )
    transcript = load_transcript(path)
    stored = [
        node.result for node in transcript.nodes if node.result is not None and "odekFrame" in node.result.details
    ]
    assert stored and all(result.frame is None for result in stored)
    resolve_attachments(transcript)
    assert all(result.frame is not None for result in stored)
    assert any(result.frame is not None and result.frame.framed for result in stored)


def test_an_output_gone_between_resolving_and_rendering_leaves_only_itself_off_the_page(tmp_path: Path) -> None:
    from sitegen.render.page import PageOptions, PageRenderer

    session = session_with_places(tmp_path)
    transcript = load_transcript(session)
    resolve_attachments(transcript)
    (session.with_suffix("") / "0.bash.log").unlink()  # removed by the agent while the page is made
    html = PageRenderer().render(transcript, PageOptions(inline_assets=True))
    assert "ZZ_LOG_ZZ" not in html
    assert "ZZ_SCOUT_ZZ" in html and "output of Scout" in html  # the rest of the page is there
