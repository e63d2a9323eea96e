"""ANSI colours to spans: the one-pass conversion gives exactly the piece-by-piece one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.render.ansi import _OTHER_ESCAPES, _ansi_pieces, ansi_to_html

# Text, markup characters, SGR sequences (with odd and huge parameters), other escapes and the
# noncharacters the one-pass conversion marks spans with.
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


@settings(max_examples=800, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join))
def test_one_pass_conversion_equals_piece_by_piece(text: str) -> None:
    assert ansi_to_html(text) == _ansi_pieces(_OTHER_ESCAPES.sub("", text))


def test_colours_and_markup() -> None:
    html = ansi_to_html("\x1b[1;31mZZ <red> & bold\x1b[0m plain \x1b[32mgreen")
    assert html == (
        '<span class="ansi-bold ansi-fg1">ZZ &lt;red&gt; &amp; bold</span> plain <span class="ansi-fg2">green</span>'
    )
