"""sitegen export --format md|json: a session as a Markdown transcript or as the page understood it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from sitegen.transcript.activity import call_durations
from sitegen.transcript.model import Node, ToolCall, Transcript

__all__ = ["EXPORT_FORMATS", "ModelContext", "json_document", "json_export", "markdown_export"]

EXPORT_FORMATS = ("html", "md", "json")


class ModelContext(Protocol):
    """What the agent's rules make of the context at the shown leaf (sitegen.session.context.SessionContext,
    which the CLI builds): the JSON export states it."""

    leaf_id: str | None
    messages: list[dict[str, Any]]
    thinking_level: str | None
    models: dict[str, str]
    injected_ttsr_rules: list[str]
    mode: str


# The argument a tool call is named by, in the order they are looked for.
_MAIN_ARGUMENTS = (
    "command",
    "cmd",
    "path",
    "file_path",
    "filePath",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
)
_BACKTICKS = re.compile(r"`+")
_ROLE_HEADS = {"user": "User", "assistant": "Assistant", "compaction": "Compaction", "branch_summary": "Branch summary"}


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def fence(text: str, language: str = "") -> str:
    """A fenced block session text cannot close: its fence is longer than any run of backticks in it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{language}\n{text}\n{marks}"


def _inline(text: str) -> str:
    """An inline code span that no backtick inside can end."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marks = "`" * (longest + 1)
    return f"{marks} {text} {marks}"


def _main_argument(call: ToolCall) -> str:
    arguments = call.arguments
    if isinstance(arguments, dict):
        for key in _MAIN_ARGUMENTS:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                return value
        return orjson.dumps(arguments, default=str).decode() if arguments else ""
    return str(arguments) if arguments else ""


def _text(node: Node, kind: str = "text") -> str:
    return "\n\n".join(part.text for part in node.parts if part.kind == kind and part.text.strip())


def _took(ms: int | None) -> str:
    return f" · took {ms / 1000:.1f} s" if ms is not None else ""


def _call_markdown(call: ToolCall, durations: dict[str, int]) -> list[str]:
    argument = _main_argument(call)
    result = call.result
    status = "" if result is None else (" · **failed**" if result.is_error else "")
    took = _took(durations.get(result.node_id)) if result is not None else ""
    head = f"**{call.name or 'tool'}**"
    lines = []
    if "\n" in argument:
        lines += [f"{head}{status}{took}", "", fence(argument)]
    else:
        lines.append(f"{head} {_inline(argument)}{status}{took}" if argument else f"{head}{status}{took}")
    if result is not None:
        output = "\n".join(part.text for part in result.parts if part.kind == "text")
        if output.strip():
            lines += ["", fence(output)]
    else:
        lines += ["", "_No result._"]
    return lines


def markdown_export(transcript: Transcript) -> str:
    """The shown branch as Markdown: prompts, answers, thinking as quotes, each tool call with its main
    argument and its output in a fence."""
    durations = call_durations(transcript)
    out = [f"# {transcript.display_title}", ""]
    facts = [f"session `{transcript.session_id}`"]
    if transcript.cwd:
        facts.append(f"in {_inline(transcript.cwd)}")
    started = _iso(transcript.created_ms)
    if started:
        facts.append(f"started {started}")
    out += [" · ".join(facts), ""]
    for node in transcript.path_nodes():
        if node.kind not in _ROLE_HEADS or node.hidden:
            continue
        when = _iso(node.time_ms)
        model = f" ({node.model})" if node.model else ""
        out += [f"## {_ROLE_HEADS[node.kind]}{model}" + (f" · {when}" if when else ""), ""]
        if node.kind in ("compaction", "branch_summary"):
            summary = node.meta.get("summary")
            out += [str(summary) if summary else "_No summary._", ""]
            continue
        for part in node.parts:
            if part.kind == "text" and part.text.strip():
                out += [part.text.strip(), ""]
            elif part.kind == "thinking" and part.text.strip():
                out += ["\n".join("> " + line for line in part.text.strip().splitlines()), ""]
            elif part.kind == "image":
                out += [f"_[image: {part.mime or 'image'}]_", ""]
            elif part.kind == "tool_call" and part.call is not None:
                out += [*_call_markdown(part.call, durations), ""]
    return "\n".join(out).rstrip() + "\n"


def _call_json(call: ToolCall) -> dict[str, Any]:
    result = call.result
    return {
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "result": None
        if result is None
        else {
            "entryId": result.node_id,
            "isError": result.is_error,
            "text": "\n".join(part.text for part in result.parts if part.kind == "text"),
        },
    }


def _entry_json(node: Node, durations: dict[str, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": node.id,
        "parentId": node.parent_id,
        "type": node.meta.get("entryType") or node.kind,
        "kind": node.kind,
        "role": node.role or None,
        "timestamp": _iso(node.time_ms),
        "text": _text(node),
    }
    thinking = _text(node, "thinking")
    if thinking:
        entry["thinking"] = thinking
    if node.model:
        entry["model"] = node.model
    if node.usage is not None:
        usage = node.usage
        entry["usage"] = {
            "input": usage.input,
            "output": usage.output,
            "cacheRead": usage.cache_read,
            "cacheWrite": usage.cache_write,
            "cost": usage.cost,
        }
    calls = node.tool_calls
    if calls:
        entry["toolCalls"] = [_call_json(call) for call in calls]
    if node.result is not None:
        entry["toolName"] = node.result.tool_name
        entry["toolCallId"] = node.result.call_id
        entry["isError"] = node.result.is_error
        if node.id in durations:
            entry["durationMs"] = durations[node.id]
    for key in ("summary", "firstKeptEntryId", "label", "targetId"):
        if key in node.meta:
            entry[key] = node.meta[key]
    return entry


def json_document(transcript: Transcript, context: ModelContext | None) -> dict[str, Any]:
    """The session as the page understood it: its header, every entry in file order, the shown leaf and
    its branch, and what the agent's rules make of the context there (pi-family sessions)."""
    durations = call_durations(transcript)
    leaf = transcript.default_leaf
    document: dict[str, Any] = {
        "session": {
            "id": transcript.session_id,
            "family": transcript.family,
            "version": transcript.version,
            "cwd": transcript.cwd,
            "title": transcript.display_title,
            "created": _iso(transcript.created_ms),
            "modified": _iso(transcript.modified_ms),
            "parentSession": transcript.parent_session,
            "systemPrompt": transcript.system_prompt,
            "tools": transcript.tools,
        },
        "entries": [_entry_json(node, durations) for node in transcript.nodes],
        "leaf": leaf,
        "branch": transcript.tree.path_to(leaf) if leaf is not None else [],
        "context": None,
    }
    if context is not None:
        document["context"] = {
            "leafId": context.leaf_id,
            "messages": len(context.messages),
            "thinkingLevel": context.thinking_level,
            "models": context.models,
            "injectedTtsrRules": context.injected_ttsr_rules,
            "mode": context.mode,
            "rule": "the model sees the branch from the root to the leaf; after a compaction, its summary and "
            "then the entries from its firstKeptEntryId on",
        }
    return document


def json_export(transcript: Transcript, context: ModelContext | None) -> str:
    document = json_document(transcript, context)
    try:
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str).decode() + "\n"
    except (orjson.JSONEncodeError, RecursionError):
        # Arguments nested deeper than orjson goes: the standard library, which has no such limit.
        return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"
