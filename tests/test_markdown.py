"""Markdown: the parser-free path for plain text gives exactly what markdown-it gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sitegen.render.highlight import Highlighter
from sitegen.render.markdown import MarkdownRenderer

REFERENCE = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
# Letters, digits, punctuation (markdown's included), spaces, newlines and some non-ASCII.
# Pieces that open blocks when they start a line: list markers, indented code, underlines.
PIECES = st.sampled_from(
    [*"ab yz019.,;:'\"()?-+=*_`#<>&|~![]\\/\n\n  é\u00a0\u4e2d{}$%^@", "\n   ", "1. ", "    x", "--", "=="]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_plain_text_renders_like_markdown_it(text: str) -> None:
    assert MarkdownRenderer(Highlighter()).render(text) == REFERENCE.render(text)


def test_plain_sentences_take_the_fast_path() -> None:
    text = "Please read the config, then explain why the build fails.\n\nThanks"
    assert MarkdownRenderer(Highlighter()).render(text) == (
        "<p>Please read the config, then explain why the build fails.</p>\n<p>Thanks</p>\n"
    )


def test_lexers_come_from_file_names_only() -> None:
    from sitegen.render.highlight import lexer_name_for_path

    assert lexer_name_for_path("src/app.ts") == "typescript"
    assert lexer_name_for_path("/x/Makefile") == "make"
    assert lexer_name_for_path("build/CMakeLists.txt") == "cmake"
    assert lexer_name_for_path("notes.txt") == "text"
    assert lexer_name_for_path("README") is None
