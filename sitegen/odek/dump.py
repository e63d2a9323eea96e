"""The plain-text dump of an odek session, in the same layout as the pi-family dump."""

from __future__ import annotations

from pathlib import Path

from sitegen.odek.store import load_odek_file
from sitegen.session.dump import format_context_as_text

__all__ = ["format_odek_as_text"]


def format_odek_as_text(path: Path) -> str:
    """odek's messages as pi-style context messages, then the shared text layout."""
    session = load_odek_file(path)
    system = next((m.get("content") for m in session.messages if m.get("role") == "system"), None)
    messages = []
    for message in session.messages:
        role = message.get("role")
        content = message.get("content") if isinstance(message.get("content"), str) else ""
        if role == "user":
            messages.append({"role": "user", "content": content})
        elif role == "assistant":
            blocks: list[dict[str, object]] = []
            reasoning = message.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                blocks.append({"type": "thinking", "thinking": reasoning})
            if content:
                blocks.append({"type": "text", "text": content})
            calls = message.get("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict):
                    nested = call.get("function")
                    function = nested if isinstance(nested, dict) else call
                    blocks.append(
                        {
                            "type": "toolCall",
                            "id": call.get("id"),
                            "name": function.get("name"),
                            "arguments": function.get("arguments"),
                        }
                    )
            messages.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            messages.append(
                {
                    "role": "toolResult",
                    "toolCallId": message.get("tool_call_id"),
                    "toolName": message.get("name"),
                    "content": [{"type": "text", "text": content}],
                }
            )
    return format_context_as_text(
        messages,
        system_prompt=system if isinstance(system, str) else None,
        models={"default": session.model} if session.model else {},
        thinking_level="off",
        tools=[],
    )
