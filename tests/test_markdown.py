"""Markdown: the parser-free path for plain text gives exactly what markdown-it gives."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sitegen.render.highlight.pygments_html import Highlighter
from sitegen.render.markdown.render import MarkdownRenderer

_MARKDOWN_IT = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
# Links only to the schemes sitegen allows: "[a]: a" defines no reference there, so it stays text.
_MARKDOWN_IT.validateLink = MarkdownRenderer._validate_link  # type: ignore[method-assign]
# The pages' CSP allows no style attributes: sitegen gives a table cell its alignment as a class.
_ALIGN = re.compile(r'style="text-align:(left|center|right)"')


# Every link sitegen keeps opens apart and passes nothing on to the site it names.
_LINK = re.compile(r'(<a href="[^"]*")>')


class _Reference:
    @staticmethod
    def render(text: str) -> str:
        html = _ALIGN.sub(r'class="align-\1"', _MARKDOWN_IT.render(text))
        return _LINK.sub(r'\1 rel="noopener noreferrer nofollow" target="_blank">', html)


REFERENCE = _Reference()
# Letters, digits, punctuation (markdown's included), spaces, newlines and some non-ASCII.
# Pieces that open blocks when they start a line: list markers, indented code, underlines.
PIECES = st.sampled_from(
    [*"ab yz019.,;:'\"()?-+=*_`#<>&|~![]\\/\n\n  é\u00a0\u4e2d{}$%^@", "\n   ", "1. ", "    x", "--", "=="]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join).filter(lambda text: "```" not in text and "~~~" not in text))
def test_plain_text_renders_like_markdown_it(text: str) -> None:
    """(Fenced code is left out, as below: sitegen highlights it and escapes it for element content.)"""
    assert MarkdownRenderer(Highlighter()).render(text) == REFERENCE.render(text)


def test_an_empty_link_and_a_fence_without_a_language_found_by_the_property_tests() -> None:
    renderer = MarkdownRenderer(Highlighter())
    assert renderer.render("[]()") == REFERENCE.render("[]()")
    # A quote in fenced code is escaped for element content only (markdown-it writes &quot;).
    assert renderer.render('```\na"b\n```') == '<pre><code>a"b\n</code></pre>\n'


def test_a_reference_to_a_relative_url_stays_text() -> None:
    # Found by the property test below: markdown-it would take "[a]:a" for a link definition.
    assert MarkdownRenderer(Highlighter()).render("[a]:a") == REFERENCE.render("[a]:a") == "<p>[a]:a</p>\n"


def test_an_aligned_table_cell_is_compared_with_its_class() -> None:
    # Found by the property test above: "a|\n   :--" is a one-column table aligned left.
    text = "a|\n   :--"
    assert 'class="align-left"' in MarkdownRenderer(Highlighter()).render(text)
    assert MarkdownRenderer(Highlighter()).render(text) == REFERENCE.render(text)


# Prose as agents write it: words, snake_case names, inline code, and the characters around them.
PROSE = st.sampled_from(
    [*"ab z_09.,:'\"()-`#\n\n   é*[]<>&", "`x`", "`a_b`", "` `", "`  `", "` c `", "``", "snake_case", "__", "_x_", "#"]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(PROSE, max_size=40).map("".join).filter(lambda text: "```" not in text))
def test_prose_with_inline_code_renders_like_markdown_it(text: str) -> None:
    """(Fenced code is left out: sitegen highlights it, and escapes it for element content only.)"""
    assert MarkdownRenderer(Highlighter()).render(text) == REFERENCE.render(text)


def test_prose_with_inline_code_and_snake_case_takes_the_fast_path() -> None:
    from sitegen.render.markdown.render import _plain_but_code

    text = "The build_tree function in `src/a_b.py` is called before `x < y` holds; see #12.\n\n# not"
    assert _plain_but_code(text.split("\n\n")[0])
    assert not _plain_but_code(text)  # a heading
    assert MarkdownRenderer(Highlighter()).render(text.split("\n\n")[0]) == (
        "<p>The build_tree function in <code>src/a_b.py</code> is called before <code>x &lt; y</code> holds;"
        " see #12.</p>\n"
    )


# The fast path's test for markdown syntax as one regex (MULTILINE: ^ and $ at every line).
MAYBE_MARKDOWN = re.compile(
    r"[\\*\[\]<>|~&!\r\t\x00\x0b\x0c\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
    r"|^ *(?:[-+*=]|\d{1,9}[.)])|^ {4}|^ {0,3}#|  $",
    re.MULTILINE,
)
LINES = st.sampled_from(["a", " ", "  ", "\n", "-", "+", "*", "=", "1", "12.", "9)", "#", "    ", "\u2028", "\r", "é"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(LINES, max_size=14).map("".join))
def test_the_split_syntax_test_is_the_single_regex(text: str) -> None:
    from sitegen.render.markdown.render import _maybe_markdown

    assert _maybe_markdown(text) == bool(MAYBE_MARKDOWN.search(text))


def test_plain_sentences_take_the_fast_path() -> None:
    text = "Please read the config, then explain why the build fails.\n\nThanks"
    assert MarkdownRenderer(Highlighter()).render(text) == (
        "<p>Please read the config, then explain why the build fails.</p>\n<p>Thanks</p>\n"
    )


def test_lexers_come_from_file_names_only() -> None:
    from sitegen.render.highlight.pygments_html import lexer_name_for_path

    assert lexer_name_for_path("src/app.ts") == "typescript"
    assert lexer_name_for_path("/x/Makefile") == "make"
    assert lexer_name_for_path("build/CMakeLists.txt") == "cmake"
    assert lexer_name_for_path("notes.txt") == "text"
    assert lexer_name_for_path("README") is None


def test_lexer_priority_table_matches_the_installed_pygments() -> None:
    import importlib

    import pygments
    from pygments.lexers import LEXERS

    from sitegen.render.highlight.priority import PRIORITIES, PYGMENTS_VERSION

    actual = {}
    for class_name, (module, _name, aliases, patterns, _mimes) in LEXERS.items():
        priority = getattr(getattr(importlib.import_module(module), class_name), "priority", 0)
        if aliases and patterns and priority:
            actual[class_name] = priority
    assert pygments.__version__ == PYGMENTS_VERSION, (
        f"the table is for pygments {PYGMENTS_VERSION}, this is {pygments.__version__}: python -m tools.refresh_goldens"
    )
    assert dict(sorted(actual.items())) == PRIORITIES, "update sitegen/render/highlight/priority.py"


@pytest.mark.parametrize("table_version", ["current", "other"])
def test_file_names_get_the_lexer_pygments_would_choose(table_version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """For a name made from every pattern pygments knows (plus a prefix and a suffix), the choice is
    pygments' own find_lexer_class_for_filename (without content)."""
    from pygments.lexers import LEXERS, find_lexer_class_for_filename

    from sitegen.render.highlight.pygments_html import _lexer_for_name

    if table_version == "other":  # an upgraded pygments: claimants are ranked by importing them
        monkeypatch.setattr("sitegen.render.highlight.pygments_html.PYGMENTS_VERSION", "0.0")
    _lexer_for_name.cache_clear()
    names = set()
    for _module, _name, _aliases, patterns, _mimes in LEXERS.values():
        for pattern in patterns:
            name = re.sub(r"\[(.)[^\]]*\]", r"\1", pattern).replace("*", "file").replace("?", "x")
            names.update({name, f"a.{name}", f"{name}.bak"})
    mismatched = []
    for name in sorted(names):
        expected = find_lexer_class_for_filename(name)
        alias = expected.aliases[0] if expected is not None and expected.aliases else None
        if _lexer_for_name(name) != alias:
            mismatched.append((name, alias, _lexer_for_name(name)))
    _lexer_for_name.cache_clear()
    assert len(names) > 2000
    assert mismatched == []
