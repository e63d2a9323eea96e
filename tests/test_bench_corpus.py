"""The benchmark corpus generator writes small, valid sessions with every feature sitegen must read."""

from __future__ import annotations

import base64
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from sitegen.session.blobs import blob_hash
from sitegen.session.context import build_session_context
from sitegen.session.session import Session, open_session

CORPUS_PY = Path(__file__).resolve().parent.parent / "bench" / "corpus.py"


@pytest.fixture(scope="module")
def corpus() -> ModuleType:
    """bench/ is not a package: load corpus.py by path."""
    spec = importlib.util.spec_from_file_location("bench_corpus", CORPUS_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Dataclasses look their module up in sys.modules while the class body runs.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _raw_records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _messages(session: Session) -> list[dict[str, Any]]:
    return [entry["message"] for entry in session.entries if entry["type"] == "message"]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def test_sessions_open_with_every_feature(corpus: ModuleType, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    infos = [
        corpus.write_session(agent, seed=seed, target_bytes=220_000, cwd=cwd)
        for seed, cwd in ((11, "/home/dev/work/webapp"), (12, "C:\\Users\\sam\\projects\\game-engine"))
    ]
    seen = {"branches": 0, "compactions": 0, "images": 0, "artifacts": 0, "subagents": 0, "labels": 0}
    for info in infos:
        assert info.path.parent.name == corpus.encode_cwd(info.cwd)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl", info.path.name)
        session = open_session(info.path)
        assert session.header["version"] == 3 and session.cwd == info.cwd
        assert session.raw.malformed_lines == 0 and not session.migration.changed
        assert len(session.entries) == info.entries

        # Every tool call has its result; assistant messages carry usage with a cost.
        messages = _messages(session)
        calls = {
            block["id"]: block["name"]
            for message in messages
            if message["role"] == "assistant"
            for block in message["content"]
            if block["type"] == "toolCall"
        }
        results = {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}
        assert calls.keys() == results.keys()
        assert {"read", "bash", "edit"} <= set(calls.values())
        assert all(m["usage"]["cost"]["total"] >= 0 for m in messages if m["role"] == "assistant")
        assert any("-" in r["details"]["diff"] for r in results.values() if r["toolName"] == "edit" and r["details"])

        # Branches: more than one leaf, and the context at the default leaf builds.
        tree = session.tree
        seen["branches"] += len(tree.leaves()) - 1
        assert build_session_context(session.entries, by_id=session.by_id).messages
        for entry in session.entries:
            if entry["type"] == "compaction":
                seen["compactions"] += 1
                path = tree.path_to(entry["id"])
                assert entry["firstKeptEntryId"] in path[:-1]
            elif entry["type"] == "label":
                seen["labels"] += 1
                assert entry["targetId"] in session.by_id

        # Images: a blob ref in the file, base64 of the blob's bytes once opened.
        raw_by_id = {record["id"]: record for record in _raw_records(info.path)[1:] if "id" in record}
        blobs_dir = agent / "blobs"
        for entry_id, record in raw_by_id.items():
            message = record.get("message") or {}
            for index, block in enumerate(message.get("content") or []):
                if not isinstance(block, dict) or block.get("type") != "image":
                    continue
                digest = blob_hash(block["data"])
                assert digest is not None
                loaded = session.by_id[entry_id]["message"]["content"][index]["data"]
                assert base64.b64decode(loaded) == (blobs_dir / digest).read_bytes()
                seen["images"] += 1

        # Artifacts: artifact://N names N.bash.log; agent://id names id.md and a sidecar id.jsonl.
        folder = info.path.with_suffix("")
        for result in results.values():
            text = _text(result)
            for artifact_id in re.findall(r"artifact://(\d+)", text):
                log = (folder / f"{artifact_id}.bash.log").read_text(encoding="utf-8")
                tail = text.rsplit("\n\n[Showing lines", 1)[0]
                assert log.endswith(tail) and len(log) > len(tail)
                seen["artifacts"] += 1
            for output_id in re.findall(r"agent://([\w-]+)", text):
                assert (folder / f"{output_id}.md").read_text(encoding="utf-8").startswith("# ")
                sidecar = open_session(folder / f"{output_id}.jsonl")
                assert sidecar.header["parentSession"] == session.id
                assert _messages(sidecar)[0]["role"] == "user"
                seen["subagents"] += 1
    assert all(count > 0 for count in seen.values()), seen


def test_corpus_cli_is_deterministic(corpus: ModuleType, tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert corpus.main([str(tmp_path / name), "--sessions", "4", "--total-mb", "0.4", "--seed", "5"]) == 0
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    assert len({path.parts[1] for path in files_a if path.parts[0] == "sessions"}) >= 2
    for path in files_a:
        assert (tmp_path / "a" / path).read_bytes() == (tmp_path / "b" / path).read_bytes()


def test_sizes_are_log_normal_around_the_total(corpus: ModuleType) -> None:
    sizes = corpus.session_sizes(200, 120 * corpus.MB, seed=1)
    assert abs(sum(sizes) - 120 * corpus.MB) < corpus.MB
    median = sorted(sizes)[100]
    assert 0.25 * corpus.MB < median < 0.5 * corpus.MB
    assert max(sizes) > 8 * median
    with_one = corpus.session_sizes(200, 120 * corpus.MB, seed=1, one_bytes=18 * corpus.MB)
    assert 18 * corpus.MB in with_one and len(with_one) == 200


def test_deep_chain_session_opens_without_recursion(corpus: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "agent" / "sessions" / "--deep--" / "deep.jsonl"
    # Deeper than Python's default recursion limit, and still small enough to be quick.
    info = corpus.write_big_session(path, target_mb=0.3, seed=3, entries=150, chain_depth=3_000)
    assert info.main_depth >= 3_000 and info.markers > 0
    session = open_session(path)
    tree = session.tree
    assert len(tree.path_to(tree.default_leaf)) == info.main_depth
    assert max(depth for _, depth in tree.depth_first()) >= 2_999
    context = build_session_context(session.entries, by_id=session.by_id)
    assert context.leaf_id == session.entries[-1]["id"]
    assert context.messages


def test_a_big_session_can_have_a_crowded_artifact_folder(corpus: ModuleType, tmp_path: Path) -> None:
    # As a long omp session has it: many bash logs and subagent outputs, each output with its transcript.
    path = tmp_path / "agent" / "sessions" / "--crowded--" / "big.jsonl"
    info = corpus.write_big_session(path, 1.0, 4, deep_chain=False, entries=400, logs=40, subagents=60)
    folder = path.with_suffix("")
    logs = sorted(folder.glob("*.bash.log"))
    outputs = sorted(folder.glob("*.md"))
    # About as many as asked (subagents' own sessions may add a log or two).
    assert 30 <= info.artifacts <= len(logs) <= 50 and 45 <= info.subagents <= 75
    assert [p.with_suffix(".jsonl").is_file() for p in outputs] == [True] * len(outputs) == [True] * info.subagents
    text = path.read_text(encoding="utf-8")
    assert all(f"agent://{p.stem}" in text for p in outputs)
    # Each log is named by the session or by the subagent whose run wrote it.
    text += "".join(p.with_suffix(".jsonl").read_text(encoding="utf-8") for p in outputs)
    assert all(f"artifact://{p.name.split('.')[0]}]" in text for p in logs)
    assert open_session(path).raw.malformed_lines == 0


def test_plain_sessions_hold_only_what_pi_writes(corpus: ModuleType, tmp_path: Path) -> None:
    # The like-for-like corpus for pi-transcript: no omp title line or header title, no subagents or
    # artifacts, images inline as base64 (no blob store), pi's model_change form, no custom entries.
    agent = tmp_path / "agent"
    infos = [corpus.write_session(agent, seed=seed, target_bytes=400_000, plain=True) for seed in range(4)]
    assert not (agent / "blobs").exists() or not any((agent / "blobs").iterdir())
    images = 0
    for info in infos:
        assert not info.path.with_suffix("").exists() and info.artifacts == 0 and info.subagents == 0
        records = _raw_records(info.path)
        assert records[0]["type"] == "session" and "title" not in records[0]
        assert {record["type"] for record in records} <= {
            "session", "message", "model_change", "thinking_level_change", "compaction", "branch_summary", "label"
        }  # fmt: skip
        for record in records:
            if record["type"] == "model_change":
                assert set(record) >= {"provider", "modelId"}
            content = record.get("message", {}).get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "image":
                    images += 1
                    assert base64.b64decode(block["data"]).startswith(b"\x89PNG")
                if block.get("type") == "toolCall":
                    assert block["name"] in ("read", "bash", "edit", "write", "grep")
        session = open_session(info.path)
        assert len(session.entries) == len(records) - 1
    assert images > 0
