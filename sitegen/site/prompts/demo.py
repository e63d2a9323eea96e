"""The bundled demo's prompts as a developer typed them: the data a demo prompt history (history.db) is made of."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sitegen.resources import resource_dir
from sitegen.session.load import load_raw

__all__ = ["DemoPrompt", "demo_prompts"]


@dataclass(frozen=True, slots=True)
class DemoPrompt:
    """One prompt of the demo's pi-family sessions, where and when it was typed."""

    prompt: str
    created_ms: int  # Unix time in milliseconds (UTC)
    cwd: str
    session_id: str
    entry_id: str


def _millis(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def demo_prompts() -> list[DemoPrompt]:
    """Every user prompt of the demo's sessions, oldest first; a forked session's copied prompts count once
    (in the session they were typed in), and subagents' assignments are not prompts a person typed."""
    found: dict[str, DemoPrompt] = {}
    for path in sorted((resource_dir("demo") / "pi" / "sessions").glob("*/*.jsonl")):
        raw = load_raw(path)
        session_id, cwd = str(raw.header["id"]), str(raw.header.get("cwd") or "")
        for entry in raw.entries:
            message = entry.get("message")
            if entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            parts = [content] if isinstance(content, str) else content if isinstance(content, list) else []
            texts = [p if isinstance(p, str) else p.get("text") for p in parts if isinstance(p, str | dict)]
            prompt = "\n".join(t for t in texts if isinstance(t, str))
            entry_id = str(entry.get("id"))
            if prompt and entry_id not in found:
                stamp = _millis(str(entry["timestamp"]))
                found[entry_id] = DemoPrompt(prompt, stamp, cwd, session_id, entry_id)
    return sorted(found.values(), key=lambda p: (p.created_ms, p.entry_id))
