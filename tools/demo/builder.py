"""Build pi-family session files as the agents write them: entries, tool calls over a small file tree, usage."""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# Prices in dollars per million tokens: input, output, cache read, cache write.
PRICES = {
    "claude-sonnet-4-5": (3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": (1.0, 5.0, 0.10, 1.25),
    "claude-opus-4-5": (5.0, 25.0, 0.50, 6.25),
    "gpt-5.1-codex": (1.25, 10.0, 0.125, 0.0),
}
PROVIDERS = {"claude": ("anthropic", "anthropic-messages"), "gpt": ("openai", "openai-responses")}
# What the agent's system prompt and tool definitions weigh before the first message.
SYSTEM_TOKENS = 9_412
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def digest(*parts: object) -> bytes:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode()).digest()


def token_id(seed: str, length: int) -> str:
    raw = digest(seed)
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in (raw * 2)[:length])


def tokens(text: str) -> int:
    """About four characters a token, as the providers count English and code."""
    return max(1, len(text) // 4)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def pi_diff(old: str, new: str, context: int = 3) -> tuple[str, int]:
    """pi's edit diff: each line as sign, line number (4 wide) and text, '...' between hunks; and the
    first changed line."""
    a, b = old.split("\n"), new.split("\n")
    out: list[str] = []
    first = 0
    for n, group in enumerate(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)):
        if n:
            out.append("     ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f" {i + 1:>4} {a[i]}" for i in range(i1, i2)]
                continue
            first = first or j1 + 1
            out += [f"-{i + 1:>4} {a[i]}" for i in range(i1, i2)]
            out += [f"+{j + 1:>4} {b[j]}" for j in range(j1, j2)]
    return "\n".join(out), first


@dataclass
class Call:
    """One tool call and the result it got."""

    name: str
    arguments: dict[str, Any]
    output: str
    is_error: bool = False
    details: dict[str, Any] | None = None
    images: list[bytes] = field(default_factory=list)
    took: float = 1.2  # seconds until the result came back


class Repo:
    """The project's files as the agent sees them: reads return what edits and writes left."""

    def __init__(self, cwd: str, files: dict[str, str]) -> None:
        self.cwd = cwd
        self.files = dict(files)

    def read(self, path: str, took: float = 0.1) -> Call:
        return Call("read", {"path": path}, self.files[path], took=took)

    def write(self, path: str, content: str, took: float = 0.1) -> Call:
        self.files[path] = content
        size = len(content.encode())
        return Call(
            "write", {"path": path, "content": content}, f"Successfully wrote {size} bytes to {path}", took=took
        )

    def edit(self, path: str, old: str, new: str, took: float = 0.1) -> Call:
        before = self.files[path]
        if before.count(old) != 1:
            raise ValueError(f"edit of {path}: the old text occurs {before.count(old)} times")
        after = before.replace(old, new)
        self.files[path] = after
        diff, first = pi_diff(before, after)
        return Call(
            "edit",
            {"path": path, "oldText": old, "newText": new},
            f"Successfully replaced text in {path}.",
            details={"diff": diff, "firstChangedLine": first},
            took=took,
        )

    def failed_edit(self, path: str, old: str, new: str) -> Call:
        if old in self.files[path]:
            raise ValueError(f"failed_edit of {path}: the old text is there")
        text = (
            f"Could not find the exact text in {path}. The old text must match exactly including all "
            "whitespace and newlines."
        )
        return Call("edit", {"path": path, "oldText": old, "newText": new}, text, is_error=True, took=0.1)


def bash(command: str, output: str, code: int = 0, took: float = 1.5, details: dict[str, Any] | None = None) -> Call:
    """pi's bash tool: a non-zero exit is an error result that ends with the exit code."""
    if code:
        text = f"{output}\n\nCommand exited with code {code}" if output else f"Command exited with code {code}"
        return Call("bash", {"command": command}, text, is_error=True, details=details, took=took)
    return Call("bash", {"command": command}, output or "(no output)", details=details, took=took)


def long_bash(command: str, lines: list[str], shown: int, artifact: int, took: float) -> tuple[Call, str]:
    """A command whose output is cut to its last lines in the session, the whole kept as artifact://N."""
    whole = "\n".join(lines)
    start = len(lines) - shown + 1
    text = "\n".join(lines[-shown:]) + (
        f"\n\n[Showing lines {start}-{len(lines)} of {len(lines)}. Full output: artifact://{artifact}]"
    )
    details = {
        "truncation": {
            "truncated": True,
            "truncatedBy": "lines",
            "totalLines": len(lines),
            "totalBytes": len(whole.encode()),
            "outputLines": shown,
        },
        "artifactId": str(artifact),
    }
    return Call("bash", {"command": command}, text, details=details, took=took), whole + "\n"


class Session:
    """One session file: a header and entries in a tree, written as pi writes them."""

    def __init__(
        self,
        session_id: str,
        cwd: str,
        start: str,
        model: str,
        *,
        parent_session: str | None = None,
        title: str | None = None,
        omp: bool = False,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.now = datetime.fromisoformat(start).replace(tzinfo=UTC)
        self.started = self.now
        self.model = model
        self.omp = omp  # oh-my-pi writes "provider/model" model changes and a title slot
        self.title = title
        self.header: dict[str, Any] = {"type": "session", "version": 3, "id": session_id, "timestamp": iso(self.now)}
        self.header["cwd"] = cwd
        if parent_session:
            self.header["parentSession"] = parent_session
        self.entries: list[dict[str, Any]] = []
        self.leaf: str | None = None
        self.artifacts: dict[str, str | bytes] = {}  # file name in the artifacts folder -> content
        self.blobs: dict[str, bytes] = {}
        # Tokens in the context at each entry, and what the provider had cached after the last reply.
        self._context: dict[str | None, int] = {None: SYSTEM_TOKENS}
        self._cached: dict[str | None, int] = {None: 0}
        self._calls = 0

    # --- the clock and ids ---------------------------------------------------------------------

    def wait(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def _entry_id(self) -> str:
        return digest(self.id, len(self.entries)).hex()[:8]

    def _call_id(self) -> str:
        self._calls += 1
        seed = f"{self.id}:{self._calls}"
        if self.model.startswith("gpt"):
            return f"call_{token_id(seed, 24)}|fc_{digest(seed).hex()[:40]}"
        return f"toolu_01{token_id(seed, 22)}"

    # --- entries -------------------------------------------------------------------------------

    def _append(self, kind: str, fields: dict[str, Any], weight: int = 0) -> str:
        entry_id = self._entry_id()
        entry = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": iso(self.now), **fields}
        self._context[entry_id] = self._context[self.leaf] + weight
        self._cached[entry_id] = self._cached[self.leaf]
        self.entries.append(entry)
        self.leaf = entry_id
        return entry_id

    def copy_from(self, other: Session, upto: str) -> None:
        """The entries on `other`'s path to `upto`, ids and all, as /fork copies them."""
        by_id = {e["id"]: e for e in other.entries}
        path: list[dict[str, Any]] = []
        cursor: str | None = upto
        while cursor is not None:
            path.append(by_id[cursor])
            cursor = by_id[cursor]["parentId"]
        for entry in reversed(path):
            self.entries.append(json.loads(json.dumps(entry)))
            self._context[entry["id"]] = other._context[entry["id"]]
            self._cached[entry["id"]] = other._cached[entry["id"]]
        self.leaf = upto

    def model_change(self, model: str, after: float = 2.0) -> str:
        self.wait(after)
        self.model = model
        provider = PROVIDERS[model.split("-")[0]][0]
        if self.omp:
            return self._append("model_change", {"model": f"{provider}/{model}", "role": "default"})
        return self._append("model_change", {"provider": provider, "modelId": model})

    def thinking_level(self, level: str, after: float = 1.0) -> str:
        self.wait(after)
        return self._append("thinking_level_change", {"thinkingLevel": level})

    def name(self, name: str, after: float = 3.0) -> str:
        self.wait(after)
        return self._append("session_info", {"name": name})

    def label(self, target: str, label: str, after: float = 5.0) -> str:
        self.wait(after)
        return self._append("label", {"targetId": target, "label": label})

    def _message(self, message: dict[str, Any], weight: int) -> str:
        message["timestamp"] = ms(self.now)
        return self._append("message", {"message": message}, weight)

    def user(self, text: str, after: float = 30.0, images: list[bytes] | None = None) -> str:
        self.wait(after)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for image in images or []:
            content.append({"type": "image", "data": self._blob(image), "mimeType": "image/png"})
        return self._message({"role": "user", "content": content}, tokens(text) + 1_600 * len(images or []))

    def bash_execution(self, command: str, output: str, code: int = 0, after: float = 20.0) -> str:
        """A command the user ran with `!`; it goes into the context like a message."""
        self.wait(after)
        message = {
            "role": "bashExecution",
            "command": command,
            "output": output,
            "exitCode": code,
            "cancelled": False,
            "truncated": False,
        }
        return self._message(message, tokens(command + output))

    def _blob(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        self.blobs[sha] = data
        return f"blob:sha256:{sha}"

    def _usage(self, output_tokens: int) -> dict[str, Any]:
        context, cached = self._context[self.leaf], self._cached[self.leaf]
        fresh = max(context - cached, 0)
        small = 3 + digest(self.id, len(self.entries))[0] % 9
        if self.model.startswith("gpt"):  # no cache writes: what is not cached is plain input
            usage = {"input": fresh + small, "output": output_tokens, "cacheRead": cached, "cacheWrite": 0}
        else:
            usage = {"input": small, "output": output_tokens, "cacheRead": cached, "cacheWrite": fresh}
        usage["totalTokens"] = sum(usage.values())
        rates = PRICES[self.model]
        parts = [
            usage[k] * rate / 1e6 for k, rate in zip(("input", "output", "cacheRead", "cacheWrite"), rates, strict=True)
        ]
        cost = dict(zip(("input", "output", "cacheRead", "cacheWrite"), (round(p, 8) for p in parts), strict=True))
        cost["total"] = round(sum(parts), 8)
        usage["cost"] = cost
        return usage

    def assistant(
        self,
        text: str | None = None,
        *,
        thinking: str | None = None,
        calls: list[Call] | None = None,
        after: float = 8.0,
        stop: str | None = None,
        error: str | None = None,
    ) -> str:
        """A reply, then each tool call's result in order."""
        self.wait(after)
        provider, api = PROVIDERS[self.model.split("-")[0]]
        content: list[dict[str, Any]] = []
        written = ""
        if thinking:
            block: dict[str, Any] = {"type": "thinking", "thinking": thinking}
            if provider == "anthropic":
                block["thinkingSignature"] = base64.b64encode(digest(self.id, thinking) * 6).decode()
            content.append(block)
            written += thinking
        if text:
            content.append({"type": "text", "text": text})
            written += text
        pending: list[tuple[str, Call]] = []
        for call in calls or []:
            call_id = self._call_id()
            content.append({"type": "toolCall", "id": call_id, "name": call.name, "arguments": call.arguments})
            written += json.dumps(call.arguments)
            pending.append((call_id, call))
        out = tokens(written) + 12
        message: dict[str, Any] = {"role": "assistant", "content": content, "api": api, "provider": provider}
        message |= {"model": self.model, "usage": self._usage(out)}
        message["stopReason"] = stop or ("toolUse" if pending else "stop")
        if error:
            message["errorMessage"] = error
        reply = self._message(message, out)
        self._cached[reply] = self._context[reply]
        for call_id, call in pending:
            self.wait(call.took)
            result: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id, "toolName": call.name}
            blocks: list[dict[str, Any]] = [{"type": "text", "text": call.output}]
            blocks += [{"type": "image", "data": self._blob(i), "mimeType": "image/png"} for i in call.images]
            result["content"] = blocks
            if call.details is not None:
                result["details"] = call.details
            result["isError"] = call.is_error
            self._message(result, tokens(call.output) + 1_600 * len(call.images))
        return reply

    def compaction(self, summary: str, first_kept: str, read: list[str], modified: list[str], after: float) -> str:
        """Replace the context before `first_kept` by a summary (what /compact or the auto-compaction writes)."""
        self.wait(after)
        before = self._context[self.leaf]
        fields = {
            "summary": summary,
            "firstKeptEntryId": first_kept,
            "tokensBefore": before,
            "details": {"readFiles": read, "modifiedFiles": modified},
        }
        entry = self._append("compaction", fields)
        kept = before - self._context[self._parent(first_kept)]
        self._context[entry] = SYSTEM_TOKENS + tokens(summary) + kept
        self._cached[entry] = 0
        return entry

    def _parent(self, entry_id: str) -> str | None:
        return next(e["parentId"] for e in self.entries if e["id"] == entry_id)

    def branch_summary(self, target: str, summary: str, read: list[str], modified: list[str], after: float) -> str:
        """Go back to `target` (/tree) and leave a summary of the branch left behind."""
        self.wait(after)
        self.leaf = target
        details = {"readFiles": read, "modifiedFiles": modified}
        return self._append("branch_summary", {"fromId": target, "summary": summary, "details": details}, 220)

    # --- the files -----------------------------------------------------------------------------

    @property
    def file_name(self) -> str:
        stamp = iso(self.started).replace(":", "-").replace(".", "-")
        return f"{stamp}_{self.id}.jsonl"

    def lines(self) -> list[str]:
        records: list[dict[str, Any]] = []
        if self.title is not None:
            # oh-my-pi's title slot: padded to a fixed size so it can be rewritten in place.
            slot = {"type": "title", "v": 1, "title": self.title, "updatedAt": iso(self.started), "pad": ""}
            slot["pad"] = " " * (256 - len(json.dumps(slot, ensure_ascii=False)))
            records.append(slot)
        records.append(self.header)
        records += self.entries
        return [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records]

    def write(self, agent_dir: Path) -> Path:
        """The session file, its artifacts folder and its blobs under `agent_dir`."""
        folder = agent_dir / "sessions" / ("--" + self.cwd.strip("/").replace("/", "-") + "--")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / self.file_name
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        if self.artifacts:
            artifacts = path.with_suffix("")
            artifacts.mkdir(exist_ok=True)
            for name, content in sorted(self.artifacts.items()):
                target = artifacts / name
                if isinstance(content, bytes):
                    target.write_bytes(content)
                else:
                    target.write_text(content, encoding="utf-8")
        blobs = agent_dir / "blobs"
        for sha, data in sorted(self.blobs.items()):
            blobs.mkdir(exist_ok=True)
            (blobs / sha).write_bytes(data)
        return path


def grep(pattern: str, path: str, output: str) -> Call:
    return Call("grep", {"pattern": pattern, "path": path}, output or "No matches found", took=0.2)
