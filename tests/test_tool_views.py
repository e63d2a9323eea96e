"""Tool cards on the page: argument shapes the renderers must read, ANSI everywhere, long text folded."""

from __future__ import annotations

import re
from pathlib import Path

from sessions import SessionBuilder, tool_call

from sitegen.render.base.text import FOLD_AFTER_CHARS, PREVIEW_CHARS, fold_text
from sitegen.render.export import export_html, load_transcript


def render(builder: SessionBuilder, tmp_path: Path) -> str:
    return export_html(load_transcript(builder.write(tmp_path / "s.jsonl")))


def card(html: str, call_id: str) -> str:
    match = re.search(rf'<section class="tool [^"]*" data-call="{call_id}">.*?</section>', html, re.S)
    assert match, call_id
    return match.group(0)


def one_call(tmp_path: Path, name: str, result: str = "ok", **arguments: object) -> str:
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", name, **arguments)])
    b.tool_result("r1", "c1", name, result)
    return card(render(b, tmp_path), "c1")


def test_edit_with_a_list_of_edits_shows_each_as_a_diff(tmp_path: Path) -> None:
    edits = [
        {"oldText": "ZZ_OLD_ONE_ZZ\n", "newText": "ZZ_NEW_ONE_ZZ\n"},
        {"oldText": "ZZ_OLD_TWO_ZZ\n", "newText": "ZZ_NEW_TWO_ZZ\n"},
    ]
    html = one_call(tmp_path, "edit", path="src/app.py", edits=edits)
    for marker in ("OLD_ONE", "NEW_ONE", "OLD_TWO", "NEW_TWO"):
        assert f"ZZ_{marker}_ZZ" in html
    assert '<span class="d-del">-ZZ_OLD_TWO_ZZ</span>' in html
    assert "+2 −2" in html
    assert "Arguments" not in html  # the diff says it all


def test_write_with_another_content_key_shows_the_content(tmp_path: Path) -> None:
    html = one_call(tmp_path, "write", path="notes.txt", file_text="ZZ_FILE_TEXT_ZZ")
    assert "ZZ_FILE_TEXT_ZZ" in html


def test_known_tool_with_unknown_argument_shapes_falls_back_to_json(tmp_path: Path) -> None:
    html = one_call(tmp_path, "edit", target="lib.rs", patch="ZZ_PATCH_ZZ")
    assert "Arguments" in html and "ZZ_PATCH_ZZ" in html
    html = one_call(tmp_path, "bash", script="ZZ_SCRIPT_ZZ")
    assert "Arguments" in html and "ZZ_SCRIPT_ZZ" in html
    html = one_call(tmp_path, "bash", command="ls")
    assert "Arguments" not in html


def test_long_diffs_fold(tmp_path: Path) -> None:
    old = "".join(f"old {i}\n" for i in range(60))
    new = "".join(f"new {i} ZZ_LAST_{i}_ZZ\n" for i in range(60))
    html = one_call(tmp_path, "edit", path="a.txt", oldText=old, newText=new)
    assert "+60 −60" in html
    assert re.search(r'<details class="fold"><summary>Show \d+ more diff lines</summary><pre class="diff rest">', html)
    assert "ZZ_LAST_59_ZZ" in html.split('class="diff rest"')[1]


def test_ansi_turns_into_spans_in_user_executions_and_orphan_results(tmp_path: Path) -> None:
    b = SessionBuilder()
    b.user("u1", "go")
    b.message("x1", "bashExecution", None, command="make", output="\x1b[31mZZ_RED_ZZ\x1b[0m", exitCode=2)
    b.tool_result("r9", "no-such-call", "bash", "\x1b[32mZZ_GREEN_ZZ\x1b[0m")
    html = render(b, tmp_path)
    assert '<span class="ansi-fg1">ZZ_RED_ZZ</span>' in html
    assert '<span class="ansi-fg2">ZZ_GREEN_ZZ</span>' in html
    assert "\x1b" not in html


def test_one_huge_line_folds_by_characters(tmp_path: Path) -> None:
    line = "".join(f"ZZ{i:06d} " for i in range(3000))  # 27,000 characters, no newline
    html = one_call(tmp_path, "bash", line, command="cat min.json")
    head, _, rest = html.partition('<details class="fold">')
    assert "ZZ000000" in head and "ZZ002999" not in head
    assert "ZZ002999" in rest
    assert f"Show {len(line) - PREVIEW_CHARS:,} more characters (1 line in all)" in rest


def test_fold_text_cuts() -> None:
    assert fold_text("x" * FOLD_AFTER_CHARS).rest is None
    lines = "".join(f"{i}\n" for i in range(100))
    folded = fold_text(lines)
    assert folded.head.count("\n") == 24 and folded.summary == "Show 76 more lines (100 lines in all)"
    # A preview ends after a line where one ends late enough, and never inside an escape sequence.
    wide = ("y" * 2000 + "\n") * 5
    assert fold_text(wide).head == "y" * 2000 + "\n"
    coloured = "z" * (PREVIEW_CHARS - 3) + "\x1b[31mred\x1b[0m" + "z" * FOLD_AFTER_CHARS
    assert fold_text(coloured).head == "z" * (PREVIEW_CHARS - 3)
