"""pygments' YamlLexer as regex rules the page's highlighter runs too: indentation kept in numbered states."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pygments.lexer import RegexLexer, bygroups, default, include
from pygments.lexers.data import YamlLexer
from pygments.token import Comment, Keyword, Literal, Name, Number, Punctuation, String, Whitespace

__all__ = ["MAX_INDENT", "YamlRulesLexer"]

# pygments' bygroups, typed: its tokens for a rule's groups in order (None: no token).
_groups: Any = bygroups

# Indentation columns kept exactly; a deeper column is taken as this one (see the class docstring).
MAX_INDENT = 16

# A directive or a document marker, which resets the indentation (pygments' reset_indent).
_DIRECTIVE = r"^(?:%YAML|%TAG|---|\.\.\.)(?=[ ]|(?![^\n]))"
# A line with content: pygments' root rule "[ ]*(?!\s|$)", once blank lines and comments are out.
_CONTENT = rf"(?!{_DIRECTIVE})(?=[ ]*[^\s#])"
# A line's prefix before its block-line (pygments' indentation state) is spaces and collection indicators,
# each followed by a space or the line's end. Its columns are read by dispatchers that try each column
# in turn, so the first that fits is the answer: the key column is where the prefix cannot go on (not a
# space or an indicator, or an indicator with text after it), the last indicator is one not followed
# by another (the spaces after it taken whole).
_LAST_INDICATOR = r"[?:-](?:[ ]+(?![ ]|[?:-](?:[ ]|(?![^\n])))|(?![^\n]))"
# A zero-width rule's token: none (pygments takes no None there, and would yield an empty token).
_NOTHING = _groups()
_NOT_CONTENT = rf"(?={_DIRECTIVE}|[ ]*(?:[^\S ]|#|(?![^\n])))"
_INDICATOR_LINE = r"(?=[ ]*[?:-](?:[ ]|(?![^\n])))"


def _n(value: int) -> str:
    return str(min(value, MAX_INDENT))


# A block scalar after its header, from the header's newline: blank lines, the first content line (its
# spaces, group 2, are the block's indentation: t<v> has checked it passes v), then every line blank or
# as indented. Group 1 is whitespace up to the first visible character, group 3 the content to its last
# visible character: the spaces, newlines and tabs between join the run either way. The first content
# line may hold only whitespace (a tab): the visible text then starts on a later line. pygments' content
# token stops at whitespace other than spaces and tabs (an error token): the run starts after it.
_BODY = (
    r"(\n(?:[ ]*\n)*([ ]+)(?=[^ \n])"
    r"(?:[^\S \n][^\S\n]*\n(?:[ ]*\n|\2[ ]*[^\S \n][^\S\n]*\n)*\2[ ]*)?"
    r"(?:[\t ]*[^\S\t \n]+)*)(?=[\t ]*\S)([^\n]*(?:\n(?:[ ]*(?=\n|\Z)|\2[ ]*[^ \n][^\n]*))*(?<=\S))"
)


def _indent_states() -> dict[str, list[Any]]:
    """States numbered by an indentation column. r<v> are pygments' indentation stack (a line less
    indented pops them down to one it passes, a line's new level is pushed on them); over the top one a
    line puts t<v> (the indentation a plain scalar must pass to run on, a block scalar's content to
    belong), k<P> and f<P> (the line's key column: its first key makes it a level, and the indentation
    for the rest of the line), then its own states. u<P> is t-1 knowing P. dc, dp, dz read a line's
    last collection indicator's column and its key column."""
    states: dict[str, list[Any]] = {}
    dispatch_c: list[Any] = []
    dispatch_p: list[Any] = []
    dispatch_z: list[Any] = []
    for value in range(-1, MAX_INDENT + 1):
        n = str(value)
        # Directives, blank lines and comments go to rg; a line with content is read for its columns.
        root: list[Any] = [(_NOT_CONTENT, _NOTHING, "rg")]
        if value < 0:
            states[f"r{n}"] = [*root, (_INDICATOR_LINE, _NOTHING, "dc"), default("dz")]
            continue
        if value > 0:
            root.append((rf"(?![ ]{{{value}}})", _NOTHING, "#pop"))  # less indented: the level below
        # A lone indicator at this column, or a line without one at it: no new level.
        lone = rf"(?=[ ]{{{value}}}{_LAST_INDICATOR})"
        root.append((lone, _NOTHING, (f"t{n}", "dp")))
        root.append((_INDICATOR_LINE, _NOTHING, "dc"))
        root.append((rf"(?=[ ]{{{value}}}(?![ ]))", _NOTHING, (f"t{n}", "kn", f"f{n}", "ln")))
        root.append(default((f"t{n}", "dp")))
        states[f"r{n}"] = root
        block = [
            (rf"(?=\n(?:[ ]*\n)*[ ]{{{value + 1}}}[ ]*[^ \n])", _NOTHING, ("#pop", "bb")),
            (r"\n", Whitespace, "#pop"),
        ]
        continuation = rf"^[ ]{{{value + 1}}}[ ]*"
        # A key on a line a plain scalar runs on to leaves the indentation as it is: exact when the line
        # the scalar began on had its key column at its level's (kn), else see the class docstring.
        states[f"t{n}"] = [*block, (continuation, Whitespace, ("kn", f"f{n}", "bl", "ps")), default("#pop")]
        states[f"f{n}"] = [*block, (continuation, Whitespace, ("blf", "psf")), default("#pop")]
        states[f"k{n}"] = [default(("#pop", "#pop", f"r{n}"))]
        # t-1, which also knows the line's key column P: a key on a line its plain scalar runs on to
        # makes P a level, as pygments does (a text that begins with lines without keys).
        states[f"u{n}"] = [
            (r"(?=\n(?:[ ]*\n)*[ ]+[^ \n])", _NOTHING, ("#pop", "bb")),
            (r"\n", Whitespace, "#pop"),
            (r"^[ ]*", Whitespace, (f"k{n}", f"f{n}", "bl", "ps")),
            default("#pop"),
        ]
        dispatch_c.append(
            (
                rf"(?=[ ?:-]{{{value}}}{_LAST_INDICATOR})",
                _NOTHING,
                ("#pop", f"r{n}", f"t{n}", "dp"),
            )
        )
        key_column = rf"(?=[ ?:-]{{{value}}}(?:[^ ?:\-]|[?:-][^ \n]))"
        dispatch_p.append((key_column, _NOTHING, ("#pop", f"k{n}", f"f{n}", "ln")))
        dispatch_z.append((key_column, _NOTHING, ("#pop", f"u{n}", f"k{n}", f"f{n}", "ln")))
    deepest = _n(MAX_INDENT)
    states["dc"] = [*dispatch_c, default(("#pop", f"r{deepest}", f"t{deepest}", "dp"))]
    states["dp"] = [*dispatch_p, default(("#pop", f"k{deepest}", f"f{deepest}", "ln"))]
    states["dz"] = [*dispatch_z, default(("#pop", f"u{deepest}", f"k{deepest}", f"f{deepest}", "ln"))]
    return states


def _block_line(fired: bool) -> list[Any]:
    """pygments' block-line: before the line's first key (its end pops to the root of the line's own
    indentation) or after it (to k, which makes the key's column the root's)."""
    end = ("#pop", "#pop") if fired else ("#pop", "#pop", "#pop", "#pop")
    key: tuple[Any, ...] = () if fired else (("#pop", "blf"),)
    return [
        (r"[ ]+(?=#|$)", Whitespace, end),
        (r"(?=#|$)", _NOTHING, end),
        (r"[ ]+", Whitespace),
        (r"""([^#,?\[\]{}"'\n]+)(:)(?=[ ]|$)""", _groups(Name.Tag, Punctuation), *key),
        include("descriptors"),
        (r":(?=[ ]|$)", Punctuation.Indicator, *key),
        (r"[|>]", Punctuation.Indicator, "bhf" if fired else "bh"),
        include("flow-nodes"),
        (r"(?=[^\s?:,\[\]{}#&*!|>\'\"%@`-]|[?:-]\S)", _NOTHING, "psf" if fired else "ps"),
    ]


def _plain(fired: bool) -> list[Any]:
    """pygments' plain-scalar-in-block-context; at a newline, down to the state holding its indentation."""
    newline = ("#pop", "#pop", "pn") if fired else ("#pop", "#pop", "#pop", "#pop", "pn")
    return [
        (r"[ ]+(?=:[ ]|:$)", Whitespace, "#pop"),
        (r"(?=:[ ]|:$)", _NOTHING, "#pop"),
        (r"[ ]+(?=#)", Whitespace, "#pop"),
        (r"[ ]+$", Whitespace),
        (r"\n+", Whitespace, newline),
        (r"[ \xa0]+", Literal.Scalar.Plain),
        (r"(?::(?!\s)|[^\s:])+", Literal.Scalar.Plain),
    ]


def _block_scalar_header(fired: bool) -> list[Any]:
    return [
        (r"(?:[1-9][+-]?|[+-][1-9]?)(?=[ ]|$)", Punctuation.Indicator, ("#pop", "bif" if fired else "bi")),
        (r"(?=[ ]|$)", _NOTHING, ("#pop", "bif" if fired else "bi")),
    ]


def _block_scalar_ignored(fired: bool) -> list[Any]:
    """The header line's end; at its newline, down to the state holding the block's indentation."""
    return [
        (r"[ ]+(?=#|$)", Whitespace),
        (r"#[^\n]*", Comment.Single),
        (r"(?=\n)", _NOTHING, ("#pop", "#pop") if fired else ("#pop", "#pop", "#pop", "#pop")),
    ]


class YamlRulesLexer(RegexLexer):
    """pygments' YamlLexer as regex rules, so the page's highlighter can colour YAML as the server does.

    pygments' lexer keeps indentation in Python callbacks; here a column is a state's number, and its
    stack of indentations a stack of r<v> states (see _indent_states). A block scalar is one rule: its
    first content line's spaces are a back-reference the other lines must begin with, and its content is
    one Name.Constant token (pygments' are one a line, with whitespace between: the same coloured run).
    Whitespace tokens may be split or typed otherwise than pygments' (invisible: a whitespace token joins
    the run it is in, so the HTML is the same). Known differences, on YAML that is not well formed or rare:
    - a key on a line a plain scalar runs on to, the scalar begun on an indented line without a key:
      pygments makes the first line's key column the indentation, this lexer keeps the first line's;
    - several collection indicators on a line ("- - x"): only the last makes an indentation level;
    - an explicit indentation indicator (|2) is read as the first content line's indentation;
    - columns past MAX_INDENT are taken as MAX_INDENT.
    (tests/test_rule_lexers.py holds each to what it colours.)"""

    name = YamlLexer.name
    url = YamlLexer.url
    aliases = YamlLexer.aliases
    filenames = YamlLexer.filenames
    mimetypes = YamlLexer.mimetypes
    flags = re.MULTILINE

    tokens: ClassVar[dict[str, Any]] = {
        # The bottom of the stack, where a directive or a document marker (which reset the indentation)
        # drops everything: the rest of their line as pygments reads it after them.
        "root": [
            (r"(?<=^%YAML)", _NOTHING, ("r-1", "yaml-directive")),
            (r"(?<=^%TAG)", _NOTHING, ("r-1", "tag-directive")),
            (r"(?<=^---|^\.\.\.)", _NOTHING, ("r-1", "u0", "k0", "f0", "bl")),
            default("r-1"),
        ],
        # pygments' root, for what is not a line with content (which goes back to r<v>).
        "rg": [
            (r"[ ]+(?=#|$)", Whitespace),
            (r"\n+", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (r"^%(?:YAML|TAG)(?=[ ]|$)", Name.Tag, "#pop:1000"),
            (r"^(?:---|\.\.\.)(?=[ ]|$)", Name.Namespace, "#pop:1000"),
            (_CONTENT, _NOTHING, "#pop"),
        ],
        **_indent_states(),
        # k<P> for a line whose key is at its level's column: no new level (and the first key of a line
        # a plain scalar runs on to, see t<v>).
        "kn": [default(("#pop", "#pop"))],
        "ignored-line": [
            (r"[ ]+(?=#|$)", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (r"\n", Whitespace, "#pop:2"),
        ],
        "yaml-directive": [(r"([ ]+)([0-9]+\.[0-9]+)", _groups(Whitespace, Number), "ignored-line")],
        "tag-directive": [
            (
                r"([ ]+)(!|![\w-]*!)([ ]+)(!|!?[\w;/?:@&=+$,.!~*\'()\[\]%-]+)",
                _groups(Whitespace, Keyword.Type, Whitespace, Keyword.Type),
                "ignored-line",
            )
        ],
        # pygments' indentation: the line's spaces and collection indicators, then its block-line.
        "ln": [
            (r"[ ]+$", Whitespace, ("#pop", "#pop", "#pop", "#pop")),
            (r"$", _NOTHING, ("#pop", "#pop", "#pop", "#pop")),
            (r"[ ]+(?=[?:-](?:[ ]|$))", Whitespace),
            (r"[?:-](?=[ ]|$)", Punctuation.Indicator),
            (r"[ ]+", Whitespace, ("#pop", "bl")),
            default(("#pop", "bl")),
        ],
        "bl": _block_line(fired=False),
        "blf": _block_line(fired=True),
        "descriptors": [
            (r"!<[\w#;/?:@&=+$,.!~*\'()\[\]%-]+>", Keyword.Type),
            (r"!(?:[\w-]+!)?[\w#;/?:@&=+$,.!~*\'()\[\]%-]*", Keyword.Type),
            (r"&[\w-]+", Name.Label),
            (r"\*[\w-]+", Name.Variable),
        ],
        "flow-nodes": [
            (r"\[", Punctuation.Indicator, "flow-sequence"),
            (r"\{", Punctuation.Indicator, "flow-mapping"),
            (r"\'", String, "single-quoted-scalar"),
            (r"\"", String, "double-quoted-scalar"),
        ],
        "flow-collection": [
            (r"[ ]+", Whitespace),
            (r"\n+", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (r"[?:,]", Punctuation.Indicator),
            include("descriptors"),
            include("flow-nodes"),
            (r"(?=[^\s?:,\[\]{}#&*!|>\'\"%@`])", _NOTHING, "plain-scalar-in-flow-context"),
        ],
        "flow-sequence": [include("flow-collection"), (r"\]", Punctuation.Indicator, "#pop")],
        "flow-mapping": [
            (r"""([^,:?\[\]{}"'\n]+)(:)(?=[ ]|$)""", _groups(Name.Tag, Punctuation)),
            include("flow-collection"),
            (r"\}", Punctuation.Indicator, "#pop"),
        ],
        "bb": [(_BODY, _groups(Whitespace, None, Name.Constant), "#pop"), (r"\n", Whitespace, "#pop")],
        "bh": _block_scalar_header(fired=False),
        "bhf": _block_scalar_header(fired=True),
        "bi": _block_scalar_ignored(fired=False),
        "bif": _block_scalar_ignored(fired=True),
        "quoted-scalar-whitespaces": [
            (r"^[ ]+", Whitespace),
            (r"[ ]+$", Whitespace),
            (r"\n+", Whitespace),
            (r"[ \xa0]+", Name.Variable),
        ],
        "single-quoted-scalar": [
            include("quoted-scalar-whitespaces"),
            (r"\'\'", String.Escape),
            (r"[^\s\']+", String),
            (r"\'", String, "#pop"),
        ],
        "double-quoted-scalar": [
            include("quoted-scalar-whitespaces"),
            (r'\\[0abt\tn\nvfre "\\N_LP]', String),
            (r"\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})", String.Escape),
            (r'[^\s"\\]+', String),
            (r'"', String, "#pop"),
        ],
        # A plain scalar's next line: blank lines, a document marker (ends it), else its indentation,
        # which the t<v> or f<P> state below decides on.
        "pn": [
            (r"^[ ]+$", Whitespace),
            (r"\n+", Whitespace),
            (r"^(?=---|\.\.\.)", _NOTHING, ("#pop", "#pop")),
            (r"^", _NOTHING, "#pop"),
        ],
        "ps": _plain(fired=False),
        "psf": _plain(fired=True),
        "plain-scalar-in-flow-context": [
            (r"[ ]+(?=[,:?\[\]{}])", Whitespace, "#pop"),
            (r"(?=[,:?\[\]{}])", _NOTHING, "#pop"),
            (r"[ ]+(?=#)", Whitespace, "#pop"),
            (r"^[ ]+", Whitespace),
            (r"[ ]+$", Whitespace),
            (r"\n+", Whitespace),
            (r"[ \xa0]+", Name.Variable),
            (r"[^\s,:?\[\]{}]+", Name.Variable),
        ],
    }
