"""Render a transcript into one HTML page: header, branch tree, and every entry exactly once."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from operator import is_
from pathlib import Path

import orjson
from markupsafe import Markup

from sitegen import __version__
from sitegen.fileio import replacing
from sitegen.gcpause import collector_paused, heap_frozen
from sitegen.render.ansi import ansi_to_html
from sitegen.render.attachments import ArtifactBudget, AttachmentViews, ExternalWriter
from sitegen.render.base.fragments import FragmentStore
from sitegen.render.base.text import break_long_words, fold_text, html_escape, human_size
from sitegen.render.cards import folded, images, tool_card
from sitegen.render.entries import UNKNOWN_USAGE, entry_html, entry_into, format_time, format_tokens
from sitegen.render.first_screen import first_screen_nodes
from sitegen.render.header import header_facts
from sitegen.render.highlight.pygments_html import Highlighter, lexer_name_for_path
from sitegen.render.markdown.render import MarkdownRenderer
from sitegen.render.navigation import (
    MESSAGE_ENTRY_TYPES,
    ROLE_NAMES,
    branch_links,
    display_order,
    entry_name,
    tree_rows,
    tree_rows_html,
)
from sitegen.render.split import can_fork, render_in_two, split_by_weight
from sitegen.render.templates import asset_text, content_security_policy, template_environment
from sitegen.render.timeline import timeline_svg
from sitegen.render.tools import ToolView, build_tool_view, image_view
from sitegen.timings import PhaseClock
from sitegen.transcript.activity import call_durations
from sitegen.transcript.audit import TurnAudit, analyse_transcript
from sitegen.transcript.model import Attached, Node, ToolCall, Totals, Transcript, referenced_urls
from sitegen.visible import visible_utf8

__all__ = ["PageOptions", "PageRenderer", "format_time", "format_tokens"]

log = logging.getLogger("sitegen.render")

# Below this weight (_weight's units: about 70 ms of rendering in one process) a forked second
# process saves too little to be worth starting.
PARALLEL_MIN_WEIGHT = 400_000
# Entries rendered per template call: a chunk of the page is written before the next is made.
CHUNK_NODES = 256
# A page of more entries than this is "long": past its first chunk, each chunk is shipped as raw text
# (the parser only scans it) and put into the page by chunks.js, so the first screen shows at once.
LAZY_AFTER_NODES = 1500
# Those chunks are smaller, so that putting one into the page never holds the reader up for long.
LAZY_CHUNK_NODES = 64
# A long page's tree holds its first rows (more than a sidebar shows); tree.js draws the rest from raw
# text as the sidebar scrolls: laying out tens of thousands of rows was most of the page's opening time.
LAZY_TREE_ROWS = 100
# The page's stylesheets, and its scripts in load order: a small module per feature over page.js's core.
PAGE_STYLES = (
    "theme.css",
    "page.css",
    "conversation.css",
    "tools.css",
    "views.css",
    "sidebar.css",
    "highlight.css",
    "copy.css",
    "palette.css",
)
PAGE_SCRIPTS = (
    "layout.js",
    "keys.js",
    "chunks.js",
    "highlight.js",
    "landing.js",
    "page.js",
    "copy.js",
    "folds.js",
    "totals.js",
    "treerows.js",
    "tree.js",
    "outline.js",
    "context.js",
    "find.js",
    "marks.js",
    "images.js",
    "artifacts.js",
    "print.js",
)

LONG_PAGE_SCRIPTS = frozenset({"highlight.js"})


@dataclass(slots=True)
class PageOptions:
    """How a page is assembled: inline assets for export, shared fingerprinted ones for the site."""

    inline_assets: bool = True
    # Site pages: asset name -> URL relative to the page (e.g. "../assets/page.1a2b3c.css").
    asset_urls: dict[str, str] = field(default_factory=dict)
    branch_only: bool = False
    # Site navigation, all relative URLs.
    home_url: str | None = None
    project_url: str | None = None
    search_url: str | None = None
    # Site pages: URL of the script listing related sessions (written after every build).
    related_script: str | None = None
    # agent id -> URL of the subagent's own page (site); the export embeds transcripts instead.
    subagent_urls: dict[str, str] = field(default_factory=dict)
    parent_link: tuple[str, str] | None = None  # (label, URL) of the page whose tool call started this one
    # (title, URL) of the session this one was forked from, when it is in the site.
    parent_session_link: tuple[str, str] | None = None
    # sitegen's audit of the session's turns; computed here when the caller has not already.
    turn_audits: list[TurnAudit] | None = None
    # Render a long page on two cores (the export command; the site build parallelises by session).
    parallel: bool = False
    # What tool output points at (artifact://, agent://): "budget" (a few MB per page), "full" or "none";
    # a site page writes an output over the budget beside itself with artifact_writer.
    artifacts: str = "budget"
    artifact_writer: ExternalWriter | None = None
    # A long page's entries past its first screen leave their code to the page's highlighter
    # (static/highlight.js runs the same pygments rules when an entry is shown): half the writing time.
    highlight_later: bool = True
    # So do every page's (site pages: most of a cold build's highlighting, and pages a reader may never
    # open); an exported page under LAZY_AFTER_NODES entries is coloured by the server whole.
    highlight_later_short: bool = False


@dataclass(slots=True)
class EntryContext:
    """Lookups the entry macros need, for the page itself or an embedded subagent (prefix set)."""

    tool_view: Callable[[ToolCall], ToolView]
    markdown: Callable[[str], Markup]
    parents: dict[str, str | None]
    on_path: set[str]
    labels: dict[str, str]
    kept_marks: dict[str, str]
    # Entries sent to the model as messages (the context view keeps only these), and how each
    # compaction's first kept entry is named ("User: “Port the selector” · 10:21").
    messages: set[str] = field(default_factory=set)
    kept_names: dict[str, str] = field(default_factory=dict)
    # Data attributes by entry id that let the model's view follow the writing agent's rules.
    context_attrs: dict[str, dict[str, str]] = field(default_factory=dict)
    prefix: str = ""
    system_prompt: str | None = None
    subagent_urls: dict[str, str] = field(default_factory=dict)
    # Result entry id -> ms from its call (sitegen.transcript.activity.call_durations): "took 1.2 s".
    durations: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def usage_attr(node: Node) -> str:
        usage = node.usage
        if usage is None:
            return ""
        return f"{usage.input} {usage.output} {usage.cache_read} {usage.cache_write} {usage.cost!r}"


def paired_result_ids(transcript: Transcript) -> set[str]:
    """Ids of tool-result nodes shown inside their call (so not again on their own)."""
    return {
        part.call.result.node_id
        for node in transcript.nodes
        for part in node.parts  # not node.tool_calls, a list made per node
        if part.call is not None and part.call.result is not None
    }


def context_message_ids(transcript: Transcript) -> set[str]:
    """Entries that reach the model as messages when on the kept part of a path (build_session_context)."""
    if transcript.family != "pi":
        return {node.id for node in transcript.nodes if node.kind in ("user", "assistant", "tool_result")}
    marks = transcript.context_marks
    return {
        node.id
        for node in transcript.nodes
        if node.meta.get("entryType") in MESSAGE_ENTRY_TYPES and marks.get(node.id, {}).get("data-ctx") != "never"
    }


def kept_names(transcript: Transcript) -> dict[str, str]:
    """firstKeptEntryId -> how the compaction names it: its role, its first line and its time."""
    names: dict[str, str] = {}
    for node in transcript.nodes:
        kept = node.meta.get("firstKeptEntryId") if node.kind == "compaction" else None
        if isinstance(kept, str) and (target := transcript.by_id.get(kept)) is not None:
            role = ROLE_NAMES.get(target.kind, target.kind.replace("_", " "))
            when = format_time(target.time_ms)
            names[kept] = f"{role}: “{entry_name(target, transcript.cwd)}”" + (f" · {when}" if when else "")
    return names


def kept_marks(transcript: Transcript) -> dict[str, str]:
    """firstKeptEntryId -> compaction id: where each compaction's kept context starts."""
    return {
        str(node.meta["firstKeptEntryId"]): node.id
        for node in transcript.nodes
        if node.kind == "compaction" and isinstance(node.meta.get("firstKeptEntryId"), str)
    }


class PageRenderer:
    """Holds the template environment and the caches that may be shared across many pages."""

    def __init__(self, fragments: FragmentStore | None = None, clock: PhaseClock | None = None) -> None:
        self.highlighter = Highlighter(fragments=fragments)
        self.markdown = MarkdownRenderer(self.highlighter, fragments)
        self.clock = clock
        if clock is not None:
            # Timed where every caller finds them: templates, tool views and markdown's fences.
            self.highlighter.code = clock.timed("highlight", self.highlighter.code)  # type: ignore[method-assign]
            self.markdown.render = clock.timed("markdown", self.markdown.render)  # type: ignore[method-assign]
            self.write = clock.timed("templates", self.write)  # type: ignore[method-assign]
        self.env = template_environment()
        self.env.globals.update(
            md=self.markdown.render,
            fold=fold_text,
            ansi=ansi_to_html,
            image=image_view,
            fmt_time=format_time,
            fmt_tokens=format_tokens,
            human_size=human_size,
            highlight=self.highlighter.code,
            tool_card=tool_card,
            folded=folded,
            images=images,
            entry=entry_html,
            tree_html=lambda rows: Markup(tree_rows_html(rows)),
        )
        self._page = self.env.get_template("page.html.j2")
        self._nested = self.env.get_template("nested.html.j2")

    def render(self, transcript: Transcript, options: PageOptions | None = None) -> str:
        """The whole page as one string (tests, small pages); write() streams it instead."""
        return b"".join(self.chunks(transcript, options)).decode("utf-8", "surrogatepass")

    def write(self, transcript: Transcript, options: PageOptions, path: Path) -> int:
        """Write the page to path as it is rendered, through a temporary name; returns its size.
        A page of a big session is never in memory whole."""
        size = 0
        with replacing(path) as handle:
            put = handle.write if self.clock is None else self.clock.timed("write", handle.write)
            for chunk in self.chunks(transcript, options):
                put(chunk)
                size += len(chunk)
        return size

    def chunks(self, transcript: Transcript, options: PageOptions | None = None) -> Iterator[bytes]:
        """The page as UTF-8 chunks, in order."""
        options = options or PageOptions()
        budget = ArtifactBudget(mode=options.artifacts, external=options.artifact_writer)
        views = AttachmentViews(transcript, self, budget)
        with heap_frozen():
            yield from self._page_chunks(transcript, options, views)

    def tool_view(self, call: ToolCall, views: AttachmentViews, cwd: str = "") -> ToolView:
        return build_tool_view(call, self.highlighter, views.attachments_for, cwd)

    def render_nested(self, transcript: Transcript, views: AttachmentViews, prefix: str) -> Markup:
        """A subagent transcript's default path, embedded; its ids are prefixed to stay unique."""
        paired = paired_result_ids(transcript)
        nodes = [node for node in transcript.path_nodes() if node.id not in paired]
        ctx = EntryContext(
            tool_view=lambda call: self.tool_view(call, views, transcript.cwd),
            markdown=self.markdown.render,
            parents=transcript.tree.parent,
            on_path=set(),
            labels=transcript.tree.labels,
            kept_marks=kept_marks(transcript),
            prefix=prefix,
            durations=call_durations(transcript),
        )
        return Markup(self._nested.render(t=transcript, nodes=nodes, ctx=ctx))

    def _page_chunks(self, transcript: Transcript, options: PageOptions, views: AttachmentViews) -> Iterator[bytes]:
        tree = transcript.tree
        path_ids = tree.path_to(transcript.default_leaf)
        on_path = set(path_ids)
        paired = paired_result_ids(transcript)
        order = display_order(transcript, path_ids if options.branch_only else None)
        nodes = [transcript.by_id[entry_id] for entry_id, _ in order]
        ctx = EntryContext(
            tool_view=lambda call: self.tool_view(call, views, transcript.cwd),
            markdown=self.markdown.render,
            parents=tree.parent,
            on_path=on_path,
            labels=tree.labels,
            kept_marks=kept_marks(transcript),
            messages=context_message_ids(transcript),
            kept_names=kept_names(transcript),
            context_attrs=transcript.context_marks,
            system_prompt=transcript.system_prompt,
            subagent_urls=options.subagent_urls,
            durations=call_durations(transcript),
        )

        lazy = len(nodes) > LAZY_AFTER_NODES
        # Past the first screen, code is left to the page's highlighter (a page without entries past it
        # is as it was: no highlighter).
        first_screen = first_screen_nodes(nodes, paired, on_path)
        later = options.highlight_later and (lazy or (options.highlight_later_short and len(nodes) > first_screen))
        highlighter = self.highlighter
        highlighter.later_languages = set()
        shipped: set[str] = set()

        def render(part: Sequence[Node], at: int) -> Iterator[bytes]:
            """Chunks of the conversation; `at` is where the part starts in display order."""
            start = 0
            while start < len(part):
                place = at + start
                deferred = lazy and place >= CHUNK_NODES
                end = start + (LAZY_CHUNK_NODES if deferred else CHUNK_NODES)
                if lazy and not deferred:
                    # The first screen's entries are coloured here, the rest of the first chunk later.
                    end = min(end, (first_screen if place < first_screen else CHUNK_NODES) - at)
                elif later and place < first_screen:
                    end = min(end, first_screen - at)
                highlighter.later = later and place >= first_screen
                # Rendering makes no garbage cycles worth collecting (a 50 MB page's peak memory is the same
                # without the collector), and its passes were a tenth of the time. Paused chunk by chunk,
                # never across a yield: a caller that stops reading must not leave it off.
                try:
                    with collector_paused():
                        # The chunk's pieces in one list, joined once (not each entry's, then the chunk's).
                        pieces: list[str] = []
                        for node in part[start:end]:
                            if node.id not in paired:
                                entry_into(pieces, node, ctx)
                                pieces.append("\n")
                    html = _html_bytes(break_long_words("".join(pieces)))
                finally:
                    highlighter.later = False
                yield _deferred(html, at + start) if deferred else html
                # The rules of the lexers this process left to the page's highlighter, once each.
                for language in sorted(_with_called(highlighter.later_languages) - shipped):
                    shipped.add(language)
                    yield _lexer_script(language)
                start = end

        tail: list[str] = []

        def framed(part: Sequence[Node]) -> Iterator[bytes]:
            """The page up to the conversation, then this part of it; the page's end waits in tail."""
            with collector_paused():
                head, end = self._frame(transcript, options, order, path_ids, on_path, lazy, later)
            tail.append(end)
            yield _html_bytes(head)
            yield from render(part, 0)

        weights = [_weight(node, transcript.attachments) for node in nodes] if options.parallel else []
        if not options.parallel or not can_fork() or sum(weights) < PARALLEL_MIN_WEIGHT:
            yield from framed(nodes)
        else:
            self._warm_up(nodes)
            # The child starts on the second half at once while this process renders the frame, then
            # the first half: the frame counts as work of that half (the tree's rows, the audit).
            cut = split_by_weight(weights, head_start=FRAME_WEIGHT_PER_NODE * len(nodes))
            # Each process spends from its own copy of the budget: half of it each keeps the page's total.
            views.budget.total //= 2
            yield from render_in_two(lambda: framed(nodes[:cut]), lambda: render(nodes[cut:], cut))
        yield _html_bytes(tail[0])

    def _frame(
        self,
        transcript: Transcript,
        options: PageOptions,
        order: list[tuple[str, int]],
        path_ids: list[str],
        on_path: set[str],
        lazy: bool = False,
        later: bool = False,
    ) -> tuple[str, str]:
        """The page around the conversation, as the HTML before it and after it. A long page (lazy) also
        carries every entry's parent, in display order, for the entries not yet in the page."""
        tree_nav = tree_rows(transcript, order, on_path)
        path_nodes = [transcript.by_id[i] for i in path_ids]  # the default branch, read three times below
        audits = options.turn_audits if options.turn_audits is not None else analyse_transcript(transcript, path_nodes)
        branches = branch_links(transcript, order, on_path) if not options.branch_only else []
        file_totals = transcript.totals()
        inline = options.inline_assets
        # A site page links its assets: their text is read only for a page that carries them.
        # Only a page that leaves code to the page's highlighter has it.
        names = PAGE_SCRIPTS if later else tuple(name for name in PAGE_SCRIPTS if name not in LONG_PAGE_SCRIPTS)
        scripts = [asset_text(name) for name in names] if inline else ["" for _ in names]
        styles = [asset_text(name) for name in PAGE_STYLES] if inline else ["" for _ in PAGE_STYLES]
        theme_js = asset_text("theme.js") if inline else ""
        csp = content_security_policy(styles if inline else None, [theme_js, *scripts] if inline else None)
        # Rendered around a slot for the conversation, which is streamed in its place. The slot is
        # random so that no session text can contain it.
        slot = f"sitegen-conversation-{secrets.token_hex(16)}"
        page = self._page.render(
            t=transcript,
            options=options,
            conversation=Markup(slot),
            rows=tree_nav,
            tree_first=LAZY_TREE_ROWS if lazy else len(tree_nav),
            entry_links=_entry_links(transcript, order) if lazy else None,
            branches=branches,
            leaf=transcript.default_leaf,
            facts=header_facts(transcript, file_totals),
            file_totals=file_totals,
            # A branch that is the whole file, in its order (most sessions), has the file's totals.
            path_totals=file_totals if _same_nodes(path_nodes, transcript.nodes) else transcript.totals(path_nodes),
            styles=_inlined(PAGE_STYLES, styles, inline),
            theme_js=Markup(theme_js) if inline else None,
            scripts=_inlined(names, scripts, inline),
            csp=csp,
            version=__version__,
            totals_rows=_totals_rows,
            turn_audits=audits,
            timeline=timeline_svg(transcript, path_nodes),
        )
        head, tail = page.split(slot)
        return head, tail

    def _warm_up(self, nodes: list[Node]) -> None:
        """Compile the lexers the page needs before forking, so the two processes do not both pay for it."""
        paths = {
            path
            for node in nodes
            for part in node.parts
            if part.call is not None and isinstance(arguments := part.call.arguments, dict)
            for key in ("path", "file_path", "filePath")
            if isinstance(path := arguments.get(key), str)
        }
        self.highlighter.prepare({lexer_name_for_path(path) for path in paths} - {None})


def _same_nodes(these: list[Node], those: list[Node]) -> bool:
    """Whether two lists hold the same node objects in the same order (compared in C, by identity)."""
    return len(these) == len(those) and all(map(is_, these, those))


def _inlined(names: Sequence[str], texts: list[str], inline: bool) -> list[tuple[str, Markup | None]]:
    """Each asset's name with its text when the page carries it inline, else None (it is linked)."""
    return [(name, Markup(text) if inline else None) for name, text in zip(names, texts, strict=True)]


def _with_called(languages: set[str]) -> set[str]:
    if not languages:
        return languages
    from sitegen.render.highlight.tables import with_called

    return with_called(languages)


@cache
def _lexer_script(language: str) -> bytes:
    """A lexer's rules for static/highlight.js, as a data script among the conversation's chunks (made
    once per process: the site's pages ship the same few)."""
    from sitegen.render.highlight.tables import lexer_table, table_json

    table = lexer_table(language)
    aliases = " ".join(table["aliases"]) if table is not None else language
    return b'<script type="application/json" class="sitegen-lexer" data-lang="%s" data-aliases="%s">%s</script>\n' % (
        language.encode(),
        html_escape(aliases).encode(),
        (table_json(language) or "null").encode("utf-8"),
    )


def _deferred(html: bytes, at: int) -> bytes:
    """A chunk of entries as raw text for chunks.js to put in the page; `at` is its first entry's place in
    display order. Our markup never holds "</script" or "<!--" (session text is escaped): if it did, the
    chunk stays plain markup rather than end the raw text early."""
    lowered = html.lower()
    if b"</script" in lowered or b"<!--" in lowered:
        return html
    return b'<script type="text/x-sitegen-entries" data-at="%d">' % at + html + b"</script>\n"


def _entry_links(transcript: Transcript, order: list[tuple[str, int]]) -> Markup:
    """[[id, parent id], ...] in display order, as JSON safe inside a script element."""
    parent = transcript.tree.parent
    pairs = [[entry_id, parent.get(entry_id) or ""] for entry_id, _ in order]
    try:
        links = orjson.dumps(pairs)
    except orjson.JSONEncodeError:  # an id holding a lone surrogate: escaped by the json module instead
        links = json.dumps(pairs, ensure_ascii=True).encode("ascii")
    # "<" as an escape, so no id can close the element or open a comment.
    return Markup(links.replace(b"<", b"\\u003c").decode("utf-8"))


def _html_bytes(html: str) -> bytes:
    return visible_utf8(html)


# What the frame costs per entry, in _weight's units, fitted so that both processes of a forked export
# of the generated 50 MB sessions finish together. The frame's process finished this much after the
# other (big-50mb-s0; with its folder of 1,686 subagents), three runs each: -0.04..0.08 and 0.04..0.09 s
# at 600, -0.12..-0.06 and -0.04..0.00 at 700; 650 is between. A new value moves the cut, so the
# chunks' boundaries and which outputs each half's budget holds: the page's bytes.
FRAME_WEIGHT_PER_NODE = 650
# What an embedded subagent transcript costs per byte of its file: its 71 transcripts (2.0 MB of files)
# in the generated session with 1,686 subagents took 0.073 s to render, where an entry costs about
# 20 ns per unit (at 1/2, the process that embedded them all finished 0.05 s late on their account).
EMBEDDED_WEIGHT_PER_BYTE = 2


def _weight(node: Node, attachments: Mapping[str, Attached]) -> int:
    """Rough rendering cost of a node, in characters of markdown. Fitted on a generated 50 MB
    session: an entry costs about 500 of them, a tool call 2,000, and output, which is escaped but
    highlighted only where it shows before folding, a twelfth of its size; a subagent's transcript
    embedded at the call costs EMBEDDED_WEIGHT_PER_BYTE per byte of its file (nested template included)."""
    size = 500
    for part in node.parts:  # one pass: this runs on one core, before the second process starts
        size += len(part.text)
        call = part.call
        if call is not None:
            size += 2000
            if call.result is not None:
                for result_part in call.result.parts:
                    size += len(result_part.text) // 12
                    if attachments and "agent://" in result_part.text:
                        size += sum(_embedded_weight(attachments.get(url)) for url in referenced_urls(result_part.text))
    return size


def _embedded_weight(attached: Attached | None) -> int:
    subagent = attached.subagent if attached is not None else None
    if subagent is None or subagent.transcript is None:
        return 0
    return subagent.file_size * EMBEDDED_WEIGHT_PER_BYTE


def _totals_rows(totals: Totals) -> list[tuple[str, str]]:
    usage = totals.usage
    counts = [("Messages", f"{totals.messages:,}"), ("Tool calls", f"{totals.tool_calls:,}")]
    figures = [
        ("Input tokens", format_tokens(usage.input)),
        ("Output tokens", format_tokens(usage.output)),
        ("Cache read", format_tokens(usage.cache_read)),
        ("Cache write", format_tokens(usage.cache_write)),
        ("Cost", f"${usage.cost:.4f}"),
    ]
    # No message recorded its usage: it is unknown, not zero.
    return counts + (figures if totals.usage_known else [(name, UNKNOWN_USAGE) for name, _ in figures])
