"""The short-cut block and inline rules build exactly markdown-it's tokens, or leave the text to markdown-it."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sitegen.render.markdown.blocks import install, quick_block_tokens, quick_html, quick_inline_tokens

REAL = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"


def highlight(code: str, language: str, _attrs: str = "") -> str:
    """A stand-in highlighter for each of the answers markdown-it's fence renderer treats apart."""
    if language == "none":
        return ""  # nothing: markdown-it escapes the code itself
    if language == "pre":
        return f"<pre>{len(code)}</pre>"  # a whole block: used as it is
    return f"<i>{language}:{len(code)}</i>"


def _parser(short_cuts: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "maxNesting": 50})
    md.enable(["table", "strikethrough"])
    md.options["highlight"] = highlight
    if short_cuts:
        install(md)
    return md


MARKDOWN_IT = _parser(short_cuts=False)
SHORT_CUT = _parser(short_cuts=True)


def assert_same(text: str) -> bool:
    """The short-cut tokens and HTML are markdown-it's; whether the HTML one read the text."""
    expected = MARKDOWN_IT.render(text)
    assert SHORT_CUT.render(text) == expected, repr(text)
    html = quick_html(text, highlight)
    assert html is None or html == expected, repr(text)
    return html is not None


# Each is read one way by markdown-it and could be read another by a parser that cut corners.
CASES = [
    "## Plan\n\nText with `code` and **bold**.\n\n- **Path**: `ver` list key\n- **Ctx**: state",
    "- a\n   - nested: x\n- b\n  - c\n    - d\n- e",
    "1. one\n2. two\n3. three",
    "3. three\n4. four",
    "1) a\n2) b",
    "1. a\n1) b",
    "- a\n* b",
    "- a\n\n- b",
    # A thematic break whose marker is also a list marker (found by test_markdown's property test).
    "* **",
    "- a\n* **",
    "- a\n\n  more",
    "- a\nlazy line",
    "- a\n  continued",
    "- a\n\nafter",
    "- a\n# heading",
    "- a\n```\ncode\n```",
    "- a\n  - b\n\n- c",
    "- a\n  - b\n # c",
    "- a\n - b",
    "- a\n     - b",
    "- a\n  2. b",
    "- a\n  1. b\n  2. c",
    "- # x",
    "- > q",
    "- - -",
    "* * *",
    "***",
    "- ",
    "-",
    "-  two spaces",
    "- [ ] task",
    "text\n- item",
    "text\n2. item",
    "text\n1. item",
    "text\n---",
    "text\n===",
    "text\n    indented",
    "text\n  indented",
    "text\n# heading",
    "text\n```\ncode\n```",
    "text\n> quote",
    "  indented start",
    "    code",
    "# Title #",
    "# Title#",
    "#Title",
    "####### seven",
    "## ",
    "##",
    "#  Spaced  ",
    "```py\nx = 1\n```",
    "```none\n<x> & y\n```",
    "```pre\nx\n```",
    "- a\n  - b\n    - c\n- d\n\n1. x\n2. y\n   - z",
    "5. five\n6. six\n\n# after",
    "```\nunclosed",
    "```\n````\n```",
    "```\n ```\n```",
    "```py\n```js\n```",
    "~~~\ncode\n~~~",
    "``` py\nx\n```",
    "```\n\n\n```",
    "a | b\n--|--\n1 | 2",
    "[ref]: http://example.com\n\n[ref]",
    "line one\nline two",
    "line one  \nline two",
    "line one \nline two",
    "line one\n line two",
    "a**b**",
    "**a**b",
    "** a**",
    "**a **",
    "**a**:",
    "(**a**)",
    "**a_b** and **a** **b**",
    "**a** **b**",
    "***a***",
    "**a*b**",
    "__a__",
    "_a_",
    "snake_case_name",
    "`a` `` b `` `c`",
    "` a `",
    "`  `",
    "``",
    "`a``",
    '&amp; < > "quoted"',
    "\u00a0nbsp\u00a0",
    "tab\there",
    "tab\n\tafter a line break",
    "spaces end a line \t\nbefore a break",
    "crlf\r\nline",
    "nul\x00here",
    "é **ü** `ß`",
    "- a\n" * 3 + "\n" + "## next",
    "  - indented list",
    "- a\n\n\n",
]


@pytest.mark.parametrize("text", CASES)
def test_each_case_renders_as_markdown_it_renders_it(text: str) -> None:
    assert_same(text)


def test_common_messages_take_the_short_cuts() -> None:
    # Without these, the module would do nothing and every other test here would still pass.
    text = "## Plan\n\nSee `a.py`.\n\n- **Path**: `x`\n   - nested\n- b\n\n```py\nx = 1\n```\n"
    assert quick_block_tokens(text) is not None and quick_html(text, highlight) is not None
    assert quick_inline_tokens("**Path**: `x` and more") is not None
    assert quick_block_tokens("a | b\n--|--") is None and quick_inline_tokens("*a*") is None


LINE_STARTS = ["", "", "", "  ", "   ", "    ", "     ", "\t", "- ", "* ", "+ ", "1. ", "2. ", "1) ", "10. ", "# ",
               "## ", "####### ", "```", "```py", "````", "~~~", "> ", "---", "***", "- - -", "===", "   - ",
               "  1. "]  # fmt: skip
WORDS = ["word", "x", "snake_case", "**bold**", "**two words**", "`code`", "` spaced `", "a**b**", "**a**:",
         "(**a**)", "**a **", "#", "|", "\\", "[a]", "&", "<x>", "_a_", "*", "é", " ", "  ", "\t", "``", ":",
         "!"]  # fmt: skip


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        start = draw(st.sampled_from(LINE_STARTS))
        words = draw(st.lists(st.sampled_from(WORDS), max_size=5))
        lines.append(start + " ".join(words))
    return "\n".join(lines)


@settings(max_examples=1000, deadline=None)  # with the 3,000 seeded mixes below: the suite stays under 5 min
@given(documents())
def test_mixes_of_blocks_render_as_markdown_it_renders_them(text: str) -> None:
    assert_same(text)


def test_random_messages_render_the_same_and_many_take_the_short_cut() -> None:
    rng = random.Random(7)
    handled = read_to_html = 0
    for _ in range(3000):
        lines = []
        for _ in range(rng.randint(1, 15)):
            start = rng.choice(["", "", "", "", "- ", "- ", "1. ", "## ", "   - "])
            lines.append(start + " ".join(rng.choice(WORDS[:8]) for _ in range(rng.randint(1, 6))))
            if rng.random() < 0.2:
                lines.append("")
        text = "\n".join(lines)
        read_to_html += assert_same(text)
        handled += quick_block_tokens(text) is not None
    # About a fifth: lines "   - " and lazy ones send the rest to markdown-it, "a**b**" the HTML path.
    assert handled > 400 and read_to_html > 100


def _message_texts(path: Path) -> list[str]:
    texts = []
    for line in path.read_bytes().splitlines():
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else [{"text": content}]:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                texts.append(block["text"])
    return texts


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/fixtures/real is not here")
def test_the_real_sessions_messages_render_the_same() -> None:
    texts = [text for path in sorted(REAL.glob("*.jsonl")) for text in _message_texts(path)]
    assert len(texts) > 50
    for text in texts:
        assert_same(text)
