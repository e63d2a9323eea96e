"""A page's budget for the tool output a session points at: whole up to a size, head and tail beyond it, a few
MB in all, then only where it is; --artifacts full and none; a site page loads big outputs when opened."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from browser import assert_clean, chromium, open_page
from sessions import SessionBuilder, text, tool_call
from site_helpers import run_sitegen

from sitegen.render.attachments import ArtifactBudget
from sitegen.render.export import export_html, load_transcript

KB = 1024


def log_text(marker: str, size: int) -> str:
    """A log of about size characters: its first and last lines carry the marker, so a test sees both ends."""
    body = "".join(f"line {n:07d} of the build\n" for n in range(size // 26))
    return f"FIRST_{marker}\n{body}LAST_{marker}\n"


def session_with_logs(folder: Path, sizes: list[int]) -> Path:
    """A session whose bash calls each point at an artifact log of the given size."""
    b = SessionBuilder(session_id="budget-0001", cwd="/work/app")
    b.user("u1", "build everything")
    for n in range(len(sizes)):
        b.assistant(f"a{n}", [text("Building."), tool_call(f"c{n}", "bash", command=f"make part{n}")])
        b.tool_result(f"r{n}", f"c{n}", "bash", f"output truncated; full output: artifact://{n}")
    session = b.write(folder / "2026-01-01T00-00-00-000Z_budget-0001.jsonl")
    artifacts = session.with_suffix("")
    artifacts.mkdir()
    for n, size in enumerate(sizes):
        (artifacts / f"{n}.bash.log").write_text(log_text(f"ZZ{n}ZZ", size), encoding="utf-8")
    return session


def test_small_outputs_are_inlined_whole(tmp_path: Path) -> None:
    html = export_html(load_transcript(session_with_logs(tmp_path, [20 * KB])))
    assert "FIRST_ZZ0ZZ" in html and "LAST_ZZ0ZZ" in html
    assert 'class="artifact-cut"' not in html


def test_a_long_output_shows_its_head_and_tail_and_says_where_the_rest_is(tmp_path: Path) -> None:
    html = export_html(load_transcript(session_with_logs(tmp_path, [2000 * KB])))
    assert "FIRST_ZZ0ZZ" in html and "LAST_ZZ0ZZ" in html
    assert re.search(r"[\d.]+ MB more: the full output is in artifact://0", html)
    assert 'class="artifact-cut"' in html
    assert len(html) < 600 * KB  # the page carries about 128 KB of the log, not 2 MB


def test_the_page_total_is_kept_then_outputs_are_only_named(tmp_path: Path) -> None:
    session = session_with_logs(tmp_path, [1000 * KB] * 50)
    html = export_html(load_transcript(session))
    assert len(html) < ArtifactBudget().total + 1000 * KB
    assert "FIRST_ZZ0ZZ" in html and "LAST_ZZ0ZZ" in html
    assert "FIRST_ZZ49ZZ" not in html
    assert "Not on this page (its 4.8 MB for outputs are spent): the full output is in artifact://49." in html


def test_artifacts_option_full_and_none(tmp_path: Path) -> None:
    session = session_with_logs(tmp_path, [600 * KB])
    full = tmp_path / "full.html"
    none = tmp_path / "none.html"
    assert run_sitegen("export", str(session), str(full), "--artifacts", "full", cwd=tmp_path).returncode == 0
    assert run_sitegen("export", str(session), "-o", str(none), "--artifacts", "none", cwd=tmp_path).returncode == 0
    full_html = full.read_text(encoding="utf-8")
    assert "line 0012000 of the build" in full_html and 'class="artifact-cut"' not in full_html
    none_html = none.read_text(encoding="utf-8")
    assert "FIRST_ZZ0ZZ" not in none_html
    assert "Not on this page (--artifacts none): the full output is in artifact://0 (" in none_html
    bad = run_sitegen("export", str(session), "--artifacts", "some", cwd=tmp_path)
    assert bad.returncode == 2 and "Usage" in bad.stderr and "'some' is not one of budget, full, none" in bad.stderr


@pytest.mark.browser
def test_a_site_page_loads_a_big_output_from_beside_it_when_opened(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    session_with_logs(agent / "sessions" / "--work-app--", [20 * KB, 900 * KB])
    site = tmp_path / "site"
    result = run_sitegen("build", "--agent-dir", str(agent), "--out", str(site), "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page_file = next(site.glob("sessions/*/*.html"))
    html = page_file.read_text(encoding="utf-8")
    assert "FIRST_ZZ0ZZ" in html  # small: inline
    assert "FIRST_ZZ1ZZ" not in html  # big: never inlined
    scripts = list(page_file.with_suffix("").glob("artifacts/*.js"))
    assert len(scripts) == 1 and "LAST_ZZ1ZZ" in scripts[0].read_text(encoding="utf-8")
    with chromium() as browser:
        page, watch = open_page(browser, page_file, allow=site)
        try:
            section = page.locator('details.attachment[data-key="artifact://1"]')
            assert "loaded when opened" in section.locator("summary").inner_text()
            section.locator("summary").click()
            page.wait_for_function(
                "() => document.querySelector('details[data-key=\"artifact://1\"]').hasAttribute('data-loaded')"
            )
            assert "LAST_ZZ1ZZ" in section.locator("pre").inner_text()
            assert_clean(watch)
        finally:
            page.context.close()
    # A rebuild that no longer names the output removes its script.
    (next(agent.glob("sessions/*/*")) / "1.bash.log").unlink()
    session = next(agent.glob("sessions/*/*.jsonl"))
    session.write_text(session.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = run_sitegen("build", "--agent-dir", str(agent), "--out", str(site), "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not list(page_file.with_suffix("").glob("artifacts/*.js"))


def test_a_huge_output_is_read_only_at_its_ends(tmp_path: Path) -> None:
    # A 3 GB log, sparse on disk: its real last line is on the page, which reading from the start (with the
    # reader's cap of 256 MB) could never show, and none mode states its size without reading it.
    session = session_with_logs(tmp_path, [20 * KB])
    log = session.with_suffix("") / "0.bash.log"
    with log.open("r+b") as handle:
        handle.seek(3 * 1024**3 - 20)
        handle.write(b"\nLAST_OF_3_GB_ZZ\n")
    html = export_html(load_transcript(session))
    assert "FIRST_ZZ0ZZ" in html and "LAST_OF_3_GB_ZZ" in html
    assert "3.0 GB more: the full output is in artifact://0." in html
    page = tmp_path / "none.html"
    assert run_sitegen("export", str(session), "-o", str(page), "--artifacts", "none", cwd=tmp_path).returncode == 0
    assert "Not on this page (--artifacts none): the full output is in artifact://0 (3.0 GB)." in page.read_text()


def test_a_head_or_tail_cut_inside_a_character_drops_it_whole(tmp_path: Path) -> None:
    # No line ends to cut at: the 64,000-byte ends fall inside 2-, 3- and 4-byte characters.
    session = session_with_logs(tmp_path, [20 * KB])
    for n, char in enumerate(["é", "€", "😀"]):
        body = "Z" + char * (300_000 // len(char.encode()))
        (session.with_suffix("") / "0.bash.log").write_text(body + "Z", encoding="utf-8")
        html = export_html(load_transcript(session))
        assert "\ufffd" not in html, char
        head, tail = re.findall(rf"Z{char}+", html), re.findall(rf"{char}+Z", html)
        assert head and tail and len(head[0]) < 64_000 and len(tail[0]) < 64_000, n


def test_outputs_that_are_pipes_or_link_out_of_their_folder_are_left_off_the_page(tmp_path: Path) -> None:
    session = session_with_logs(tmp_path, [20 * KB, 20 * KB, 20 * KB])
    artifacts = session.with_suffix("")
    (artifacts / "0.bash.log").unlink()
    os.mkfifo(artifacts / "0.bash.log")
    (tmp_path / "secret.txt").write_text("ZZ_OUTSIDE_ZZ")
    (artifacts / "1.bash.log").unlink()
    (artifacts / "1.bash.log").symlink_to(tmp_path / "secret.txt")
    for mode in ("budget", "none", "full"):
        page = tmp_path / f"{mode}.html"
        done = run_sitegen("export", str(session), "-o", str(page), "--artifacts", mode, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        html = page.read_text(encoding="utf-8")
        assert "ZZ_OUTSIDE_ZZ" not in html
        assert "<summary>artifact://0" not in html and "<summary>artifact://1" not in html
        assert "<summary>artifact://2" in html


def session_with_subagents(
    folder: Path,
    count: int,
    transcript_size: int,
    logs: int = 0,
    again: int | None = None,
    branch: int | None = None,
) -> Path:
    """A session whose task calls each name a subagent's output (agent://<n>-Scout) with its transcript of
    about transcript_size bytes in the artifact folder, as omp keeps them; then bash calls naming `logs`
    logs of 2 KB (artifact://<n>); with `again`, a last call names that subagent's output once more; with
    `branch`, a last branch from the first prompt (the one shown) names that subagent's output alone."""
    b = SessionBuilder(session_id="budget-0002", cwd="/work/app")
    b.user("u1", "survey everything")
    for n in range(count):
        b.assistant(f"a{n}", [text("Delegating."), tool_call(f"c{n}", "task", agent="explore")])
        b.tool_result(f"r{n}", f"c{n}", "task", f"done: agent://{n}-Scout")
    for n in range(logs):
        b.assistant(f"b{n}", [text("Building."), tool_call(f"d{n}", "bash", command=f"make part{n}")])
        b.tool_result(f"s{n}", f"d{n}", "bash", f"output truncated; full output: artifact://{n}")
    if again is not None:
        b.assistant("e0", [text("Reading it again."), tool_call("e1", "read", path="notes.md")])
        b.tool_result("e2", "e1", "read", f"as agent://{again}-Scout said")
    if branch is not None:
        b.assistant("f0", [text("Starting over."), tool_call("f1", "task", agent="explore")], parent="u1")
        b.tool_result("f2", "f1", "task", f"done: agent://{branch}-Scout")
    session = b.write(folder / "2026-01-01T00-00-00-000Z_budget-0002.jsonl")
    artifacts = session.with_suffix("")
    artifacts.mkdir()
    for n in range(count):
        (artifacts / f"{n}-Scout.md").write_text(f"ZZ_OUTPUT_{n}_ZZ\n", encoding="utf-8")
        sub = SessionBuilder(session_id=f"sub-{n:04d}")
        sub.user("su1", "scout the repo")
        sub.assistant("sa1", [text(f"ZZ_TRANSCRIPT_{n}_ZZ " + "finding " * (transcript_size // 8))])
        sub.write(artifacts / f"{n}-Scout.jsonl")
    for n in range(logs):
        (artifacts / f"{n}.bash.log").write_text(log_text(f"ZZ{n}ZZ", 2 * KB), encoding="utf-8")
    return session


def test_subagent_transcripts_have_an_allowance_per_page(tmp_path: Path) -> None:
    # 12 transcripts of about 250 KB: 3 MB, over the 1.9 MB of transcripts a page carries. The first ones
    # are on the page, the rest named with their file; every subagent's output is still there.
    session = session_with_subagents(tmp_path, 12, 250 * KB, again=11)
    html = export_html(load_transcript(session))
    shown = [n for n in range(12) if f"ZZ_TRANSCRIPT_{n}_ZZ" in html]
    assert shown == list(range(len(shown))) and 6 <= len(shown) < 12, shown
    assert all(f"ZZ_OUTPUT_{n}_ZZ" in html for n in range(12))
    assert (
        "Not on this page (its 1.9 MB for subagent transcripts are spent): its transcript is 11-Scout.jsonl (250.6 KB)"
        " in the artifact folder." in html
    )
    assert len(html) < ArtifactBudget().total + 1000 * KB
    # Named again by a later call: said again to be left out, not said to be embedded before.
    assert html.count("its transcript is 11-Scout.jsonl") == 2
    assert html.count("Its transcript is embedded at the first call that named it.") == 0


def test_the_shown_branchs_subagents_spend_the_allowance_first(tmp_path: Path) -> None:
    # An older branch names 12 transcripts of about 250 KB, more than a page carries; the branch shown
    # names the last of them alone: its transcript is on the page, with or without the other branches.
    session = session_with_subagents(tmp_path, 12, 250 * KB, branch=11)
    for branch_only in (True, False):
        html = export_html(load_transcript(session), branch_only=branch_only)
        assert "ZZ_TRANSCRIPT_11_ZZ" in html
        assert "its transcript is 11-Scout.jsonl" not in html
    assert "ZZ_TRANSCRIPT_0_ZZ" not in export_html(load_transcript(session), branch_only=True)


def test_subagent_transcripts_with_artifacts_none_and_full(tmp_path: Path) -> None:
    session = session_with_subagents(tmp_path, 3, 2 * KB)
    for mode, on_page in (("none", False), ("full", True), ("budget", True)):
        page = tmp_path / f"{mode}.html"
        done = run_sitegen("export", str(session), "-o", str(page), "--artifacts", mode, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        html = page.read_text(encoding="utf-8")
        assert all((f"ZZ_TRANSCRIPT_{n}_ZZ" in html) == on_page for n in range(3)), mode
        assert ('id="sub-0-Scout-sa1"' in html) == on_page, mode
        named = "Not on this page (--artifacts none): its transcript is 2-Scout.jsonl ("
        assert (named in html) == (not on_page), mode


def test_a_huge_subagent_output_is_read_only_as_far_as_it_is_shown(tmp_path: Path) -> None:
    # A subagent's 3 GB output, sparse on disk: none mode states its size without reading it, the budget
    # shows its two ends (reading it whole would stop at the reader's cap of 256 MB).
    session = session_with_subagents(tmp_path, 1, 2 * KB)
    output = session.with_suffix("") / "0-Scout.md"
    with output.open("r+b") as handle:
        handle.seek(3 * 1024**3 - 20)
        handle.write(b"\nLAST_OF_3_GB_ZZ\n")
    page = tmp_path / "none.html"
    assert run_sitegen("export", str(session), "-o", str(page), "--artifacts", "none", cwd=tmp_path).returncode == 0
    assert "Not on this page (--artifacts none): the full output is in agent://0-Scout (3.0 GB)." in page.read_text()
    html = export_html(load_transcript(session))
    assert "ZZ_OUTPUT_0_ZZ" in html and "LAST_OF_3_GB_ZZ" in html
    assert "3.0 GB more: the full output is in agent://0-Scout." in html


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
@pytest.mark.parametrize("mode", ["budget", "none"])
def test_an_export_lists_the_artifact_folder_once(tmp_path: Path, mode: str) -> None:
    # 60 subagents and 60 logs named by one session: a real export, traced, opens the folder to list it
    # once (it listed it once per reference), and opens no subagent output or transcript it does not show.
    session = session_with_subagents(tmp_path, 60, 2 * KB, logs=60)
    folder = session.with_suffix("")
    past = time.time() - 600  # as a finished session's folder: not changed in the last seconds
    os.utime(folder, (past, past))
    trace = tmp_path / "trace.txt"
    page = tmp_path / "page.html"
    done = run_sitegen(
        "export", str(session), str(page), "--artifacts", mode, cwd=tmp_path,
        prefix=["strace", "-f", "-e", "trace=openat", "-o", str(trace)],
    )  # fmt: skip
    if done.returncode != 0 and "ptrace" in done.stderr:
        pytest.skip("strace cannot trace here")
    assert done.returncode == 0, done.stderr
    # Every open tried, finished or not: with two processes, strace splits a call's line ("<unfinished ...>").
    opened = re.findall(r'openat\([^"]*"([^"]+)"', trace.read_text())
    assert [path for path in opened if path == str(folder)] == [str(folder)]
    html = page.read_text(encoding="utf-8")
    transcripts = [path for path in opened if path.startswith(f"{folder}/") and path.endswith(".jsonl")]
    outputs = [path for path in opened if path.startswith(f"{folder}/") and path.endswith(".md")]
    shown = mode == "budget"
    assert all((f"ZZ_TRANSCRIPT_{n}_ZZ" in html) == shown for n in range(60)) and len(transcripts) == 60 * shown
    assert all((f"ZZ_OUTPUT_{n}_ZZ" in html) == shown for n in range(60))
    assert all((f"LAST_ZZ{n}ZZ" in html) == shown for n in range(60))
    # Each output opened for its size, and once more to be read when it is shown.
    assert len(outputs) == 60 * (1 + shown)
