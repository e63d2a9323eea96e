"""Conversions done in one pass over a text for speed give exactly what the step-by-step ones gave."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from sitegen.render.ansi import _OTHER_ESCAPES, _SGR, _apply, _classes, _code, ansi_to_html
from sitegen.render.base.text import INTRAWORD_UNDERSCORES, escape_text
from sitegen.render.markdown.blocks import _CODE_OR_STRONG
from sitegen.render.page import _html_bytes

# Text, markup characters, SGR sequences (with odd and huge parameters), other escapes and the
# noncharacters an earlier one-pass conversion marked spans with.
PIECES = st.sampled_from(
    [
        *"ab <>&\"'\n",
        "\x1b[0m",
        "\x1b[m",
        "\x1b[1m",
        "\x1b[31m",
        "\x1b[1;32m",
        "\x1b[22m",
        "\x1b[39;49m",
        "\x1b[38;5;9m",
        "\x1b[48;2;1;2;3m",
        "\x1b[4;91;101m",
        "\x1b[" + "9" * 40 + "m",
        "\x1b[2K",
        "\x1b]0;title\x07",
        "\x1b",
        "\ufdd0",
        "\ufdd2",
    ]
)


def _ansi_pieces(text: str) -> Markup:
    """ansi_to_html one piece at a time, as it once was: the reference for the one-pass conversion."""
    out: list[str] = []
    state: dict[str, str] = {}
    position = 0
    open_span = False
    for match in _SGR.finditer(text):
        chunk = text[position : match.start()]
        if chunk:
            out.append(escape_text(chunk))
        position = match.end()
        codes = [_code(c) for c in match.group(1).split(";")] if match.group(1) else [0]
        _apply(codes, state)
        if open_span:
            out.append("</span>")
            open_span = False
        classes = _classes(state)
        if classes:
            out.append(f'<span class="{classes}">')
            open_span = True
    tail = text[position:]
    if tail:
        out.append(escape_text(tail))
    if open_span:
        out.append("</span>")
    return Markup("".join(out))


@settings(max_examples=800, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join))
def test_one_pass_conversion_equals_piece_by_piece(text: str) -> None:
    assert ansi_to_html(text) == _ansi_pieces(_OTHER_ESCAPES.sub("", text))


def test_colours_and_markup() -> None:
    html = ansi_to_html("\x1b[1;31mZZ <red> & bold\x1b[0m plain \x1b[32mgreen")
    assert html == (
        '<span class="ansi-bold ansi-fg1">ZZ &lt;red&gt; &amp; bold</span> plain <span class="ansi-fg2">green</span>'
    )


@pytest.mark.parametrize("text", ["plain … text → ok", "", "a\x00b\x07c\x1b[0m\x7fd\te\nf\rg", "\ud800 lone"])
def test_page_bytes_replace_control_characters(text: str) -> None:
    """C0 controls (but tab, newline and carriage return) and DEL become U+FFFD, whatever else is there."""
    expected = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "\ufffd", text).encode("utf-8", "surrogatepass")
    assert _html_bytes(text) == expected


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from([*"_a9Z _-é\n`*"]), max_size=40).map("".join))
def test_intraword_underscores_are_the_runs_the_lookbehind_form_finds(text: str) -> None:
    # The pattern starts with "_" for speed; its matches are those of the plain form.
    plain = re.compile(r"(?<=[A-Za-z0-9])_+(?=[A-Za-z0-9])")
    assert [m.span() for m in INTRAWORD_UNDERSCORES.finditer(text)] == [m.span() for m in plain.finditer(text)]


@settings(max_examples=800, deadline=None)
@given(
    st.lists(st.sampled_from(["**", "*", "`", " ", "a", "9", ".", "\\", "<", "x y", "\n"]), max_size=30).map("".join)
)
def test_code_or_strong_matches_what_the_lookbehind_first_form_matched(line: str) -> None:
    # The strong branch looks behind its "**" once matched (for speed); the matches are the same.
    plain = re.compile(
        r"`([^`\n]+)`|(?:(?<=^)|(?<= ))\*\*([A-Za-z0-9](?:[^*`\\\[\]!<&~\n]*[A-Za-z0-9])?)\*\*(?=$|[ .,:;?)])"
    )
    found = [(m.span(), m.groups()) for m in _CODE_OR_STRONG.finditer(line)]
    assert found == [(m.span(), m.groups()) for m in plain.finditer(line)]
