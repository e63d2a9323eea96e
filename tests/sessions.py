"""Build small pi-family session files for tests, with exact ids and timestamps."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class SessionBuilder:
    """Appends entries with explicit parents; the clock advances one second per entry."""

    def __init__(self, session_id: str = "sess-0001", cwd: str = "/work/demo", **header: Any) -> None:
        self.header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": iso(BASE_MS),
            "cwd": cwd,
            **header,
        }
        self.entries: list[dict[str, Any]] = []
        self.clock = BASE_MS
        self.leaf: str | None = None

    def add(self, kind: str, entry_id: str, parent: str | bool | None = True, **fields: Any) -> str:
        """Append an entry; parent True means the current leaf."""
        self.clock += 1000
        parent_id = self.leaf if parent is True else parent
        self.entries.append(
            {"type": kind, "id": entry_id, "parentId": parent_id, "timestamp": iso(self.clock), **fields}
        )
        self.leaf = entry_id
        return entry_id

    def message(self, entry_id: str, role: str, content: Any, parent: str | bool | None = True, **extra: Any) -> str:
        message = {"role": role, "content": content, "timestamp": self.clock + 1000, **extra}
        return self.add("message", entry_id, parent, message=message)

    def user(self, entry_id: str, text: str, parent: str | bool | None = True) -> str:
        return self.message(entry_id, "user", [{"type": "text", "text": text}], parent)

    def assistant(
        self, entry_id: str, blocks: list[dict[str, Any]], parent: str | bool | None = True, **extra: Any
    ) -> str:
        usage = {
            "input": 100,
            "output": 20,
            "cacheRead": 1000,
            "cacheWrite": 10,
            "cost": {"total": 0.0125},
        }
        fields = {"provider": "anthropic", "model": "claude-test", "usage": usage, **extra}
        return self.message(entry_id, "assistant", blocks, parent, **fields)

    def tool_result(
        self,
        entry_id: str,
        call_id: str,
        tool: str,
        text: str,
        parent: str | bool | None = True,
        **extra: Any,
    ) -> str:
        return self.message(
            entry_id,
            "toolResult",
            [{"type": "text", "text": text}],
            parent,
            **{"toolCallId": call_id, "toolName": tool, "isError": False, **extra},
        )

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [orjson.dumps(self.header)] + [orjson.dumps(e) for e in self.entries]
        path.write_bytes(b"\n".join(lines) + b"\n")
        return path


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value}


def branching_session() -> SessionBuilder:
    """A session with two branches, a label, tools, thinking, a long output and a compaction."""
    b = SessionBuilder()
    b.add("session_init", "init0001", None, systemPrompt="You are ZZ_SYSTEM_PROMPT_ZZ.", tools=["read", "bash"])
    b.add("model_change", "model001", model="anthropic/claude-test")
    b.user("user0001", "Please list the files ZZ_FIRST_USER_ZZ")
    b.assistant(
        "asst0001",
        [
            thinking("I should run ls ZZ_THINKING_ZZ"),
            text("Listing."),
            tool_call("call0001", "bash", command="ls -la"),
        ],
    )
    long_output = "\n".join(f"line {i} ZZ_LONG_{i}_ZZ" for i in range(120))
    b.tool_result("tres0001", "call0001", "bash", long_output)
    b.assistant("asst0002", [text("Done: **120 lines**. ZZ_BRANCH_A_ZZ")])
    # Second branch from the first user message, newer.
    b.assistant(
        "asst0003",
        [text("Reading instead."), tool_call("call0002", "read", path="src/app.py")],
        parent="user0001",
    )
    b.tool_result("tres0002", "call0002", "read", "def main():\n    return 'ZZ_READ_ZZ'\n")
    b.add("label", "label001", targetId="asst0003", label="ZZ_LABEL_ZZ")
    b.add(
        "compaction",
        "comp0001",
        summary="Summary ZZ_COMPACTION_ZZ",
        firstKeptEntryId="asst0003",
        tokensBefore=42000,
    )
    b.user("user0002", "Now edit it ZZ_BRANCH_B_ZZ")
    b.assistant(
        "asst0004",
        [tool_call("call0003", "edit", path="src/app.py", oldText="return 1\n", newText="return 2\n")],
    )
    b.tool_result("tres0003", "call0003", "edit", "Edited.")
    return b


# A 2x2 PNG (red, green, blue, white): small enough to inline, big enough to enlarge.
TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)


def reader_session() -> SessionBuilder:
    """What a reader looks for: a failed command, reads and edits inside the project, a fork after the fix,
    a compaction that keeps the second prompt, a subagent and an image.

    Default path: U1 A1 R1 A2 R2 R3 A3 R4 A4 | U2 A5 R5 A6 C1 U3 A7 R7 U5 A9; the older branch from A4: U4 A8.
    """
    b = SessionBuilder(session_id="reader-0001", cwd="/work/shop")
    b.add("session_init", "init0001", None, systemPrompt="You are a careful engineer.", tools=["bash", "read"])
    b.user("u1", "## Fix the **login** bug\nUsers are logged out after a minute.")
    b.assistant("a1", [text("Running the tests first."), tool_call("c1", "bash", command="npm test\n# then lint")])
    b.tool_result(
        "r1",
        "c1",
        "bash",
        "FAIL src/login.test.ts\n  session expires too early",
        isError=True,
        details={"exitCode": 1},
    )
    b.assistant(
        "a2",
        [
            tool_call("c2", "read", path="/work/shop/src/login.ts"),
            tool_call("c3", "grep", pattern="maxAge", path="/work/shop/src"),
        ],
    )
    b.tool_result("r2", "c2", "read", "export const maxAge = 60; // ZZ_READ_ZZ")
    b.tool_result("r3", "c3", "grep", "src/login.ts:1: export const maxAge = 60;")
    b.assistant("a3", [tool_call("c4", "edit", path="/work/shop/src/login.ts", oldText="60", newText="3600")])
    b.tool_result(
        "r4", "c4", "edit", "Edited.", details={"diff": "-1 export const maxAge = 60;\n+1 export const maxAge = 3600;"}
    )
    b.assistant("a4", [text("Fixed: `maxAge` was in seconds, not minutes.")])
    # The older branch: the user changed their mind, then came back to the fix.
    b.user("u4", "Actually, revert it ZZ_OLD_BRANCH_ZZ", parent="a4")
    b.assistant("a8", [text("Reverted.")])
    b.user("u2", "Add a test for the expiry ZZ_KEPT_ZZ", parent="a4")
    b.assistant(
        "a5",
        [
            text("Adding one."),
            tool_call("c5", "write", path="/work/shop/src/login.test.ts", content="test('expiry', () => {});\n"),
        ],
    )
    b.tool_result("r5", "c5", "write", "Wrote 1 line.")
    b.assistant("a6", [text("The test passes.")])
    b.add(
        "compaction",
        "c1mp",
        summary="The login fix and its test. ZZ_SUMMARY_ZZ",
        firstKeptEntryId="u2",
        tokensBefore=52000,
    )
    b.user("u3", "Now look at the signup page ZZ_AFTER_ZZ")
    b.assistant("a7", [tool_call("c7", "task", agent="explore", description="find the signup form")])
    b.tool_result("r7", "c7", "task", "The form is in src/signup.tsx.")
    b.message(
        "u5", "user", [text("Here is how it looks"), {"type": "image", "mimeType": "image/png", "data": TINY_PNG}]
    )
    b.assistant("a9", [text("The button is misaligned.")])
    return b


@contextmanager
def shallow_stack(headroom: int = 80) -> Iterator[None]:
    """A recursion limit just above the current depth: any recursive walk of a deep tree fails."""
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + headroom)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
