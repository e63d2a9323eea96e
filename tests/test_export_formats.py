"""sitegen export --format html|md|json (issue 34): a Markdown transcript session text cannot break out
of, the session as JSON as the page understood it, and the same refusals as the page's export."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
from markdown_it import MarkdownIt
from sessions import SessionBuilder, text, thinking, tool_call
from typer.testing import CliRunner

from sitegen.cli import app

runner = CliRunner()
HOSTILE_OUTPUT = "before\n````\n# ZZ_BROKE_OUT_ZZ\n```\n<script>ZZ_SCRIPT_ZZ</script>"


def session(tmp_path: Path) -> Path:
    b = SessionBuilder(session_id="fmt-0001", cwd="/work/fmt")
    b.user("u1", "List the files ZZ_PROMPT_ZZ")
    b.assistant("a1", [thinking("Let me look ZZ_THINK_ZZ"), tool_call("c1", "bash", command="ls `pwd`")])
    b.tool_result("r1", "c1", "bash", HOSTILE_OUTPUT, isError=True)
    b.assistant("a2", [text("Two files. ZZ_ANSWER_ZZ"), tool_call("c2", "read", path="a.py")])
    b.tool_result("r2", "c2", "read", "print(1)")
    b.assistant("a3", [text("Done.")])
    b.user("u2", "another branch", parent="a2")
    return b.write(tmp_path / "sessions" / "fmt.jsonl")


def export(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["export", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_markdown_has_prompts_answers_calls_and_fenced_outputs(tmp_path: Path) -> None:
    source = session(tmp_path)
    code, out, _ = export(source, "--format", "md", "-o", tmp_path / "out" / "t.md")
    assert code == 0 and "Exported to:" in out
    md = (tmp_path / "out" / "t.md").read_text(encoding="utf-8")
    assert "ZZ_PROMPT_ZZ" in md and "ZZ_ANSWER_ZZ" in md and "> Let me look ZZ_THINK_ZZ" in md
    assert "**bash** `` ls `pwd` `` · **failed** · took 1.0 s" in md
    assert "**read** ` a.py `" in md
    # The shown branch is the newest leaf's: u2, not a3.
    assert "another branch" in md and "Done." not in md
    tokens = MarkdownIt().parse(md)
    # The output's own fences and heading stay inside one fence.
    assert not any(t.type == "inline" and "ZZ_BROKE_OUT_ZZ" in t.content for t in tokens)
    fences = [t for t in tokens if t.type == "fence" and "ZZ_BROKE_OUT_ZZ" in t.content]
    assert len(fences) == 1 and fences[0].content == HOSTILE_OUTPUT + "\n"


def entries_of(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]


def test_json_holds_every_entry_as_the_page_reads_it(tmp_path: Path) -> None:
    source = session(tmp_path)
    code, _, _ = export(source, "--format", "json", "-o", tmp_path / "t.json")
    assert code == 0
    document = orjson.loads((tmp_path / "t.json").read_bytes())
    raw = entries_of(source)
    assert [e["id"] for e in document["entries"]] == [e["id"] for e in raw]
    assert [e["parentId"] for e in document["entries"]] == [e["parentId"] for e in raw]
    assert document["session"]["id"] == "fmt-0001" and document["session"]["cwd"] == "/work/fmt"
    assert document["leaf"] == "u2"
    assert document["branch"] == ["u1", "a1", "r1", "a2", "u2"]
    by_id = {e["id"]: e for e in document["entries"]}
    call = by_id["a1"]["toolCalls"][0]
    assert (call["name"], call["arguments"], call["result"]["isError"]) == ("bash", {"command": "ls `pwd`"}, True)
    assert call["result"]["text"] == HOSTILE_OUTPUT
    assert by_id["r1"]["isError"] is True and by_id["r1"]["toolName"] == "bash" and by_id["r1"]["durationMs"] == 1000
    assert by_id["a1"]["role"] == "assistant" and by_id["a1"]["timestamp"].endswith("Z")
    assert by_id["a2"]["text"] == "Two files. ZZ_ANSWER_ZZ"
    context = document["context"]
    assert context["leafId"] == "u2" and "firstKeptEntryId" in context["rule"]


def test_html_stays_the_default_and_a_bad_format_is_a_usage_error(tmp_path: Path) -> None:
    source = session(tmp_path)
    code, _, _ = export(source, "-o", tmp_path / "page.html")
    assert code == 0 and (tmp_path / "page.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    code, _, err = export(source, "--format", "pdf", "-o", tmp_path / "x.pdf")
    assert code == 2 and "--format" in err
    assert not (tmp_path / "x.pdf").exists()


def test_text_exports_never_write_over_a_session_file(tmp_path: Path) -> None:
    source = session(tmp_path)
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    for fmt in ("md", "json"):
        code, _, err = export(source, "--format", fmt, "-o", source)
        assert code == 1 and "Refusing" in err
    other = tmp_path / "sessions" / "other.jsonl"
    other.write_bytes(source.read_bytes())
    code, _, err = export(source, "--format", "json", "-o", other)
    assert code == 1 and "session file" in err
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    # Into a folder: <stem>.<format> inside it.
    folder = tmp_path / "exports"
    folder.mkdir()
    code, _, _ = export(source, "--format", "json", "-o", folder)
    assert code == 0 and (folder / "fmt.json").is_file()
