"""How far a page's first screen reaches (sitegen.render.first_screen): the entries whose code the
server colours. tests/test_browser_highlight.py looks at such screens in Chromium."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from markupsafe import Markup
from sessions import SessionBuilder, text, thinking, tool_call

from sitegen.render.base.text import fold_text, shown_lines
from sitegen.render.first_screen import FIRST_SCREEN_LINES, MAX_FIRST_SCREEN_ENTRIES, first_screen_nodes
from sitegen.render.navigation import display_order
from sitegen.render.page import paired_result_ids
from sitegen.transcript.load import load_transcript


def reach(tmp_path: Path, build: Callable[[SessionBuilder], None]) -> tuple[int, list[str]]:
    """first_screen_nodes of a built session, and the ids in display order."""
    b = SessionBuilder(session_id="screen", cwd="/work/app")
    build(b)
    transcript = load_transcript(b.write(tmp_path / "screen.jsonl"))
    ids = [entry_id for entry_id, _ in display_order(transcript)]
    on_path = set(transcript.tree.path_to(transcript.default_leaf))
    nodes = [transcript.by_id[entry_id] for entry_id in ids]
    return first_screen_nodes(nodes, paired_result_ids(transcript), on_path), ids


def test_prompts_count_a_line_each_until_the_screen_is_full(tmp_path: Path) -> None:
    def prompts(b: SessionBuilder) -> None:
        for n in range(100):
            b.user(f"u{n:03d}", f"prompt {n}\n\nin two paragraphs")  # three lines with the head

    count, _ = reach(tmp_path, prompts)
    assert count == FIRST_SCREEN_LINES // 3


def test_never_more_than_64_shown_entries(tmp_path: Path) -> None:
    def markers(b: SessionBuilder) -> None:
        for n in range(100):
            b.add("model_change", f"m{n:03d}", provider="p", modelId=f"model-{n}")

    count, _ = reach(tmp_path, markers)
    assert count == MAX_FIRST_SCREEN_ENTRIES


def test_entries_the_page_hides_take_no_room(tmp_path: Path) -> None:
    def hidden_first(b: SessionBuilder) -> None:
        root = b.user("root", "start")
        for n in range(80):  # an abandoned branch, off the shown path
            b.user(f"off{n:03d}", "\n\n".join(["x"] * 20))
        b.leaf = root
        b.add("custom_message", "quiet", customType="ctx", display=False, content="\n\n".join(["y"] * 400))
        for n in range(30):
            b.add("custom", f"state{n}", customType="state", data={"n": n})
            b.add("label", f"label{n}", targetId="root", label=f"l{n}")
        for n in range(70):
            b.user(f"u{n:03d}", "shown\n\nin two paragraphs")

    count, ids = reach(tmp_path, hidden_first)
    # The root's two lines, then 50 shown prompts of three make 152: every hidden entry is passed over.
    assert ids[count - 1] == "u049"


def test_markdown_counts_code_lines_and_paragraphs_not_soft_breaks(tmp_path: Path) -> None:
    code = "```python\n" + "\n".join(f"x = {n}" for n in range(60)) + "\n```"

    def long_code(b: SessionBuilder) -> None:
        b.user("prose", "\n".join(f"word{n}" for n in range(300)) + "\n\n\n\nthere")  # two paragraphs
        b.assistant("code", [text(code), thinking("a long thought\n" * 50)])  # folded thinking: one line
        for n in range(60):
            b.user(f"u{n:03d}", "next")

    count, ids = reach(tmp_path, long_code)
    # prose: its head, 14 lines (2,290 characters) and 1; code: its head, 62 lines and the folded
    # thought's 1; then 35 prompts of two lines.
    assert FIRST_SCREEN_LINES == 16 + 64 + 2 * 35
    assert ids[count - 1] == "u034"


def test_an_output_counts_what_shows_before_its_fold(tmp_path: Path) -> None:
    def outputs(b: SessionBuilder) -> None:
        for n in range(6):
            b.assistant(f"a{n}", [tool_call(f"c{n}", "bash", command="ls")])
            parts = [{"type": "text", "text": "\n".join(f"x{i}" for i in range(39))} for _ in range(5)]
            b.message(f"r{n}", "toolResult", parts, toolCallId=f"c{n}", toolName="bash", isError=False)

    count, ids = reach(tmp_path, outputs)
    # Each card: its entry's head, the call's head and the folded output's 24 lines (the five parts
    # are one output of 199 lines): 26 lines, so the sixth card is the one that reaches 150.
    assert ids[count - 1] == "a5"


def test_shown_lines_are_the_lines_fold_text_shows() -> None:
    samples = [
        "",
        "one",
        "one\n",
        "a\nb\nc",
        "\n" * 45,
        "x\n" * 40,
        "x\n" * 41,
        "y" * 9000,
        "z" * 2000 + "\n" + "w" * 7000,
    ]
    samples += ["line\n" * 30 + "q" * 8000, "\x1b[31m" * 700 + "red", "k\n" * 100 + "tail"]
    for sample in samples:
        folded = fold_text(sample, Markup)
        head = str(folded.head)
        head_lines = head.count("\n") + (0 if head.endswith("\n") or not head else 1)
        assert shown_lines(sample) == head_lines, repr(sample[:40])
