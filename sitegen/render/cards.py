"""Tool cards and the small pieces of entries (folded text, diffs, images) as HTML built in Python.

A tool call is the most frequent thing on a page; as jinja macros, their calls and attribute lookups
cost more than the markup. These functions are the templates' globals of the same names
(templates/_entry.html.j2 calls them) and give exactly what the macros gave; tests/test_golden.py
holds them to it. Every value is escaped as jinja's autoescape does, unless it is Markup already.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from markupsafe import Markup

from sitegen.render.base.text import Folded, html_escape, human_size
from sitegen.render.tools import DiffLine, ImageView, ToolView

__all__ = [
    "CardContext",
    "card_into",
    "diff_lines",
    "fold_into",
    "folded",
    "images",
    "result_attrs",
    "took_text",
    "tool_card",
]


class CardContext(Protocol):
    """What a card needs of the page (sitegen.render.page.EntryContext)."""

    @property
    def prefix(self) -> str: ...
    @property
    def parents(self) -> Mapping[str, str | None]: ...
    @property
    def on_path(self) -> set[str]: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def subagent_urls(self) -> Mapping[str, str]: ...
    @property
    def durations(self) -> Mapping[str, int]: ...


def took_text(ms: int) -> str:
    """How long a call took: "0.4 s", "12.3 s", then minutes and hours ("2 min 5 s", "1 h 3 min")."""
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    seconds = ms // 1000
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def _html(value: Markup) -> str:
    """Markup as it is (escaping it again, as html_escape would, only copies it); anything else escaped."""
    return value if isinstance(value, Markup) else html_escape(value)


def folded(f: Folded, cls: str) -> Markup:
    """A preview, and the rest folded behind a control that says how much it holds."""
    out: list[str] = []
    fold_into(out, f, cls)
    return Markup("".join(out))


def fold_into(out: list[str], f: Folded, cls: str) -> None:
    """folded(), added to out in pieces: an output is copied once, when its entry's pieces are joined,
    rather than into each enclosing element's string in turn."""
    css = html_escape(cls)
    out += (f'<pre class="{css}">', _html(f.head), "</pre>")
    if f.rest:
        out += (
            f'<details class="fold"><summary>{html_escape(f.summary)}</summary><pre class="{css} rest">',
            _html(f.rest),
            "</pre></details>",
        )


def diff_lines(lines: Iterable[DiffLine]) -> Markup:
    lines = list(lines)
    joined = "\n".join(line.text for line in lines)
    # A diff is thousands of short lines: their text escaped in one go, then cut at the newlines
    # that joined them (escaping neither adds nor removes one; a line holding one is done alone).
    if joined.count("\n") == len(lines) - 1:
        texts = html_escape(joined).split("\n")
    else:
        texts = [html_escape(line.text) for line in lines]
    kinds: dict[str, str] = {}
    return Markup(
        "".join(
            f'<span class="d-{kinds.get(line.kind) or kinds.setdefault(line.kind, html_escape(line.kind))}">'
            f"{text}</span>\n"
            for line, text in zip(lines, texts, strict=True)
        )
    )


def images(views: Iterable[ImageView]) -> Markup:
    out = []
    for image in views:
        if image.src:
            src, mime = html_escape(image.src), html_escape(image.mime)
            out.append(f'<img class="msg-image" src="{src}" alt="image ({mime})" loading="lazy">')
        else:
            out.append(f'<span class="image-missing">[{html_escape(image.note)}]</span>')
    return Markup("".join(out))


def result_attrs(entry_id: str, ctx: CardContext) -> Markup:
    """The id (and on the page itself, the parent) of an entry shown inside its call's card."""
    if ctx.prefix:
        return Markup(f'id="{html_escape(ctx.prefix)}{html_escape(entry_id)}"')
    return Markup(f'id="entry-{html_escape(entry_id)}" data-parent="{html_escape(ctx.parents.get(entry_id) or "")}"')


def tool_card(v: ToolView, ctx: CardContext) -> Markup:
    """A tool call with its arguments, input, diff, result and attachments."""
    out: list[str] = []
    card_into(out, v, ctx)
    return Markup("".join(out))


def card_into(out: list[str], v: ToolView, ctx: CardContext) -> None:
    """tool_card(), added to out in pieces (see fold_into)."""
    kind, status, call = html_escape(v.kind), html_escape(v.status), html_escape(v.call_id)
    out.append(
        f'<section class="tool tool-{kind} status-{status}" data-call="{call}">\n'
        f'<header class="tool-head"><span class="tool-name">{html_escape(v.name)}</span>'
    )
    if v.kind == "bash":
        out.append(f' <code class="tool-summary">$ {html_escape(v.summary)}</code>')
    elif v.summary:
        out.append(f' <code class="tool-summary">{html_escape(v.summary)}</code>')
    if v.diff_stat:
        out.append(f' <span class="diff-stat">{html_escape(v.diff_stat)}</span>')
    if v.exit_code is not None:
        fail = " exit-fail" if v.exit_code != 0 else ""
        out.append(f' <span class="exit{fail}">exit {html_escape(v.exit_code)}</span>')
    if v.status == "error":
        out.append(' <span class="badge error">error</span>')
    elif v.status == "pending":
        out.append(' <span class="badge pending">no result</span>')
    took = ctx.durations.get(v.result_id) if v.result_id else None
    if took is not None:
        out.append(f' <span class="took" title="From the call to its result">took {took_text(took)}</span>')
    if ctx.subagent_urls and v.kind == "task":
        for attachment in v.attachments:
            agent = attachment.label[8:]
            if agent in ctx.subagent_urls:
                url = html_escape(ctx.subagent_urls[agent])
                out.append(f' <a class="subagent-link" href="{url}">subagent page {html_escape(agent)}</a>')
    out.append("</header>\n")
    if v.arguments:
        opened = " open" if v.kind == "generic" else ""
        out += (
            f'<details class="tool-args"{opened}><summary>Arguments</summary><pre class="code highlight">',
            _html(v.arguments),
            "</pre></details>",
        )
    if v.input:
        out.append('<div class="tool-input">')
        fold_into(out, v.input, "code highlight")
        out.append("</div>")
    if v.diff:
        out += ('<pre class="diff">', diff_lines(v.diff), "</pre>")
        if v.diff_rest:
            out += (
                f'<details class="fold"><summary>Show {len(v.diff_rest)} more diff lines</summary>'
                '<pre class="diff rest">',
                diff_lines(v.diff_rest),
                "</pre></details>",
            )
    if v.result_id:
        _result_into(out, v, v.result_id, ctx)
    out.append("</section>")


def _result_into(out: list[str], v: ToolView, result_id: str, ctx: CardContext) -> None:
    """The result part of a card: its frame (odek), output, images and attachments."""
    label = ctx.labels.get(result_id)
    off_path = " off-path" if not ctx.prefix and result_id not in ctx.on_path else ""
    labelled = f' data-label="{html_escape(label)}"' if label else ""
    out.append(f'<div class="tool-result{off_path}" {result_attrs(result_id, ctx)}{labelled}>\n')
    if label:
        out.append(f'<p class="result-head"><span class="badge label">{html_escape(label)}</span></p>')
    frame = v.frame
    if frame:
        out.append(
            f'<div class="odek-frame"><p class="frame-head">TOOL RESULT: <code>{html_escape(frame.tool_name)}</code>'
        )
        if frame.nonce:
            out.append(f' <span class="muted">[{html_escape(frame.nonce)}]</span>')
        if frame.label:
            out.append(f' <span class="frame-label">({html_escape(frame.label)})</span>')
        out.append("</p>\n")
        for segment in frame.segments:
            if segment.kind == "omitted":
                out.append(f'<p class="omitted">… {html_escape(segment.note)} …</p>\n')
            elif segment.kind == "untrusted":
                source = f" from <code>{html_escape(segment.source)}</code>" if segment.source else ""
                unclosed = ' <span class="badge error">not closed</span>' if not segment.closed else ""
                out.append(
                    f'<div class="untrusted"><p class="untrusted-source">Untrusted content{source}{unclosed}</p>'
                )
                if segment.body is not None:
                    fold_into(out, segment.body, "code output")
                out.append("</div>\n")
            elif segment.body is not None and segment.body.lines:
                fold_into(out, segment.body, "code output")
                out.append("\n")
        out.append("</div>\n")
    if v.output and v.output.lines:
        terminal = " terminal" if v.kind in ("bash", "generic") else ""
        out.append(f'<div class="tool-output{terminal}">')
        fold_into(out, v.output, "code highlight output")
        out.append("</div>")
    out.append(f"{images(v.images)}\n" if v.images else "\n")
    for attachment in v.attachments:
        # An output over the page's budget: loaded from beside the page when opened (artifacts.js).
        lazy = (
            f' data-src="{html_escape(attachment.src)}" data-key="{html_escape(attachment.label)}"'
            if attachment.src
            else ""
        )
        note = f' · <span class="attachment-note">{html_escape(attachment.note)}</span>' if attachment.note else ""
        out.append(
            f'<details class="attachment"{lazy}><summary>{html_escape(attachment.label)} · '
            f"{html_escape(human_size(attachment.size))}{note}</summary>"
        )
        if attachment.label.startswith("agent://"):
            out += ('<div class="md agent-output">', _html(attachment.body), "</div>")
        elif attachment.body or attachment.src:
            out += ('<pre class="code output">', _html(attachment.body), "</pre>")
        if attachment.transcript:
            transcript = _html(attachment.transcript)
            out += ('<details class="subagent"><summary>Subagent transcript</summary>', transcript, "</details>")
        elif attachment.transcript_shown_before:
            out.append('<p class="muted">Its transcript is embedded at the first call that named it.</p>')
        out.append("</details>\n")
    out.append("</div>")
