"""sitegen's own divergence audit, for any family: per user turn, novel resources touched after ingesting."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sitegen.odek.framing import has_untrusted, parse_tool_output
from sitegen.transcript.model import Node, ToolCall, Transcript
from sitegen.transcript.resources import PathScope, call_resources, is_local_url, novel_resources, resources_in

__all__ = ["TurnAudit", "analyse_transcript", "external_sources"]

# Tool names that bring the web into the context: fetch, web_fetch, web_search, browser_*, ...
_WEB_TOOL = re.compile(r"fetch|web|browse|scrape|crawl|download|url|http", re.IGNORECASE)
# Shell commands that download, as separate words (not "curling" or "wget.py").
_DOWNLOADER = re.compile(r"(?<![\w./-])(curl|wget|aria2c|lynx|w3m|invoke-webrequest|iwr)(?![\w./-])", re.I)
_COMMAND_KEYS = frozenset({"command", "cmd", "script", "code"})
_URL_KEYS = frozenset({"url", "urls", "uri", "href", "link", "links"})
# This machine named without a scheme, as `curl localhost:3000/healthz` does.
_LOCAL_TARGET = re.compile(r"(?<![\w.-])(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::\d+)?(?![\w.-])")


@dataclass(slots=True)
class TurnAudit:
    """One user turn: what the agent called, what it touched that the user never named, and why."""

    turn: int  # 1-based, counting user nodes on the default path
    user_node_id: str
    user_text: str
    tool_calls: list[str] = field(default_factory=list)
    # What tool calls touched (URLs, hosts, paths; sitegen.transcript.resources) that the user never mentioned.
    novel_resources: list[str] = field(default_factory=list)
    ingested_external: bool = False
    ingest_sources: list[str] = field(default_factory=list)
    # The novel resources touched by calls made after external content came in.
    suspicious_resources: list[str] = field(default_factory=list)
    flagged: bool = False
    first_suspicious_node_id: str | None = None
    first_suspicious_call_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "userNodeId": self.user_node_id,
            "userText": self.user_text,
            "toolCalls": list(self.tool_calls),
            "novelResources": list(self.novel_resources),
            "ingestedExternal": self.ingested_external,
            "ingestSources": list(self.ingest_sources),
            "suspiciousResources": list(self.suspicious_resources),
            "flagged": self.flagged,
            "firstSuspiciousNodeId": self.first_suspicious_node_id,
            "firstSuspiciousCallId": self.first_suspicious_call_id,
        }


def _texts(arguments: object, keys: frozenset[str]) -> list[str]:
    """The strings under the given top-level keys of a call's arguments (the whole string when it is one)."""
    if isinstance(arguments, str):
        return [arguments]
    if not isinstance(arguments, dict):
        return []
    found: list[str] = []
    for key, value in arguments.items():
        if key.lower() in keys:
            items = value if isinstance(value, list) else [value]
            found += [item for item in items if isinstance(item, str)]
    return found


def external_sources(call: ToolCall) -> list[str] | None:
    """Where a call pulls outside content from (URLs, else the tool name); None when it does not, or only
    from this machine (curl localhost:3000 brings in nothing from outside)."""
    if call.result is not None and call.result.is_error:
        return None
    if _WEB_TOOL.search(call.name):
        texts = _texts(call.arguments, _URL_KEYS) or _texts(call.arguments, _COMMAND_KEYS)
    else:
        texts = [command for command in _texts(call.arguments, _COMMAND_KEYS) if _DOWNLOADER.search(command)]
        if not texts:
            return None
    urls = [r for text in texts for r in resources_in(text) if r.lower().startswith(("http://", "https://"))]
    outside = [url for url in urls if not is_local_url(url)]
    if not outside and (urls or any(_LOCAL_TARGET.search(text) for text in texts)):
        return None
    return outside or [call.name]


def _untrusted_sources(node: Node) -> list[str]:
    """Sources of untrusted wrappers in a tool result ("untrusted content" when unnamed)."""
    result = node.result
    if result is None:
        return []
    frame = result.details.get("odekFrame")
    if isinstance(frame, dict):
        if not frame.get("hasUntrusted"):
            return []
        sources = frame.get("untrustedSources")
        names = [s for s in sources if isinstance(s, str)] if isinstance(sources, list) else []
    else:
        text = "\n".join(part.text for part in result.parts if part.kind == "text")
        if not has_untrusted(text):
            return []
        names = parse_tool_output(text).untrusted_sources
    return [name or "untrusted content" for name in names] or ["untrusted content"]


def _add(target: list[str], items: list[str]) -> None:
    for item in items:
        if item not in target:
            target.append(item)


def analyse_transcript(transcript: Transcript) -> list[TurnAudit]:
    """Audit every user turn on the default path; a turn is flagged when, after ingesting
    external content, a tool call touched resources the user never mentioned."""
    turns: list[TurnAudit] = []
    current: TurnAudit | None = None
    calls = (call.arguments for node in transcript.nodes for call in node.tool_calls)
    scope = PathScope.of(transcript.cwd or "", calls)
    for node in transcript.path_nodes():
        if node.kind == "user":
            text = "\n".join(part.text for part in node.parts if part.kind == "text")
            current = TurnAudit(turn=len(turns) + 1, user_node_id=node.id, user_text=text)
            turns.append(current)
        elif current is None:
            continue
        elif node.kind == "assistant":
            _audit_calls(current, node, scope)
        elif node.kind == "tool_result":
            sources = _untrusted_sources(node)
            if sources:
                current.ingested_external = True
                _add(current.ingest_sources, sources)
    for turn in turns:
        turn.flagged = turn.ingested_external and bool(turn.suspicious_resources)
    return turns


def _audit_calls(turn: TurnAudit, node: Node, scope: PathScope) -> None:
    # Calls made in one message run together: content a sibling fetches cannot have steered them.
    ingested_before = turn.ingested_external
    for call in node.tool_calls:
        turn.tool_calls.append(call.name)
        novel = novel_resources(turn.user_text, call_resources(call.arguments, scope), scope)
        _add(turn.novel_resources, novel)
        if ingested_before and novel:
            _add(turn.suspicious_resources, novel)
            if turn.first_suspicious_node_id is None:
                turn.first_suspicious_node_id = node.id
                turn.first_suspicious_call_id = call.id
        sources = external_sources(call)
        if sources is not None:
            turn.ingested_external = True
            _add(turn.ingest_sources, sources)
