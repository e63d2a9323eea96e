"""The joined-state lexer driver gives exactly pygments' tokens, for every built-in lexer."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import LEXERS, PythonLexer
from pygments.token import string_to_tokentype

from sitegen.render.highlight import lexing
from sitegen.render.highlight.lexing import _machine, lex, prepare_lexer_class
from sitegen.render.highlight.pygments_html import _format_runs, _lexer_by_name

ROOT = Path(__file__).resolve().parent.parent

# Strings, comments, escapes, numbers, tags, heredocs, indentation: something for every lexer's rules.
SAMPLE = """#!/usr/bin/env x
// line /* block */ -- dash ; semi % percent
# hash
def f(a, b=1): return "str\\"ing" + 'c' + `tick` $var ${x} @deco \\\\
<tag attr="v">text &amp; </tag> {{ tmpl }} {% block %} <% asp %>
x = [1, 2.5e10, 0xFF, 0o17, 1_000] ; if (a < b && c > d) { print(a) } else { nil }
\"\"\"doc
string\"\"\" r'\\d+' /regex/g <<END
heredoc \t tab
END
  indented:
    - key: value  (* pascal *) {- haskell -} #| lisp |#
\r\n"""


@pytest.fixture(autouse=True, params=["dispatched and joined", "dispatched", "rule by rule"])
def join_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with rules chosen by the next character (their choices joined at once, or
    never), and with every rule tried in turn as pygments does."""
    monkeypatch.setattr(lexing, "DISPATCH_AFTER", 10**9 if request.param == "rule by rule" else 1)
    monkeypatch.setattr(lexing, "JOIN_AFTER", 1 if request.param == "dispatched and joined" else 10**9)
    monkeypatch.setattr(lexing, "_machines", {})
    return str(request.param)


def _aliases() -> list[str]:
    return [aliases[0] for _module, _name, aliases, _files, _mimes in LEXERS.values() if aliases]


# pygments alone, in a process where sitegen has not prepared any lexer class.
_VANILLA = """
import pickle, sys
from pygments.lexers import LEXERS, get_lexer_by_name
text = sys.stdin.read()
out = {}
for _m, _n, aliases, _f, _t in LEXERS.values():
    if aliases:
        lexer = get_lexer_by_name(aliases[0], stripnl=False, ensurenl=False)
        out[aliases[0]] = [(str(token), value) for token, value in lexer.get_tokens(text)]
sys.stdout.buffer.write(pickle.dumps(out))
"""


@pytest.fixture(scope="module")
def vanilla_tokens() -> dict[str, list[tuple[str, str]]]:
    done = subprocess.run([sys.executable, "-c", _VANILLA], input=SAMPLE.encode(), capture_output=True, check=True)
    tokens: dict[str, list[tuple[str, str]]] = pickle.loads(done.stdout)
    return tokens


# Our rule lexers whose tokens are pygments' up to whitespace (how its runs are cut and typed, which
# the HTML does not show: whitespace joins the run it is in): the same HTML (tests/test_rule_lexers.py).
_SAME_HTML = {"yaml"}


def _html(tokens: list[tuple[str, str]]) -> str:
    return _format_runs((string_to_tokentype(token), value) for token, value in tokens)


def test_every_builtin_lexer_gives_pygments_tokens(vanilla_tokens: dict[str, list[tuple[str, str]]]) -> None:
    """Lazily compiled rules, joined states, same tokens as pygments on its own, for all 596 lexers."""
    mismatched = []
    for alias in _aliases():
        lexer = _lexer_by_name(alias)
        assert lexer is not None
        ours = [(str(token), value) for token, value in lex(lexer, SAMPLE)]
        if alias in _SAME_HTML:
            vanilla = vanilla_tokens[alias]
            same = _html(ours) == _html(vanilla) and "".join(v for _t, v in ours) == "".join(v for _t, v in vanilla)
        else:
            same = ours == vanilla_tokens[alias]
        if not same:
            mismatched.append(alias)
    assert len(vanilla_tokens) > 500
    assert mismatched == []


def test_rules_are_compiled_when_first_tried() -> None:
    class Fresh(PythonLexer):  # its own token table, processed by sitegen
        pass

    prepare_lexer_class(Fresh)
    rules = [rule for state in Fresh._tokens.values() for rule in state]  # type: ignore[attr-defined]
    bound = type(re.compile("").match)
    # pygments compiles default() rules itself: their pattern is empty
    assert all(type(match) is not bound or match.__self__.pattern == "" for match, _a, _s in rules)
    lexer = Fresh(stripnl=False, ensurenl=False)
    assert list(lex(lexer, "x = 1\n")) == list(PythonLexer(stripnl=False, ensurenl=False).get_tokens("x = 1\n"))
    rules = [rule for state in Fresh._tokens.values() for rule in state]  # type: ignore[attr-defined]
    compiled = [match for match, _a, _s in rules if type(match) is bound and match.__self__.pattern]
    assert 0 < len(compiled) < len(rules) / 2


# The next two read the rules' first characters and join every choice themselves: the join mode does
# not change what they check, so they run in one.
ONE_MODE = pytest.mark.parametrize("join_mode", ["dispatched and joined"], indirect=True)


@ONE_MODE
def test_common_lexers_are_dispatched_and_joined() -> None:
    """The speed comes from trying only the rules that can match the next character, joined: the
    languages agents read most must get both."""
    for alias in ("python", "typescript", "tsx", "rust", "go", "bash", "javascript", "java", "c", "css", "html"):
        lexer = _lexer_by_name(alias)
        assert isinstance(lexer, RegexLexer)
        for state in _machine(lexer).values():
            state.join()
            assert state.choices is not None
            for choice in state.choices:
                assert choice.joined is not None or len(choice.rules) <= 1, alias
            # A letter is matched by far fewer rules than the state has.
            assert len(state.choices[ord("q")].rules) < len(state.rules) or len(state.rules) < 4, alias


@pytest.mark.parametrize("alias", ["python", "bash", "rust", "typescript", "html", "c", "ruby", "perl", "json"])
@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab1 \t\n\r\"'`\\/*#<>{}()[]$@%-_=:;.,?!&|~^+é→\x00")), max_size=80))
def test_random_text_gives_pygments_tokens(alias: str, text: str) -> None:
    lexer = _lexer_by_name(alias)
    assert lexer is not None
    assert list(lex(lexer, text)) == list(lexer.get_tokens(text))


def test_real_source_files_give_pygments_tokens() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    cases = [
        ("python", stdlib / "argparse.py"),
        ("python", stdlib / "textwrap.py"),
        ("javascript", ROOT / "static" / "page.js"),
        ("css", ROOT / "static" / "page.css"),
        ("html+jinja", ROOT / "tests" / "fixtures" / "entry_macros.html.j2"),
    ]
    for alias, path in cases:
        text = path.read_text(encoding="utf-8")
        lexer = _lexer_by_name(alias)
        assert lexer is not None
        assert list(lex(lexer, text)) == list(lexer.get_tokens(text)), path


@ONE_MODE
@pytest.mark.parametrize(
    "alias", ["python", "typescript", "rust", "go", "bash", "json", "yaml", "sql", "tsql", "markdown", "html", "c"]
)
def test_a_rule_matches_only_where_its_first_characters_say(alias: str) -> None:
    """The dispatch's premise, for every rule of the languages agents read most: wherever a rule's
    pattern matches some text, the character there is one its first characters allow."""
    lexer = _lexer_by_name(alias)
    assert lexer is not None
    if not isinstance(lexer, RegexLexer):
        pytest.skip(f"{alias} has its own tokenizer")
    text = SAMPLE + "ſK\u212a\u0130é→ 😀 \u00a0x\u2028y"
    for state in _machine(lexer).values():
        for match, _action, _new_state in state.rules:
            keys = lexing._rule_first(match)
            for pos in range(len(text)):
                code = ord(text[pos])
                if min(code, lexing.WIDE) not in keys:
                    assert match(text, pos) is None, (alias, pos, text[pos])
