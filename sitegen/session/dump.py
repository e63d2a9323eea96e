"""The plain-text dump of what the model saw (seed 001 /dump), built from the session context."""

from __future__ import annotations

from typing import Any

from sitegen.session.context import LAST_ENTRY, SessionContext, build_session_context
from sitegen.session.entries import json_text
from sitegen.session.session import Session

__all__ = ["format_context_as_text", "format_session_as_text"]


def _tool_lines(tools: list[Any]) -> list[str]:
    lines: list[str] = []
    for tool in tools:
        if isinstance(tool, str):
            lines.append(f"- {tool}")
        elif isinstance(tool, dict):
            lines.append(f"- {tool.get('name', '?')}: {tool.get('description', '')}".rstrip(": "))
            parameters = tool.get("parameters") or tool.get("inputSchema")
            if parameters is not None:
                lines.extend("    " + line for line in json_text(parameters).splitlines())
    return lines


def _content_lines(content: Any) -> list[str]:
    """Text, thinking, images and tool calls of a message's content, in order."""
    if isinstance(content, str):
        return [content]
    lines: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            lines.append(str(block.get("text") or ""))
        elif kind == "thinking":
            lines.append(f"[thinking]\n{block.get('thinking') or ''}\n[/thinking]")
        elif kind == "image":
            lines.append(f"[image {block.get('mimeType', '')}]")
        elif kind == "toolCall":
            lines.append(f"[tool call {block.get('name')} id={block.get('id')}]\n{json_text(block.get('arguments'))}")
    return lines


def _message_section(message: dict[str, Any]) -> str | None:
    role = message.get("role")
    if role in ("bashExecution", "pythonExecution", "jsExecution"):
        if message.get("excludeFromContext"):
            return None
        language = {"bashExecution": "bash", "pythonExecution": "python", "jsExecution": "js"}[str(role)]
        command = message.get("command") or message.get("code") or ""
        status = "cancelled" if message.get("cancelled") else f"exit {message.get('exitCode')}"
        return f"## {language} (user ran)\n$ {command}\n{message.get('output') or ''}\n[{status}]"
    if role == "toolResult":
        flag = " (error)" if message.get("isError") else ""
        body = "\n".join(_content_lines(message.get("content")))
        return f"## Tool result: {message.get('toolName')} id={message.get('toolCallId')}{flag}\n{body}"
    if role == "branchSummary":
        return f"## Branch summary (from {message.get('fromId')})\n{message.get('summary') or ''}"
    if role == "compactionSummary":
        before = message.get("tokensBefore")
        return f"## Compaction summary ({before} tokens before)\n{message.get('summary') or ''}"
    if role in ("custom", "hookMessage", "fileMention", "developer"):
        kind = message.get("customType") or role
        return f"## {kind}\n" + "\n".join(_content_lines(message.get("content")))
    title = {"user": "User", "assistant": "Assistant"}.get(str(role), str(role))
    lines = _content_lines(message.get("content"))
    if role == "assistant" and message.get("errorMessage"):
        lines.append(f"[{message.get('stopReason', 'error')}: {message.get('errorMessage')}]")
    return f"## {title}\n" + "\n".join(lines) if lines or role in ("user", "assistant") else None


def format_context_as_text(
    messages: list[dict[str, Any]],
    *,
    system_prompt: str | None,
    models: dict[str, str],
    thinking_level: str | None,
    tools: list[Any],
) -> str:
    """The dump layout over context messages; empty when there are none."""
    if not messages:
        return ""
    sections: list[str] = []
    if system_prompt:
        sections.append(f"# System prompt\n{system_prompt}")
    model_text = ", ".join(f"{role}: {model}" for role, model in models.items()) or "unknown"
    level = "null" if thinking_level is None else thinking_level
    sections.append(f"# Model\n{model_text}\nThinking level: {level}")
    if tools:
        sections.append("# Tools\n" + "\n".join(_tool_lines(tools)))
    body = [s for s in (_message_section(m) for m in messages) if s is not None]
    sections.append("# Conversation\n\n" + "\n\n".join(body))
    return "\n\n".join(sections).rstrip() + "\n"


def format_session_as_text(session: Session, leaf_id: str | None = None) -> str:
    """The dump text of a pi-family session at a leaf (default: the last entry)."""
    context: SessionContext = build_session_context(
        session.entries, leaf_id if leaf_id is not None else LAST_ENTRY, session.by_id, session.context_rules
    )
    path = [session.by_id[i] for i in session.tree.path_to(context.leaf_id)] if context.leaf_id else []
    init = next((e for e in reversed(path) if e.get("type") == "session_init"), None)
    prompt = init.get("systemPrompt") if init is not None else None
    tools = init.get("tools") if init is not None else None
    return format_context_as_text(
        context.messages,
        system_prompt=prompt if isinstance(prompt, str) else None,
        models=context.models,
        thinking_level=context.thinking_level,
        tools=tools if isinstance(tools, list) else [],
    )
