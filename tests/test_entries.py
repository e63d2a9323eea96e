"""Entries built in Python (sitegen/render/entries.py) give exactly what the jinja macro they replaced
gave, for entries of every kind with hostile text; the macro is kept here as the reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Environment, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from sitegen.render import entries
from sitegen.render.ansi import ansi_to_html
from sitegen.render.base.text import escape_text, fold_text
from sitegen.render.cards import folded, images, tool_card
from sitegen.render.tools import ToolView, image_view
from sitegen.transcript.model import Node, Part, ToolCall, ToolResult, Usage

# templates/_entry.html.j2's macros before they became Python, kept as the reference.
MACROS = (Path(__file__).parent / "fixtures" / "entry_macros.html.j2").read_text(encoding="utf-8")
ENV = Environment(
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters["text"] = escape_text
ENV.globals.update(
    md=lambda text: Markup("<p>") + escape(text) + Markup("</p>"),
    fold=fold_text,
    ansi=ansi_to_html,
    image=image_view,
    fmt_time=entries.format_time,
    fmt_tokens=entries.format_tokens,
    tool_card=tool_card,
    folded=folded,
    images=images,
)
REFERENCE = ENV.from_string(MACROS).module


def _view(call: ToolCall) -> ToolView:
    return ToolView(kind="generic", name=call.name, call_id=call.id, summary="<s>", result_id=None, status="ok")


@dataclass
class Context:
    prefix: str = ""
    parents: dict[str, str | None] = field(default_factory=dict)
    on_path: set[str] = field(default_factory=set)
    labels: dict[str, str] = field(default_factory=dict)
    subagent_urls: dict[str, str] = field(default_factory=dict)
    durations: dict[str, int] = field(default_factory=dict)
    kept_marks: dict[str, str] = field(default_factory=dict)
    kept_names: dict[str, str] = field(default_factory=dict)
    messages: set[str] = field(default_factory=set)
    context_attrs: dict[str, dict[str, str]] = field(default_factory=dict)
    system_prompt: str | None = None
    tool_view: Any = _view
    markdown: Any = ENV.globals["md"]

    @staticmethod
    def usage_attr(node: Node) -> str:
        return f"{node.meta.get('usage')}<&>"


# Text with everything that must be escaped, in element content and in attributes; ANSI colour; lines.
TEXT = st.sampled_from(["", " ", "x", "a <b> & 'c' \"d\"", "ZZ_1_ZZ", "\x1b[31mred\x1b[0m", "l\n" * 45, "e1"])
VALUE = st.none() | TEXT | st.integers(-2, 20_000) | st.booleans() | st.lists(TEXT, max_size=2) | st.just(1.5)
KINDS = [
    *sorted(entries.MARKER_KINDS),
    "user",
    "assistant",
    "tool_result",
    "execution",
    "custom_message",
    "compaction",
    "branch_summary",
    "session_init",
    "something_else",
]
META_KEYS = [
    "entryType",
    "role",
    "thinkingLevel",
    "mode",
    "injectedRules",
    "label",
    "targetId",
    "name",
    "title",
    "customType",
    "raw",
    "language",
    "errorMessage",
    "stopReason",
    "command",
    "code",
    "output",
    "cancelled",
    "exitCode",
    "truncated",
    "excludeFromContext",
    "tokensBefore",
    "firstKeptEntryId",
    "shortSummary",
    "summary",
    "fromId",
    "systemPrompt",
    "tools",
    "task",
]
PART = st.one_of(
    st.builds(Part, kind=st.sampled_from(["text", "thinking", "other"]), text=TEXT),
    st.builds(Part, kind=st.just("image"), mime=st.just("image/png"), data=st.sampled_from(["AA==", "<x>"])),
    st.builds(
        Part, kind=st.just("tool_call"), call=st.builds(ToolCall, id=st.just("c<1>"), name=TEXT, arguments=st.just({}))
    ),
)
RESULT = st.builds(
    ToolResult, node_id=st.just("r1"), call_id=TEXT, tool_name=TEXT, is_error=st.booleans(), parts=st.just([])
)
NODE = st.builds(
    Node,
    id=st.sampled_from(["e1", "e<2>", "k1"]),
    parent_id=st.none(),
    index=st.just(0),
    time_ms=st.none() | st.integers(-(10**16), 10**16),
    kind=st.sampled_from(KINDS),
    role=TEXT,
    parts=st.lists(PART, max_size=4),
    result=RESULT,
    usage=st.none()
    | st.builds(Usage, input=st.integers(0, 2 * 10**6), output=st.integers(0, 50_000), cost=st.floats(0, 3)),
    model=TEXT,
    hidden=st.booleans(),
    meta=st.dictionaries(st.sampled_from(META_KEYS), VALUE, max_size=8),
)
CONTEXT = st.builds(
    Context,
    prefix=st.sampled_from(["", "sub-0-"]),
    parents=st.just({"e1": "p<0>", "e<2>": None}),
    on_path=st.sets(st.sampled_from(["e1", "k1", "c1"])),
    labels=st.dictionaries(st.sampled_from(["e1", "k1"]), TEXT),
    kept_marks=st.dictionaries(st.sampled_from(["e1", "k1"]), st.sampled_from(["c1", "c<2>"])),
    kept_names=st.dictionaries(TEXT, TEXT, max_size=2),
    messages=st.sets(st.sampled_from(["e1", "k1"])),
    context_attrs=st.dictionaries(
        st.sampled_from(["e1", "k1"]), st.dictionaries(st.sampled_from(["data-ctx", "data-kept-after"]), TEXT)
    ),
    system_prompt=st.none() | TEXT,
)


def _outcome(render: Any, node: Node, ctx: Context) -> str:
    """The HTML, or the kind of error (a value of the wrong type fails both ways alike)."""
    try:
        return str(render(node, ctx))
    except (AttributeError, TypeError) as error:
        return type(error).__name__


@settings(max_examples=800, deadline=None)
@given(NODE, CONTEXT)
def test_entries_are_what_the_macro_made(node: Node, ctx: Context) -> None:
    assert _outcome(entries.entry_html, node, ctx) == _outcome(REFERENCE.entry, node, ctx)
