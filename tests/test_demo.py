"""The bundled demo: written by tools/demo, valid session files, the features it must show, its prompts."""

from __future__ import annotations

import filecmp
import re
from collections import Counter
from pathlib import Path

import orjson
import pytest

from sitegen.resources import resource_dir
from sitegen.session.artifacts import artifacts_dir_for, subagent_transcripts
from sitegen.session.session import open_session
from sitegen.site.prompts.demo import demo_prompts
from sitegen.transcript.from_pi import transcript_from_session
from tools.demo.__main__ import write_demo

DEMO = resource_dir("demo")
PI = DEMO / "pi"
SESSIONS = sorted((PI / "sessions").glob("*/*.jsonl"))
ALL_FILES = sorted((PI / "sessions").rglob("*.jsonl"))  # subagents too


def records(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_the_committed_demo_is_what_tools_demo_writes(tmp_path: Path) -> None:
    """Edit tools/demo/*.py, then `python -m tools.demo` to rewrite sitegen/demo/pi."""
    write_demo(tmp_path)
    ours = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(PI) for p in PI.rglob("*") if p.is_file())
    assert ours == committed
    _, mismatch, errors = filecmp.cmpfiles(tmp_path, PI, [str(p) for p in ours], shallow=False)
    assert mismatch == [] and errors == []


def test_the_demo_stays_small() -> None:
    size = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert size < 600_000  # the generated demo it replaced weighed 2.4 MB


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.stem[-12:])
def test_each_file_is_a_valid_v3_session(path: Path) -> None:
    lines = records(path)
    if lines[0]["type"] == "title":  # oh-my-pi's title slot comes before the header
        assert lines[0]["v"] == 1 and lines[0]["title"]
        lines = lines[1:]
    header, entries = lines[0], lines[1:]
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"].startswith("/home/mira/")
    seen: set[str] = set()
    calls: set[str] = set()
    last = ""
    for entry in entries:
        entry_id, stamp = str(entry["id"]), str(entry["timestamp"])
        assert re.fullmatch(r"[0-9a-f]{8}", entry_id) and entry_id not in seen
        assert entry["parentId"] is None or entry["parentId"] in seen
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp) and stamp >= last
        seen.add(entry_id)
        last = stamp
        message = entry.get("message")
        if isinstance(message, dict):
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    calls.add(block["id"])
            if message["role"] == "toolResult":
                assert message["toolCallId"] in calls
    transcript = transcript_from_session(open_session(path))
    assert transcript.malformed_lines == 0 and not transcript.truncated_tail
    assert len(transcript.nodes) == len(entries)


def test_blobs_artifacts_and_subagents_resolve() -> None:
    for path in SESSIONS:
        text = path.read_text(encoding="utf-8")
        for digest in re.findall(r"blob:sha256:([0-9a-f]{64})", text):
            assert (PI / "blobs" / digest).is_file()
        folder = artifacts_dir_for(path)
        assert folder is not None
        for artifact in re.findall(r"artifact://(\d+)", text):
            assert len(list(folder.glob(f"{artifact}.*.log"))) == 1
        agents = {s.qualified_id for s in subagent_transcripts(folder)}
        assert set(re.findall(r"agent://([\w-]+)", text)) <= agents


def test_the_demo_shows_every_feature() -> None:
    kinds: Counter[str] = Counter()
    for path in ALL_FILES:
        for record in records(path):
            kinds[str(record["type"])] += 1
            message = record.get("message")
            if not isinstance(message, dict):
                if record["type"] == "model_change":
                    kinds["model_change:" + ("omp" if "model" in record else "pi")] += 1
                continue
            kinds["role:" + str(message["role"])] += 1
            if message.get("isError"):
                kinds["failed tool call"] += 1
            for block in message.get("content") or []:
                if isinstance(block, dict):
                    kinds[f"{message['role']}:{block.get('type')}"] += 1
            if (message.get("details") or {}).get("artifactId") is not None:
                kinds["artifact"] += 1
        if "parentSession" in records(path)[0]:
            kinds["fork"] += 1
    wanted = [
        "title", "session_info", "model_change:pi", "model_change:omp", "thinking_level_change", "compaction",
        "branch_summary", "label", "role:bashExecution", "user:image", "toolResult:image", "assistant:thinking",
        "assistant:toolCall", "failed tool call", "artifact", "fork",
    ]  # fmt: skip
    assert [w for w in wanted if not kinds[w]] == []
    subagents = [s for path in SESSIONS for s in subagent_transcripts(artifacts_dir_for(path) or path)]
    assert [s.qualified_id for s in subagents] == ["0-ColumnAudit"] and subagents[0].output is not None
    odek = sorted(p.name for p in (DEMO / "odek" / "sessions").glob("*.json"))
    assert len(odek) == 4 and (DEMO / "odek" / "sessions" / "audit").is_dir()


def test_the_fork_names_its_parent_and_copies_its_entries() -> None:
    fork = next(p for p in SESSIONS if "parentSession" in records(p)[0])
    parent_name = str(records(fork)[0]["parentSession"]).rsplit("/", 1)[-1]
    parent = fork.with_name(parent_name)
    assert parent.is_file()
    copied = [r for r in records(fork)[1:] if r["type"] == "message"][:3]
    assert all(r in records(parent) for r in copied)


def test_demo_prompts_are_the_typed_prompts_once_each() -> None:
    prompts = demo_prompts()
    assert len(prompts) == 12
    assert [p.created_ms for p in prompts] == sorted(p.created_ms for p in prompts)
    assert {p.cwd for p in prompts} == {"/home/mira/code/moneta", "/home/mira/work/linkcheck"}
    assert len({p.entry_id for p in prompts}) == len(prompts)
    assert prompts[0].prompt.startswith("moneta import blows up on the ING export")
    assert not any(p.prompt.startswith("Find every place") for p in prompts)  # a subagent's assignment
    ids = {str(r["id"]) for path in SESSIONS for r in records(path)[:2] if r["type"] == "session"}
    assert {p.session_id for p in prompts} <= ids
