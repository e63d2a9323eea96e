"""Small session files, one per context rule of omp 18 (and of files other tools wrote), with what
the model is sent at chosen leaves: tests/test_context_rules.py checks them as written here,
tests/test_context_oracle.py against omp's and pi's own code."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

EPOCH = datetime(2026, 5, 1, tzinfo=UTC)
TITLE_SLOT_BYTES = 256  # omp 18 pads its title line to this size, newline included


def at(second: int) -> str:
    return (EPOCH + timedelta(seconds=second)).isoformat().replace("+00:00", ".000Z")


@dataclass
class RuleFile:
    """A session as a list of entries; expected: leaf id -> the texts (or roles) sent at that leaf."""

    name: str
    agent: str  # "omp" (written under ~/.omp/agent), "pi" (~/.pi/agent), "other" (neither)
    entries: list[dict[str, Any]] = field(default_factory=list)
    expected: dict[str, list[str]] = field(default_factory=dict)
    version: int = 3
    title_slot: bool = False

    def add(self, kind: str, entry_id: str | None, parent: str | bool | None = True, **fields: Any) -> None:
        entry: dict[str, Any] = {"type": kind}
        if entry_id is not None:
            if parent is True:
                parent = self.entries[-1].get("id") if self.entries else None
            entry.update(id=entry_id, parentId=parent)
        entry["timestamp"] = at(len(self.entries) + 1)
        entry.update(fields)
        self.entries.append(entry)

    def user(self, entry_id: str | None, text: str, parent: str | bool | None = True) -> None:
        self.add("message", entry_id, parent, message={"role": "user", "content": text, "timestamp": 1})

    def assistant(
        self, entry_id: str, content: list[dict[str, Any]] | str, parent: str | bool | None = True, **fields: Any
    ) -> None:
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        message = {
            "role": "assistant",
            "provider": fields.pop("provider", "anthropic"),
            "model": fields.pop("model", "claude-sonnet-4-5"),
            "stopReason": fields.pop("stopReason", "stop"),
            "content": blocks,
            "timestamp": 2,
            **fields,
        }
        self.add("message", entry_id, parent, message=message)

    def result(self, entry_id: str, call_id: str, text: str) -> None:
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": 3,
        }
        self.add("message", entry_id, message=message)

    def lines(self) -> bytes:
        header = {"type": "session", "id": f"0199b000-0000-7000-8000-{zlib.crc32(self.name.encode()):012d}"}
        if self.version > 1:
            header["version"] = self.version
        header.update(timestamp=at(0), cwd="/work/rules")
        out = b""
        if self.title_slot:
            slot = {"type": "title", "v": 1, "title": self.name, "updatedAt": at(0), "pad": ""}
            size = len(orjson.dumps(slot)) + 1
            slot["pad"] = " " * (TITLE_SLOT_BYTES - size)
            out += orjson.dumps(slot) + b"\n"
        return out + b"".join(orjson.dumps(record) + b"\n" for record in [header, *self.entries])

    def write(self, root: Path) -> Path:
        folder = {"omp": ".omp/agent/sessions", "pi": ".pi/agent/sessions", "other": "elsewhere"}[self.agent]
        path = root / folder / "--work-rules--" / f"{self.name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.lines())
        return path


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": call_id}}


def reset_boundary() -> RuleFile:
    f = RuleFile("reset_boundary", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    f.assistant("a1", "ZZ_A1_ZZ")
    f.add("reset_boundary", "r1")
    f.user("u2", "ZZ_U2_ZZ")
    f.assistant("a2", "ZZ_A2_ZZ")
    f.add("compaction", "k1", summary="ZZ_SUMMARY_ZZ", firstKeptEntryId="u2", tokensBefore=10)
    f.user("u3", "ZZ_U3_ZZ")
    f.add("reset_boundary", "r2")
    f.user("u4", "ZZ_U4_ZZ")
    f.expected = {
        "a1": ["ZZ_U1_ZZ", "ZZ_A1_ZZ"],
        "r1": [],
        "a2": ["ZZ_U2_ZZ", "ZZ_A2_ZZ"],
        # A compaction after the /clear governs; a /clear after the compaction starts the context anew.
        "u3": ["compactionSummary", "ZZ_U2_ZZ", "ZZ_A2_ZZ", "ZZ_U3_ZZ"],
        "u4": ["ZZ_U4_ZZ"],
    }
    return f


def failed_turns() -> RuleFile:
    f = RuleFile("failed_turns", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    f.assistant(
        "a1", [{"type": "text", "text": "ZZ_A1_ZZ"}, _call("c1")], stopReason="error", errorMessage="overloaded"
    )
    f.result("t1", "c1", "ZZ_T1_ZZ")
    f.user("u2", "ZZ_U2_ZZ")
    f.assistant("a2", "ZZ_A2_ABORTED_ZZ", stopReason="aborted")
    f.user("u3", "ZZ_U3_ZZ")
    f.assistant("a3", [], stopReason="error")
    f.assistant("a4", "ZZ_A4_RETRIED_ZZ", retryRecovery=True)
    f.assistant("a5", "ZZ_A5_ZZ")
    f.user("u4", "ZZ_U4_ZZ")
    f.assistant("a6", "ZZ_A6_INTERRUPTED_ZZ", stopReason="aborted")
    f.add("custom_message", "n6", customType="interrupted-thinking", content="ZZ_NOTE_ZZ", display=False)
    f.expected = {
        "n6": ["ZZ_U1_ZZ", "ZZ_U2_ZZ", "ZZ_U3_ZZ", "ZZ_A5_ZZ", "ZZ_U4_ZZ", "ZZ_A6_INTERRUPTED_ZZ", "ZZ_NOTE_ZZ"],
        "a2": ["ZZ_U1_ZZ", "ZZ_U2_ZZ"],
    }
    return f


def unanswered_calls() -> RuleFile:
    f = RuleFile("unanswered_calls", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    thinking = {"type": "thinking", "thinking": "ZZ_THINK_ZZ", "thinkingSignature": "sig"}
    f.assistant("a1", [thinking, {"type": "redactedThinking", "data": "x"}, _call("c1"), _call("c2")])
    f.result("t1", "c1", "ZZ_T1_ZZ")
    f.user("u2", "ZZ_U2_ZZ")
    f.assistant("a2", [_call("c3")])
    f.result("t3", "c3", "ZZ_T3_ZZ")
    f.expected = {
        # c2 never got a result: cut, with the turn's signature and redacted reasoning.
        "t1": ["ZZ_U1_ZZ", "ZZ_THINK_ZZ", "ZZ_T1_ZZ"],
        # At a2 its only call has no result yet: the turn goes.
        "a2": ["ZZ_U1_ZZ", "ZZ_THINK_ZZ", "ZZ_T1_ZZ", "ZZ_U2_ZZ"],
        "t3": ["ZZ_U1_ZZ", "ZZ_THINK_ZZ", "ZZ_T1_ZZ", "ZZ_U2_ZZ", "assistant", "ZZ_T3_ZZ"],
    }
    return f


def hidden_custom_messages() -> RuleFile:
    f = RuleFile("hidden_custom_messages", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    f.add("custom_message", "p1", customType="prewalk-plan", content="ZZ_PLAN_ZZ", display=True)
    f.add("custom_message", "v1", customType="vibe-mode-context", content="ZZ_VIBE_ZZ", display=False)
    f.add("custom_message", "x1", customType="my-extension", content="ZZ_EXT_ZZ", display=True, attribution="user")
    f.add("custom_message", "x2", customType="", content={"not": "content"}, display=True)
    f.expected = {"x2": ["ZZ_U1_ZZ", "ZZ_EXT_ZZ"]}
    return f


def context_notes() -> RuleFile:
    f = RuleFile("context_notes", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    f.add("custom", "n1", customType="experimental_context_notes", data={"version": 1, "text": "ZZ_NOTES_1_ZZ"})
    f.user("u2", "ZZ_U2_ZZ")
    f.add("custom", "n2", customType="experimental_context_notes", data={"version": 1, "text": "x", "extra": 1})
    f.user("u3", "ZZ_U3_ZZ")
    f.add("custom", "n3", customType="experimental_context_notes", data={"version": 1, "text": ""}, parent="u2")
    f.user("u4", "ZZ_U4_ZZ")
    f.add("reset_boundary", "r1", parent="u3")
    f.user("u5", "ZZ_U5_ZZ")
    f.expected = {
        "u1": ["ZZ_U1_ZZ"],
        # The latest valid revision opens the context (an invalid one is passed over).
        "u3": ["ZZ_NOTES_1_ZZ", "ZZ_U1_ZZ", "ZZ_U2_ZZ", "ZZ_U3_ZZ"],
        # An empty revision clears the notes; a /clear hides the notes before it.
        "u4": ["ZZ_U1_ZZ", "ZZ_U2_ZZ", "ZZ_U4_ZZ"],
        "u5": ["ZZ_U5_ZZ"],
    }
    return f


def remote_compaction() -> RuleFile:
    f = RuleFile("remote_compaction", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    f.assistant("a1", "ZZ_A1_ZZ")
    f.user("u2", "ZZ_U2_ZZ")
    f.assistant("a2", "ZZ_A2_ZZ")
    f.user("u3", "ZZ_U3_ZZ")
    history = {"provider": "openai", "replacementHistory": [{"type": "message", "role": "user"}]}
    f.add(
        "compaction",
        "k1",
        summary="ZZ_REMOTE_ZZ",
        firstKeptEntryId="u2",
        tokensBefore=100,
        providerReplayThroughEntryId="a2",
        preserveData={"openaiRemoteCompaction": history},
    )
    f.user("u4", "ZZ_U4_ZZ")
    f.add(
        "compaction",
        "k2",
        summary="ZZ_NATIVE_ZZ",
        firstKeptEntryId="",
        tokensBefore=200,
        tokensAfter=20,
        method="remote",
        providerReplayThroughEntryId="k1",
        preserveData={"anthropicCompaction": {"provider": "anthropic", "content": "ZZ_NATIVE_ZZ"}},
    )
    f.user("u5", "ZZ_U5_ZZ")
    f.add("compaction", "k3", summary="ZZ_PLAIN_ZZ", firstKeptEntryId="", tokensBefore=300, parent="u4")
    f.user("u6", "ZZ_U6_ZZ")
    f.expected = {
        # The provider replays the turns up to a2 itself: only what follows it is sent again.
        "u4": ["compactionSummary", "ZZ_U3_ZZ", "ZZ_U4_ZZ"],
        # Anthropic's native replay ends at k1: what follows it is kept.
        "u5": ["compactionSummary", "ZZ_U4_ZZ", "ZZ_U5_ZZ"],
        "u6": ["compactionSummary", "ZZ_U6_ZZ"],
    }
    return f


def context_rollover() -> RuleFile:
    """A notes-backed window keeps, verbatim, the latest user request of the turns it dropped."""
    f = RuleFile("context_rollover", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    f.assistant("a1", "ZZ_A1_ZZ")
    f.user("u2", "ZZ_REQUEST_ZZ")
    f.assistant("a2", "ZZ_A2_ZZ")
    f.assistant("a3", "ZZ_A3_ZZ")
    details = {"kind": "experimental-context-rollover"}
    f.add("compaction", "k1", summary="ZZ_ROLL_ZZ", firstKeptEntryId="a3", tokensBefore=10, details=details)
    f.user("u3", "ZZ_U3_ZZ")
    f.add("compaction", "k2", summary="ZZ_ROLL2_ZZ", firstKeptEntryId="u3", tokensBefore=10, details=details)
    f.assistant("a4", "ZZ_A4_ZZ")
    f.expected = {
        "u3": ["compactionSummary", "ZZ_REQUEST_ZZ", "ZZ_A3_ZZ", "ZZ_U3_ZZ"],
        # The request is the first kept entry itself: nothing more to keep.
        "a4": ["compactionSummary", "ZZ_U3_ZZ", "ZZ_A4_ZZ"],
    }
    return f


def default_model() -> RuleFile:
    f = RuleFile("default_model", "omp")
    f.user("u1", "ZZ_U1_ZZ")
    f.assistant("a1", "ZZ_A1_ZZ", provider="openai", model="gpt-5")
    f.add("model_change", "m1", model="anthropic/claude-haiku-4-5", role="smol")
    f.assistant("a2", "ZZ_A2_ZZ", provider="google", model="gemini-2.5-pro")
    f.add("model_change", "m2", provider="anthropic", modelId="claude-opus-4-1")  # pi's shape: omp ignores it
    f.add("model_change", "m3", model="anthropic/claude-opus-4-5", role="default")
    f.assistant("a3", "ZZ_A3_ZZ", provider="openai", model="gpt-5")
    f.add("thinking_level_change", "h1", thinkingLevel="high", configured="auto")
    f.add("service_tier_change", "s1", serviceTier="claude-only")
    f.add("service_tier_change", "s2", serviceTier={"openai": "flex", "google": "turbo"})
    f.add("thinking_level_change", "h2", thinkingLevel=None)
    f.expected = {"h2": ["ZZ_U1_ZZ", "ZZ_A1_ZZ", "ZZ_A2_ZZ", "ZZ_A3_ZZ"]}
    return f


def title_slot() -> RuleFile:
    """Found to be omp's by its title slot alone (written outside any agent dir)."""
    f = RuleFile("title_slot_rules", "other", title_slot=True)
    f.user("u1", "ZZ_U1_ZZ")
    f.assistant("a1", "ZZ_A1_ZZ", stopReason="aborted")
    f.expected = {"a1": ["ZZ_U1_ZZ"]}
    return f


def duplicate_ids() -> RuleFile:
    f = RuleFile("duplicate_ids", "pi")
    f.user("d1", "ZZ_FIRST_COPY_ZZ")
    f.user("d2", "ZZ_CHILD_ZZ")
    f.user("d1", "ZZ_SECOND_COPY_ZZ", parent=None)
    f.user("d3", "ZZ_LAST_ZZ", parent="d2")
    # d2's parent d1 is the second copy now, a root.
    f.expected = {"d3": ["ZZ_SECOND_COPY_ZZ", "ZZ_CHILD_ZZ", "ZZ_LAST_ZZ"]}
    return f


def empty_branch_summary() -> RuleFile:
    f = RuleFile("empty_branch_summary", "pi")
    f.user("u1", "ZZ_U1_ZZ")
    f.add("branch_summary", "b1", fromId="u1", summary="")
    f.add("branch_summary", "b2", fromId="u1", summary="ZZ_BRANCH_ZZ")
    f.add("thinking_level_change", "h1", thinkingLevel="high")
    f.add("thinking_level_change", "h2", thinkingLevel=None)
    f.expected = {"h2": ["ZZ_U1_ZZ", "branchSummary"]}
    return f


def compaction_without_first_kept() -> RuleFile:
    """A compaction that names no first kept entry keeps nothing before it, in pi's files too."""
    f = RuleFile("compaction_without_first_kept", "pi")
    f.user("u1", "ZZ_U1_ZZ")
    f.assistant("a1", "ZZ_A1_ZZ")
    f.add("compaction", "k1", summary="ZZ_SUMMARY_ZZ", tokensBefore=10)
    f.user("u2", "ZZ_U2_ZZ")
    f.user("u3", "ZZ_U3_ZZ", parent="a1")
    f.expected = {"u2": ["compactionSummary", "ZZ_U2_ZZ"], "u3": ["ZZ_U1_ZZ", "ZZ_A1_ZZ", "ZZ_U3_ZZ"]}
    return f


def entries_without_ids() -> RuleFile:
    """A v3 file another tool wrote with no ids: chained in file order (pi and omp show one entry)."""
    f = RuleFile("entries_without_ids", "other")
    f.user(None, "ZZ_U1_ZZ")
    f.add("message", None, message={"role": "assistant", "content": [{"type": "text", "text": "ZZ_A1_ZZ"}]})
    f.user(None, "ZZ_U2_ZZ")
    f.expected = {"": ["ZZ_U1_ZZ", "ZZ_A1_ZZ", "ZZ_U2_ZZ"]}
    return f


OMP_RULE_FILES = [
    reset_boundary,
    failed_turns,
    unanswered_calls,
    hidden_custom_messages,
    context_notes,
    remote_compaction,
    context_rollover,
    default_model,
    title_slot,
]
OTHER_RULE_FILES = [duplicate_ids, empty_branch_summary, compaction_without_first_kept]
# Files sitegen reads differently from the agents on purpose (the agents would show one entry).
DELIBERATE = [entries_without_ids]


def message_texts(messages: list[dict[str, Any]]) -> list[str]:
    """Each message's first text (or thinking), else its role."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
            continue
        text = next(
            (
                block.get("text") or block.get("thinking")
                for block in content
                if isinstance(block, dict) and block.get("type") in ("text", "thinking")
            )
            if isinstance(content, list)
            else iter(()),
            None,
        )
        out.append(text if isinstance(text, str) else str(message.get("role")))
    return out
