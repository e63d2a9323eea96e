"""Turn an odek session (a flat message list, one branch) into the neutral transcript model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from sitegen.odek.audit import load_audit_log
from sitegen.odek.framing import parse_tool_output
from sitegen.odek.store import OdekStore, count_user_turns, ns_to_ms, parse_time_ns
from sitegen.session.entries import json_text
from sitegen.session.tree import SessionTree
from sitegen.transcript.model import Node, Part, ToolCall, ToolResult, Transcript

__all__ = ["load_odek_transcript", "parse_arguments", "tool_call_of", "transcript_from_odek"]

# tool_outcome values that mean the tool did not produce its normal result.
_FAILED_OUTCOMES = frozenset({"error", "failed", "failure", "denied", "blocked", "timeout", "cancelled"})


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def parse_arguments(raw: object) -> Any:
    """Arguments as a dict: odek stores a JSON string; an invalid or non-object one stays the string."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        return json_text(raw)
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    return parsed if isinstance(parsed, dict) else raw


def tool_call_of(raw: dict[str, Any]) -> ToolCall:
    """Either shape: {id, type, function: {name, arguments}} or the flat {id, name, arguments}."""
    function = raw.get("function")
    source = function if isinstance(function, dict) else raw
    return ToolCall(
        id=_str(raw.get("id")),
        name=_str(source.get("name")) or "tool",
        arguments=parse_arguments(source.get("arguments")),
    )


def _node_ids(messages: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """The message's own id when it has a fresh one, else m<index>; stable across builds."""
    used: set[str] = set()
    ids: list[str] = []
    for index, message in messages:
        own = message.get("id")
        candidate = own if isinstance(own, str) and own and own not in used else f"m{index}"
        suffix = 1
        while candidate in used:  # a message id that happens to read "m<n>"
            suffix += 1
            candidate = f"m{index}-{suffix}"
        used.add(candidate)
        ids.append(candidate)
    return ids


def _assistant(node: Node, message: dict[str, Any], model: str, calls: dict[str, ToolCall]) -> None:
    node.kind = "assistant"
    node.model = model
    reasoning = _str(message.get("reasoning_content"))
    if reasoning:
        node.parts.append(Part("thinking", text=reasoning))
    content = _str(message.get("content"))
    if content:
        node.parts.append(Part("text", text=content))
    raw_calls = message.get("tool_calls")
    for raw in raw_calls if isinstance(raw_calls, list) else []:
        if not isinstance(raw, dict):
            continue
        call = tool_call_of(raw)
        node.parts.append(Part("tool_call", call=call))
        if call.id:
            # Some providers reuse ids such as "call_0": a result pairs with the latest call so named.
            calls[call.id] = call


def _tool_result(node: Node, message: dict[str, Any], calls: dict[str, ToolCall]) -> None:
    node.kind = "tool_result"
    content = _str(message.get("content"))
    node.parts = [Part("text", text=content)]
    call_id = _str(message.get("tool_call_id"))
    call = calls.get(call_id) if call_id else None
    frame = parse_tool_output(content)
    details: dict[str, Any] = {}
    if frame.recognised:
        details["odekFrame"] = frame.to_json()
    outcome = _str(message.get("tool_outcome"))
    if outcome:
        details["toolOutcome"] = outcome
    name = _str(message.get("name")) or (call.name if call is not None else "") or (frame.tool_name or "")
    node.result = ToolResult(
        node_id=node.id,
        call_id=call_id,
        tool_name=name,
        parts=node.parts,
        is_error=outcome.lower() in _FAILED_OUTCOMES,
        details=details,
    )
    if call is not None and call.result is None:
        call.result = node.result


def transcript_from_odek(session: dict[str, Any], path: Path, audit: dict[str, Any] | None = None) -> Transcript:
    """One node per message on a single linear branch; tool results paired to calls by id."""
    raw_messages = session.get("messages")
    messages = [
        (index, message)
        for index, message in enumerate(raw_messages if isinstance(raw_messages, list) else [])
        if isinstance(message, dict)
    ]
    model = _str(session.get("model"))
    calls: dict[str, ToolCall] = {}
    nodes: list[Node] = []
    system_prompt: str | None = None
    parent: str | None = None
    for node_id, (index, message) in zip(_node_ids(messages), messages, strict=True):
        role = _str(message.get("role"))
        node = Node(id=node_id, parent_id=parent, index=index, time_ms=None, kind="unknown", role=role)
        for key, meta_key in (("turn_id", "turnId"), ("name", "name"), ("tool_outcome", "toolOutcome")):
            if _str(message.get(key)):
                node.meta[meta_key] = message[key]
        if role == "system" and system_prompt is None:
            node.kind = "session_init"
            system_prompt = _str(message.get("content"))
            node.meta.update(systemPrompt=system_prompt, model=model, sandbox=session.get("sandbox") is True)
        elif role == "system":
            # Later system messages are odek's own notices (a storage-trim marker, for one).
            node.kind = "notice"
            node.parts = [Part("text", text=_str(message.get("content")))]
        elif role == "user":
            node.kind = "user"
            node.parts = [Part("text", text=_str(message.get("content")))]
        elif role == "assistant":
            _assistant(node, message, model, calls)
        elif role == "tool":
            _tool_result(node, message, calls)
        else:
            node.meta["raw"] = json_text(message)
        nodes.append(node)
        parent = node.id
    session_id = _str(session.get("id")) or path.stem
    task = _str(session.get("task")).strip()
    buffer = session.get("buffer")
    return Transcript(
        family="odek",
        source_path=path,
        session_id=session_id,
        cwd="",
        title=task or None,
        created_ms=ns_to_ms(parse_time_ns(session.get("created_at"))),
        modified_ms=ns_to_ms(parse_time_ns(session.get("updated_at"))),
        nodes=nodes,
        tree=SessionTree.from_links((n.id, n.parent_id, None) for n in nodes),
        system_prompt=system_prompt,
        buffer=[b for b in buffer if isinstance(b, str)] if isinstance(buffer, list) else [],
        turns=count_user_turns(m for _, m in messages),
        audit=audit,
    )


def load_odek_transcript(store: OdekStore, session_id: str) -> Transcript:
    """Load one session of a store with its audit log, as a transcript."""
    session = store.load(session_id)
    audit = load_audit_log(store.dir, session.id)
    return transcript_from_odek(session.data, session.path, audit)
