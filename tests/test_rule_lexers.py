"""Our JSON and YAML lexers, written as rules the page's highlighter runs too, give pygments' tokens (JSON,
on any text) or HTML (YAML, on real YAML; its known differences each held to what it colours)."""

from __future__ import annotations

import json
import random
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexers.data import JsonLexer, YamlLexer
from yaml_samples import SAMPLES

from sitegen.render.highlight.lexing import lex
from sitegen.render.highlight.pygments_html import (
    HIGHLIGHT_LIMIT,
    _lexer_by_name,
    format_tokens,
    lexer_class_by_name,
    lexer_name_for_path,
)
from sitegen.render.highlight.rule_lexers import JsonRulesLexer
from sitegen.render.highlight.tables import lexer_table
from sitegen.render.highlight.yaml_rules import MAX_INDENT, YamlRulesLexer

PYGMENTS = JsonLexer(stripnl=False, ensurenl=False)
_Lexer = TypeVar("_Lexer")


def _ours() -> JsonRulesLexer:
    return _swapped_in("json", JsonRulesLexer)


def _swapped_in(alias: str, cls: type[_Lexer]) -> _Lexer:
    """The lexer the highlighter uses for an alias, which must be our rule lexer `cls`."""
    lexer = _lexer_by_name(alias)
    assert isinstance(lexer, cls)
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


# ---- YAML ------------------------------------------------------------------------------------------

YAML_PYGMENTS = YamlLexer(stripnl=False, ensurenl=False)


def _yaml() -> YamlRulesLexer:
    return _swapped_in("yaml", YamlRulesLexer)


def _yaml_runs(text: str) -> str:
    """Our YAML's HTML, once we have checked it keeps the text and the page's runner (lexing.lex, the
    rules the page runs) gives the server lexer's tokens."""
    ours = _yaml()
    tokens = list(ours.get_tokens(text))
    assert "".join(value for _token, value in tokens) == "".join(v for _t, v in YAML_PYGMENTS.get_tokens(text))
    assert list(lex(ours, text)) == tokens
    return format_tokens(ours, text)


def _yaml_same_as_pygments(text: str) -> None:
    """The same HTML as pygments' YamlLexer: every visible character in the same coloured run. (Tokens of
    whitespace alone may be cut or typed otherwise: they join the run they are in, on the server and in
    the page alike.)"""
    assert _yaml_runs(text) == format_tokens(YAML_PYGMENTS, text)


def test_yaml_is_ours_by_every_name_pygments_gives_it() -> None:
    for alias in ("yaml", "YAML", "yml"):
        assert lexer_class_by_name(alias) is YamlRulesLexer, alias
    assert (YamlRulesLexer.aliases, YamlRulesLexer.filenames) == (YamlLexer.aliases, YamlLexer.filenames)
    for path in ("/work/app/deploy.yaml", ".github/workflows/ci.yml"):
        assert lexer_name_for_path(path) == "yaml", path
    table = lexer_table("yaml")
    assert table is not None and table["aliases"] == ["yaml", "yml"] and table["using"] == []


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_realistic_yaml_gives_pygments_html(name: str) -> None:
    """Kubernetes, GitHub Actions (run: | and run: >- holding shell lines with colons), compose files,
    anchors and merge keys, tags, flow collections, escapes, documents and directives, block scalars'
    chomping and indicators, comments everywhere, tabs and CRLF."""
    _yaml_same_as_pygments(SAMPLES[name])


# The lines the bench corpus writes YAML from (bench/corpus_text.py), and more of the same kind: in any order
# they make the indentation go up and down by steps that are not YAML's, with plain scalars run on.
_YAML_LINES = [
    "{a}:",
    "  {b}: {n}",
    "  - name: {c}",
    "    image: registry.example.com/{a}:{n}.1",
    "# {a} note",
    "      run: |",
    "        echo {a}: {n}",
    "- {a}: {n}",
    "  - [{a}, {b}]",
    "    {a}: >-",
    "{a}: '{b}' # c",
    "",
    "   ",
]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.tuples(st.sampled_from(_YAML_LINES), st.sampled_from(["web", "db_url", "x y"])), max_size=25),
    end=st.sampled_from(["", "\n"]),
)
def test_yaml_lines_in_any_order_give_pygments_html(lines: list[tuple[str, str]], end: str) -> None:
    text = "\n".join(line.format(a=word, b=word[::-1], c=word.upper(), n=len(word)) for line, word in lines)
    _yaml_same_as_pygments(text + end)


def test_yaml_dumped_by_pyyaml_gives_pygments_html() -> None:
    yaml = pytest.importorskip("yaml")
    words = ["a", "key with space", "x: y", "it's", 'q"d', "#h", "- d", "multi\nline\n", "", "1", "null", "é", "\tt"]
    rng = random.Random(7)

    def document(depth: int) -> Any:
        if depth > 3 or rng.random() < 0.4:
            return rng.choice([rng.choice(words), rng.randint(-5, 999), None, True, " ".join(rng.choices(words, k=5))])
        if rng.random() < 0.6:
            return {rng.choice(words) or "k": document(depth + 1) for _ in range(rng.randint(0, 4))}
        return [document(depth + 1) for _ in range(rng.randint(0, 4))]

    for _ in range(150):
        style = rng.choice([None, None, "|", ">", "'", '"'])
        text = yaml.dump(
            document(0),
            default_style=style,
            default_flow_style=rng.choice([False, None]),
            indent=rng.choice([2, 4]),
            width=rng.choice([20, 80]),
            allow_unicode=rng.random() < 0.5,
            explicit_start=rng.random() < 0.3,
        )
        _yaml_same_as_pygments(text)


_YAML_PIECES = [
    *"ab1 \t\n\n\"'\\:#-?,[]{}|>&*!%@`.\xa0",
    *("- ", ": ", "  ", "    ", "\n  ", "\n    ", "key: ", "|\n", "|-\n", ">2\n", "---\n", "...\n"),
    *("%YAML 1.2\n", "%TAG ! x:\n", "'x'", '"y"', "&a ", "*a", "!!str ", "# c\n", "\r\n"),
]


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(_YAML_PIECES), max_size=40).map("".join))
def test_any_text_keeps_its_characters_in_order(text: str) -> None:
    """Not only YAML: whatever the text, the tokens are the text, and the page's rules give the server's."""
    _yaml_runs(text)


@pytest.mark.parametrize(
    "text",
    [
        "key: |\n" + "\n" * 100_000,
        "key: |\n  a\n" + "  \t\n" * 25_000,
        "- " * 50_000,
        "".join(f"{' ' * (n % 40)}k{n}: |\n" for n in range(10_000)),
        "a: b\n" + "  c d: e\n" * 12_000,
        "[" * 30_000 + "]" * 30_000,
        '"' + "\\" * 100_000,
        "key:\n" + "  " * 50_000 + "x\n",
        # pygments' own key rule is quadratic on a line of these (23 s at 90 KB, pygments' 20 s): at the
        # most code is ever highlighted (HIGHLIGHT_LIMIT), 0.7 s.
        "\t- " * (HIGHLIGHT_LIMIT // 3),
    ],
)
def test_hostile_yaml_keeps_its_text(text: str) -> None:
    """A text made to make rules backtrack or the stack grow (100 KB, or as much as is ever highlighted):
    lexed (no rule tries more than once per line) and kept."""
    assert "".join(value for _token, value in _yaml().get_tokens(text)) == text


def test_yaml_a_line_dedented_between_two_levels_drops_to_the_lower_one() -> None:
    """As pygments' stack of indentations: a line less indented than its level drops to the level it
    passes (here none: the keyless plain scalar then runs on at any indentation), not to its column."""
    _yaml_same_as_pygments("    k: |\nplain\n-x: y\n")
    _yaml_same_as_pygments("a:\n    b: 1\n  plain\n  # c\n")


def test_yaml_a_key_on_a_plain_scalars_next_line_keeps_the_first_lines_indentation() -> None:
    """Not YAML (a key inside a multi-line plain scalar begun after a "- "): pygments makes the first
    line's key column the indentation from that key on, ours keeps the first line's (the "- " column), so
    a comment more indented than the "- " but not than its text runs on as plain text here, and is a
    comment there. (A text's first lines, before any indentation, are as pygments has them.)"""
    text = "- a\n   b: c\n  # d\n"
    assert _yaml_runs(text) == "- <span class=l>a\n   b</span>: <span class=l>c\n  # d\n</span>"
    assert (
        format_tokens(YAML_PYGMENTS, text)
        == "- <span class=l>a\n   b</span>: <span class=l>c\n  </span><span class=c1># d\n</span>"
    )
    _yaml_same_as_pygments("plain\n   b: c\n  # d\n")
    _yaml_same_as_pygments("- a\n   b: c\n   # d\n")


def test_yaml_several_indicators_on_a_line_make_one_level() -> None:
    """pygments makes each "- " of "- - x" an indentation level, ours the last: a line dedented to the
    first then drops past it (a YAML nested sequence written inline, then dedented: rare)."""
    text = "    - - x\n    body\n - x\n"
    assert _yaml_runs(text) == "    - - <span class=l>x\n    body\n - x\n</span>"
    assert format_tokens(YAML_PYGMENTS, text) == "    - - <span class=l>x\n    body\n </span>- <span class=l>x\n</span>"


def test_yaml_an_explicit_indentation_indicator_is_read_as_the_first_lines() -> None:
    """|2 with a first line indented more than two: pygments keeps lines of two spaces or more in the
    block, ours ends it at the first line less indented than the first (as if there were no indicator).
    With the first line at the indicated indentation, the two agree (the usual case)."""
    _yaml_same_as_pygments("key: |2\n  two\n  more\nnext: 1\n")
    text = "key: |2\n    four\n  two\n"
    assert (
        _yaml_runs(text)
        == "<span class=nt>key</span>: |2\n    <span class=no>four\n  </span><span class=l>two\n</span>"
    )
    assert (
        format_tokens(YAML_PYGMENTS, text) == "<span class=nt>key</span>: |2\n    <span class=no>four\n  two\n</span>"
    )


def test_yaml_columns_past_the_deepest_kept_are_taken_as_it() -> None:
    """Past MAX_INDENT columns the indentation is MAX_INDENT: a plain scalar after a "- " there runs on
    to a line at the same column, where pygments ends it."""
    deep = " " * (MAX_INDENT + 1)
    text = f"{deep}- x\n{deep}k:\n"
    assert _yaml_runs(text) == f"{deep}- <span class=l>x\n{deep}k</span>:\n"
    assert format_tokens(YAML_PYGMENTS, text) == f"{deep}- <span class=l>x\n{deep}</span><span class=nt>k</span>:\n"
    _yaml_same_as_pygments(f"{deep}key: |\n{deep}  body: x\n{deep}next: 1\n")
