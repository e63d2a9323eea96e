"""One conversation entry as HTML, built in Python: the most frequent markup of a page.

As a jinja macro, an entry cost more in calls and attribute lookups than in markup. entry_html gives
exactly what templates/_entry.html.j2's `entry` macro gave (tests/test_entries.py holds it to the
macro, kept in tests/fixtures/entry_macros.html.j2). Every value is escaped as jinja's autoescape
does, unless it is Markup already.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from markupsafe import Markup, soft_str

from sitegen.render.ansi import ansi_to_html
from sitegen.render.base._internals import jinja_int
from sitegen.render.base.text import escape_text, fold_text, html_escape
from sitegen.render.cards import CardContext, card_into, folded, images
from sitegen.render.tools import ToolView, image_view
from sitegen.transcript.model import Node, ToolCall

__all__ = [
    "UNKNOWN_USAGE",
    "EntryLookups",
    "entry_html",
    "entry_into",
    "format_cost",
    "format_time",
    "format_tokens",
]

# Tokens and cost of a session whose messages recorded no usage (odek's): unknown, never 0 or $0.00.
UNKNOWN_USAGE = "—"

# Entries shown as a one-line marker rather than a message.
MARKER_KINDS = frozenset(
    ("model_change", "thinking_change", "mode_change", "rule_injection", "label", "title", "notice", "custom")
)
_ROLES = {
    "user": "User",
    "assistant": "Assistant",
    "tool_result": "Tool result",
    "compaction": "Compaction",
    "branch_summary": "Branch summary",
    "session_init": "Session init",
}
_TEXT_KINDS = frozenset(("text", "thinking", "image"))

# The seconds of years 1 to 9999 (datetime's range); a timestamp outside them is shown as unknown.
_FIRST_SECOND, _LAST_SECOND = -62_135_596_800, 253_402_300_799


def format_time(ms: int | None) -> str:
    """A UTC time to the second; time.gmtime is a third of datetime's cost, and a page formats
    two times per entry."""
    if ms is None:
        return ""
    seconds = ms // 1000
    if not _FIRST_SECOND <= seconds <= _LAST_SECOND:
        return ""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))
    except (OSError, OverflowError, ValueError):  # Windows' gmtime refuses times before 1970
        return ""


def format_tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    return f"{count:,}"


def format_cost(cost: float, known: bool = True) -> str:
    """Dollars to the cent, or UNKNOWN_USAGE when nothing recorded what it cost."""
    return f"${cost:,.2f}" if known else UNKNOWN_USAGE


class EntryLookups(CardContext, Protocol):
    """What an entry needs of its page (sitegen.render.page.EntryContext)."""

    @property
    def tool_view(self) -> Callable[[ToolCall], ToolView]: ...
    @property
    def markdown(self) -> Callable[[str], Markup]: ...
    @property
    def messages(self) -> set[str]: ...
    @property
    def kept_marks(self) -> Mapping[str, str]: ...
    @property
    def kept_names(self) -> Mapping[str, str]: ...
    @property
    def context_attrs(self) -> Mapping[str, Mapping[str, str]]: ...
    @property
    def system_prompt(self) -> str | None: ...
    def usage_attr(self, node: Node) -> str: ...


def _parts_body(node: Node, ctx: EntryLookups, out: list[str]) -> None:
    """A message's parts, added to out in pieces: a long text or output is copied once, when the
    entry's pieces are joined, not into every enclosing element's string."""
    md = ctx.markdown
    for part in node.parts:
        kind = part.kind
        if kind == "text":
            out += ('<div class="md">', md(part.text), "</div>\n")
        elif kind == "thinking":
            if part.text.strip():
                html = md(part.text)
                out += (
                    '<details class="thinking"><summary>Thinking</summary><div class="md">',
                    html,
                    "</div></details>",
                )
        elif kind == "image":
            out += (images([image_view(part)]), "\n")
        elif kind == "tool_call":
            assert part.call is not None
            card_into(out, ctx.tool_view(part.call), ctx)
            out.append("\n")
        else:
            out.append(f'<pre class="other-block">{html_escape(part.text)}</pre>\n')


def _opening(node: Node, ctx: EntryLookups, label: str | None) -> str:
    """<article ...> with the entry's id, classes and data attributes."""
    entry_id = node.id
    kind = node.kind
    meta = node.meta
    if ctx.prefix:
        ident = f'id="{html_escape(ctx.prefix)}{html_escape(entry_id)}"'
    else:
        ident = f'id="entry-{html_escape(entry_id)}" data-parent="{html_escape(ctx.parents.get(entry_id) or "")}"'
    classes = f"entry kind-{html_escape(kind)}"
    if entry_id in ctx.messages:
        classes += " msg"
    if not ctx.prefix and entry_id not in ctx.on_path:
        classes += " off-path"
    if node.hidden:
        classes += " is-hidden"
    if kind == "assistant" and not any(part.kind in _TEXT_KINDS for part in node.parts):
        classes += " tools-only"
    out = [f'<article {ident} class="{classes}"']
    if label:
        out.append(f' data-label="{html_escape(label)}"')
    if kind == "compaction" and meta.get("firstKeptEntryId"):
        out.append(f' data-first-kept="{html_escape(meta.get("firstKeptEntryId"))}"')
    if node.usage:
        out.append(f' data-usage="{html_escape(ctx.usage_attr(node))}"')
    calls = node.tool_calls
    if calls:
        # The outline counts a turn's calls per tool and its failures (outline.js).
        names = " ".join("_".join(call.name.split()) or "(unnamed)" for call in calls)
        out.append(f' data-calls="{len(calls)}" data-tools="{html_escape(names)}"')
        failed = sum(1 for call in calls if call.result is not None and call.result.is_error)
        if failed:
            out.append(f' data-failed="{failed}"')
    attrs = ctx.context_attrs.get(entry_id)
    if attrs and not ctx.prefix:
        out.extend(f' {name}="{html_escape(value)}"' for name, value in attrs.items())
    out.append(">\n")
    if entry_id in ctx.kept_marks:
        compaction = ctx.kept_marks[entry_id]
        elsewhere = " kept-elsewhere" if not ctx.prefix and compaction not in ctx.on_path else ""
        out.append(
            f'<div class="kept-mark{elsewhere}" data-compaction="{html_escape(compaction)}"><span>Context kept after '
            f'<a href="#entry-{html_escape(compaction)}">compaction</a> starts here</span></div>'
        )
    return "".join(out)


def _marker(node: Node, ctx: EntryLookups, label: str | None) -> str:
    kind = node.kind
    meta = node.meta
    out = [f'<div class="marker"><span class="marker-kind">{html_escape(meta.get("entryType") or kind)}</span>\n']
    if kind == "model_change":
        out.append(f" model → <strong>{html_escape(node.model)}</strong>")
        role = meta.get("role")
        if role and role != "default":
            out.append(f" ({html_escape(role)})")
    elif kind == "thinking_change":
        out.append(f" thinking → <strong>{html_escape(meta.get('thinkingLevel'))}</strong>\n")
    elif kind == "mode_change":
        out.append(f" mode → <strong>{html_escape(meta.get('mode'))}</strong>\n")
    elif kind == "rule_injection":
        out.append(
            " rules: " + "".join(f"<code>{html_escape(rule)}</code> " for rule in meta.get("injectedRules") or [])
        )
    elif kind == "label":
        target = html_escape(meta.get("targetId"))
        out.append(f' {html_escape(meta.get("label") or "(label cleared)")} → <a href="#entry-{target}">{target}</a>\n')
    elif kind == "title":
        out.append(f" title → <strong>{html_escape(meta.get('name') or meta.get('title'))}</strong>\n")
    elif kind == "custom":
        out.append(f" {html_escape(meta.get('customType'))}\n")
    out.append(f"<time>{format_time(node.time_ms)}</time>")
    if label:
        out.append(f' <span class="badge label">{html_escape(label)}</span>')
    if not ctx.prefix:
        out.append(f'<a class="permalink" href="#entry-{html_escape(node.id)}">#</a>')
    if kind in ("custom", "notice") and meta.get("raw"):
        out.append(
            f'<details class="raw"><summary>data</summary><pre class="code">{escape_text(meta["raw"])}</pre></details>'
        )
    out.append("</div>\n")
    return "".join(out)


def _role(node: Node) -> Any:
    kind = node.kind
    if kind in _ROLES:
        return _ROLES[kind]
    if kind == "execution":
        return f"{html_escape(node.meta.get('language'))} (user)"
    if kind == "custom_message":
        return html_escape(node.meta.get("customType") or "custom")
    return html_escape(node.meta.get("entryType") or node.role or "entry")


def _head(node: Node, ctx: EntryLookups, label: str | None) -> str:
    out = [f'<header class="entry-head"><span class="role">{_role(node)}</span>']
    if node.model:
        out.append(f' <span class="model">{html_escape(node.model)}</span>')
    out.append(f" <time>{format_time(node.time_ms)}</time>")
    if label:
        out.append(f' <span class="badge label">{html_escape(label)}</span>')
    if node.hidden:
        out.append(' <span class="badge">hidden from view</span>')
    attribution = node.meta.get("attribution")
    if attribution and node.kind in ("user", "custom_message"):
        out.append(f' <span class="badge attribution" title="Who sent it">by {html_escape(attribution)}</span>')
    usage = node.usage
    if usage:
        cost = f" · ${usage.cost:.4f}" if usage.cost else ""
        out.append(
            f' <span class="usage">{format_tokens(usage.input)} in · {format_tokens(usage.output)} out{cost}</span>'
        )
    if not ctx.prefix:
        out.append(f' <a class="permalink" href="#entry-{html_escape(node.id)}">#</a>')
    out.append("</header>\n")
    return "".join(out)


def _output(text: Any) -> Markup:
    return folded(fold_text(text, ansi_to_html), "code output")


def _body(node: Node, ctx: EntryLookups, out: list[str]) -> None:
    """An entry's body, added to out."""
    if node.kind in ("user", "assistant", "custom_message"):
        _parts_body(node, ctx, out)
        out.append("\n")
        meta = node.meta
        if meta.get("errorMessage"):
            reason = html_escape(meta.get("stopReason") or "error")
            out.append(f'<p class="problem">{reason}: {html_escape(meta.get("errorMessage"))}</p>')
    else:
        out.append(_other_body(node, ctx))


def _other_body(node: Node, ctx: EntryLookups) -> str:
    """The body of an entry that is not a message of parts."""
    kind = node.kind
    meta = node.meta
    md = ctx.markdown
    if kind == "tool_result":
        result = node.result
        assert result is not None
        out = [f'<p class="orphan-result">{html_escape(result.tool_name)} result']
        if result.call_id:
            out.append(f" for call <code>{html_escape(result.call_id)}</code>")
        if result.is_error:
            out.append(' <span class="badge error">error</span>')
        out.append("</p>\n")
        for part in node.parts:
            out.append(images([image_view(part)]) if part.kind == "image" else _output(part.text))
        return "".join(out)
    if kind == "execution":
        out = [f'<pre class="code command">$ {html_escape(meta.get("command") or meta.get("code") or "")}</pre>\n']
        output = meta.get("output")
        if output:
            out.append(f'<div class="tool-output terminal">{_output(soft_str(output))}</div>')
        out.append('<p class="exec-status">')
        exit_code = meta.get("exitCode")
        if meta.get("cancelled"):
            out.append("cancelled")
        elif exit_code is not None:
            fail = " exit-fail" if exit_code != 0 else ""
            out.append(f'<span class="exit{fail}">exit {html_escape(exit_code)}</span>')
        if meta.get("truncated"):
            out.append(" · output truncated")
        if meta.get("excludeFromContext"):
            out.append(" · not sent to the model")
        out.append("</p>\n")
        return "".join(out)
    if kind == "compaction":
        out = ['<p class="compaction-info">']
        if meta.get("tokensBefore"):
            out.append(f"{format_tokens(jinja_int(meta.get('tokensBefore')))} tokens before compaction")
            after = meta.get("tokensAfter")
            out.append(f", about {format_tokens(jinja_int(after))} after. " if after is not None else ". ")
        elif meta.get("tokensAfter") is not None:
            out.append(f"About {format_tokens(jinja_int(meta.get('tokensAfter')))} tokens after compaction. ")
        if meta.get("method"):
            out.append(f'Method: <span class="compaction-method">{html_escape(meta.get("method"))}</span>. ')
        kept = meta.get("firstKeptEntryId")
        if kept:
            out.append("Kept from ")
            if kept in ctx.kept_names:
                out.append(
                    f'<a class="kept-from" href="#entry-{html_escape(kept)}">{html_escape(ctx.kept_names[kept])}</a>'
                )
            else:
                out.append(f"an entry that is not in this file (<code>{html_escape(kept)}</code>)")
            out.append("; what came before it was summarised.")
        out.append("</p>\n")
        if meta.get("warning"):
            out.append(f'<p class="problem compaction-warning">{html_escape(meta.get("warning"))}</p>\n')
        short = f": {html_escape(meta.get('shortSummary'))}" if meta.get("shortSummary") else ""
        summary = md(soft_str(meta.get("summary") or ""))
        out.append(
            f'<details class="summary"><summary>Summary{short}</summary><div class="md">{summary}</div></details>\n'
        )
        return "".join(out)
    if kind == "branch_summary":
        start = f" at {html_escape(meta.get('fromId'))}" if meta.get("fromId") else ""
        summary = md(soft_str(meta.get("summary") or ""))
        return (
            f'<details class="summary"><summary>Summary of the branch left{start}</summary>'
            f'<div class="md">{summary}</div></details>\n'
        )
    if kind == "session_init":
        prompt = meta.get("systemPrompt")
        if prompt and prompt == ctx.system_prompt:
            tools = meta.get("tools")
            counted = f" and {len(tools)} tools" if tools else ""
            out = [f'<p class="muted">System prompt{counted}: see the header.</p>\n']
        else:
            out = [
                '<details class="summary"><summary>System prompt</summary>'
                f'<pre class="code">{html_escape(prompt or "")}</pre></details>'
            ]
        if meta.get("task"):
            task = html_escape(meta.get("task"))
            out.append(f'<details class="summary"><summary>Task</summary><pre class="code">{task}</pre></details>')
        return "".join(out)
    raw = escape_text(meta.get("raw") or "")
    name = html_escape(meta.get("entryType") or kind)
    return f'<details class="raw" open><summary>{name}</summary><pre class="code">{raw}</pre></details>\n'


def entry_html(node: Node, ctx: EntryLookups) -> Markup:
    """One entry: an <article> with its head (or a marker line) and its body."""
    out: list[str] = []
    entry_into(out, node, ctx)
    return Markup("".join(out))


def entry_into(out: list[str], node: Node, ctx: EntryLookups) -> None:
    """entry_html(), added to out in pieces: a page joins a chunk of entries once (see _parts_body)."""
    label = ctx.labels.get(node.id)
    out.append(_opening(node, ctx, label))
    if node.kind in MARKER_KINDS:
        out += (_marker(node, ctx, label), "</article>")
    else:
        out += (_head(node, ctx, label), '<div class="entry-body">\n')
        _body(node, ctx, out)
        out.append("</div>\n</article>")
