"""Tree rows say what happened (a tool call and its result are one row), forks and branches are named, and a
compaction names the entry its kept context starts at."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessions import SessionBuilder, reader_session, text, tool_call

from sitegen.render import navigation
from sitegen.render.export import load_transcript
from sitegen.render.navigation import TreeRow, branch_links, display_order, tree_rows, tree_rows_html
from sitegen.render.page import PageRenderer, kept_names

REAL_FILES = (
    "omp-large-session.title-v3.jsonl",
    "pi-before-compaction.v1.jsonl",
    "pi-large-session.v1.jsonl",
)


def rows_of(path: Path) -> list[TreeRow]:
    transcript = load_transcript(path)
    on_path = set(transcript.tree.path_to(transcript.default_leaf))
    return tree_rows(transcript, display_order(transcript), on_path)


def is_bare(row: TreeRow) -> bool:
    """A row that does not say what happened: a bare tool name, "… result", "(no text)" or nothing."""
    line = row.text.strip()
    return not line or line.endswith(" result") or line == "(no text)" or line == row.tool


@pytest.fixture
def reader(tmp_path: Path) -> Path:
    return reader_session().write(tmp_path / "reader.jsonl")


def test_a_call_and_its_result_are_one_row_named_by_tool_and_argument(reader: Path) -> None:
    rows = {row.id: row for row in rows_of(reader)}
    assert (rows["r1"].kind, rows["r1"].tool, rows["r1"].text, rows["r1"].failed) == ("tool", "bash", "npm test", True)
    assert (rows["r2"].tool, rows["r2"].text) == ("read", "src/login.ts")  # relative to the session's directory
    assert (rows["r3"].tool, rows["r3"].text) == ("grep", "maxAge in src")
    assert (rows["r4"].tool, rows["r4"].text, rows["r4"].failed) == ("edit", "src/login.ts", False)
    assert (rows["r7"].tool, rows["r7"].text) == ("task", "explore: find the signup form")
    # Messages that only call tools have no row of their own; their calls do.
    assert "a2" not in rows and "a3" not in rows and "a7" not in rows
    # User and assistant rows are their first line, markdown stripped.
    assert rows["u1"].text == "Fix the login bug"
    assert rows["a4"].text == "Fixed: maxAge was in seconds, not minutes."


def test_forks_and_branches(reader: Path) -> None:
    transcript = load_transcript(reader)
    order = display_order(transcript)
    on_path = set(transcript.tree.path_to(transcript.default_leaf))
    rows = {row.id: row for row in tree_rows(transcript, order, on_path)}
    assert rows["a4"].forks == 2
    assert sum(1 for row in rows.values() if row.forks) == 1
    branches = branch_links(transcript, order, on_path)
    assert [(b.number, b.leaf, b.start, b.on_path) for b in branches] == [(1, "a8", "u4", False), (2, "a9", "u2", True)]
    assert branches[0].prompt == "Actually, revert it ZZ_OLD_BRANCH_ZZ"
    assert branches[1].prompt == "Here is how it looks"


def test_a_fork_at_a_tools_only_message_keeps_its_row(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="make")])
    b.tool_result("r1", "c1", "bash", "ok")
    b.user("u2", "other way", parent="a1")
    rows = {row.id: row for row in rows_of(b.write(tmp_path / "s.jsonl"))}
    assert rows["a1"].forks == 2 and (rows["a1"].tool, rows["a1"].text) == ("bash", "make")


def test_a_call_without_a_result_is_named_by_its_message(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="sleep 100")])
    rows = {row.id: row for row in rows_of(b.write(tmp_path / "s.jsonl"))}
    assert (rows["a1"].kind, rows["a1"].tool, rows["a1"].text) == ("tool", "bash", "sleep 100")


def test_rows_of_messages_without_text(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.message("u1", "user", [{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}])
    b.assistant("a1", [], stopReason="aborted", errorMessage="Request was aborted")
    b.assistant("a2", [{"type": "thinking", "thinking": "**Plan**: read first"}])
    rows = {row.id: row for row in rows_of(b.write(tmp_path / "s.jsonl"))}
    assert rows["u1"].text == "(image)"
    assert (rows["a1"].text, rows["a1"].failed) == ("aborted: Request was aborted", True)
    assert rows["a2"].text == "thinking: Plan: read first"
    assert not any(is_bare(row) for row in rows.values())


@pytest.mark.parametrize("name", REAL_FILES)
def test_real_sessions_rows_say_what_happened(real_fixtures: Path, name: str) -> None:
    rows = rows_of(real_fixtures / name)
    bare = [row for row in rows if is_bare(row)]
    assert len(bare) <= 0.05 * len(rows), [(row.kind, row.tool, row.text) for row in bare[:10]]
    assert not any("\n" in row.text for row in rows)


def test_kept_from_names_the_entry_by_text_and_time(reader: Path) -> None:
    transcript = load_transcript(reader)
    assert kept_names(transcript) == {"u2": "User: “Add a test for the expiry ZZ_KEPT_ZZ” · 2026-01-01 00:00:13 UTC"}
    html = PageRenderer().render(transcript)
    assert 'Kept from <a class="kept-from" href="#entry-u2">User: “Add a test for the expiry ZZ_KEPT_ZZ”' in html
    assert 'data-first-kept="u2"' in html


def test_messages_are_marked_for_the_models_view(reader: Path) -> None:
    html = PageRenderer().render(load_transcript(reader))
    for entry_id in ("u1", "a1", "a4", "u2", "a9"):
        assert f'id="entry-{entry_id}"' in html
        start = html.index(f'id="entry-{entry_id}"')
        assert " msg" in html[start : html.index(">", start)], entry_id
    start = html.index('id="entry-init0001"')
    assert " msg" not in html[start : html.index(">", start)]


def test_tool_headers_show_paths_relative_to_the_session(reader: Path) -> None:
    html = PageRenderer().render(load_transcript(reader))
    assert '<code class="tool-summary">src/login.ts</code>' in html
    assert '<code class="tool-summary">/work/shop/src/login.ts</code>' not in html


def test_rows_reach_every_entry_that_has_text(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "first")
    b.assistant("a1", [text("reply ZZ_REPLY_ZZ"), tool_call("c1", "read", path="a.txt")])
    b.tool_result("r1", "c1", "read", "x")
    rows = rows_of(b.write(tmp_path / "s.jsonl"))
    assert [(row.id, row.tool, row.text) for row in rows] == [
        ("u1", "", "first"),
        ("a1", "", "reply ZZ_REPLY_ZZ"),
        ("r1", "read", "a.txt"),
    ]


def test_any_other_tool_is_named_by_its_main_argument_in_its_header(tmp_path: Path) -> None:
    b = SessionBuilder(cwd="/work/app")
    b.user("u1", "find the todos")
    b.assistant("a1", [tool_call("c1", "grep", pattern="ZZ_TODO_ZZ", path="/work/app/src")])
    b.tool_result("r1", "c1", "grep", "src/a.ts:1: ZZ_TODO_ZZ")
    html = PageRenderer().render(load_transcript(b.write(tmp_path / "s.jsonl")))
    assert '<span class="tool-name">grep</span> <code class="tool-summary">ZZ_TODO_ZZ in src</code>' in html


def test_rows_of_extension_entries_and_of_blank_text(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "go")
    b.add("custom", "x1", customType="ZZ_STATE_7_ZZ", data={})
    b.add("service_tier_change", "x2", serviceTier="flex")
    b.add("some_future_entry", "x3")
    b.add("custom_message", "x4", customType="note", content="ZZ_NOTE_7_ZZ", display=False)
    # Text of only blanks (a line break, a no-break space) says nothing: the message's call names its row.
    b.assistant("a1", [text(" \n\u00a0"), tool_call("c1", "bash", command="make")])
    b.tool_result("r1", "c1", "bash", "ok")
    rows = {row.id: row for row in rows_of(b.write(tmp_path / "s.jsonl"))}
    assert (rows["x1"].kind, rows["x1"].text) == ("custom", "ZZ_STATE_7_ZZ")
    assert rows["x2"].kind == "notice" and rows["x2"].text == "service_tier_change"
    assert (rows["x3"].kind, rows["x3"].text) == ("unknown", "some_future_entry")
    assert (rows["x4"].text, rows["x4"].hidden) == ("ZZ_NOTE_7_ZZ", True)
    assert "a1" not in rows and (rows["r1"].tool, rows["r1"].text) == ("bash", "make")


def test_a_branch_is_named_by_its_last_prompt_that_says_something(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "ZZ_FIRST_7_ZZ")
    b.assistant("a1", [text("ok")])
    b.message("u2", "user", [{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}])
    b.assistant("a2", [text("a cat")])
    b.user("u3", "ZZ_SECOND_7_ZZ", parent="a1")
    b.message("u4", "user", [{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}], parent="u3")
    b.message("x1", "user", [{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}], parent=None)
    transcript = load_transcript(b.write(tmp_path / "s.jsonl"))
    on_path = set(transcript.tree.path_to(transcript.default_leaf))
    links = branch_links(transcript, display_order(transcript), on_path)
    # An image alone gives way to the prompt above it; a leaf without any is named by itself.
    prompts = {link.leaf: link.prompt for link in links}
    assert prompts == {"a2": "ZZ_FIRST_7_ZZ", "u4": "ZZ_SECOND_7_ZZ", "x1": "(image)"}
    # Given only some entries, a leaf reads the prompts among them.
    only = branch_links(transcript, display_order(transcript, ["u3", "u4"]), on_path)
    assert [(link.leaf, link.prompt) for link in only] == [("u4", "ZZ_SECOND_7_ZZ")]


def test_tree_rows_html_escapes_ids_and_names_a_text_by_its_tool() -> None:
    rows = [
        TreeRow("a\"<&'1", 0, "tool", "src/app.py", "read"),
        TreeRow("b2", 0, "tool", "src/app.py", "bash"),
        TreeRow("c3", 1, "custom", "<ZZ_STATE_7_ZZ>"),
        TreeRow("d4", 1, "custom", "<ZZ_STATE_7_ZZ>", on_path=True),
    ]
    lines = tree_rows_html(rows).splitlines()
    assert 'data-id="a&#34;&lt;&amp;&#39;1"><a href="#entry-a&#34;&lt;&amp;&#39;1">' in lines[0]
    # The same text is a path for a file tool and plain text for any other.
    assert '<span class="pf">app.py</span>' in lines[0] and lines[1].endswith("</span> src/app.py</a></li>")
    assert lines[2] == '<li class="kind-custom i1" data-id="c3"><a href="#entry-c3">&lt;ZZ_STATE_7_ZZ&gt;</a></li>'
    assert (
        lines[3] == '<li class="kind-custom i1 on-path" data-id="d4"><a href="#entry-d4">&lt;ZZ_STATE_7_ZZ&gt;</a></li>'
    )


def test_each_prompt_is_read_once_however_many_branches_end_under_it(tmp_path: Path) -> None:
    """Leaves under a long run of prompts that say nothing (blank, an image) all name the prompt above
    the run, and the run is walked once, not once per leaf (which was leaves x run length)."""
    b = SessionBuilder("wordless")
    b.user("said", "the real question")
    for number in range(200):
        b.user(f"blank{number}", "   ")
    last = b.leaf
    for number in range(300):
        b.assistant(f"answer{number}", [text(f"reply {number}")], parent=last)
    transcript = load_transcript(b.write(tmp_path / "s.jsonl"))
    links = branch_links(transcript, display_order(transcript), set())
    assert [link.prompt for link in links] == ["the real question"] * 300

    class Steps(dict[str, str | None]):
        taken = 0

        def __getitem__(self, key: str) -> str | None:
            Steps.taken += 1
            return super().__getitem__(key)

    user_before = Steps({f"blank{n}": f"blank{n - 1}" if n else "said" for n in range(200)}, said=None)
    said: dict[str, str] = {}
    for _ in range(300):
        assert navigation._said_at("blank199", said, user_before, transcript.by_id) == "the real question"
    assert Steps.taken == 200  # each step of the run once
