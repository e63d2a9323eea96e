"""Subagents in a session: a task call's arguments, and each task's agent:// output and sidecar transcript."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from corpus_basics import SUBAGENTS, SessionInfo, iso, lognormal, random_uuid
from corpus_text import REQUESTS, Vocab, assistant_markdown, fill

if TYPE_CHECKING:
    from corpus_session import SessionBuilder

__all__ = ["run_tasks", "task_arguments"]


def task_arguments(rng: random.Random, vocab: Vocab) -> dict[str, Any]:
    """A task tool call's arguments: one subagent kind and one or two tasks for it."""
    tasks = [
        {
            "id": rng.choice(vocab.types),
            "description": rng.choice(vocab.short),
            "assignment": fill(rng, rng.choice(REQUESTS), vocab),
        }
        for _ in range(rng.randint(1, 2))
    ]
    return {"agent": rng.choice(SUBAGENTS), "tasks": tasks}


def run_tasks(parent: SessionBuilder, arguments: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run each subagent task: an agent://<id> markdown output plus its sidecar transcript."""
    rng, vocab = parent.rng, parent.vocab
    sections = ["## Task results"]
    results = []
    for task in arguments["tasks"]:
        output_id = parent.artifacts.agent_id(task["id"])
        report = f"# {task['description']}\n\n{assistant_markdown(rng, vocab)}\n"
        parent.artifacts.folder.mkdir(parents=True, exist_ok=True)
        (parent.artifacts.folder / f"{output_id}.md").write_text(report, encoding="utf-8")
        started = parent.clock
        _sidecar(parent, parent.artifacts.folder / f"{output_id}.jsonl", task["assignment"])
        parent.info.subagents += 1
        sections.append(
            f"### {output_id} ({arguments['agent']}) ✓\n\n{vocab.paragraph(rng, 2)}\n\nFull output: agent://{output_id}"
        )
        results.append(
            {
                "id": output_id,
                "agent": arguments["agent"],
                "exitCode": 0,
                "durationMs": parent.clock - started,
                "outputPath": f"{output_id}.md",
            }
        )
    return [{"type": "text", "text": "\n\n".join(sections)}], {"results": results}


def _sidecar(parent: SessionBuilder, path: Path, assignment: str) -> None:
    """A subagent's own small session, sharing the parent's artifact folder and id space."""
    info = SessionInfo(path=path, session_id=random_uuid(parent.rng), cwd=parent.info.cwd)
    with open(path, "wb") as out:
        # A builder of the parent's own kind (SessionBuilder: imported here, it would be a cycle).
        child = type(parent)(
            out,
            info,
            rng=parent.rng,
            vocab=parent.vocab,
            clock_ms=parent.clock,
            target_bytes=lognormal(parent.rng, 15_000, 0.6, 60_000),
            artifacts=parent.artifacts,
            blobs=parent.blobs,
            subagents=False,
        )
        child.write_line(
            {
                "type": "session",
                "version": 3,
                "id": info.session_id,
                "timestamp": iso(parent.clock),
                "cwd": parent.info.cwd,
                "parentSession": parent.info.session_id,
            }
        )
        child.tick(0.1, 1)
        child.append(
            "message",
            {"message": {"role": "user", "content": assignment, "timestamp": child.clock}},
            "user",
        )
        while info.bytes < child.target:
            for call in child.assistant_message(final=False):
                child.tool_result(call)
        child.assistant_message(final=True)
    parent.clock = child.clock
