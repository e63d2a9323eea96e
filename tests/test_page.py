"""The session page: what it shows, snapshot of whole pages, determinism, scale."""

from __future__ import annotations

import base64
import gc
import os
import re
import sys
from collections.abc import Callable, Iterator
from html import unescape
from pathlib import Path

import pytest
from sessions import SessionBuilder, branching_session, text, tool_call

from sitegen.render.export import export_html, export_page, load_transcript
from sitegen.render.highlight.pygments_html import Highlighter
from sitegen.render.page import LAZY_TREE_ROWS, PageRenderer, format_time
from sitegen.render.split import render_in_two

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("SITEGEN_UPDATE_SNAPSHOTS") == "1"


def render(path: Path, **kwargs: object) -> str:
    return export_html(load_transcript(path), **kwargs)  # type: ignore[arg-type]


def normalise(html: str) -> str:
    """Drop what changes with the stylesheet and script, so snapshots show the page structure."""
    html = re.sub(r"<style>.*?</style>", "<style>/* page.css */</style>", html, flags=re.S)
    html = re.sub(r"<script>.*?</script>", "<script>/* page.js */</script>", html, flags=re.S)
    html = re.sub(r"sha256-[A-Za-z0-9+/=]+", "sha256-HASH", html)
    return re.sub(r"sitegen \d+\.\d+\.\d+\S*", "sitegen VERSION", html)


def check_snapshot(name: str, html: str) -> None:
    target = SNAPSHOTS / f"{name}.html"
    page = normalise(html)
    if UPDATE or not target.exists():
        target.write_text(page, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"snapshot {target.name} was missing and has been written; run again")
    assert page == target.read_text(encoding="utf-8"), f"{target.name} differs (SITEGEN_UPDATE_SNAPSHOTS=1)"


@pytest.fixture
def branching(tmp_path: Path) -> Path:
    return branching_session().write(tmp_path / "2026-01-01T00-00-00-000Z_sess-0001.jsonl")


def test_snapshot_branching_session(branching: Path) -> None:
    check_snapshot("branching", render(branching))


def test_snapshot_branch_only(branching: Path) -> None:
    check_snapshot("branching-branch-only", render(branching, branch_only=True))


def test_every_entry_rendered_once_with_its_id(branching: Path) -> None:
    html = render(branching)
    transcript = load_transcript(branching)
    for node in transcript.nodes:
        assert html.count(f'id="entry-{node.id}"') == 1, node.id


def test_default_path_visible_other_branch_marked_off_path(branching: Path) -> None:
    html = render(branching)
    # The last entry is on branch B: branch A's final answer is rendered but marked off-path.
    assert re.search(r'<article id="entry-asst0002"[^>]*class="[^"]*off-path', html)
    assert not re.search(r'<article id="entry-asst0004"[^>]*class="[^"]*off-path', html)
    assert 'data-leaf="tres0003"' in html


def test_tool_calls_paired_with_results(branching: Path) -> None:
    html = render(branching)
    # The result sits inside its call's card, not as a separate article.
    card = html[html.index('data-call="call0002"') :]
    card = card[: card.index("</section>")]
    assert "ZZ_READ_ZZ" in card
    assert 'id="entry-tres0002"' in card


def test_long_output_folds_and_read_is_highlighted(branching: Path) -> None:
    html = render(branching)
    assert "Show 96 more lines" in html
    assert "ZZ_LONG_119_ZZ" in html
    # read of a .py file goes through the Python lexer: keywords get pygments classes.
    assert "<span class=k>def" in html


def test_edit_shows_a_diff(branching: Path) -> None:
    html = render(branching)
    assert '<span class="d-del">-return 1</span>' in html
    assert '<span class="d-add">+return 2</span>' in html


def test_diff_lines_are_each_escaped_in_their_own_span() -> None:
    from sitegen.render.cards import diff_lines
    from sitegen.render.tools import DiffLine

    lines = [DiffLine("hunk", "@@ -1 +1 @@"), DiffLine("del", "-a < b & 'c'"), DiffLine("add", '+"x" > y')]
    assert diff_lines(lines) == (
        '<span class="d-hunk">@@ -1 +1 @@</span>\n<span class="d-del">-a &lt; b &amp; &#39;c&#39;</span>\n'
        '<span class="d-add">+&#34;x&#34; &gt; y</span>\n'
    )
    # A line that holds a newline (no diff parser makes one) stays one span.
    assert diff_lines([DiffLine("ctx", "a\n<b>"), DiffLine("add", "c")]) == (
        '<span class="d-ctx">a\n&lt;b&gt;</span>\n<span class="d-add">c</span>\n'
    )
    assert diff_lines([]) == ""


def test_header_counts_and_totals(branching: Path) -> None:
    html = render(branching)
    assert "ZZ_SYSTEM_PROMPT_ZZ" in html
    assert "anthropic/claude-test" in html
    # 4 assistant messages in the file at $0.0125 each; 2 on the shown branch.
    assert "$0.0500" in html and "$0.0250" in html
    assert "Kept from" in html and "kept-mark" in html
    assert 'class="badge label">ZZ_LABEL_ZZ' in html


def test_output_is_deterministic(branching: Path) -> None:
    assert render(branching) == render(branching)


def test_page_is_self_contained(branching: Path) -> None:
    html = render(branching)
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html)
    assert "<link" not in html
    assert 'http-equiv="Content-Security-Policy"' in html
    assert "unsafe-eval" not in html and "unsafe-inline" not in html
    policy = unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1))  # type: ignore[union-attr]
    assert "connect-src 'none'" in policy and "'self'" not in policy  # it loads and connects to nothing


def test_thirty_thousand_deep_chain_exports(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u0", "start")
    for i in range(30_000):
        b.add("thinking_level_change", f"t{i}", thinkingLevel="high" if i % 2 else "low")
    b.assistant("a-last", [text("ZZ_DEEP_END_ZZ")])
    path = b.write(tmp_path / "deep.jsonl")
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        html = render(path)
    finally:
        sys.setrecursionlimit(old)
    assert "ZZ_DEEP_END_ZZ" in html
    # A long page's tree: its first rows in the list, the others as raw text that treerows.js draws from.
    tree = html[html.index('<ol class="tree">') : html.index("</ol>")]
    rest = html[html.index('<script type="text/x-sitegen-rows" id="tree-rows">') : html.index('<nav id="outline"')]
    assert tree.count("<li ") == LAZY_TREE_ROWS
    assert tree.count("<li ") + rest.count("<li ") == 30_002


def test_images_inline_as_data_uris_and_bad_types_refused(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nZZ").decode()
    b = SessionBuilder()
    b.message(
        "u1",
        "user",
        [
            text("look"),
            {"type": "image", "data": png, "mimeType": "image/png"},
            {"type": "image", "data": png, "mimeType": "text/html"},
        ],
    )
    html = render(b.write(tmp_path / "img.jsonl"))
    assert f'src="data:image/png;base64,{png}"' in html
    assert "image of type text/html not shown" in html


def test_artifact_and_subagent_inlined(tmp_path: Path) -> None:
    session_path = tmp_path / "s.jsonl"
    artifacts = tmp_path / "s"
    artifacts.mkdir()
    (artifacts / "0.bash.log").write_text("full output ZZ_ARTIFACT_ZZ\n")
    (artifacts / "Scout.md").write_text("# Findings\nZZ_AGENT_OUTPUT_ZZ\n")
    sub = SessionBuilder(session_id="sub-1")
    sub.user("su1", "scout the repo")
    sub.assistant("sa1", [text("Scouted ZZ_SUBAGENT_ZZ")])
    sub.write(artifacts / "Scout.jsonl")
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="make"), tool_call("c2", "task", task="scout")])
    b.tool_result("r1", "c1", "bash", "tail...\n[full output: artifact://0]")
    b.tool_result("r2", "c2", "task", "done, see agent://Scout")
    html = render(b.write(session_path))
    assert "ZZ_ARTIFACT_ZZ" in html
    assert "ZZ_AGENT_OUTPUT_ZZ" in html
    assert "ZZ_SUBAGENT_ZZ" in html
    assert 'id="sub-Scout-sa1"' in html

    # Named again by a later call: the output twice, the transcript (and its ids) once.
    b.assistant("a2", [tool_call("c3", "read", path="notes.md")])
    b.tool_result("r3", "c3", "read", "as agent://Scout said")
    html = render(b.write(session_path))
    assert html.count("ZZ_AGENT_OUTPUT_ZZ") == 2
    assert html.count('id="sub-Scout-sa1"') == 1
    assert "Its transcript is embedded at the first call that named it." in html


def test_ansi_colours_become_spans(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "run")
    b.assistant("a1", [tool_call("c1", "bash", command="pytest")])
    b.tool_result("r1", "c1", "bash", "\x1b[32mZZ_GREEN_ZZ\x1b[0m plain \x1b[2Kcleared")
    html = render(b.write(tmp_path / "ansi.jsonl"))
    assert '<span class="ansi-fg2">ZZ_GREEN_ZZ</span>' in html
    assert "\x1b" not in html


def test_highlighter_caches_by_content_and_never_guesses() -> None:
    highlighter = Highlighter()
    first = highlighter.code("def f():\n    pass\n", "python")
    second = highlighter.code("def f():\n    pass\n", "python")
    assert first == second and highlighter.hits == 1
    assert highlighter.file("x = 1", "notes.unknownext") == "x = 1"
    big = "x = 1\n" * 50_000
    assert "<span" not in highlighter.code(big, "python")


def test_highlighter_cache_is_bounded_and_never_serves_other_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.render.highlight import pygments_html

    fresh = Highlighter()
    expected = [str(fresh.code(f"def f{n}():\n    return {n}\n", "python")) for n in range(30)]
    monkeypatch.setattr(pygments_html, "CACHE_CHARS", len(expected[0]) * 10)
    highlighter = Highlighter()
    for _ in range(2):
        assert [str(highlighter.code(f"def f{n}():\n    return {n}\n", "python")) for n in range(30)] == expected
    # Ten blocks fit: only those were served from memory the second time; the others were made again.
    assert highlighter.hits == 10
    # Changed code is highlighted anew, whatever the cache holds.
    changed = highlighter.code("def f0():\n    return 99\n", "python")
    assert changed == Highlighter().code("def f0():\n    return 99\n", "python") and "99" in changed
    assert changed != expected[0]


def test_renderer_can_be_reused_across_pages(branching: Path, tmp_path: Path) -> None:
    renderer = PageRenderer()
    a = export_html(load_transcript(branching), renderer=renderer)
    b = export_html(load_transcript(branching), renderer=renderer)
    assert a == b


def test_two_core_render_gives_the_same_page(tmp_path: Path) -> None:
    b = SessionBuilder()
    for i in range(40):
        b.user(f"u{i}", f"question {i}")
        b.assistant(f"a{i}", [tool_call(f"c{i}", "read", path=f"src/m{i}.py")])
        b.tool_result(f"r{i}", f"c{i}", "read", "\n".join(f"x_{i}_{n} = {n}  # ZZ" for n in range(1500)))
    path = b.write(tmp_path / "big.jsonl")
    parallel = export_html(load_transcript(path), parallel=True)
    assert parallel == export_html(load_transcript(path), parallel=False)
    assert parallel.count('class="entry kind-user') == 40


def _long_session(tmp_path: Path, turns: int) -> Path:
    b = SessionBuilder()
    for i in range(turns):
        b.user(f"u{i}", f"question {i}")
        b.assistant(f"a{i}", [tool_call(f"c{i}", "bash", command=f"echo {i}")])
        b.tool_result(f"r{i}", f"c{i}", "bash", f"line {i}\n" * 30)
    return b.write(tmp_path / "long.jsonl")


def test_streamed_page_equals_the_rendered_page(tmp_path: Path) -> None:
    """Pages are written chunk by chunk as they render; the file is the same page, whole."""
    path = _long_session(tmp_path, 400)  # 1,200 entries: several chunks
    out = tmp_path / "out.html"
    size = export_page(load_transcript(path), out, parallel=True)
    page = out.read_bytes()
    assert size == len(page)
    assert page.decode() == export_html(load_transcript(path))
    assert page.count(b'class="entry kind-user') == 400
    assert page.rstrip().endswith(b"</html>")


def test_a_render_that_fails_leaves_the_old_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _long_session(tmp_path, 400)
    out = tmp_path / "out.html"
    out.write_text("old page")
    calls = 0
    real_tool_view = PageRenderer.tool_view

    def failing_tool_view(self: PageRenderer, *args: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 300:  # after the first chunks were written
            raise RuntimeError("disk on fire")
        return real_tool_view(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(PageRenderer, "tool_view", failing_tool_view)
    with pytest.raises(RuntimeError):
        export_page(load_transcript(path), out)
    assert out.read_text() == "old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.jsonl", "out.html"]


def _children() -> set[str]:
    return {pid for task in Path("/proc/self/task").iterdir() for pid in (task / "children").read_text().split()}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux /proc")
def test_abandoned_two_core_render_leaves_no_child() -> None:
    def render(*items: int) -> Callable[[], Iterator[bytes]]:
        return lambda: (str(item).encode() for item in items)

    before = _children()
    chunks = render_in_two(render(1, 2), render(3, 4))
    assert next(chunks) == b"1"
    assert len(_children() - before) == 1  # the child rendering the second half
    chunks.close()
    assert _children() == before  # killed and reaped: no zombie
    assert gc.get_freeze_count() == 0  # the heap frozen for the fork is thawed again
    assert b"".join(render_in_two(render(1, 2), render(3, 4))) == b"1234"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="Linux /proc")
def test_a_two_core_render_whose_frame_fails_leaves_the_old_page_and_no_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _long_session(tmp_path, 400)
    out = tmp_path / "out.html"
    out.write_text("old page")

    def failing_frame(*args: object) -> tuple[str, str]:
        raise RuntimeError("template on fire")

    monkeypatch.setattr(PageRenderer, "_frame", failing_frame)
    before = _children()
    with pytest.raises(RuntimeError):
        export_page(load_transcript(path), out, parallel=True)
    assert _children() == before
    assert out.read_text() == "old page"
    assert gc.get_freeze_count() == 0


def test_a_render_thaws_only_the_heap_it_froze(branching: Path) -> None:
    transcript = load_transcript(branching)
    export_html(transcript)
    assert gc.get_freeze_count() == 0
    gc.freeze()  # frozen by someone else: still frozen after the render
    try:
        frozen = gc.get_freeze_count()
        export_html(transcript)
        assert gc.get_freeze_count() >= frozen > 0
    finally:
        gc.unfreeze()


def test_custom_entries_show_their_data_escaped_and_markers_no_raw_json(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "hello")
    b.add("custom", "c1", customType="checkpoint", data={"seq": 7, "note": '<b>x</b> & "q"'})
    b.add("model_change", "m1", provider="openai", modelId="gpt-5")
    page = export_html(load_transcript(b.write(tmp_path / "s.jsonl")))
    custom = page[page.index('id="entry-c1"') : page.index('id="entry-m1"')]
    assert '<details class="raw"><summary>data</summary>' in custom
    assert '"note": "&lt;b&gt;x&lt;/b&gt; &amp; \\"q\\""' in custom  # the data, quotes as they are
    assert '"parentId"' not in custom  # not the whole entry again
    model = page[page.index('id="entry-m1"') :]
    assert 'class="raw"' not in model[: model.index("</article>")]


def test_times_are_utc_to_the_second_and_nonsense_is_unknown() -> None:
    assert format_time(1_756_684_819_999) == "2025-09-01 00:00:19 UTC"
    assert format_time(-500) == "1969-12-31 23:59:59 UTC"
    assert format_time(253_402_300_799_000) == "9999-12-31 23:59:59 UTC"
    assert format_time(253_402_300_800_000) == ""  # past year 9999
    assert format_time(-(10**15)) == ""
    assert format_time(None) == ""


def test_kept_mark_on_another_branch_starts_hidden_and_result_labels_show(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="ls")])
    b.tool_result("r1", "c1", "bash", "files")
    b.add("compaction", "k1", summary="so far", firstKeptEntryId="a1", tokensBefore=900)
    b.add("label", "l1", targetId="r1", label="ZZ_RESULT_LABEL_ZZ")
    b.user("u2", "newest, without the compaction", parent="r1")
    html = render(b.write(tmp_path / "kept.jsonl"))
    assert '<div class="kept-mark kept-elsewhere" data-compaction="k1">' in html
    result = re.search(r'<div class="tool-result" id="entry-r1"[^>]*>\s*<p class="result-head">(.*?)</p>', html)
    assert result and 'data-label="ZZ_RESULT_LABEL_ZZ"' in result.group(0)
    assert '<span class="badge label">ZZ_RESULT_LABEL_ZZ</span>' in result.group(1)
    b.user("u3", "on the compacted branch", parent="l1")
    html = render(b.write(tmp_path / "kept.jsonl"))
    assert '<div class="kept-mark" data-compaction="k1">' in html


def test_the_process_that_writes_the_frame_takes_fewer_entries() -> None:
    from sitegen.render.split import split_by_weight

    assert split_by_weight([1] * 10) == 5
    # The frame's work counts toward the first half: it gets (10 + 4) / 2 - 4 = 3 entries.
    assert split_by_weight([1] * 10, head_start=4) == 3
    assert split_by_weight([1] * 10, head_start=40) == 1


def test_a_page_read_half_way_leaves_the_collector_on(tmp_path: Path) -> None:
    """Rendering pauses the cyclic collector only while it works, never across a yield: a reader that
    stops half way (an error, a closed pipe) must not leave it off for the rest of the process."""
    assert gc.isenabled()
    chunks = PageRenderer().chunks(load_transcript(branching_session().write(tmp_path / "s.jsonl")))
    next(chunks)
    assert gc.isenabled()
    next(chunks)
    assert gc.isenabled()
    del chunks
    assert gc.isenabled()
