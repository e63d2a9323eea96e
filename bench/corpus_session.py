"""One session: its turns (prompts, assistant messages, tool calls and results) and write_session."""

from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

import orjson
from corpus_basics import (
    B64,
    BASE_MS,
    PROJECTS,
    SPILL_BYTES,
    SessionInfo,
    iso,
    lognormal,
    png_bytes,
    random_uuid,
    token,
)
from corpus_entries import EntryWriter
from corpus_storage import Artifacts, agent_dir_of, encode_cwd
from corpus_subagents import run_tasks, task_arguments
from corpus_text import COMMANDS, DIRS, Vocab, assistant_markdown, project_vocab, user_markdown

from sitegen.session.blobs import BlobStore

__all__ = ["SessionBuilder", "write_session"]


class SessionBuilder(EntryWriter):
    """Writes a session's turns until it reaches its target size (a subagent's too: corpus_subagents)."""

    # -- turns

    def run(self) -> None:
        """Write turns until the session reaches its target size."""
        self.header_events()
        turns = 0
        # Stop when half an average turn would pass the target, so sizes do not all overshoot it.
        while self.info.bytes + (self.info.bytes / turns / 2 if turns else 0) < self.target:
            self.turn()
            turns += 1
        # The last turn may end short of the wanted depth: top the chain up at its end.
        self.deepen(final=True)
        self.info.main_depth = len(self.path)

    def header_events(self) -> None:
        if self.rng.random() < 0.6:
            self.thinking_change()
        if self.rng.random() < 0.4:
            self.model_change()

    def turn(self) -> None:
        self.deepen()
        if self.due("branch"):
            self.branch()
        if self.due("compaction"):
            self.compaction()
        if self.due("label"):
            self.label()
        if self.due("model") or self.rng.random() < 0.01:
            self.model_change()
        if self.due("thinking") or self.rng.random() < 0.02:
            self.thinking_change()
        if self.rng.random() < 0.015:
            self.bash_execution()
        if self.rng.random() < 0.01 and not self.plain:
            self.append("custom", {"customType": "todo-state", "data": {"open": self.rng.randint(0, 9)}})
        self.user_message()
        steps = min(24, 1 + int(self.rng.expovariate(1 / 3.5)))
        for _ in range(steps):
            for call in self.assistant_message(final=False):
                self.tool_result(call)
        self.assistant_message(final=True)
        self.steer()

    def steer(self) -> None:
        """Nudge payload sizes so the bytes per real (non-marker) entry approach the wanted average."""
        real_entries = self.info.entries - self.info.markers
        if not self.avg_entry_bytes or not real_entries:
            return
        average = (self.info.bytes - self.marker_bytes) / real_entries
        # Proportional control on the running average: heavy-tailed turns make per-turn steps drift.
        self.scale = min(20.0, max(0.05, self.scale * min(1.1, max(0.9, self.avg_entry_bytes / average))))

    # -- messages

    def image(self) -> dict[str, Any]:
        rng = self.rng
        if rng.random() < 0.2:
            data = self.vocab.logo
        else:
            data = png_bytes(rng, rng.randint(24, 160), rng.randint(16, 100))
        # pi keeps an image in the session as base64; omp moves it to the blob store and keeps a ref.
        ref = base64.b64encode(data).decode("ascii") if self.plain else self.blobs.put(data)
        self.info.images += 1
        if not self.plain:
            self.info.image_refs.append(ref)
        return {"type": "image", "data": ref, "mimeType": "image/png"}

    def user_message(self) -> None:
        self.tick(15, 600)
        text = user_markdown(self.rng, self.vocab)
        content: list[dict[str, Any]] | str
        if self.due("image"):
            content = [{"type": "text", "text": text}, self.image()]
        elif self.rng.random() < 0.2:
            content = text  # pi writes plain-string user content too
        else:
            content = [{"type": "text", "text": text}]
        self.context_tokens += len(text) // 4
        self.append("message", {"message": {"role": "user", "content": content, "timestamp": self.clock}}, "user")

    def _call_id(self) -> str:
        if self.model.provider == "anthropic":
            return "toolu_01" + token(self.rng, 22)
        if self.model.provider == "openai":
            return "call_" + token(self.rng, 24) + "|fc_" + token(self.rng, 40, "0123456789abcdef")
        return "call_" + token(self.rng, 16)

    def tool_call(self) -> dict[str, Any]:
        rng, vocab = self.rng, self.vocab
        roll = rng.random()
        path = rng.choice(vocab.files)
        arguments: dict[str, Any]
        if self.subagents and self.due("subagent"):
            name = "task"
            arguments = task_arguments(rng, vocab)
        elif roll < 0.34:
            name = "read"
            arguments = {"path": path}
            if rng.random() < 0.2:
                arguments |= {"offset": rng.randint(1, 400), "limit": rng.choice((50, 100, 200))}
        elif roll < 0.64:
            name = "bash"
            arguments = {"command": rng.choice(COMMANDS).format(a=rng.choice(vocab.idents), f=path)}
            if rng.random() < 0.2:
                arguments["timeout"] = rng.choice((30, 120, 600))
        elif roll < 0.84:
            name = "edit"
            lang = vocab.lang_of(path)
            arguments = {
                "path": path,
                "oldText": vocab.code_text(rng, lang, lognormal(rng, 250, 0.9, 4000)),
                "newText": vocab.code_text(rng, lang, lognormal(rng, 300, 0.9, 5000)),
            }
        elif roll < 0.92:
            name = "grep"
            arguments = {"pattern": rng.choice(vocab.idents), "path": rng.choice(DIRS)}
            if rng.random() < 0.4:
                arguments["glob"] = "*." + path.rsplit(".", 1)[-1]
        else:
            name = "write"
            size = lognormal(rng, 2500 * self.scale, 1.0, 120_000)
            arguments = {"path": path, "content": vocab.code_text(rng, vocab.lang_of(path), size)}
        return {"type": "toolCall", "id": self._call_id(), "name": name, "arguments": arguments}

    def assistant_message(self, *, final: bool) -> list[dict[str, Any]]:
        rng, vocab = self.rng, self.vocab
        self.tick(2, 45)
        content: list[dict[str, Any]] = []
        if self.thinking != "off" and rng.random() < 0.7:
            thinking: dict[str, Any] = {
                "type": "thinking",
                "thinking": "\n\n".join(vocab.paragraph(rng, rng.randint(1, 5)) for _ in range(rng.randint(1, 3))),
            }
            if self.model.provider == "anthropic":
                thinking["thinkingSignature"] = token(rng, rng.randint(200, 1400), B64)
            content.append(thinking)
        calls: list[dict[str, Any]] = []
        if final:
            content.append({"type": "text", "text": assistant_markdown(rng, vocab)})
        else:
            if rng.random() < 0.5:
                content.append({"type": "text", "text": vocab.paragraph(rng, rng.randint(1, 2))})
            count = 1 if rng.random() < 0.8 else rng.randint(2, 4)
            calls = [self.tool_call() for _ in range(count)]
            content.extend(calls)
        out_tokens = sum(len(orjson.dumps(block)) for block in content) // 4
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": self.model.api,
            "provider": self.model.provider,
            "model": self.model.model,
            "usage": self.usage(out_tokens),
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": self.clock,
        }
        if final and rng.random() < 0.01:
            message["stopReason"] = "aborted"
            message["errorMessage"] = "Request was aborted"
        self.context_tokens += out_tokens
        self.append("message", {"message": message}, "assistant")
        return calls

    def usage(self, out_tokens: int) -> dict[str, Any]:
        model, rng = self.model, self.rng
        fresh = rng.randint(3, 4000)
        cache_read = self.context_tokens
        per_in = model.price_in / 1e6
        cost = {
            "input": round(rng.randint(1, 30) * per_in, 9),
            "output": round(out_tokens * model.price_out / 1e6, 9),
            "cacheRead": round(cache_read * per_in * 0.1, 9),
            "cacheWrite": round(fresh * per_in * 1.25, 9),
        }
        cost["total"] = round(sum(cost.values()), 9)
        return {
            "input": rng.randint(1, 30),
            "output": out_tokens,
            "cacheRead": cache_read,
            "cacheWrite": fresh,
            "totalTokens": cache_read + fresh + out_tokens,
            "cost": cost,
        }

    def tool_result(self, call: dict[str, Any]) -> None:
        rng, vocab = self.rng, self.vocab
        name, arguments = call["name"], call["arguments"]
        self.tick(0.05, 20)
        details: dict[str, Any] | None = None
        is_error = rng.random() < 0.06
        content: list[dict[str, Any]]
        if name == "read":
            path = arguments["path"]
            if self.due("image"):
                content = [{"type": "text", "text": "Read image file [image/png]"}, self.image()]
            else:
                size = lognormal(rng, 2500 * self.scale, 1.2, 160_000)
                text = vocab.code_text(rng, vocab.lang_of(path), size)
                if rng.random() < 0.3:
                    text = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.split("\n"), 1))
                content = [{"type": "text", "text": text}]
        elif name == "bash":
            content, details = self.bash_output(is_error)
        elif name == "edit":
            if is_error:
                content = [{"type": "text", "text": f"Could not find the exact text in {arguments['path']}."}]
                details = {}
            else:
                content = [{"type": "text", "text": f"Successfully replaced text in {arguments['path']}."}]
                details = {"diff": self.diff(arguments["oldText"], arguments["newText"])}
        elif name == "grep":
            size = lognormal(rng, 1200 * self.scale, 1.1, 60_000)
            lines = [
                f"{rng.choice(vocab.files)}:{rng.randint(1, 900)}:{line}"
                for line in vocab.code_text(rng, "typescript", size).split("\n")
            ]
            content = [{"type": "text", "text": "\n".join(lines)}]
        elif name == "task":
            content, details = run_tasks(self, arguments)
        else:
            text = f"Successfully wrote {len(arguments['content'].encode())} bytes to {arguments['path']}"
            content = [{"type": "text", "text": text}]
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": content,
        }
        if details is not None:
            message["details"] = details
        message["isError"] = is_error and name in ("bash", "edit")
        message["timestamp"] = self.clock
        self.context_tokens += sum(len(block.get("text", "")) for block in content) // 4
        self.append("message", {"message": message}, "toolResult")

    def bash_output(self, is_error: bool) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        rng, vocab = self.rng, self.vocab
        spill = self.due("artifact") and not self.plain
        if spill:
            size = max(SPILL_BYTES + 10_000, lognormal(rng, 120_000, 0.6, 2_000_000))
        elif rng.random() < 0.1:
            size = lognormal(rng, 12_000 * self.scale, 1.0, SPILL_BYTES)
        else:
            size = lognormal(rng, 350 * self.scale, 1.3, SPILL_BYTES)
        text = vocab.log_text(rng, size)
        if is_error:
            text += f"\n\nCommand exited with code {rng.choice((1, 2, 101, 127))}"
        if not spill:
            return [{"type": "text", "text": text}], None
        artifact_id = self.artifacts.save_log("bash", text)
        self.info.artifacts += 1
        lines = text.split("\n")
        shown = lines[-rng.randint(20, 300) :]
        while sum(len(line) + 1 for line in shown) > SPILL_BYTES:
            shown = shown[len(shown) // 4 :]
        first = len(lines) - len(shown) + 1
        notice = f"[Showing lines {first}-{len(lines)} of {len(lines)}. Full output: artifact://{artifact_id}]"
        details = {
            "truncation": {
                "truncated": True,
                "truncatedBy": "lines",
                "totalLines": len(lines),
                "totalBytes": len(text.encode()),
                "outputLines": len(shown),
            },
            "artifactId": str(artifact_id),
        }
        return [{"type": "text", "text": "\n".join(shown) + "\n\n" + notice}], details

    def diff(self, old: str, new: str) -> str:
        start = self.rng.randint(1, 800)
        context = self.vocab.code_text(self.rng, "typescript", 200).split("\n")
        lines = [f" {start + i:>4} {line}" for i, line in enumerate(context)]
        at = start + len(context)
        lines += [f"-{at + i:>4} {line}" for i, line in enumerate(old.split("\n"))]
        lines += [f"+{at + i:>4} {line}" for i, line in enumerate(new.split("\n"))]
        lines.append("      ...")
        return "\n".join(lines)


def _header(
    rng: random.Random, session_id: str, start_ms: int, cwd: str, vocab: Vocab, plain: bool = False
) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": iso(start_ms),
        "cwd": cwd,
    }
    if rng.random() < 0.3 and not plain:
        header["title"] = f"{rng.choice(vocab.types)}: {rng.choice(vocab.short)}"
    if rng.random() < 0.05:
        header["parentSession"] = random_uuid(rng)
    return header


def _title_slot(rng: random.Random, start_ms: int, vocab: Vocab) -> bytes:
    """omp's rewritable first line: a title record padded to a fixed width."""
    title = f"{rng.choice(vocab.types)} {rng.choice(vocab.short)}" if rng.random() < 0.7 else ""
    record: dict[str, Any] = {"type": "title", "v": 1, "title": title, "updatedAt": iso(start_ms), "pad": ""}
    width = len(orjson.dumps(record))
    record["pad"] = " " * max(0, 255 - width)
    return orjson.dumps(record) + b"\n"


def write_session(
    agent_dir: Path,
    *,
    seed: int,
    target_bytes: int,
    cwd: str | None = None,
    start_ms: int | None = None,
    path: Path | None = None,
    chain_depth: int = 0,
    avg_entry_bytes: int = 0,
    vocab: Vocab | None = None,
    every: dict[str, int] | None = None,
    plain: bool = False,
) -> SessionInfo:
    """Write one session of about target_bytes under agent_dir/sessions (or at path); return what it holds.

    With plain, only what pi itself writes: no omp title line or header title, no subagents (task
    calls, sidecars, agent:// outputs), no artifacts (bash output stays in the session), images as
    base64 in the session rather than in the blob store, no custom entries, pi's model_change form."""
    rng = random.Random(seed)
    cwd = cwd if cwd is not None else rng.choice(PROJECTS)
    vocab = vocab if vocab is not None else project_vocab(cwd)
    start = start_ms if start_ms is not None else BASE_MS + rng.randint(0, 120 * 86_400_000)
    session_id = random_uuid(rng)
    if path is None:
        stamp = iso(start).replace(":", "-").replace(".", "-")
        path = agent_dir / "sessions" / encode_cwd(cwd) / f"{stamp}_{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    info = SessionInfo(path=path, session_id=session_id, cwd=cwd)
    artifacts = Artifacts(path.with_suffix(""))
    # BlobStore.put skips bytes it already holds, so a reused image is stored once.
    blobs = BlobStore([agent_dir_of(path) / "blobs"])
    with open(path, "wb") as out:
        builder = SessionBuilder(
            out,
            info,
            rng=rng,
            vocab=vocab,
            clock_ms=start,
            target_bytes=target_bytes,
            artifacts=artifacts,
            blobs=blobs,
            chain_depth=chain_depth,
            avg_entry_bytes=avg_entry_bytes,
            every=every,
            plain=plain,
        )
        if rng.random() < 0.15 and not plain:
            slot = _title_slot(rng, start, vocab)
            out.write(slot)
            info.bytes += len(slot)
        builder.write_line(_header(rng, session_id, start, cwd, vocab, plain))
        builder.run()
    return info
