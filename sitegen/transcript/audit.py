"""sitegen's own divergence audit, for any family: per user turn, novel resources touched after ingesting."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
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
# Files a shell command writes itself: `> file`, `>> file`, `tee [-a] file` (a heredoc's target too).
_WRITTEN = re.compile(r"(?:>>?|\btee\s+(?:-a\s+)?)\s*['\"]?([^\s'\";|&<>]+)")
# Tools and commands whose output lists files and folders.
_LISTING_TOOL = re.compile(r"ls|find|glob|list_files|list_dir|list_directory|tree", re.IGNORECASE)
_LISTING_COMMAND = re.compile(
    r"\s*(?:cd\s+\S+\s*(?:&&|;)\s*)?(?:ls|find|tree|fd|git\s+(?:status|ls-files|diff\s+--name-only)|rg\s+--files)\b"
)
# A command that starts by moving to a folder: "cd packages/app/src && ...".
_CD = re.compile(r"\s*cd\s+(\S+)")
# How an untrusted-content wrapper starts (sitegen.odek.framing.has_untrusted looks for it first).
_UNTRUSTED_TAG = "<untrusted_content_"
# This machine named without a scheme, as `curl localhost:3000/healthz` does.
_LOCAL_TARGET = re.compile(r"(?<![\w.-])(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::\d+)?(?![\w.-])")


@dataclass(slots=True)
class _Seen:
    """What the session itself brought up before a call: the texts of earlier calls and their results,
    where a path the agent created or listed appears (a reader would not call it unasked for)."""

    texts: list[str] = field(default_factory=list)
    # Calls that list files (ls, find, glob, git status): only their output counts as the agent's finds.
    # Any other output may be content from outside, whose paths are exactly what the audit is for.
    listing_calls: set[str] = field(default_factory=set)

    def add(self, text: str) -> None:
        if text:
            self.texts.append(text)

    def names(self, resource: str, scope: PathScope) -> bool:
        relative = scope.relative(resource)
        # "../utils/config.js" in an import names a project file by where the importing file is.
        tail = re.sub(r"^(?:\.\./)+", "", relative)
        wanted = {resource, relative, tail} - {""}
        return any(name in text for text in self.texts for name in wanted)


def _ordinary(resource: str, scope: PathScope, seen: _Seen, base: str) -> bool:
    """A path in the session's own working directory (relative ones read from `base`, the folder of the
    working directory the command moved to), or one the agent created or listed earlier in the session:
    not "a resource the user never mentioned" (the README states this rule)."""
    if "://" in resource or ("/" not in resource and not scope.inside(resource)):
        return False  # URLs and host names stay as they are
    if base and resource.startswith("../"):
        resolved = posixpath.normpath(posixpath.join(base, resource))
        if resolved != ".." and not resolved.startswith("../"):
            return True
    return scope.inside(resource) or seen.names(resource, scope)


def _in_named_folder(resource: str, text: str) -> bool:
    """Whether the user named a folder the path is in ("copy it to the .pi/agent/themes folder"); text is
    the user's, in lower case."""
    parts = resource.rstrip("/").split("/")[:-1]
    for end in range(len(parts), 0, -1):
        folder = "/".join(parts[:end]).lower()
        for name in (folder, folder.removeprefix("~/"), folder.lstrip("/")):
            if "/" in name and len(name) >= 6 and name in text:
                return True
    return False


def _command_folder(commands: list[str], scope: PathScope) -> str:
    """The folder of the working directory a command starts by moving to (`cd src && ...`), if any."""
    for command in commands:
        match = _CD.match(command)
        if match:
            target = match.group(1).strip("'\"")
            if scope.inside(target) or (scope.cwd and target.rstrip("/") == scope.cwd):
                return scope.relative(target) if target.rstrip("/") != scope.cwd else ""
    return ""


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
    return _external_sources(call, _texts(call.arguments, _COMMAND_KEYS))


def _external_sources(call: ToolCall, commands: list[str]) -> list[str] | None:
    """external_sources, given the call's commands (_texts of its _COMMAND_KEYS)."""
    if call.result is not None and call.result.is_error:
        return None
    if _WEB_TOOL.search(call.name):
        texts = _texts(call.arguments, _URL_KEYS) or commands
    else:
        texts = [command for command in commands if _DOWNLOADER.search(command)]
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
        # The wrapper's tag holds no line break, so it is inside one part: most outputs are not joined.
        for part in result.parts:
            if part.kind == "text" and _UNTRUSTED_TAG in part.text:
                break
        else:
            return []
        text = "\n".join(part.text for part in result.parts if part.kind == "text")
        if not has_untrusted(text):
            return []
        names = parse_tool_output(text).untrusted_sources
    return [name or "untrusted content" for name in names] or ["untrusted content"]


def _add(target: list[str], items: list[str]) -> None:
    for item in items:
        if item not in target:
            target.append(item)


def analyse_transcript(transcript: Transcript, path: Sequence[Node] | None = None) -> list[TurnAudit]:
    """Audit every user turn on the default path (`path`, its nodes, when the caller has them already);
    a turn is flagged when, after ingesting external content, a tool call touched resources the user
    never mentioned."""
    turns: list[TurnAudit] = []
    current: TurnAudit | None = None
    calls = (part.call.arguments for node in transcript.nodes for part in node.parts if part.call is not None)
    scope = PathScope.of(transcript.cwd or "", calls)
    seen = _Seen()
    user_lower = ""  # the turn's prompt in lower case, which each of its calls is compared with
    for node in transcript.path_nodes() if path is None else path:
        if node.kind == "user":
            text = "\n".join(part.text for part in node.parts if part.kind == "text")
            current = TurnAudit(turn=len(turns) + 1, user_node_id=node.id, user_text=text)
            user_lower = text.lower()
            turns.append(current)
        elif current is None:
            _remember(node, seen)
            continue
        elif node.kind == "assistant":
            _audit_calls(current, user_lower, node, scope, seen)
        elif node.kind == "tool_result":
            sources = _untrusted_sources(node)
            if sources:
                current.ingested_external = True
                _add(current.ingest_sources, sources)
            _remember(node, seen)
    for turn in turns:
        turn.flagged = turn.ingested_external and bool(turn.suspicious_resources)
    return turns


def _remember(node: Node, seen: _Seen) -> None:
    """A listing's output (ls, find, git status): the paths it lists are the agent's own finds from then
    on, unless it carries untrusted content."""
    result = node.result
    if result is not None and result.call_id in seen.listing_calls and not _untrusted_sources(node):
        seen.add("\n".join(part.text for part in result.parts if part.kind == "text"))


def _lists_files(call: ToolCall, commands: list[str]) -> bool:
    if _LISTING_TOOL.fullmatch(call.name):
        return True
    return any(_LISTING_COMMAND.match(command) for command in commands)


def _audit_calls(turn: TurnAudit, user_lower: str, node: Node, scope: PathScope, seen: _Seen) -> None:
    # Calls made in one message run together: content a sibling fetches cannot have steered them.
    ingested_before = turn.ingested_external
    for call in node.tool_calls:
        turn.tool_calls.append(call.name)
        touched = call_resources(call.arguments, scope)
        commands = _texts(call.arguments, _COMMAND_KEYS)
        if _lists_files(call, commands):
            seen.listing_calls.add(call.id)
        # A file the command itself writes is the agent's own (a scratch script in /tmp).
        if commands:
            seen.add("\n".join(_WRITTEN.findall("\n".join(commands))))
        base = _command_folder(commands, scope)
        novel = [
            r
            for r in novel_resources(user_lower, touched, scope, lowered=True)
            if not _ordinary(r, scope, seen, base) and not _in_named_folder(r, user_lower)
        ]
        _add(turn.novel_resources, novel)
        if ingested_before and novel:
            _add(turn.suspicious_resources, novel)
            if turn.first_suspicious_node_id is None:
                turn.first_suspicious_node_id = node.id
                turn.first_suspicious_call_id = call.id
        # What this call named (a file it wrote, a folder it listed) is the agent's own from the next call on.
        seen.add("\n".join(touched))
        sources = _external_sources(call, commands)
        if sources is not None:
            turn.ingested_external = True
            _add(turn.ingest_sources, sources)
