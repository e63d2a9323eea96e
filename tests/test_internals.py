"""Other packages' private APIs: only sitegen/render/base/_internals.py uses them, and each still works as it assumes.

When a smoke test here fails, a new release of the named package (or of Python) changed something sitegen
relies on: the message says which package, which version and what changed. Fix sitegen/render/base/_internals.py
for it, then re-run tests/test_golden.py.
"""

from __future__ import annotations

import ast
import platform
import re
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar

import pytest
from internals_scan import PACKAGE, own_private_names, private_uses, uses_in
from jinja2 import DictLoader, Environment, FileSystemBytecodeCache
from markdown_it import MarkdownIt
from pygments.lexer import RegexLexer, bygroups, this, using
from pygments.lexers import MarkdownLexer, PythonLexer, TextLexer
from pygments.token import Keyword, Name, String, Token

from sitegen.render.base import _internals
from sitegen.render.base._internals import (
    FENCE_GROUPS,
    MAXREPEAT,
    TokenType,
    bygroups_actions,
    is_fenced_code_callback,
    is_this_lexer,
    jinja_int,
    lexer_mapping,
    lexer_rules,
    markdown_it_block_rule,
    markdown_trim_chars,
    parse_pattern,
    preprocess_input,
    process_rules,
    processed_rules,
    template_cache_filename,
    using_target,
)

Test = TypeVar("Test", bound=Callable[..., None])
# _internals' names, and the smoke tests that cover them.
SMOKED: dict[str, list[str]] = {}


def smoke(*names: str) -> Callable[[Test], Test]:
    def mark(test: Test) -> Test:
        for name in names:
            SMOKED.setdefault(name, []).append(test.__name__)
        return test

    return mark


def broke(package: str, what: str) -> str:
    """A failure message naming the package and the installed release."""
    release = platform.python_version() if package == "CPython" else version(package)
    return f"{package} {release}: {what} (sitegen/render/base/_internals.py must follow it)"


# ---- nothing else uses private names ----------------------------------------------------------------


def test_no_module_but_internals_uses_another_packages_private_names() -> None:
    uses = private_uses()
    assert not uses, "private APIs used outside sitegen/render/base/_internals.py (move them there):\n" + "\n".join(
        map(str, uses)
    )


def test_the_scan_finds_each_kind_of_private_use(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "import importlib\n"
        "import re._parser\n"
        "from pygments.token import _TokenType\n"
        "from markdown_it.rules_core import block\n"
        "from pygments.lexers import LEXERS\n"
        "parser = importlib.import_module('re._parser')\n"
        "HOOK = '_process_regex'\n"
        "def f(lexer, cls, action, cache):\n"
        "    lexer._preprocess_lexer_input('x')\n"
        "    getattr(cls, HOOK)\n"
        "    cls.__dict__.get('_tokens')\n"
        "    '_tokens' in cls.__dict__\n"
        "    action.__closure__\n"
        "    return action.__qualname__ == 'MarkdownLexer._handle_codeblock'\n"
        "class Own:\n"
        "    def __init__(self):\n"
        "        self._mine = 1\n"
        "    def _helper(self):\n"
        "        import os\n"
        "        os._exit(0)\n"
        "        return self._mine, self._helper, getattr(self, '_mine')\n",
        encoding="utf-8",
    )
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found = [use.line for use in uses_in(module, tree, own_private_names([tree]))]
    assert sorted(found) == [2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14], found


def test_the_scan_reads_every_module_of_the_package() -> None:
    assert len(list(PACKAGE.rglob("*.py"))) > 50


# ---- CPython's regex parser ---------------------------------------------------------------------------


@smoke("parse_pattern", "MAXREPEAT")
def test_the_regex_parser_gives_the_tree_the_translators_read() -> None:
    pattern = r"(?i:a)[^b-d\w]x*?y+z{2,3}(?=q)(?<!r)\b^$\A\Z.[^c]|(?P<n>s)(?P=n)(?>t)u*+(?(n)v|w)\d"

    def lit(char: str) -> tuple[tuple[str, int], ...]:
        return (("LITERAL", ord(char)),)

    first = (
        ("SUBPATTERN", (None, re.IGNORECASE, 0, lit("a"))),
        ("IN", (("NEGATE", None), ("RANGE", (ord("b"), ord("d"))), ("CATEGORY", "CATEGORY_WORD"))),
        ("MIN_REPEAT", (0, MAXREPEAT, lit("x"))),
        ("MAX_REPEAT", (1, MAXREPEAT, lit("y"))),
        ("MAX_REPEAT", (2, 3, lit("z"))),
        ("ASSERT", (1, lit("q"))),
        ("ASSERT_NOT", (-1, lit("r"))),
        ("AT", "AT_BOUNDARY"),
        ("AT", "AT_BEGINNING"),
        ("AT", "AT_END"),
        ("AT", "AT_BEGINNING_STRING"),
        ("AT", "AT_END_STRING"),
        ("ANY", None),
        ("NOT_LITERAL", ord("c")),
    )
    second = (
        ("SUBPATTERN", (1, 0, 0, lit("s"))),
        ("GROUPREF", 1),
        ("ATOMIC_GROUP", lit("t")),
        ("POSSESSIVE_REPEAT", (0, MAXREPEAT, lit("u"))),
        ("GROUPREF_EXISTS", (1, lit("v"), lit("w"))),
        ("IN", (("CATEGORY", "CATEGORY_DIGIT"),)),
    )
    expected = (("BRANCH", (None, (first, second))),)
    tree, flags = parse_pattern(pattern, 0)
    assert tree == expected, broke("CPython", f"re._parser parses {pattern!r} into another tree: {tree!r}")
    assert flags == re.UNICODE, broke("CPython", f"re._parser's state.flags for a str pattern is {flags}")
    assert parse_pattern("(?im)a", 0)[1] == re.UNICODE | re.IGNORECASE | re.MULTILINE, broke(
        "CPython", "re._parser's state.flags leaves out a pattern's own flags"
    )
    assert parse_pattern(r"\d", re.ASCII)[1] & re.ASCII, broke("CPython", "re._parser drops the flags it is given")
    assert re.compile("a*").match("a" * 70_000).end() == 70_000
    assert MAXREPEAT > 2**16, broke("CPython", f"re._constants.MAXREPEAT is {MAXREPEAT}")
    with pytest.raises(re.error):
        parse_pattern("(", 0)


# ---- pygments -----------------------------------------------------------------------------------------


@smoke("TokenType")
def test_token_types_are_one_class() -> None:
    for token in (Token, Name, Name.Builtin.Pseudo, String.Backtick, Keyword):
        assert type(token) is TokenType, broke("pygments", f"{token} is a {type(token)}, not pygments.token._TokenType")
    assert Name.Builtin.parent is Name, broke("pygments", "_TokenType has no parent")


class _Fresh(RegexLexer):
    name = "fresh"
    tokens = {  # noqa: RUF012 - pygments' own way to declare rules
        "root": [(r"a+", Name), (r"b", Keyword, "other"), (r"\n", Token.Text)],
        "other": [(r"c", String, "#pop")],
    }


class _Variants(RegexLexer):
    name = "variants"
    token_variants = True
    tokens = {"root": [(r"a", Name)]}  # noqa: RUF012


@smoke("process_rules", "processed_rules", "lexer_rules")
def test_the_lexer_metaclass_processes_rules_through_its_compile_hook() -> None:
    compiled: list[tuple[str, int, str]] = []

    def compile_rule(cls: type, regex: Any, flags: int, state: str) -> Callable[..., Any]:
        compiled.append((regex, flags, state))
        return re.compile(regex, flags).match

    assert processed_rules(_Fresh) is None, broke("pygments", "a lexer class has rules before its first use")
    rules = process_rules(_Fresh, compile_rule)
    assert rules is not None
    assert sorted(compiled) == sorted(
        [
            ("a+", re.MULTILINE, "root"),
            ("b", re.MULTILINE, "root"),
            (r"\n", re.MULTILINE, "root"),
            ("c", re.MULTILINE, "other"),
        ]
    ), broke("pygments", f"RegexLexerMeta._process_regex is called otherwise: {compiled}")
    assert [(action, state) for _match, action, state in rules["root"]] == [
        (Name, None),
        (Keyword, ("other",)),
        (Token.Text, None),
    ], broke("pygments", "process_tokendef's rules are not (match, action, new state)")
    assert rules["other"][0][2] == -1, broke("pygments", "#pop is no longer the state change -1")
    assert processed_rules(_Fresh) is rules, broke("pygments", "a lexer class's processed rules are not _tokens")
    assert process_rules(_Fresh, compile_rule) is None  # processed once
    lexer = _Fresh()
    assert lexer_rules(lexer) is rules, broke("pygments", "a lexer instance does not run its class's _tokens")
    assert [(token, value) for token, value in lexer.get_tokens("aabc\n")] == [
        (Name, "aa"),
        (Keyword, "b"),
        (String, "c"),
        (Token.Text, "\n"),
    ], broke("pygments", "RegexLexer does not run the rules the compile hook made")
    assert process_rules(_Variants, compile_rule) is None and processed_rules(_Variants) is None, broke(
        "pygments", "token_variants lexers are processed"
    )


@smoke("preprocess_input")
def test_lexers_prepare_their_input() -> None:
    text = "\ufeffa\r\nb\tc"
    assert preprocess_input(TextLexer(ensurenl=True), text) == "a\nb\tc\n", broke(
        "pygments", "Lexer._preprocess_lexer_input prepares text otherwise"
    )
    assert preprocess_input(TextLexer(tabsize=2, ensurenl=False), text) == "a\nb c"
    lexer = PythonLexer(stripnl=False, ensurenl=False)
    assert "".join(value for _token, value in lexer.get_tokens(text)) == preprocess_input(lexer, text)


@smoke("is_this_lexer", "using_target", "bygroups_actions")
def test_callbacks_keep_what_they_were_made_with() -> None:
    assert is_this_lexer(this) and not is_this_lexer(PythonLexer), broke("pygments", "`this` is not a _This")
    itself = using(this)
    assert using_target(itself) == (None, ["root"], {}), broke("pygments", "using(this)'s closure changed")
    assert using_target(using(this, state=("a", "b"))) == (None, ["a", "b"], {})
    assert using_target(using(PythonLexer, state="string")) == (PythonLexer, ["root", "string"], {}), broke(
        "pygments", "using(lexer, state=...)'s closure no longer holds _other and gt_kwargs"
    )
    assert using_target(using(PythonLexer, stripnl=False)) == (PythonLexer, ["root"], {"stripnl": False}), broke(
        "pygments", "using(lexer, **options)'s closure no longer holds kwargs"
    )
    grouped = bygroups(Name, None, itself)
    assert bygroups_actions(grouped) == [Name, None, itself], broke(
        "pygments", "bygroups' closure no longer holds args"
    )
    for other in (Name, itself, None, len):
        assert bygroups_actions(other) is None
    assert using_target(grouped) is None and using_target(Name) is None


@smoke("is_fenced_code_callback", "FENCE_GROUPS")
def test_markdowns_fenced_code_rule_names_its_groups() -> None:
    fenced = [rule for rules in MarkdownLexer.tokens.values() for rule in rules if is_fenced_code_callback(rule[1])]
    assert len(fenced) == 1, broke("pygments", "MarkdownLexer._handle_codeblock is not one rule's callback")
    groups = re.compile(fenced[0][0]).groupindex
    numbers = [groups.get(name) for name in FENCE_GROUPS]
    assert None not in numbers and numbers == sorted(numbers), broke(
        "pygments", f"MarkdownLexer's fenced code groups are now {dict(groups)}"
    )
    assert not is_fenced_code_callback(Name) and not is_fenced_code_callback(using(this))


@smoke("lexer_mapping")
def test_the_lexer_mapping_lists_lexers_without_importing_them() -> None:
    mapping = lexer_mapping()
    assert len(mapping) > 500, broke("pygments", "pygments.lexers.LEXERS is no longer the table of lexers")
    module, name, aliases, patterns, _mimes = mapping["PythonLexer"]
    assert (module, name) == ("pygments.lexers.python", "Python") and "python" in aliases and "*.py" in patterns, broke(
        "pygments",
        f"LEXERS' rows are no longer (module, name, aliases, file names, mime types): {mapping['PythonLexer']}",
    )
    assert all(len(row) == 5 for row in mapping.values())


# ---- markdown-it --------------------------------------------------------------------------------------


@smoke("markdown_it_block_rule", "StateCore")
def test_markdown_its_block_rule_stands_alone() -> None:
    from markdown_it.rules_core.state_core import StateCore

    md = MarkdownIt("commonmark")
    names = md.core.ruler.get_all_rules()
    assert "block" in names and "inline" in names, broke("markdown-it-py", f"the core rules are now {names}")
    source = "# title\n\n- a\n- b\n\n```py\nx\n```\n\n> quote\n"
    state = StateCore(source, md, {})
    markdown_it_block_rule(state)
    expected = [(token.type, token.content) for token in md.parse(source)]
    assert [(token.type, token.content) for token in state.tokens] == expected, broke(
        "markdown-it-py", "markdown_it.rules_core.block makes other tokens"
    )


@smoke("markdown_trim_chars")
def test_markdown_its_trim_characters_are_what_it_strips() -> None:
    chars = markdown_trim_chars()
    assert {" ", "\t", "\n"} <= set(chars) and not chars.strip(), broke(
        "markdown-it-py", f"markdown_it.common.utils.MD_TRIM_CHARS is {chars!r}"
    )
    inline = next(token for token in MarkdownIt("commonmark").parse("#  x \t\n") if token.type == "inline")
    assert inline.content == "  x \t".strip(chars), broke("markdown-it-py", "a heading's content is trimmed otherwise")


# ---- jinja --------------------------------------------------------------------------------------------


@smoke("template_cache_filename")
def test_jinjas_file_cache_names_its_files(tmp_path: Path) -> None:
    cache = FileSystemBytecodeCache(str(tmp_path))
    env = Environment(loader=DictLoader({"t.html": "{{ 1 + 1 }}"}), bytecode_cache=cache)
    assert env.get_template("t.html").render() == "2"
    bucket = cache.get_bucket(env, "t.html", None, "{{ 1 + 1 }}")
    filename = Path(template_cache_filename(cache, bucket))
    assert filename.parent == tmp_path and filename.is_file(), broke(
        "jinja2", f"FileSystemBytecodeCache._get_cache_filename gives {filename}, not the file it wrote"
    )
    assert [path.name for path in tmp_path.iterdir()] == [filename.name]


@smoke("jinja_int")
def test_jinjas_int_filter_is_the_templates_int() -> None:
    env = Environment()
    for value in (12, "12", "0x1A", 3.7, "3.7", None, "x", "", [1]):
        ours = jinja_int(value)
        assert str(ours) == env.from_string("{{ v | int }}").render(v=value), broke(
            "jinja2", f"jinja2.filters.do_int({value!r}) is not the template's int"
        )
    assert jinja_int("12") == 12 and jinja_int(None) == 0


def test_every_name_of_internals_has_a_smoke_test() -> None:
    assert set(SMOKED) == set(_internals.__all__), "each of _internals' names needs a @smoke test here"


def test_a_private_name_that_is_gone_is_named_with_the_release_that_dropped_it() -> None:
    error = _internals._moved("pygments", "pygments.token._TokenType")
    assert isinstance(error, ImportError)
    assert str(error).startswith(f"pygments {version('pygments')}: pygments.token._TokenType is gone")
    assert str(_internals._moved("CPython", "re._parser")).startswith(f"CPython {platform.python_version()}: ")
