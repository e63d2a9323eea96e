"""Our JSON lexer, written as rules the page's highlighter runs too, gives pygments' JsonLexer's tokens and
so the server's HTML: on generated JSON, on JSON with comments, and on any text (valid or not)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexers.data import JsonLexer

from sitegen.render.highlight.lexing import lex
from sitegen.render.highlight.pygments_html import (
    _lexer_by_name,
    format_tokens,
    lexer_class_by_name,
    lexer_name_for_path,
)
from sitegen.render.highlight.rule_lexers import JsonRulesLexer
from sitegen.render.highlight.tables import lexer_table

PYGMENTS = JsonLexer(stripnl=False, ensurenl=False)


def _ours() -> JsonRulesLexer:
    lexer = _lexer_by_name("json")
    assert isinstance(lexer, JsonRulesLexer)
    return lexer


def _same_as_pygments(text: str) -> None:
    ours = _ours()
    expected = list(PYGMENTS.get_tokens(text))
    assert list(lex(ours, text)) == expected
    assert list(ours.get_tokens(text)) == expected
    assert format_tokens(ours, text) == format_tokens(PYGMENTS, text)


def test_json_is_ours_by_every_name_pygments_gives_it() -> None:
    for alias in ("json", "JSON", "json-object"):
        assert lexer_class_by_name(alias) is JsonRulesLexer, alias
    assert JsonRulesLexer.aliases == JsonLexer.aliases
    for path in ("/work/app/package.json", "x/data.jsonl", "Pipfile.lock"):
        assert lexer_name_for_path(path) == "json", path
    # JSON-LD keeps pygments' own lexer (it marks @keywords): only the server colours it.
    assert lexer_table("jsonld") is None
    table = lexer_table("json")
    assert table is not None and table["aliases"] == ["json", "json-object"] and table["using"] == []


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# How the document is written: compact, pretty with spaces or tabs, non-ASCII kept or escaped, CRLF.
_LAYOUTS = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 1, 2, "\t"]),
        "separators": st.sampled_from([None, (",", ":"), (", ", " : "), (" ,\r\n", ":\t")]),
        "ensure_ascii": st.booleans(),
    }
)


@settings(max_examples=150, deadline=None)
@given(document=_DOCUMENTS, layout=_LAYOUTS, around=st.sampled_from(["", "\n", "  \n\t", "\r\n"]))
def test_valid_json_gives_pygments_tokens_and_html(document: Any, layout: dict[str, Any], around: str) -> None:
    _same_as_pygments(around + json.dumps(document, **layout) + around)


def test_json_lines_escapes_exponents_and_comments_give_pygments_tokens() -> None:
    samples = [
        '{"a": 1e-5, "b": -0.5E+10, "c": [true, false, null], "d": {}}',
        '{"e": "\\u00e9\\"\\\\\\/\\b\\f\\n\\r\\t", "😀": "naïve 注释"}\n{"x": []}\n[1,2]\n',
        '"just a string"',
        '{\n  // a comment: with a colon\n  "k" /* between */ : "v", /* a block ** comment */ "n": 0\n}',
    ]
    for text in samples:
        _same_as_pygments(text)


def test_broken_escapes_end_as_pygments_ends_them() -> None:
    """\\u takes up to four hex digits, and the character that cuts it short, a quote too."""
    for hex_digits in ("", "1", "12", "123", "1234", "12345"):
        for after in ('"', '"x"', '":1', "\\", "z", ""):
            _same_as_pygments(f'["\\u{hex_digits}{after}", "k": 1]')


# Characters and pieces that steer JsonLexer's state machine: escapes, comments, keys, punctuation runs.
_PIECES = [*'ab1 \t\n\r"\\/*:{}[],.eE+-ftn0F\x0bé😀', "\\u", '\\"', "//", "/*", "*/", "true", "null", '"k":']


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_any_text_gives_pygments_tokens(text: str) -> None:
    """Not only JSON: keys told by a ":" after strings and comments, strings and comments left open,
    stray characters. The page runs the same table, so it colours them as the server does."""
    _same_as_pygments(text)


def test_long_runs_of_strings_lex_as_pygments_does() -> None:
    """Strings held back (not JSON: strings with only spaces between, as a JSON lines file of strings
    has) are looked ahead from the first of them only, a state taking the rest: long runs of them,
    up to the highlighting limit, lex as pygments does."""
    for text in ['"a" ' * 4000, '"ab"\n' * 3200 + ":", '"a" /* c */ ' * 1300]:
        _same_as_pygments(text)
