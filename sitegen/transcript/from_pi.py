"""Turn a loaded pi-family session into the neutral transcript model."""

from __future__ import annotations

from typing import Any

from sitegen.session.artifacts import artifacts_dir_for
from sitegen.session.blobs import is_blob_ref
from sitegen.session.context import model_of_change, view_marks
from sitegen.session.entries import Entry, entry_time_ms, iso_to_ms, json_text
from sitegen.session.migrate import header_version
from sitegen.session.session import Session
from sitegen.transcript.details import agent_details, session_details
from sitegen.transcript.model import Node, Part, ToolCall, ToolResult, Transcript, Usage, activity_times

__all__ = ["parts_of", "transcript_from_session", "usage_of"]

_EXECUTION_ROLES = {"bashExecution": "bash", "pythonExecution": "python", "jsExecution": "js"}
_MARKER_TYPES = {
    "model_change": "model_change",
    "thinking_level_change": "thinking_change",
    "mode_change": "mode_change",
    "ttsr_injection": "rule_injection",
    "label": "label",
    "session_init": "session_init",
    "session_info": "title",
    "title_change": "title",
    "custom": "custom",
    "service_tier_change": "notice",
    "credential_pin": "notice",
    "reset_boundary": "notice",
    "model_usage": "notice",
    "context_edit": "notice",
}


# Token counts past this are corrupt, not real (and would not fit the manifest's 64-bit integers).
_MAX_COUNT = 2**53


def _number(value: object) -> int:
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        return 0
    return int(min(max(value, 0), _MAX_COUNT))


def _cost(value: object) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        return 0.0
    return float(min(max(value, 0.0), 1e12))


def usage_of(raw: object) -> Usage | None:
    """pi's usage dict ({input, output, cacheRead, cacheWrite, cost: {total}}) as Usage."""
    if not isinstance(raw, dict):
        return None
    cost = raw.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else cost
    return Usage(
        input=_number(raw.get("input")),
        output=_number(raw.get("output")),
        cache_read=_number(raw.get("cacheRead")),
        cache_write=_number(raw.get("cacheWrite")),
        cost=float(min(max(total, 0.0), 1e12))
        if isinstance(total, int | float) and not isinstance(total, bool)
        else 0.0,
    )


def parts_of(content: object) -> list[Part]:
    """Message content (a string or a block list) as parts; unknown blocks become JSON text."""
    if isinstance(content, str):
        return [Part("text", text=content)]
    if not isinstance(content, list):
        return [] if content is None else [Part("other", text=json_text(content))]
    parts: list[Part] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(Part("other", text=json_text(block)))
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(Part("text", text=str(block.get("text") or "")))
        elif kind == "thinking":
            parts.append(Part("thinking", text=str(block.get("thinking") or "")))
        elif kind == "image":
            data = block.get("data")
            parts.append(
                Part(
                    "image",
                    mime=str(block.get("mimeType") or "image/png"),
                    data=data if isinstance(data, str) else "",
                )
            )
        elif kind == "toolCall":
            call = ToolCall(
                id=str(block.get("id") or ""),
                name=str(block.get("name") or "tool"),
                arguments=block.get("arguments"),
            )
            parts.append(Part("tool_call", call=call))
        elif "image_url" in block:
            url = block["image_url"]
            url = url.get("url") if isinstance(url, dict) else url
            if isinstance(url, str) and url.startswith("data:image/") and ";base64," in url:
                mime, _, data = url[5:].partition(";base64,")
                parts.append(Part("image", mime=mime, data=data))
            elif is_blob_ref(url):
                parts.append(Part("image", mime="image/png", data=str(url)))
            else:
                parts.append(Part("other", text=json_text(block)))
        else:
            parts.append(Part("other", text=json_text(block)))
    return parts


def _message_node(node: Node, message: dict[str, Any]) -> None:
    role = str(message.get("role") or "")
    node.role = role
    node.parts = parts_of(message.get("content"))
    # Who sent it (omp 18): "agent" marks a message the agent injected, not one the user typed.
    if message.get("attribution") is not None:
        node.meta["attribution"] = message["attribution"]
    if message.get("synthetic") is True:
        node.meta["synthetic"] = True
    if role == "user" or role == "developer":
        node.kind = "user" if role == "user" else "custom_message"
        if role == "developer":
            node.meta["customType"] = "developer"
    elif role == "assistant":
        node.kind = "assistant"
        provider, model = message.get("provider"), message.get("model")
        if isinstance(model, str) and model:
            node.model = f"{provider}/{model}" if isinstance(provider, str) and provider else model
        node.usage = usage_of(message.get("usage"))
        for key in ("stopReason", "errorMessage", "api"):
            if message.get(key) is not None:
                node.meta[key] = message[key]
    elif role == "toolResult":
        node.kind = "tool_result"
        details = message.get("details")
        node.result = ToolResult(
            node_id=node.id,
            call_id=str(message.get("toolCallId") or ""),
            tool_name=str(message.get("toolName") or ""),
            parts=node.parts,
            is_error=bool(message.get("isError")),
            details=details if isinstance(details, dict) else {},
        )
    elif role in _EXECUTION_ROLES:
        node.kind = "execution"
        node.meta["language"] = _EXECUTION_ROLES[role]
        for key in ("command", "code", "output", "exitCode", "cancelled", "truncated", "fullOutputPath"):
            if key in message:
                node.meta[key] = message[key]
        node.hidden = bool(message.get("excludeFromContext"))
        node.meta["excludeFromContext"] = node.hidden
    elif role in ("custom", "hookMessage", "fileMention"):
        node.kind = "custom_message"
        node.meta["customType"] = message.get("customType") or role
        node.hidden = message.get("display") is False
    elif role in ("branchSummary", "compactionSummary"):
        node.kind = "branch_summary" if role == "branchSummary" else "compaction"
        node.meta["summary"] = message.get("summary")
        node.meta["tokensBefore"] = message.get("tokensBefore")
    else:
        node.kind = "unknown"
        node.meta["raw"] = json_text(message)


# The type each meta key must have for the templates; files from other versions, or edited by
# hand, may hold anything there, and one such entry must not stop a page.
_TEXT_META = frozenset(
    {
        "thinkingLevel", "mode", "targetId", "label", "customType", "name", "title", "systemPrompt",
        "task", "summary", "shortSummary", "fromId", "firstKeptEntryId", "command", "code", "output",
        "stopReason", "errorMessage", "role", "fullOutputPath", "api", "method", "warning", "attribution",
    }
)  # fmt: skip
_COUNT_META = frozenset({"tokensBefore", "tokensAfter", "exitCode"})
_LIST_META = frozenset({"injectedRules", "tools"})


def _typed_meta(meta: dict[str, Any]) -> None:
    """Make each known meta value the type the templates expect, in place (None stays None)."""
    for key, value in meta.items():
        if value is None:
            continue
        if key in _TEXT_META and not isinstance(value, str):
            meta[key] = str(value) if isinstance(value, int | float) else json_text(value)
        elif key in _COUNT_META and (not isinstance(value, int) or isinstance(value, bool)):
            digits = value.strip().lstrip("-") if isinstance(value, str) else ""
            # Past 18 digits it is no count (and int() refuses a string of 4,300).
            meta[key] = int(value) if digits.isdigit() and len(digits) <= 18 else None
        elif key in _LIST_META and not isinstance(value, list):
            meta[key] = [value]


def node_of_entry(entry: Entry, index: int) -> Node:
    """One entry as a node; anything unrecognised becomes an "unknown" node carrying its JSON."""
    node = _node_of_entry(entry, index)
    _typed_meta(node.meta)
    return node


def _node_of_entry(entry: Entry, index: int) -> Node:
    kind = entry.get("type")
    if not isinstance(kind, str | None):  # {"type": []} would fail every lookup below
        kind = json_text(kind)
    parent = entry.get("parentId")
    node = Node(
        id=entry["id"],
        parent_id=parent if isinstance(parent, str) else None,
        index=index,
        time_ms=entry_time_ms(entry),
        kind="unknown",
    )
    node.meta["entryType"] = kind
    if kind == "message" and isinstance(entry.get("message"), dict):
        _message_node(node, entry["message"])
    elif kind == "custom_message":
        node.kind = "custom_message"
        node.parts = parts_of(entry.get("content"))
        node.hidden = entry.get("display") is False
        node.meta["customType"] = entry.get("customType")
        node.meta["details"] = entry.get("details")
        node.meta["attribution"] = entry.get("attribution")
    elif kind == "compaction":
        node.kind = "compaction"
        for key in (
            "summary",
            "shortSummary",
            "tokensBefore",
            "tokensAfter",
            "method",
            "warning",
            "firstKeptEntryId",
            "details",
            "fromExtension",
        ):
            if key in entry:
                node.meta[key] = entry[key]
    elif kind == "branch_summary":
        node.kind = "branch_summary"
        for key in ("summary", "fromId", "details", "fromExtension"):
            if key in entry:
                node.meta[key] = entry[key]
    elif kind in _MARKER_TYPES:
        node.kind = _MARKER_TYPES[kind]
        if kind == "model_change":
            node.model = model_of_change(entry) or ""
            node.meta["role"] = entry.get("role") or "default"
        if node.kind == "notice":
            node.meta["raw"] = json_text(entry)
        elif kind == "custom" and "data" in entry:
            # what an extension stored; the rest of the entry is already on the page
            node.meta["raw"] = json_text(entry["data"])
        for key in (
            "thinkingLevel",
            "mode",
            "data",
            "injectedRules",
            "targetId",
            "label",
            "customType",
            "name",
            "title",
            "systemPrompt",
            "task",
            "tools",
            "outputSchema",
        ):
            if key in entry:
                node.meta[key] = entry[key]
    else:
        node.meta["raw"] = json_text(entry)
    return node


# How far up the tree a result looks for its call when several calls share its id.
_PAIRING_REACH = 10_000


def _pair_results(nodes: list[Node], calls: dict[str, list[tuple[Node, ToolCall]]]) -> None:
    """Give each call its result: by id, and where ids repeat, the call on the result's own path."""
    by_id = {node.id: node for node in nodes}
    for node in nodes:
        result = node.result
        if result is None or result.call_id not in calls:
            continue
        candidates = calls[result.call_id]
        if len(candidates) == 1:
            candidates[0][1].result = result
            continue
        # Some providers number calls per turn ("call_0"), so the same id appears on many
        # branches: the call is the nearest ancestor holding it, else the latest one before.
        holders = {holder.id: call for holder, call in candidates}
        ancestor, reach = by_id.get(node.parent_id or ""), _PAIRING_REACH
        while ancestor is not None and ancestor.id not in holders and reach:
            ancestor, reach = by_id.get(ancestor.parent_id or ""), reach - 1
        if ancestor is not None and ancestor.id in holders:
            holders[ancestor.id].result = result
            continue
        earlier = [call for holder, call in candidates if holder.index < node.index]
        if earlier:
            earlier[-1].result = result


def transcript_from_session(session: Session) -> Transcript:
    """Build the transcript: one node per entry, tool results paired to calls by id."""
    nodes: list[Node] = []
    calls: dict[str, list[tuple[Node, ToolCall]]] = {}
    system_prompt: str | None = None
    tools: list[Any] = []
    agent: list[tuple[str, list[str]]] | None = None
    for index, entry in enumerate(session.entries):
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or session.by_id.get(entry_id) is not entry:  # no id, or a duplicate
            continue
        node = node_of_entry(entry, index)
        nodes.append(node)
        for call in node.tool_calls:
            if call.id:
                calls.setdefault(call.id, []).append((node, call))
        if node.kind == "session_init":
            agent = agent_details(entry) if agent is None else agent
            prompt = node.meta.get("systemPrompt")
            system_prompt = prompt if isinstance(prompt, str) else system_prompt
            listed = node.meta.get("tools")
            tools = listed if isinstance(listed, list) else tools
    _pair_results(nodes, calls)
    header = session.header
    # The entries' own times, or the header's when it is earlier (the session opened before its first
    # entry); a forked or resumed file's header is written after the entries it copies.
    times = activity_times(nodes)
    created = iso_to_ms(header.get("timestamp"))
    parent_session = header.get("parentSession") or header.get("branchedFrom")
    path = session.path
    return Transcript(
        family="pi",
        source_path=path,
        session_id=session.id,
        cwd=session.cwd,
        title=session.title,
        created_ms=min([*times, created]) if created is not None else min(times, default=None),
        modified_ms=max(times) if times else created,
        nodes=nodes,
        tree=session.tree,
        parent_session=parent_session if isinstance(parent_session, str) else None,
        version=header_version(header),
        system_prompt=system_prompt,
        tools=tools,
        artifacts_dir=artifacts_dir_for(path),
        malformed_lines=session.raw.malformed_lines,
        truncated_tail=session.raw.truncated_tail,
        made_up_ids=session.migration.ids_added + session.migration.ids_chained > 0,
        ids_chained=session.migration.ids_chained,
        context_rules=session.context_rules,
        context_marks=view_marks(session.entries, session.by_id, session.context_rules),
        session_details=session_details(header, session.raw.title_slot, session.entries),
        agent_details=agent or [],
    )
