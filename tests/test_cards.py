"""Tool cards built in Python (sitegen/render/cards.py) give exactly what the jinja macros they
replaced gave, for views that take every branch; the macros are kept here as the reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Environment, StrictUndefined, select_autoescape
from markupsafe import Markup

from sitegen.render import cards
from sitegen.render.base.text import Folded, escape_text, human_size
from sitegen.render.tools import Attachment, DiffLine, FrameSegment, FrameView, ImageView, ToolView

# templates/_entry.html.j2's macros before they became Python, kept as the reference.
MACROS = (Path(__file__).parent / "fixtures" / "tool_card_macros.html.j2").read_text(encoding="utf-8")
ENV = Environment(
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.globals["human_size"] = human_size
ENV.globals["took_text"] = cards.took_text
REFERENCE = ENV.from_string(MACROS).module


@dataclass
class Context:
    prefix: str = ""
    parents: dict[str, str | None] = field(default_factory=dict)
    on_path: set[str] = field(default_factory=set)
    labels: dict[str, str] = field(default_factory=dict)
    subagent_urls: dict[str, str] = field(default_factory=dict)
    durations: dict[str, int] = field(default_factory=dict)


# Text with everything that must be escaped, in element content and in attributes.
TEXT = st.sampled_from(["", "x", "a <b> & 'c' \"d\"", "ZZ_1_ZZ", "agent://0-Explore", "agent://1-Plan"])
MARKUP = TEXT.map(lambda text: Markup("<i>") + escape_text(text) + Markup("</i>"))
# A fold's text is Markup; plain text (which no caller passes) is escaped all the same.
FOLDED = st.builds(
    Folded,
    head=MARKUP | TEXT,
    rest=st.none() | MARKUP | TEXT,
    lines=st.integers(0, 90),
    rest_lines=st.integers(0, 60),
    rest_chars=st.integers(0, 5000),
)
SEGMENT = st.builds(
    FrameSegment,
    kind=st.sampled_from(["text", "untrusted", "omitted"]),
    body=FOLDED,
    source=TEXT,
    closed=st.booleans(),
    note=TEXT,
)
ATTACHMENT = st.builds(
    Attachment,
    label=st.sampled_from(["artifact://3", "agent://0-Explore", "agent://1-Plan"]),
    body=MARKUP,
    size=st.integers(0, 10**7),
    transcript=st.none() | MARKUP,
    transcript_shown_before=st.booleans(),
)
VIEW = st.builds(
    ToolView,
    kind=st.sampled_from(["bash", "read", "edit", "write", "task", "generic"]),
    name=TEXT,
    call_id=TEXT,
    summary=TEXT,
    result_id=st.none() | st.sampled_from(["r1", "r2", "r<3>"]),
    status=st.sampled_from(["ok", "error", "pending"]),
    arguments=st.none() | MARKUP,
    input=st.none() | FOLDED,
    output=st.none() | FOLDED,
    diff=st.lists(st.builds(DiffLine, kind=st.sampled_from(["add", "del", "ctx", "hunk"]), text=TEXT), max_size=3),
    diff_rest=st.lists(st.builds(DiffLine, kind=st.just("add"), text=TEXT), max_size=2),
    diff_stat=TEXT,
    exit_code=st.none() | st.integers(-2, 2),
    images=st.lists(st.builds(ImageView, src=st.none() | st.just("data:image/png;base64,AA=="), mime=TEXT, note=TEXT)),
    attachments=st.lists(ATTACHMENT, max_size=3),
    frame=st.none() | st.builds(FrameView, tool_name=TEXT, nonce=TEXT, label=TEXT, segments=st.lists(SEGMENT)),
)
CONTEXT = st.builds(
    Context,
    prefix=st.sampled_from(["", "sub-0-Explore-"]),
    parents=st.just({"r1": "a1", "r<3>": None}),
    on_path=st.sets(st.sampled_from(["r1", "r2"])),
    labels=st.dictionaries(st.sampled_from(["r1", "r2", "r<3>"]), TEXT),
    subagent_urls=st.dictionaries(st.sampled_from(["0-Explore", "1-Plan"]), st.sampled_from(["a.html", "b&c.html"])),
    durations=st.dictionaries(st.sampled_from(["r1", "r2", "r<3>"]), st.integers(0, 9_000_000)),
)


@settings(max_examples=600, deadline=None)
@given(VIEW, CONTEXT)
def test_tool_cards_are_what_the_macros_made(view: ToolView, ctx: Context) -> None:
    assert cards.tool_card(view, ctx) == REFERENCE.tool_card(view, ctx)


@settings(max_examples=200, deadline=None)
@given(
    FOLDED,
    st.sampled_from(["code output", "a<b"]),
    st.lists(st.builds(ImageView, src=st.none() | TEXT, mime=TEXT, note=TEXT)),
)
def test_folded_text_and_images_are_what_the_macros_made(f: Folded, cls: str, images: list[ImageView]) -> None:
    assert cards.folded(f, cls) == REFERENCE.folded(f, cls)
    assert cards.images(images) == REFERENCE.images(images)
