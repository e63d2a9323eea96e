"""The neutral transcript model both loaders produce and every renderer consumes."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sitegen.errors import SitegenError
from sitegen.odek.framing import ToolFrame
from sitegen.session.tree import SessionTree
from sitegen.titles import session_title

__all__ = [
    "NODE_KINDS",
    "TRANSCRIPT_BYTES",
    "Attached",
    "Node",
    "Output",
    "Part",
    "Subagent",
    "ToolCall",
    "ToolFrame",
    "ToolResult",
    "Totals",
    "Transcript",
    "Usage",
    "activity_times",
    "read_or_left_off",
    "referenced_urls",
]

# Records written after the work, not during it: a terminal closing (omp's session_exit, maybe
# months later), a title found or changed, a label put on an entry. They never stretch a session.
_NOT_ACTIVITY_KINDS = frozenset({"title", "label"})
_NOT_ACTIVITY_TYPES = frozenset({"session_exit"})

# What a node can be. Renderers switch on these, never on the agent that wrote the session.
NODE_KINDS = frozenset(
    {
        "user",  # a user message (text, images)
        "assistant",  # model output: text, thinking, tool calls (results paired in)
        "tool_result",  # a tool's result; rendered inside its call when paired
        "execution",  # bashExecution / pythonExecution / jsExecution run by the user
        "custom_message",  # extension message that reaches the model (hidden when display is false)
        "branch_summary",  # summary of an abandoned branch
        "compaction",  # summary replacing older context; meta has firstKeptEntryId
        "model_change",  # slim marker
        "thinking_change",  # slim marker
        "mode_change",  # slim marker
        "rule_injection",  # ttsr_injection: slim marker
        "label",  # a label entry (the label itself is shown as a badge on its target)
        "session_init",  # system prompt and tools
        "title",  # session_info / title_change
        "custom",  # extension state, shown only under the "all" filter
        "notice",  # any other known marker-like entry (service tier, credential pin, ...)
        "unknown",  # a type or role we do not know: a generic card with its JSON
    }
)


@dataclass(slots=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    def add(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.cost += other.cost

    @property
    def total_tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write


@dataclass(slots=True)
class ToolResult:
    """A tool's output; node_id is the entry that holds it."""

    node_id: str
    call_id: str
    tool_name: str
    parts: list[Part]
    is_error: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    # odek's TOOL RESULT box as details["odekFrame"] stores it, parsed (sitegen.transcript.attachments).
    frame: ToolFrame | None = None

    @property
    def shown_text(self) -> str:
        """The output as its card shows it: the text (and other) parts, a line between them."""
        return "\n".join(part.text for part in self.parts if part.kind in ("text", "other"))


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    # Usually a dict; a string when the agent stored arguments it could not parse.
    arguments: Any
    result: ToolResult | None = None


@dataclass(slots=True)
class Part:
    """One piece of content, in order: text, thinking, image, tool_call, or other (JSON text)."""

    kind: str
    text: str = ""
    mime: str = ""
    # Image base64, or the unresolved blob ref when the blob is missing.
    data: str = ""
    call: ToolCall | None = None


@dataclass(slots=True)
class Node:
    """One entry of the session tree, reduced to what renderers need."""

    id: str
    parent_id: str | None
    index: int
    time_ms: int | None
    kind: str
    role: str = ""
    parts: list[Part] = field(default_factory=list)
    result: ToolResult | None = None
    usage: Usage | None = None
    model: str = ""
    hidden: bool = False
    # Kind-specific fields: summary, tokensBefore, firstKeptEntryId, thinkingLevel, mode, rules,
    # customType, command, output, exitCode, stopReason, errorMessage, data, entryType, ...
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [part.call for part in self.parts if part.call is not None]


def activity_times(nodes: list[Node]) -> list[int]:
    """The times of the nodes that are the session's own activity (see _NOT_ACTIVITY_KINDS)."""
    times: list[int] = []
    append = times.append
    for node in nodes:
        ms, kind = node.time_ms, node.kind
        if ms is None or kind in _NOT_ACTIVITY_KINDS:
            continue
        if kind == "custom" and node.meta.get("customType") in _NOT_ACTIVITY_TYPES:
            continue
        append(ms)
    return times


class Output(Protocol):
    """What an attachment shows, read only as far as a page needs it: its size, all of it, or its two ends."""

    @property
    def size(self) -> int: ...

    def text(self) -> str: ...

    def ends(self, head: int, tail: int) -> tuple[str, str]: ...

    def measure(self, part: str) -> int:
        """A part's size in the unit of size."""
        ...


_Read = TypeVar("_Read")
_log = logging.getLogger("sitegen.transcript")


def read_or_left_off(url: str, read: Callable[[], _Read]) -> _Read | None:
    """read() of what url names, or None when it cannot be read: the page then leaves that output off.
    One rule for resolving an output and for placing it later: refused by sitegen (a link out of its
    folder, past a limit) is noted, any other failure to read is a warning."""
    try:
        return read()
    except SitegenError as error:
        _log.info("not inlining %s: %s", url, error)
    except OSError as error:
        _log.warning("cannot read %s: %s", url, error)
    return None


_ARTIFACT_URL = re.compile(r"artifact://(\d+)")
_AGENT_URL = re.compile(r"agent://([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*)")


def referenced_urls(text: str) -> list[str]:
    """artifact:// and agent:// URLs named in a text, each once, in order (Transcript.attachments' keys)."""
    seen: dict[str, None] = {}
    for match in _ARTIFACT_URL.finditer(text):
        seen.setdefault(f"artifact://{match.group(1)}", None)
    for match in _AGENT_URL.finditer(text):
        seen.setdefault(f"agent://{match.group(1).split('/')[0]}", None)
    return list(seen)


# What a page carries of subagent transcripts in all, by the size of their files (--artifacts budget;
# sitegen.transcript.attachments.TranscriptAllowance spends it). A transcript costs more to render than
# an output of its size (its entries are rendered as the session's are), so it is less than the 5 MB
# the outputs have: about 70 of the crowded 50 MB session's 1,734 (5 MB: 174, 0.15 CPU s more).
TRANSCRIPT_BYTES = 2_000_000


@dataclass(frozen=True, slots=True)
class Subagent:
    """The transcript of the subagent an agent:// URL names, from its own session file beside its output."""

    agent_id: str
    transcript: Transcript | None  # None when the file could not be read (problem says why) or was left out
    problem: str = ""
    # Why the page does not carry the transcript ("" when it does): "none" (--artifacts none) or "spent"
    # (past the page's allowance: sitegen.transcript.attachments.TranscriptAllowance), and the name and
    # size of its file, by which the page names it instead (and weighs its rendering when it carries it).
    left_out: str = ""
    file_name: str = ""
    file_size: int = 0


@dataclass(frozen=True, slots=True)
class Attached:
    """What an artifact:// or agent:// URL in a tool's output names, found in the session's artifacts."""

    url: str
    output: Output
    subagent: Subagent | None = None  # agent:// only, when the page embeds the subagent's transcript


@dataclass(slots=True)
class Totals:
    messages: int = 0
    user_messages: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    models: list[str] = field(default_factory=list)
    usage_known: bool = False  # whether any message recorded its usage (odek sessions record none)


@dataclass(slots=True)
class Transcript:
    """A whole session, any agent: nodes in file order, their tree, and the header facts."""

    family: str  # "pi" (pi, omp, xcsh) or "odek"
    source_path: Path
    session_id: str
    cwd: str
    title: str | None
    created_ms: int | None
    modified_ms: int | None
    nodes: list[Node]
    tree: SessionTree
    parent_session: str | None = None
    version: int | None = None
    system_prompt: str | None = None
    tools: list[Any] = field(default_factory=list)
    artifacts_dir: Path | None = None
    malformed_lines: int = 0
    truncated_tail: bool = False
    # Parts that are there but not shown, one line each (a refused blob, a line too long): the problems page.
    defects: list[str] = field(default_factory=list)
    # Entry ids were made up while migrating an old (v1) file: they differ between copies of it.
    made_up_ids: bool = False
    # Entries of a v2/v3 file that had no id (another tool wrote it), chained in file order.
    ids_chained: int = 0
    # Whose rules the model's view follows (sitegen.session.context): "omp 18" or "pi 0.73".
    context_rules: str = "pi 0.73"
    # Per entry id, data attributes the model's view follows those rules by (context.view_marks).
    context_marks: dict[str, dict[str, str]] = field(default_factory=dict)
    # odek extras: recent turn summaries, user-turn count, and its own audit log (raw JSON).
    buffer: list[str] = field(default_factory=list)
    turns: int | None = None
    audit: dict[str, Any] | None = None
    # omp 18's facts of the session and of the agent that ran it: (label, values), for the header's details.
    session_details: list[tuple[str, list[str]]] = field(default_factory=list)
    agent_details: list[tuple[str, list[str]]] = field(default_factory=list)
    # omp 18's idle recaps of the session (history.db's session_recaps): (Unix seconds or None, text).
    recaps: list[tuple[int | None, str]] = field(default_factory=list)
    # URL -> what it names, for the URLs tool outputs name that resolve: filled by
    # sitegen.transcript.attachments.resolve_attachments before a page is rendered (empty: nothing inlined).
    attachments: dict[str, Attached] = field(default_factory=dict)
    by_id: dict[str, Node] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.by_id:
            self.by_id = {node.id: node for node in self.nodes}

    @property
    def default_leaf(self) -> str | None:
        return self.tree.default_leaf

    def path_nodes(self, leaf_id: str | None = None) -> list[Node]:
        leaf = leaf_id if leaf_id is not None else self.default_leaf
        return [self.by_id[i] for i in self.tree.path_to(leaf)]

    @property
    def first_message(self) -> str:
        for text in self.texts_of("user"):
            return text
        return ""

    def texts_of(self, kind: str) -> Iterator[str]:
        """The text of each node of a kind, in file order, skipping nodes without text."""
        for node in self.nodes:
            if node.kind == kind:
                text = "\n".join(p.text for p in node.parts if p.kind == "text").strip()
                if text:
                    yield text

    @property
    def display_title(self) -> str:
        """The session's title everywhere it is named (sitegen.titles.session_title)."""
        return session_title(self.title, self.texts_of("user"), self.texts_of("assistant"), self.source_path.name)

    def totals(self, nodes: list[Node] | None = None) -> Totals:
        """Counts, tokens and cost over the given nodes (default: every node in the file)."""
        totals = Totals()
        seen_models: dict[str, None] = {}
        # Counted in locals, parts read directly (not node.tool_calls, a list per node): a page counts
        # its file and its branch, tens of thousands of entries each.
        messages = user_messages = tool_calls = 0
        tokens_in = tokens_out = cache_read = cache_write = 0
        cost = 0.0
        for node in self.nodes if nodes is None else nodes:
            kind = node.kind
            if kind == "user":
                messages += 1
                user_messages += 1
            elif kind == "assistant":
                messages += 1
                if node.model:
                    seen_models.setdefault(node.model, None)
            for part in node.parts:
                if part.call is not None:
                    tool_calls += 1
            usage = node.usage
            if usage is not None:  # Usage.add, in order (the cost is a float sum)
                tokens_in += usage.input
                tokens_out += usage.output
                cache_read += usage.cache_read
                cache_write += usage.cache_write
                cost += usage.cost
                totals.usage_known = True
        totals.messages, totals.user_messages, totals.tool_calls = messages, user_messages, tool_calls
        totals.usage = Usage(tokens_in, tokens_out, cache_read, cache_write, cost)
        totals.models = list(seen_models)
        return totals
