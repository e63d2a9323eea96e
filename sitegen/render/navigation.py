"""What the page's navigation says: a row per step (a call and its result are one), branches, kept-from names."""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.render.base.text import html_escape
from sitegen.titles import TITLE_CHARS, clip, first_line_of, is_file_tool, snippet, tool_subject
from sitegen.transcript.model import Node, ToolCall, Transcript

__all__ = [
    "MAX_TREE_INDENT",
    "MESSAGE_ENTRY_TYPES",
    "ROLE_NAMES",
    "BranchLink",
    "TreeRow",
    "branch_links",
    "display_order",
    "entry_name",
    "path_html",
    "tree_rows",
    "tree_rows_html",
]

# Tree rows indent one step per branch point, up to this many steps (CSS has a class per step).
MAX_TREE_INDENT = 24
# Entries that reach the model as messages (build_session_context passes these through).
MESSAGE_ENTRY_TYPES = frozenset({"message", "custom_message", "branch_summary"})
# How an entry's role is named in a line ("User: “…”").
ROLE_NAMES = {
    "user": "User",
    "assistant": "Assistant",
    "tool_result": "Tool result",
    "execution": "Command",
    "custom_message": "Message",
    "compaction": "Compaction",
    "branch_summary": "Branch summary",
}
# Kinds no branch of entry_name names but its last: a row says their type.
_PLAIN_KINDS = frozenset({"custom", "notice", "unknown"})
_MARKER_TEXT = {
    "model_change": "model",
    "thinking_change": "thinking",
    "mode_change": "mode",
}


@dataclass(slots=True)
class TreeRow:
    """One row of the tree: what happened at an entry, in a line."""

    id: str
    indent: int
    kind: str  # the node's kind, or "tool" for a call shown with its result
    text: str
    tool: str = ""  # the tool's name, for a tool row or a user's command
    label: str | None = None
    on_path: bool = False
    leaf: bool = False
    forks: int = 0  # children, where the conversation forks
    failed: bool = False
    hidden: bool = False  # a message not shown by default (display: false)


@dataclass(slots=True)
class BranchLink:
    """A leaf of the tree, named by its last prompt: where its branch starts and when it ends."""

    number: int
    leaf: str
    start: str  # the first entry of the branch after its fork (the root for the first branch)
    prompt: str
    time_ms: int | None
    on_path: bool


def display_order(transcript: Transcript, only: list[str] | None = None) -> list[tuple[str, int]]:
    """Depth-first order (so every root-to-leaf path reads top to bottom), indenting at branch points."""
    tree = transcript.tree
    if only is not None:
        return [(entry_id, 0) for entry_id in only]
    result: list[tuple[str, int]] = []
    append = result.append
    children = tree.children
    stack = [(root, 1 if len(tree.roots) > 1 else 0) for root in reversed(tree.roots)]
    while stack:
        entry_id, indent = stack.pop()
        append((entry_id, indent))
        kids = children[entry_id]
        # Down a chain without pushing: most entries have one child (a 50 MB session's order took 0.1 s).
        while len(kids) == 1:
            entry_id = kids[0]
            append((entry_id, indent))
            kids = children[entry_id]
        if kids:
            stack.extend([(kid, indent + 1) for kid in reversed(kids)])
    return result


def _text_of(node: Node) -> str:
    return "\n".join(part.text for part in node.parts if part.kind == "text")


def _call_failed(call: ToolCall) -> bool:
    result = call.result
    if result is None:
        return False
    exit_code = result.details.get("exitCode")
    return result.is_error or (isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0)


def entry_name(node: Node, cwd: str = "") -> str:
    """An entry in a line of plain text, the way its tree row names it (without the tool's name)."""
    if node.kind in _PLAIN_KINDS:
        return str(node.meta.get("customType") or node.meta.get("entryType") or node.kind)
    if node.kind == "tool_result" and node.result is not None:
        return snippet(_text_of(node)) or "(no output)"
    if node.kind in ("user", "assistant", "custom_message"):
        text = snippet(_text_of(node))
        if text:
            return text
        if any(part.kind == "image" for part in node.parts):
            return "(image)"
        if node.meta.get("errorMessage"):
            return f"{node.meta.get('stopReason') or 'error'}: {clip(str(node.meta['errorMessage']), TITLE_CHARS)}"
        thinking = " ".join(part.text for part in node.parts if part.kind == "thinking")
        if thinking.strip():
            return "thinking: " + snippet(thinking, TITLE_CHARS - 10)
        calls = node.tool_calls
        if calls:
            return tool_subject(calls[0].name, calls[0].arguments, cwd)
        return "(empty message)"
    if node.kind == "execution":
        return first_line_of(str(node.meta.get("command") or node.meta.get("code") or "")) or "(empty command)"
    if node.kind == "compaction":
        return "Compaction: " + (snippet(str(node.meta.get("shortSummary") or node.meta.get("summary") or "")) or "…")
    if node.kind == "branch_summary":
        return "Branch summary: " + (snippet(str(node.meta.get("summary") or "")) or "…")
    if node.kind in _MARKER_TEXT:
        value = (
            node.model
            if node.kind == "model_change"
            else node.meta.get("thinkingLevel" if node.kind == "thinking_change" else "mode")
        )
        return f"{_MARKER_TEXT[node.kind]} → {value or '?'}"
    if node.kind == "label":
        return f"label: {node.meta.get('label') or '(cleared)'}"
    if node.kind == "title":
        return f"title: {node.meta.get('name') or node.meta.get('title') or ''}"
    if node.kind == "rule_injection":
        rules = node.meta.get("injectedRules") or []
        return "rules: " + clip(", ".join(str(rule) for rule in rules), TITLE_CHARS)
    if node.kind == "session_init":
        return "session init" + (f": {snippet(str(node.meta['task']))}" if node.meta.get("task") else "")
    return str(node.meta.get("customType") or node.meta.get("entryType") or node.kind)


def _row(
    transcript: Transcript, node: Node, call_of_result: dict[str, ToolCall]
) -> tuple[str, str, str, bool, bool] | None:
    """The row an entry gets, as (kind, tool, text, failed, hidden); None for an assistant message that
    only calls tools (its calls have rows)."""
    call = call_of_result.get(node.id)
    if call is not None:
        return (
            "tool",
            call.name,
            tool_subject(call.name, call.arguments, transcript.cwd),
            _call_failed(call),
            node.hidden,
        )
    kind = node.kind
    if kind in _PLAIN_KINDS:  # most entries of a long session (extension state): named by their type
        return kind, "", entry_name(node), False, node.hidden
    cwd = transcript.cwd
    tool, failed = "", False
    if kind == "assistant":
        calls = node.tool_calls
        # text.strip() without copying the text: whether it holds more than whitespace.
        text_parts = any(
            part.kind in ("text", "image") and ((part.text and not part.text.isspace()) or part.data)
            for part in node.parts
        )
        if calls and not text_parts and not node.meta.get("errorMessage"):
            unanswered = [c for c in calls if c.result is None]
            if not unanswered:
                return None
            # A call that got no result has no row of its own: this one names it.
            first = unanswered[0]
            return "tool", first.name, tool_subject(first.name, first.arguments, cwd), False, node.hidden
        failed = bool(node.meta.get("errorMessage"))
    elif kind == "tool_result" and node.result is not None:
        tool, failed = node.result.tool_name, node.result.is_error
    elif kind == "execution":
        tool = str(node.meta.get("language") or "bash")
        exit_code = node.meta.get("exitCode")
        failed = isinstance(exit_code, int) and exit_code != 0
    return kind, tool, entry_name(node, cwd), failed, node.hidden


def tree_rows(transcript: Transcript, order: list[tuple[str, int]], on_path: set[str]) -> list[TreeRow]:
    """A row per step of the conversation, in display order; an entry whose row is dropped (a tools-only
    assistant message) passes a fork it holds to the next row, so every fork stays marked."""
    tree = transcript.tree
    children, labels, by_id = tree.children, tree.labels, transcript.by_id
    call_of_result = {
        call.result.node_id: call
        for node in transcript.nodes
        for part in node.parts  # not node.tool_calls, which makes a list per node
        if (call := part.call) is not None and call.result is not None
    }
    rows: list[TreeRow] = []
    append = rows.append
    for entry_id, indent in order:
        node = by_id[entry_id]
        kids = children.get(entry_id) or ()
        fields = _row(transcript, node, call_of_result)
        if fields is None:
            if len(kids) < 2:
                continue
            first = node.tool_calls[0]
            fields = "tool", first.name, tool_subject(first.name, first.arguments, transcript.cwd), False, False
        kind, tool, text, failed, hidden = fields
        forks = len(kids) if len(kids) > 1 else 0
        label = labels.get(entry_id)
        indent = min(indent, MAX_TREE_INDENT)
        append(TreeRow(entry_id, indent, kind, text, tool, label, entry_id in on_path, not kids, forks, failed, hidden))
    return rows


def branch_links(transcript: Transcript, order: list[tuple[str, int]], on_path: set[str]) -> list[BranchLink]:
    """One link per leaf, in display order: its last prompt, its time and where its branch starts."""
    tree = transcript.tree
    by_id, parents, children = transcript.by_id, tree.parent, tree.children
    # The nearest user entry at or above each entry, and above each user entry the one before it: a
    # leaf's prompt is the first of its chain that says something (an image alone does not). Only the
    # leaves' chains are read, so a long session's prompts are not all made into lines.
    user_at: dict[str, str | None] = {}
    user_before: dict[str, str | None] = {}
    # Each user entry's answer once: many leaves under a long run of wordless prompts would each walk it.
    said: dict[str, str] = {}
    start: dict[str, str] = {}
    links: list[BranchLink] = []
    # Display order is depth first, so a parent is always seen before its children.
    for entry_id, _ in order:
        node = by_id[entry_id]
        parent = parents.get(entry_id)
        above = user_at.get(parent) if parent is not None else None
        if node.kind == "user":
            user_before[entry_id] = above
            above = entry_id
        user_at[entry_id] = above
        siblings = children.get(parent, ()) if parent is not None else tree.roots
        start[entry_id] = entry_id if parent is None or len(siblings) > 1 else start.get(parent, entry_id)
        if not children.get(entry_id):
            prompt = _said_at(above, said, user_before, by_id)
            links.append(
                BranchLink(
                    number=len(links) + 1,
                    leaf=entry_id,
                    start=start[entry_id],
                    prompt=prompt or entry_name(node, transcript.cwd),
                    time_ms=node.time_ms,
                    on_path=entry_id in on_path,
                )
            )
    return links


def _said_at(user: str | None, said: dict[str, str], user_before: dict[str, str | None], by_id: dict[str, Node]) -> str:
    """The prompt of the first user entry at or above `user` that says something ("" for none),
    remembered in `said` for every user entry the walk passed."""
    passed: list[str] = []
    prompt = ""
    while user is not None:
        if user in said:
            prompt = said[user]
            break
        passed.append(user)
        prompt = snippet(_text_of(by_id[user]))
        if prompt:
            break
        user = user_before[user]
    for entry_id in passed:
        said[entry_id] = prompt
    return prompt


def path_html(path: str, full: str = "") -> str:
    """A path whose folders give way before its file name when the row is short: the page's CSS
    (.mid) ellipsises the folders in the middle; the whole path (`full`, else `path`) on hover."""
    folders, slash, name = path.rpartition("/")
    if not slash or not name or " " in path:
        return html_escape(path)
    return (
        f'<span class="mid" title="{html_escape(full or path)}"><span class="pd">{html_escape(folders + slash)}'
        f'</span><span class="pf">{html_escape(name)}</span></span>'
    )


def tree_rows_html(rows: list[TreeRow]) -> str:
    """The tree's rows as list items, a line each: built in Python, as a long page has tens of
    thousands of them and a template macro call per row was a tenth of its writing time."""
    out: list[str] = []
    append = out.append
    # Rows share a few dozen class lists, a handful of tools and many texts (an extension entry's type,
    # a command run again): each is made once per call.
    class_lists: dict[tuple[str, int, bool, bool, bool, bool, bool, bool], str] = {}
    tools: dict[str, tuple[str, bool]] = {}
    texts: dict[tuple[str, bool], str] = {}
    for r in rows:
        key = (r.kind, r.indent, r.on_path, r.leaf, bool(r.forks), r.failed, bool(r.label), r.hidden)
        classes = class_lists.get(key)
        if classes is None:
            classes = class_lists[key] = _row_classes(r)
        row_id = html_escape(r.id)
        tool, file_tool = "", False
        if r.tool:
            named = tools.get(r.tool)
            if named is None:
                named = tools[r.tool] = (f'<span class="t">{html_escape(r.tool)}</span> ', is_file_tool(r.tool))
            tool, file_tool = named
        text = texts.get((r.text, file_tool))
        if text is None:
            text = texts[r.text, file_tool] = path_html(r.text) if file_tool else html_escape(r.text)
        forks = f'<span class="forks" title="{r.forks} branches start here">{r.forks}</span>' if r.forks else ""
        label = f' <span class="badge label">{html_escape(r.label)}</span>' if r.label else ""
        append(
            f'<li class="{classes}" data-id="{row_id}"><a href="#entry-{row_id}">{tool}{text}</a>{forks}{label}</li>\n'
        )
    return "".join(out)


def _row_classes(r: TreeRow) -> str:
    classes = [f"kind-{html_escape(r.kind)}"]
    if r.indent:
        classes.append(f"i{r.indent}")
    classes.extend(
        name
        for name, present in (
            ("on-path", r.on_path),
            ("leaf", r.leaf),
            ("fork", r.forks),
            ("failed", r.failed),
            ("labelled", r.label),
            ("is-hidden", r.hidden),
        )
        if present
    )
    return " ".join(classes)
