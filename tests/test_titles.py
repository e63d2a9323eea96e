"""Titles and snippets: markdown stripped, one line, at most 80 characters, never empty; slash commands skipped."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.titles import (
    _EMPHASIS,
    TITLE_CHARS,
    _one_spaced,
    clip,
    first_line,
    is_slash_command,
    plain_text,
    relative_path,
    session_title,
    snippet,
    tool_subject,
)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("## Fix **the** `login` bug\nand more", "Fix the login bug"),
        ("> quoted [a link](https://x.example) and ![a cat](cat.png)", "quoted a link and a cat"),
        ("```python\nprint('hi')\n```", "print('hi')"),
        ("---\n\n   \n* first bullet", "first bullet"),
        ("1. [x] done item", "done item"),
        ("snake_case_name stays, *emphasis* and _this_ go", "snake_case_name stays, emphasis and this go"),
        ("| col a | col b |\n|---|---|\n| 1 | 2 |", "col a col b"),
        ("~~old~~ new \\*literal\\*", "old new *literal*"),
        ("see <https://example.org/x>", "see https://example.org/x"),
        ("`` code with ` tick ``", "code with ` tick"),
        ("Heading ###\n", "Heading ###"),
        ("### Heading ###", "Heading"),
    ],
)
def test_first_line_strips_markdown(markdown: str, expected: str) -> None:
    assert first_line(markdown) == expected


def test_plain_text_keeps_every_line_and_code() -> None:
    text = "# Plan\n\n- read `a.py`\n- **fix** it\n\n```\nrun()\n```\n"
    assert plain_text(text) == "Plan read a.py fix it run()"


@pytest.mark.parametrize(
    ("prompt", "command"),
    [
        ("/mode", True),
        ("  /compact  ", True),
        ("/model gpt-4o", True),
        ("/skill:review", True),
        ("/Users/me/app.ts why does this crash?", False),
        ("/fix the login bug in the header please", False),
        ("fix /mode", False),
        ("/", False),
    ],
)
def test_slash_commands(prompt: str, command: bool) -> None:
    assert is_slash_command(prompt) is command


def test_session_title_prefers_name_then_prompt_then_reply_then_file() -> None:
    assert session_title("**Release** 0.8", ["prompt"]) == "Release 0.8"
    assert session_title(None, ["/mode", "## Port the *selector*\nsecond line"]) == "Port the selector"
    assert session_title("", ["/mode"], ["I'll read `theme.md` first."]) == "I'll read theme.md first."
    assert session_title(None, ["/mode", "   "], [], fallback="2026-01-01_abc.jsonl") == "2026-01-01_abc.jsonl"
    assert session_title(None, [], [], fallback="") == "(untitled session)"


def test_title_is_cut_to_eighty_characters_with_an_ellipsis() -> None:
    title = session_title(None, ["word " * 40])
    assert len(title) <= TITLE_CHARS
    assert title.endswith("…")


@given(st.text(max_size=400))
def test_snippets_are_one_short_line(text: str) -> None:
    line = snippet(text)
    assert "\n" not in line
    assert len(line) <= TITLE_CHARS
    assert line == line.strip()


@given(st.text(max_size=200), st.text(max_size=200))
def test_titles_are_never_empty(name: str, prompt: str) -> None:
    title = session_title(name or None, [prompt], [], fallback="file.jsonl")
    assert title
    assert len(title) <= TITLE_CHARS


def test_clip_cuts_at_a_word_boundary() -> None:
    assert clip("alpha beta gamma delta", 14) == "alpha beta…"
    assert clip("a" * 100, 10) == "a" * 9 + "…"


def test_relative_path() -> None:
    assert relative_path("/work/app/src/a.ts", "/work/app") == "src/a.ts"
    assert relative_path("/work/app", "/work/app/") == "."
    assert relative_path("/work/application/a.ts", "/work/app") == "/work/application/a.ts"
    assert relative_path("src/a.ts", "/work/app") == "src/a.ts"
    assert relative_path("/etc/hosts", "") == "/etc/hosts"


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("bash", {"command": "npm test -- --watch=false\necho done"}, "npm test -- --watch=false"),
        ("bash", {"command": "cd /work/app && npm run check"}, "npm run check"),
        ("bash", {"command": "cd /work/app/pkg/core; make"}, "cd pkg/core && make"),
        ("bash", {"command": "cd /tmp && ls"}, "cd /tmp && ls"),
        ("read", {"path": "/work/app/src/app.ts", "offset": 10}, "src/app.ts"),
        ("edit", {"file_path": "/elsewhere/x.py"}, "/elsewhere/x.py"),
        ("grep", {"pattern": "TODO", "path": "/work/app/src"}, "TODO in src"),
        ("glob", {"pattern": "**/*.ts"}, "**/*.ts"),
        ("task", {"agent": "explore", "description": "find the callers"}, "explore: find the callers"),
        ("task", {"tasks": [{}, {}]}, "2 tasks"),
        ("web_fetch", {"url": "https://example.org", "max": 3}, "https://example.org"),
        ("todo", {"count": 3}, "3"),
        ("weird", "not json", "not json"),
    ],
)
def test_tool_subject(name: str, arguments: object, expected: str) -> None:
    assert tool_subject(name, arguments, "/work/app") == expected


@given(st.text(alphabet="ab #>-\n\r\x0b\u2028", min_size=2000, max_size=2100), st.sampled_from(["", "\n", "\r\n"]))
def test_first_line_of_a_long_text_is_the_first_line_of_all_of_it(text: str, end: str) -> None:
    # first_line looks at the head of a long text first: a line that crosses the head's end (a "\r\n"
    # split by it too) or blank lines past it must read as when the whole text is split.
    whole = text + end + "ZZ_FIRST_7_ZZ and more"
    expected = next((shown for line in whole.splitlines() if (shown := first_line(line))), "")
    assert first_line(whole) == expected


def test_the_first_line_after_a_long_run_of_blank_lines_is_found() -> None:
    assert first_line("\n" * 5000 + "   \n" + "ZZ_FIRST_7_ZZ") == "ZZ_FIRST_7_ZZ"
    assert tool_subject("bash", {"command": " \n" * 3000 + "ZZ_CMD_7_ZZ --flag\nsecond"}) == "ZZ_CMD_7_ZZ --flag"


# The emphasis pattern as first written (it looks behind before its mark, which is slow on long lines).
_EMPHASIS_AS_WRITTEN = re.compile(
    r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"
)


_MARKED = st.sampled_from(["a", "é", "1", " ", "\t", ".", "*", "_", "**", "__", "\u00a0"])


@given(st.lists(_MARKED, max_size=20).map("".join))
def test_emphasis_is_found_where_the_pattern_as_first_written_finds_it(text: str) -> None:
    def words(match: re.Match[str]) -> str:
        return match.group(1) or match.group(2)

    assert _EMPHASIS.sub(words, text) == _EMPHASIS_AS_WRITTEN.sub(words, text)


_BLANKS = st.sampled_from(["a", "é", " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\u2028", "\x00", "\x85"])


@given(st.lists(_BLANKS, max_size=12).map("".join))
def test_a_line_has_its_words_one_space_apart(line: str) -> None:
    # A printable line one space apart already is kept as it is; any other is split and joined.
    assert _one_spaced(line) == " ".join(line.split())


def test_a_long_first_line_is_read_for_its_words_up_to_its_first_2_kb() -> None:
    """The inline patterns scan from each unclosed mark to the line's end (a 30 KB line of "*a " took
    6 s): a line is read up to a space before 2 KB, enough for any snippet."""
    hostile = "*a " * 30_000
    assert first_line(hostile) == first_line(hostile[:2046]).rstrip()
    assert len(first_line(hostile)) < 2048
    assert snippet("word " * 10_000) == snippet("word " * 20)
    # A span closed within the line's first 2 KB is read as it was.
    assert first_line("**bold** " + "x " * 5000) == "bold " + " ".join(["x"] * 1019)
