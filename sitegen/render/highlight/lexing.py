"""A faster driver for pygments' regex lexers: rules chosen by the next character, then joined.

pygments tries a state's rules one `match` call at a time, about sixteen calls per token in
typical code. Once a state is busy (DISPATCH_AFTER tokens in this process), each rule's pattern is
read for the characters its match can start with, and at each position only the rules that can
match the next character are tried, in their order: the others could not match, so the first
rule that matches is the one pygments would find. A busy choice of several rules (JOIN_AFTER
tokens) is joined into one pattern, its rules as alternatives in the same order, so the regex
engine finds that rule in one call. Rules whose first characters cannot be read, or that can match
nothing at all, are tried at every position. Choices whose rules cannot be joined safely
(back-references, verbose mode, flags that cannot be scoped) keep the rule-by-rule loop, and lexers
with their own tokenizer are used as they are.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Error, Whitespace

from sitegen.render.base._internals import (
    TokenType,
    lexer_rules,
    parse_pattern,
    preprocess_input,
    process_rules,
)

__all__ = ["Rule", "lex", "pattern_source", "prepare_lexer_class"]

Token = tuple[TokenType, str]
# pygments' processed rule: (pattern.match, token type or callback or None, state change or None).
Rule = tuple[Callable[[str, int], "re.Match[str] | None"], Any, Any]

# Flags a rule may add or drop inside a scoped group, (?i-s:...).
_SCOPED_FLAGS = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s"}
_LEADING_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


# Tokens a state matches rule by rule before its rules are read for their first characters (a
# state's patterns are then all compiled; most states of a small page never get that far).
DISPATCH_AFTER = 200
# Tokens a choice of several rules matches rule by rule before they are joined into one pattern:
# compiling takes milliseconds for a big choice and saves about a microsecond a token.
JOIN_AFTER = 2_000
# Dispatch keys: the next character's code below 128; WIDE for any other character.
WIDE = 128


class _Choice:
    """The rules that can match at a character, in order, and once busy their joined pattern and
    the rule of each of its groups."""

    __slots__ = ("join_at", "joined", "rules", "rules_by_group", "uses")

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.joined: Callable[[str, int], re.Match[str] | None] | None = None
        self.rules_by_group: dict[int, Rule] = {}
        self.uses = 0
        # A lone rule needs no joined pattern: its own match takes the driver's fast path at once.
        self.join_at = 1 if len(rules) == 1 else JOIN_AFTER

    def join(self) -> None:
        if len(self.rules) == 1:
            rule = self.rules[0]
            self.joined = compiled_pattern(rule[0]).match
            # Whatever group matched last, the rule is the one.
            self.rules_by_group = defaultdict(lambda: rule)
            return
        joined = _join(self.rules) if self.rules else None
        if joined is not None:
            self.joined, self.rules_by_group = joined


class _State:
    """A state's rules, and once it is busy, the choice of rules for each next character."""

    __slots__ = ("choices", "rules", "uses")

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.choices: list[_Choice] | None = None
        self.uses = 0

    def dispatch(self) -> None:
        """Read each rule's first characters, and make one choice per next character (shared by
        the characters with the same rules)."""
        firsts = [_rule_first(match) for match, _action, _new_state in self.rules]
        shared: dict[tuple[int, ...], _Choice] = {}
        choices = []
        for key in range(WIDE + 1):
            picked = tuple(index for index, first in enumerate(firsts) if key in first)
            choice = shared.get(picked)
            if choice is None:
                choice = shared[picked] = _Choice([self.rules[index] for index in picked])
                for slot, (match, _action, _new_state) in enumerate(choice.rules):
                    if isinstance(match, _LazyMatch):  # compiled later: its pattern's match goes here too
                        match.slots.append((choice.rules, slot))
            choices.append(choice)
        self.choices = choices

    def join(self) -> None:
        """Every choice joined at once (tests; the driver joins a choice when it is busy)."""
        if self.choices is None:
            self.dispatch()
        for choice in self.choices or []:
            choice.join()


# ---- which characters a rule's match can start with ----------------------------------------------

_ASCII = frozenset(range(WIDE))
# A rule that may match anything, or nothing at all: tried at every position.
_EVERYWHERE = _ASCII | {WIDE}
_CATEGORY_ESCAPES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
# A first set: the keys of the characters a match can start with, and whether it can be empty.
First = tuple[frozenset[int], bool]


def _rule_first(match: Any) -> frozenset[int]:
    """The dispatch keys at which a rule can match: _EVERYWHERE when it can match the empty string or
    its pattern cannot be read."""
    if isinstance(match, _LazyMatch):
        regex = match.regex if isinstance(match.regex, str) else match.regex.get()
        flags = match.flags
    else:
        regex, flags = match.__self__.pattern, match.__self__.flags
    try:
        parsed, flags = parse_pattern(regex, flags)
        keys, empty = _first(parsed, flags)
    except Exception:  # a pattern the private parser reads otherwise: tried everywhere, as before
        return _EVERYWHERE
    return _EVERYWHERE if empty else keys


def _first(items: Any, flags: int) -> First:
    """First set of a sequence: each item's, until one cannot match the empty string."""
    keys: set[int] = set()
    for op, av in items:
        item_keys, empty = _first_item(op, av, flags)
        keys |= item_keys
        if not empty:
            return frozenset(keys), False
    return frozenset(keys), True


def _first_item(op: Any, av: Any, flags: int) -> First:
    if op == "LITERAL":
        return _literal(av, flags), False
    if op == "IN":
        return _in(av, flags), False
    if op == "BRANCH":
        branches = [_first(branch, flags) for branch in av[1]]
        return frozenset().union(*(keys for keys, _ in branches)), any(empty for _, empty in branches)
    if op == "SUBPATTERN":
        _group, add, drop, sub = av
        return _first(sub, (flags | add) & ~drop)
    if op == "ATOMIC_GROUP":
        return _first(av, flags)
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _high, sub = av
        keys, empty = _first(sub, flags)
        return keys, empty or low == 0
    if op in ("AT", "ASSERT", "ASSERT_NOT"):
        return frozenset(), True  # zero-width: the next item consumes the first character
    if op == "GROUPREF_EXISTS":
        _group, yes, no = av
        yes_keys, yes_empty = _first(yes, flags)
        no_keys, no_empty = _first(no, flags) if no is not None else (frozenset(), True)
        return yes_keys | no_keys, yes_empty or no_empty
    return _EVERYWHERE, True  # any character (ANY, NOT_LITERAL), a back-reference, or unknown


def _literal(code: int, flags: int) -> frozenset[int]:
    if not flags & re.IGNORECASE:
        return frozenset({code if code < WIDE else WIDE})
    if code >= WIDE:
        return _EVERYWHERE  # a wide letter may match an ASCII one (ſ matches s)
    char = chr(code)
    # ...and an ASCII letter a wide one (k matches the Kelvin sign).
    return frozenset({ord(char.lower()), ord(char.upper()), WIDE})


def _in(items: Any, flags: int) -> frozenset[int]:
    """A character class: its ASCII members, and WIDE when it may hold any other character."""
    keys: set[int] = set()
    for op, av in items:
        if op == "LITERAL":
            keys |= _literal(av, flags)
        elif op == "RANGE":
            low, high = av
            if high >= WIDE and flags & re.IGNORECASE:
                return _EVERYWHERE
            for code in range(low, min(high, WIDE - 1) + 1):
                keys |= _literal(code, flags)
            if high >= WIDE:
                keys.add(WIDE)
        elif op == "CATEGORY" and av in _CATEGORY_ESCAPES:
            category = re.compile(_CATEGORY_ESCAPES[av], flags & re.ASCII)
            keys.update(code for code in range(WIDE) if category.match(chr(code)))
            keys.add(WIDE)
        else:  # NEGATE and anything else: any character
            return _EVERYWHERE
    return frozenset(keys)


def _renumbered(pattern: str, offset: int, prefix: str) -> str | None:
    """The pattern with its group references moved past the groups of earlier alternatives, and
    its group names made unique; None when a reference is ambiguous (two digits, octal)."""
    out = []
    i = 0
    in_class = False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i + 1 : i + 2]
            if not in_class and escaped in "123456789" and escaped:
                if pattern[i + 2 : i + 3].isdigit():
                    return None
                out.append(f"\\{int(escaped) + offset}")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            # a "]" right after "[" or "[^" is a literal member of the class
            if pattern[i + 1 : i + 2] == "^":
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            if pattern[i : i + 1] == "]":
                out.append("]")
                i += 1
            continue
        elif pattern.startswith("(?P<", i) or pattern.startswith("(?P=", i):
            out.append(pattern[i : i + 4] + prefix)
            i += 4
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _alternative(compiled: re.Pattern[str], base_flags: int, offset: int, prefix: str) -> str | None:
    """A rule's pattern as one alternative of the joined pattern, with its own flags scoped to it."""
    pattern = compiled.pattern
    if not pattern:
        return "()"  # pygments' default(): an empty match, whatever the flags
    while _LEADING_FLAGS.match(pattern):  # (?i) at the start: already in compiled.flags
        pattern = pattern[_LEADING_FLAGS.match(pattern).end() :]  # type: ignore[union-attr]
    flags = compiled.flags
    if (flags ^ base_flags) & ~(re.IGNORECASE | re.MULTILINE | re.DOTALL) or flags & re.VERBOSE:
        return None
    renumbered = _renumbered(pattern, offset, prefix)
    if renumbered is None:
        return None
    added = "".join(letter for flag, letter in _SCOPED_FLAGS.items() if flags & flag and not base_flags & flag)
    dropped = "".join(letter for flag, letter in _SCOPED_FLAGS.items() if base_flags & flag and not flags & flag)
    if added or dropped:
        return f"((?{added}{'-' + dropped if dropped else ''}:{renumbered}))"
    return f"({renumbered})"


def _join(
    rules: list[Rule],
) -> tuple[Callable[[str, int], re.Match[str] | None], dict[int, Rule]] | None:
    """One pattern for a state's rules and the rule of each alternative's group; None when joining
    could change a match."""
    compiled_rules = [compiled_pattern(match) for match, _action, _new_state in rules]
    if not compiled_rules:
        return None
    with_text = [c.flags for c in compiled_rules if c.pattern]
    base_flags = max(set(with_text), key=with_text.count) if with_text else re.UNICODE
    group = 1
    rules_by_group: dict[int, Rule] = {}
    alternatives = []
    for index, (compiled, rule) in enumerate(zip(compiled_rules, rules, strict=True)):
        alternative = _alternative(compiled, base_flags, group, f"r{index}_")
        if alternative is None:
            return None
        rules_by_group[group] = rule
        alternatives.append(alternative)
        group += 1 + compiled.groups
    try:
        joined = re.compile("|".join(alternatives), base_flags)
    except re.error:
        return None
    if joined.groups != group - 1:
        return None
    return joined.match, rules_by_group


class _LazyMatch:
    """A rule's pattern compiled on its first use: pygments compiles every rule of every state when a
    lexer class is first used (20 ms for Python or TypeScript), most of which a small page never
    tries. Once compiled it puts the pattern's own match method in its place in every state that
    includes the rule."""

    __slots__ = ("flags", "pattern", "regex", "slots")

    def __init__(self, regex: Any, flags: int) -> None:
        self.regex = regex
        self.flags = flags
        self.pattern: re.Pattern[str] | None = None
        self.slots: list[tuple[list[Rule], int]] = []

    def compile(self) -> re.Pattern[str]:
        if self.pattern is None:
            # pygments' words() and other Futures make their pattern when asked
            regex = self.regex if isinstance(self.regex, str) else self.regex.get()
            self.pattern = re.compile(regex, self.flags)
            for rules, index in self.slots:
                _lazy, action, new_state = rules[index]
                rules[index] = (self.pattern.match, action, new_state)
        return self.pattern

    def __call__(self, text: str, pos: int, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compile().match(text, pos, endpos)


def _lazy_process_regex(cls: type, regex: Any, rflags: int, state: str) -> _LazyMatch:
    return _LazyMatch(regex, rflags)


def prepare_lexer_class(cls: type[Lexer]) -> None:
    """Process a regex lexer class's token definitions as pygments would on first instantiation, but
    with each rule's pattern compiled only when first tried."""
    tokens = process_rules(cls, _lazy_process_regex)
    for rules in (tokens or {}).values():
        for index, (match, _action, _new_state) in enumerate(rules):
            if isinstance(match, _LazyMatch):
                match.slots.append((rules, index))


def compiled_pattern(match: Callable[[str, int], re.Match[str] | None]) -> re.Pattern[str]:
    if isinstance(match, _LazyMatch):
        return match.compile()
    return match.__self__  # type: ignore[attr-defined,no-any-return]


def pattern_source(match: Callable[[str, int], re.Match[str] | None]) -> tuple[str, int]:
    """A rule's pattern and flags, without compiling it."""
    if isinstance(match, _LazyMatch):
        return (match.regex if isinstance(match.regex, str) else match.regex.get()), match.flags
    compiled = compiled_pattern(match)
    return compiled.pattern, compiled.flags


_machines: dict[type[Lexer], dict[str, _State]] = {}


def _machine(lexer: RegexLexer) -> dict[str, _State]:
    cls = type(lexer)
    machine = _machines.get(cls)
    if machine is None:
        tokendefs: dict[str, list[Rule]] = lexer_rules(lexer)
        machine = {name: _State(rules) for name, rules in tokendefs.items()}
        _machines[cls] = machine
    return machine


def lex(lexer: Lexer, text: str) -> Iterable[Token]:
    """The (token type, text) pairs lexer.get_tokens(text) gives, sooner for regex lexers."""
    own_tokenizer = type(lexer).get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed
    if not isinstance(lexer, RegexLexer) or own_tokenizer or lexer.filters:
        return lexer.get_tokens(text)
    return _run(lexer, preprocess_input(lexer, text))


def _run(lexer: RegexLexer, text: str) -> list[Token]:
    """RegexLexer's state machine over the dispatched states; the same tokens, in the same order.
    A list rather than a generator: a token is a regex call and a few steps, and resuming a generator
    per token was a third of the time."""
    machine = _machine(lexer)
    stack = ["root"]
    state = machine["root"]
    tokens: list[Token] = []
    append = tokens.append
    pos = 0
    end = len(text)
    while True:
        rule: Rule | None = None
        m: re.Match[str] | None = None
        joined = None
        choices = state.choices
        if choices is not None and pos < end:
            code = ord(text[pos])
            choice = choices[code if code < WIDE else WIDE]
            joined = choice.joined
            if joined is not None:
                m = joined(text, pos)
                if m is not None:
                    rule = choice.rules_by_group[m.lastindex]  # type: ignore[index]
                    action = rule[1]
                    # The common case first: a plain token that stays in the state.
                    if rule[2] is None and type(action) is TokenType:
                        stop = m.end()
                        append((action, text[pos:stop]))
                        pos = stop
                        continue
            else:
                for candidate in choice.rules:
                    m = candidate[0](text, pos)
                    if m is not None:
                        rule = candidate
                        break
                choice.uses += 1
                if choice.uses == choice.join_at:
                    choice.join()
        else:
            for candidate in state.rules:
                m = candidate[0](text, pos)
                if m is not None:
                    rule = candidate
                    break
            state.uses += 1
            if state.uses == DISPATCH_AFTER:
                state.dispatch()
        if rule is None or m is None:
            if pos >= end:
                return tokens
            if text[pos] == "\n":  # at the end of a line an unmatched state falls back to root
                stack = ["root"]
                state = machine["root"]
                append((Whitespace, "\n"))
            else:
                append((Error, text[pos]))
            pos += 1
            continue
        match_rule, action, new_state = rule
        if action is not None:
            if type(action) is TokenType:
                append((action, m.group()))
            else:
                own = match_rule(text, pos) if joined is not None else m
                tokens.extend((token, value) for _pos, token, value in action(lexer, own))
        pos = m.end()
        if new_state is not None:
            if type(new_state) is tuple:
                for name in new_state:
                    if name == "#pop":
                        if len(stack) > 1:
                            stack.pop()
                    elif name == "#push":
                        stack.append(stack[-1])
                    else:
                        stack.append(name)
            elif type(new_state) is int:
                if abs(new_state) >= len(stack):
                    del stack[1:]
                else:
                    del stack[new_state:]
            elif new_state == "#push":
                stack.append(stack[-1])
            state = machine[stack[-1]]
