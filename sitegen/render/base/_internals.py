"""Every private or internal API of another package that sitegen uses, and nowhere else (tests/test_internals.py)."""

# The page's highlighting tables and the fast lexer driver read CPython's regex parser and pygments'
# lexer machinery; the markdown fast path stands in for one of markdown-it's core rules; the template
# cache asks jinja where a compiled template lives. None of these is a published interface, so a new
# release may change them: tests/test_internals.py has a smoke test per name below that fails naming
# the package and its release, and scans sitegen/ so that no other module reaches past a package's
# public surface. Heavy packages are imported on first use, as their callers did (a rebuilt page may
# need neither markdown-it nor pygments' lexers).

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any


def _moved(package: str, what: str) -> ImportError:
    """The error when a private name is gone: which release of which package moved it."""
    import platform
    from importlib.metadata import version

    release = platform.python_version() if package == "CPython" else version(package)
    return ImportError(f"{package} {release}: {what} is gone (sitegen/render/base/_internals.py must follow it)")


try:
    from pygments.token import _TokenType
except ImportError:
    raise _moved("pygments", "pygments.token._TokenType") from None

if TYPE_CHECKING:
    from jinja2 import FileSystemBytecodeCache
    from jinja2.bccache import Bucket

    # The state markdown-it's core rules are given (a type only).
    from markdown_it.rules_core.state_core import StateCore
    from pygments.lexer import Lexer

__all__ = [
    "FENCE_GROUPS",
    "MAXREPEAT",
    "StateCore",
    "TokenType",
    "bygroups_actions",
    "is_fenced_code_callback",
    "is_this_lexer",
    "jinja_int",
    "lexer_mapping",
    "lexer_rules",
    "markdown_it_block_rule",
    "markdown_trim_chars",
    "parse_pattern",
    "preprocess_input",
    "process_rules",
    "processed_rules",
    "template_cache_filename",
    "using_target",
]

# ---- CPython: the re module's own parser (re._parser, re._constants) ------------------------------

try:
    _constants: Any = importlib.import_module("re._constants")
    _parser: Any = importlib.import_module("re._parser")
except ImportError:
    raise _moved("CPython", "re._parser or re._constants") from None

# A repeat's upper bound when it has none ({n,}, *, +).
MAXREPEAT: int = int(_constants.MAXREPEAT)


_NAMED = _constants._NamedIntConstant
_SUBPATTERN = _parser.SubPattern


def _plain(value: Any) -> Any:
    """The parser's output as plain, immutable data: its named constants (opcodes, anchors,
    categories) as their names, a repeat without bound as MAXREPEAT, its sub-patterns as tuples."""
    kind = type(value)
    if kind is int or value is None:
        return value
    if kind is _NAMED:
        return MAXREPEAT if value is _constants.MAXREPEAT else str(value)
    if kind is _SUBPATTERN:
        value = value.data
    if isinstance(value, (list, tuple)):
        return tuple([_plain(item) for item in value])
    return value


Parsed = tuple[tuple[str, Any], ...]


# Lexers share most patterns between states (pygments' include()): each is read once.
@lru_cache(maxsize=4096)
def parse_pattern(pattern: str, flags: int) -> tuple[Parsed, int]:
    """A pattern as the re module parses it: ((opcode name, argument), ...) with sub-patterns as such
    tuples, and the flags in force (the pattern's own (?i) included). Raises re.error as re does."""
    parsed = _parser.parse(pattern, flags)
    return _plain(parsed), int(parsed.state.flags)


# ---- pygments: token types, the lexer metaclass's processing, callbacks' closures ------------------

# The class of every token type (Token.Name...): `type(action) is TokenType` tells a token from a callback.
TokenType = _TokenType

# The named groups of MarkdownLexer's fenced code rule, in order, as its callback reads them.
FENCE_GROUPS = ("initial", "lang", "afterlang", "whitespace", "extra", "newline", "code", "terminator")
_FENCED_CODE = "MarkdownLexer._handle_codeblock"

# The metaclass method through which pygments compiles each rule's pattern.
_COMPILE_HOOK = "_process_regex"


def processed_rules(cls: type[Lexer]) -> dict[str, list[Any]] | None:
    """A regex lexer class's processed rules, once made: {state: [(match, action, new state), ...]}."""
    rules: dict[str, list[Any]] | None = cls.__dict__.get("_tokens")
    return rules


def lexer_rules(lexer: Lexer) -> dict[str, list[Any]]:
    """The processed rules a regex lexer runs."""
    rules: dict[str, list[Any]] = lexer._tokens  # type: ignore[attr-defined]
    return rules


def process_rules(cls: type[Lexer], compile_rule: Callable[[type, Any, int, str], Any]) -> dict[str, list[Any]] | None:
    """What pygments' lexer metaclass does to a class on its first instantiation, with compile_rule
    (cls, regex, flags, state) in place of its pattern compiler, kept as the class's rules. None, and
    nothing done, when the class has its rules already, depends on options (token_variants: C#'s
    unicode levels), or has a metaclass with its own pattern handling (pygments' profiling lexer)."""
    from pygments.lexer import RegexLexerMeta

    if not isinstance(cls, RegexLexerMeta) or "_tokens" in cls.__dict__ or getattr(cls, "token_variants", False):
        return None
    original = getattr(RegexLexerMeta, _COMPILE_HOOK)
    if getattr(type(cls), _COMPILE_HOOK) is not original:
        return None
    setattr(RegexLexerMeta, _COMPILE_HOOK, compile_rule)
    try:
        cls._all_tokens = {}  # type: ignore[attr-defined]
        cls._tmpname = 0  # type: ignore[attr-defined]
        rules: dict[str, list[Any]] = cls.process_tokendef("", cls.get_tokendefs())  # type: ignore[attr-defined]
    finally:
        setattr(RegexLexerMeta, _COMPILE_HOOK, original)
    cls._tokens = rules  # type: ignore[attr-defined]
    return rules


def preprocess_input(lexer: Lexer, text: str) -> str:
    """The text as lexer.get_tokens gives it to the rules (newlines, tabs, stripping as configured)."""
    prepared: str = lexer._preprocess_lexer_input(text)  # type: ignore[attr-defined]
    return prepared


def is_this_lexer(other: Any) -> bool:
    """Whether a using() target is pygments' `this` (the lexer the rule belongs to)."""
    try:
        from pygments.lexer import _This
    except ImportError:
        raise _moved("pygments", "pygments.lexer._This") from None
    return isinstance(other, _This)


def _closure(action: Any) -> dict[str, Any]:
    cells = (cell.cell_contents for cell in action.__closure__ or ())
    return dict(zip(action.__code__.co_freevars, cells, strict=True))


def bygroups_actions(action: Any) -> list[Any] | None:
    """The actions a bygroups() callback gives its groups; None for any other action."""
    if not getattr(action, "__qualname__", "").startswith("bygroups."):
        return None
    return list(_closure(action)["args"])


def using_target(action: Any) -> tuple[Any, list[str], dict[str, Any]] | None:
    """A using() callback's lexer (None or `this` for its own), the state stack it starts with, and
    the options it passes the lexer; None for any other action."""
    if not getattr(action, "__qualname__", "").startswith("using."):
        return None
    cells = _closure(action)
    stack = list(cells["gt_kwargs"].get("stack", ("root",)))
    return cells.get("_other"), stack, dict(cells.get("kwargs") or {})


def is_fenced_code_callback(action: Any) -> bool:
    """Whether an action is MarkdownLexer's fenced code callback (it colours the code by its language)."""
    return getattr(action, "__qualname__", "") == _FENCED_CODE


@cache
def lexer_mapping() -> dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
    """pygments' built-in lexers without importing them: class name -> (module, name, aliases, file
    name patterns, mime types)."""
    try:
        from pygments.lexers import LEXERS
    except ImportError:
        raise _moved("pygments", "pygments.lexers.LEXERS") from None
    table: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = LEXERS
    return table


# ---- markdown-it: the core "block" rule and its trim characters ------------------------------------


def markdown_it_block_rule(state: StateCore) -> None:
    """markdown-it's own core "block" rule (the fast path hands it what it does not read itself)."""
    try:
        from markdown_it.rules_core import block
    except ImportError:
        raise _moved("markdown-it-py", "markdown_it.rules_core.block") from None
    block(state)


def markdown_trim_chars() -> str:
    """The characters markdown-it strips from an inline token's content."""
    try:
        from markdown_it.common.utils import MD_TRIM_CHARS
    except ImportError:
        raise _moved("markdown-it-py", "markdown_it.common.utils.MD_TRIM_CHARS") from None
    return MD_TRIM_CHARS


# ---- jinja --------------------------------------------------------------------------------------------


def template_cache_filename(cache: FileSystemBytecodeCache, bucket: Bucket) -> str:
    """Where jinja's file cache keeps a template's compiled code."""
    filename: str = cache._get_cache_filename(bucket)
    return filename


def jinja_int(value: Any) -> int:
    """jinja's `int` filter: a number from a number or numeric text, 0 for anything else."""
    try:
        from jinja2.filters import do_int
    except ImportError:
        raise _moved("jinja2", "jinja2.filters.do_int") from None
    return do_int(value)
