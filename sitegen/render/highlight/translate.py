"""pygments' regex lexers translated into tables for the page's highlighter (sitegen.render.highlight.tables).

Patterns are translated from the parsed expression (the re module's own parser), not from their text:
every escape, class, flag and anchor is already resolved there. A lexer is portable when each of its
rules is: tokens, bygroups, using() of itself or of another portable lexer, and pattern parts
JavaScript has (no conditional groups, no atomic or possessive repeats); others are highlighted on
the server.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import String

from sitegen.render.base._internals import (
    FENCE_GROUPS,
    MAXREPEAT,
    TokenType,
    bygroups_actions,
    is_fenced_code_callback,
    is_this_lexer,
    parse_pattern,
    processed_rules,
    using_target,
)
from sitegen.render.highlight.lexing import Rule, pattern_source, prepare_lexer_class
from sitegen.render.highlight.pygments_html import css_class_of, lexer_class_by_name

__all__ = ["JS_FLAGS", "NotPortable", "called_lexers", "js_pattern", "translated_table"]

# The patterns use v-mode: code point semantics, \p{...} classes and classes nested in classes.
JS_FLAGS = "vy"


class NotPortable(Exception):
    """A rule the page's highlighter cannot run as pygments would."""


# Python's \w, \d and \s for str patterns (Unicode), and with re.ASCII.
_WORD = r"\p{L}\p{N}_"
_DIGIT = r"\p{Nd}"
# str.isspace(): the Unicode White_Space characters but U+FEFF... and the four ASCII separators.
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_ASCII_WORD = r"A-Za-z0-9_"
_ASCII_DIGIT = r"0-9"
_ASCII_SPACE = r"\t\n\x0b\x0c\r\x20"


def _category(category: Any, ascii_only: bool) -> tuple[str, bool]:
    """A category's class members, and whether the category is their complement."""
    word, digit, space = (_ASCII_WORD, _ASCII_DIGIT, _ASCII_SPACE) if ascii_only else (_WORD, _DIGIT, _SPACE)
    table = {
        "CATEGORY_WORD": (word, False),
        "CATEGORY_NOT_WORD": (word, True),
        "CATEGORY_DIGIT": (digit, False),
        "CATEGORY_NOT_DIGIT": (digit, True),
        "CATEGORY_SPACE": (space, False),
        "CATEGORY_NOT_SPACE": (space, True),
    }
    if category not in table:
        raise NotPortable(f"category {category}")
    return table[category]


def _char(code: int) -> str:
    """One character as a v-mode pattern atom, valid in and out of classes."""
    if code < 128:
        char = chr(code)
        return char if char.isalnum() else f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF or code in (0x2028, 0x2029):
        return f"\\u{{{code:x}}}"
    return chr(code)


class _Translator:
    def __init__(self, flags: int) -> None:
        self.ascii = bool(flags & re.ASCII)
        word = _ASCII_WORD if self.ascii else _WORD
        self.word = f"[{word}]"

    def sequence(self, items: Any, flags: int) -> str:
        return "".join(self.item(op, av, flags) for op, av in items)

    def item(self, op: Any, av: Any, flags: int) -> str:
        if op == "LITERAL":
            return _char(av)
        if op == "NOT_LITERAL":
            return f"[^{_char(av)}]"
        if op == "ANY":
            return "[\\s\\S]" if flags & re.DOTALL else "[^\\n]"
        if op == "IN":
            return self._class(av)
        if op == "BRANCH":
            return "(?:" + "|".join(self.sequence(branch, flags) for branch in av[1]) + ")"
        if op == "SUBPATTERN":
            group, add, drop, sub = av
            inner = self.sequence(sub, (flags | add) & ~drop)
            case = self._case_modifier(flags, add, drop)
            if case:
                inner = f"(?{case}:{inner})"
            return f"({inner})" if group is not None else f"(?:{inner})"
        if op in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, sub = av
            return self._repeat(self.sequence(sub, flags), low, high, lazy=op == "MIN_REPEAT")
        if op == "AT":
            return self._at(av, flags)
        if op in ("ASSERT", "ASSERT_NOT"):
            direction, sub = av
            look = "(?" + ("<" if direction < 0 else "") + ("=" if op == "ASSERT" else "!")
            return f"{look}{self.sequence(sub, flags)})"
        if op == "GROUPREF":
            return f"(?:\\{av})"
        if op == "CATEGORY":
            members, negated = _category(av, self.ascii)
            return f"[{'^' if negated else ''}{members}]"
        raise NotPortable(f"{op}")

    @staticmethod
    def _case_modifier(flags: int, add: int, drop: int) -> str:
        """A JavaScript modifier group for a change of case sensitivity (dotall and multiline are
        spelled out by the translation itself)."""
        if add & re.IGNORECASE and not flags & re.IGNORECASE:
            return "i"
        if drop & re.IGNORECASE and flags & re.IGNORECASE:
            return "-i"
        return ""

    def _class(self, items: Any) -> str:
        negated = False
        members: list[str] = []
        for op, av in items:
            if op == "NEGATE":
                negated = True
            elif op == "LITERAL":
                members.append(_char(av))
            elif op == "RANGE":
                low, high = av
                members.append(f"{_char(low)}-{_char(high)}")
            elif op == "CATEGORY":
                category, complement = _category(av, self.ascii)
                members.append(f"[^{category}]" if complement else category)
            else:
                raise NotPortable(f"class member {op}")
        if not members:
            return "[^\\s\\S]" if not negated else "[\\s\\S]"
        return f"[{'^' if negated else ''}{''.join(members)}]"

    @staticmethod
    def _repeat(inner: str, low: int, high: int, lazy: bool) -> str:
        maximum = MAXREPEAT
        if (low, high) == (0, maximum):
            quantifier = "*"
        elif (low, high) == (1, maximum):
            quantifier = "+"
        elif (low, high) == (0, 1):
            quantifier = "?"
        elif high == maximum:
            quantifier = f"{{{low},}}"
        elif low == high:
            quantifier = f"{{{low}}}"
        else:
            quantifier = f"{{{low},{high}}}"
        return f"(?:{inner}){quantifier}{'?' if lazy else ''}"

    def _at(self, where: Any, flags: int) -> str:
        word = self.word
        if where == "AT_BEGINNING":
            return "(?<![^\\n])" if flags & re.MULTILINE else "(?<![\\s\\S])"
        if where == "AT_BEGINNING_STRING":
            return "(?<![\\s\\S])"
        if where == "AT_END":
            # Python's $ also matches before a newline that ends the text.
            return "(?=\\n|(?![\\s\\S]))" if flags & re.MULTILINE else "(?=\\n?(?![\\s\\S]))"
        if where == "AT_END_STRING":
            return "(?![\\s\\S])"
        # \b and \B by Python's (Unicode) word characters: JavaScript's own are ASCII only.
        if where == "AT_BOUNDARY":
            return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
        if where == "AT_NON_BOUNDARY":
            return f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"
        raise NotPortable(f"anchor {where}")


@lru_cache(maxsize=4096)
def js_pattern(pattern: str, flags: int) -> tuple[str, str]:
    """A Python pattern as JavaScript source and its flags ("i" added when the whole pattern ignores
    case); raises NotPortable for what JavaScript cannot say the same way."""
    try:
        parsed, flags = parse_pattern(pattern, flags)
    except re.error as error:
        raise NotPortable(str(error)) from error
    source = _Translator(flags).sequence(parsed, flags)
    return source, JS_FLAGS + ("i" if flags & re.IGNORECASE else "")


# pygments' Markdown lexer colours a fenced block's code with the lexer its info string names: the page
# does the same with the named lexer's table ({"f": [group numbers], "c": [fence class, string class]}).
def _action(action: Any, lexer: type[Lexer], in_groups: bool = False, groups: dict[str, int] | None = None) -> Any:
    """A rule's token as data: a CSS class ("" for plain text), null for none, {"g": [...]} for
    bygroups, {"u": stack, "l": lexer} for using(), {"f": ...} for Markdown's fenced code."""
    if action is None:
        return None
    if type(action) is TokenType:
        return css_class_of(action)
    if is_fenced_code_callback(action) and groups is not None and all(name in groups for name in FENCE_GROUPS):
        return {
            "f": [groups[name] for name in FENCE_GROUPS],
            "c": [css_class_of(String.Backtick), css_class_of(String)],
        }
    grouped = bygroups_actions(action)
    if grouped == [] and not in_groups:
        return None  # bygroups(): no token, a zero-width rule's
    if grouped is not None and not in_groups:
        return {"g": [_action(each, lexer, in_groups=True) for each in grouped]}
    target = using_target(action)
    if target is not None:
        other, stack, options = target
        if options:
            raise NotPortable("using() with lexer options")
        if other is None or is_this_lexer(other) or other is lexer:
            return {"u": stack, "l": None}
        name = _alias_of(other)
        if name is None:
            raise NotPortable(f"using({other.__name__})")
        return {"u": stack, "l": name}
    raise NotPortable(getattr(action, "__qualname__", "") or repr(action))


def _alias_of(cls: Any) -> str | None:
    aliases = getattr(cls, "aliases", None)
    return aliases[0] if aliases else None


def _new_state(new_state: Any) -> Any:
    if new_state is None or isinstance(new_state, (int, str)):
        return new_state
    return list(new_state)


def _rule(rule: Rule, lexer: type[Lexer], patterns: dict[tuple[str, str], int]) -> list[Any]:
    """[pattern index, action, new state]: states share many patterns (pygments' include())."""
    source = pattern_source(rule[0])
    pattern = js_pattern(*source)
    index = patterns.setdefault(pattern, len(patterns))
    groups = dict(re.compile(*source).groupindex) if is_fenced_code_callback(rule[1]) else None
    return [index, _action(rule[1], lexer, groups=groups), _new_state(rule[2])]


def translated_table(alias: str) -> dict[str, Any] | None:
    cls = lexer_class_by_name(alias)
    if cls is None or not issubclass(cls, RegexLexer):
        return None
    if cls.get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed:
        return None
    try:
        prepare_lexer_class(cls)
        # None for lexers whose rules depend on options (token_variants: C#'s unicode levels).
        tokens: dict[str, list[Rule]] | None = processed_rules(cls)
        if tokens is None:
            return None
        patterns: dict[tuple[str, str], int] = {}
        states = {name: [_rule(rule, cls, patterns) for rule in rules] for name, rules in tokens.items()}
    except NotPortable:
        return None
    using = sorted(
        {called for rules in states.values() for _index, action, _state in rules for called in called_lexers(action)}
    )
    fences = any(isinstance(action, dict) and "f" in action for rules in states.values() for _i, action, _s in rules)
    return {
        "patterns": [list(pattern) for pattern in patterns],
        "states": states,
        "using": [name for name in using if name != alias],
        "aliases": list(cls.aliases),
        "fences": fences,
    }


def called_lexers(action: Any) -> list[str]:
    if isinstance(action, dict):
        if "g" in action:
            return [name for each in action["g"] for name in called_lexers(each)]
        return [action["l"]] if action.get("l") else []
    return []
