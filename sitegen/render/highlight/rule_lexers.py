"""Lexers of our own, as rules the page's highlighter runs too, for languages whose pygments lexer is Python code."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pygments.lexer import RegexLexer, default
from pygments.lexers.data import JsonLexer, YamlLexer
from pygments.token import Comment, Error, Keyword, Name, Number, Punctuation, String, Whitespace

from sitegen.render.highlight.yaml_rules import YamlRulesLexer

__all__ = ["JsonRulesLexer", "YamlRulesLexer", "rule_lexer"]

_HEX = "[0-9a-fA-F]"
# JsonLexer's string: an escape is a backslash and one character, or \u and up to four hex digits, a
# character other than a hex digit ending it early (that character is part of the string, a quote too).
# Every step has one way to go, so no match backtracks into another reading of the string.
_STRING = rf'"(?:[^"\\]|\\u(?:{_HEX}{{4}}|{_HEX}{{0,3}}[^0-9a-fA-F])|\\[^u])*"'
_SPACE = "[ \t\n\r]"
# A // comment runs to the end of its line, never less (a lookahead must not end it at a ":" in it).
_LINE_COMMENT = r"//[^\n]*(?![^\n])"
# A /* comment ends at the first */ after its opening, and cannot be read to end elsewhere.
_BLOCK_COMMENT = r"/\*[^*]*\*+(?:[^*/][^*]*\*+)*/"
# What JsonLexer holds back after a string until it knows whether the strings are keys: spaces,
# comments and more strings; a ":" after them makes every string in them a key (Name.Tag).
_HELD = rf"(?:{_SPACE}|{_LINE_COMMENT}|{_BLOCK_COMMENT}|{_STRING})"


def _held(token: Any) -> list[Any]:
    """A state for the strings held back after the first: each string is token, until anything else."""
    return [
        (f"{_SPACE}+", Whitespace),
        (_LINE_COMMENT, Comment.Single),
        (_BLOCK_COMMENT, Comment.Multiline),
        (_STRING, token),
        default("#pop"),
    ]


class JsonRulesLexer(RegexLexer):
    """pygments' JsonLexer as regex rules: strings (keys when a ":" follows), numbers, true/false/null,
    punctuation runs, JavaScript comments, and an error token for anything else, as it tokenizes them,
    valid JSON or not (tests/test_rule_lexers.py). pygments' own is a state machine in Python, which kept
    JSON (tool calls' arguments, many results) on the server past a page's first screen."""

    name = JsonLexer.name
    url = JsonLexer.url
    aliases = JsonLexer.aliases
    filenames = JsonLexer.filenames
    mimetypes = JsonLexer.mimetypes
    flags = re.DOTALL  # "." is any character, a newline too

    tokens: ClassVar[dict[str, Any]] = {
        "root": [
            (f"{_SPACE}+", Whitespace),
            # Valid JSON's strings, each seen alone: a key, or a value.
            (rf"{_STRING}(?={_SPACE}*:)", Name.Tag),
            (rf'{_STRING}(?!{_SPACE}*["/])', String.Double),
            # Strings and comments in a row (not JSON): looked ahead once, their strings then taken as one.
            (rf"{_STRING}(?={_HELD}*:)", Name.Tag, "keys"),
            (_STRING, String.Double, "values"),
            (r'".*', Error),  # a string left open: the rest of the text
            (r"[-0-9]+[.eE+][-0-9.eE+]*", Number.Float),
            (r"[-0-9]+", Number.Integer),
            (r"[fnt][aeflnrstu]*", Keyword.Constant),  # true, false, null, and what their letters spell
            (r":[{}\[\],]*", Punctuation),
            (r"[{}\[\],]+", Punctuation),
            (_LINE_COMMENT, Comment.Single),
            (_BLOCK_COMMENT, Comment.Multiline),
            (r"/\*.*", Error),  # a comment left open: the rest of the text
            (r".", Error),
        ],
        "keys": _held(Name.Tag),
        "values": _held(String.Double),
    }


def rule_lexer(cls: type[Any]) -> type[Any]:
    """Our lexer in place of a pygments lexer class, where we have one; else the class itself."""
    return _OURS.get(cls, cls)


_OURS: dict[type[Any], type[Any]] = {JsonLexer: JsonRulesLexer, YamlLexer: YamlRulesLexer}
