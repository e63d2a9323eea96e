"""The three real session files: they load cleanly, migrate, pair tool calls, and are never modified.

Expected figures were counted independently from the raw JSON lines (see the helpers below)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.session.context import build_session_context
from sitegen.session.load import read_header
from sitegen.session.session import Session, open_session
from sitegen.transcript.from_pi import transcript_from_session

OMP = "omp-large-session.title-v3.jsonl"
PI_LARGE = "pi-large-session.v1.jsonl"
PI_COMPACTION = "pi-before-compaction.v1.jsonl"
ALL = [OMP, PI_LARGE, PI_COMPACTION]

# name -> (entries, tool calls, tool results, context message count at the default leaf)
FIGURES = {
    OMP: (1019, 391, 373, 914),
    PI_LARGE: (1018, 391, 373, 914),
    PI_COMPACTION: (1002, 454, 448, 446),
}


def records(path: Path) -> list[dict[str, Any]]:
    """Every line as the standard library parses it: the independent reading the figures come from."""
    with open(path, "rb") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def raw_entries(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if r.get("type") not in ("session", "title")]


def fingerprint(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), stat.st_size, stat.st_mtime_ns


def without_links(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("id", "parentId", "firstKeptEntryId")}


def open_real(folder: Path, name: str) -> Session:
    return open_session(folder / name)


@pytest.mark.parametrize("name", ALL)
def test_loads_with_no_malformed_lines(real_fixtures: Path, name: str) -> None:
    session = open_real(real_fixtures, name)
    assert session.raw.malformed_lines == 0
    assert session.raw.truncated_tail is False
    assert len(session.entries) == FIGURES[name][0]
    # Apart from the ids a migration adds, every entry is exactly what the file holds.
    expected = [without_links(e) for e in raw_entries(real_fixtures / name)]
    for entry in expected:
        entry.pop("firstKeptEntryIndex", None)
    assert [without_links(e) for e in session.entries] == expected


@pytest.mark.parametrize("name", ALL)
def test_every_entry_has_a_unique_id_on_one_linear_chain(real_fixtures: Path, name: str) -> None:
    session = open_real(real_fixtures, name)
    ids = [e["id"] for e in session.entries]
    assert all(isinstance(i, str) and len(i) == 8 for i in ids)
    assert len(set(ids)) == len(ids)
    assert [e["parentId"] for e in session.entries] == [None, *ids[:-1]]
    tree = session.tree
    assert tree.roots == [ids[0]]
    assert tree.leaves() == [ids[-1]]
    assert tree.default_leaf == ids[-1]
    assert tree.depth_first()[-1] == (ids[-1], len(ids) - 1)


@pytest.mark.parametrize("name", [PI_LARGE, PI_COMPACTION])
def test_v1_files_migrate(real_fixtures: Path, name: str) -> None:
    assert "version" not in records(real_fixtures / name)[0]
    session = open_real(real_fixtures, name)
    report = session.migration
    assert (report.from_version, report.to_version) == (1, 3)
    assert report.steps == ["v1 -> v2", "v2 -> v3"]
    assert report.ids_added == FIGURES[name][0]
    assert report.compactions_relinked == (2 if name == PI_COMPACTION else 0)
    assert session.header["version"] == 3


def test_compactions_are_relinked_to_the_right_entries(real_fixtures: Path) -> None:
    path = real_fixtures / PI_COMPACTION
    lines = records(path)  # lines[0] is the header: record 0
    compaction_records = [(n, r) for n, r in enumerate(lines) if r.get("type") == "compaction"]
    # Checked by hand: both keep from a user turn, the first from record 293, the second from 551.
    assert [(n, r["firstKeptEntryIndex"], r["tokensBefore"]) for n, r in compaction_records] == [
        (359, 293, 175004),
        (628, 551, 185014),
    ]
    assert lines[293]["message"]["content"][0]["text"] == "i reviwed what we have, it's good. continue"
    assert lines[551]["message"]["content"][0]["text"] == "can leave it"

    session = open_real(real_fixtures, PI_COMPACTION)
    compactions = [e for e in session.entries if e["type"] == "compaction"]
    assert compactions == [session.entries[358], session.entries[627]]
    for compaction, record in zip(compactions, (293, 551), strict=True):
        assert "firstKeptEntryIndex" not in compaction
        kept = session.by_id[compaction["firstKeptEntryId"]]
        assert kept is session.entries[record - 1]
        assert without_links(kept) == lines[record]


def test_omp_title_slot_is_recognised(real_fixtures: Path) -> None:
    path = real_fixtures / OMP
    first = records(path)[0]
    assert first["type"] == "title"
    session = open_real(real_fixtures, OMP)
    assert session.raw.title_slot == first
    assert session.header["id"] == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert session.migration.changed is False
    # The slot is empty and nothing else names the session.
    assert session.title is None
    assert read_header(path) == (session.header, first)


@pytest.mark.parametrize("name", ALL)
def test_tool_calls_pair_with_results(real_fixtures: Path, name: str) -> None:
    _, calls_expected, results_expected, _ = FIGURES[name]
    transcript = transcript_from_session(open_real(real_fixtures, name))
    calls = [(node, call) for node in transcript.nodes for call in node.tool_calls]
    results = [node for node in transcript.nodes if node.kind == "tool_result"]
    assert (len(calls), len(results)) == (calls_expected, results_expected)
    paired = [call for _, call in calls if call.result is not None]
    assert len(paired) == results_expected
    # Every result found its call, and by the right id.
    assert {call.result.call_id for call in paired if call.result} == {n.result.call_id for n in results if n.result}
    assert all(call.result is not None and call.result.call_id == call.id for call in paired)
    # Calls without a result come from turns that errored or were aborted, or ran into a compaction.
    reasons = Counter(node.meta.get("stopReason") for node, call in calls if call.result is None)
    expected = {"error": 16, "aborted": 2} if name != PI_COMPACTION else {"aborted": 5, "toolUse": 1}
    assert reasons == expected


@pytest.mark.parametrize("name", ALL)
def test_totals_match_an_independent_count(real_fixtures: Path, name: str) -> None:
    messages = [e["message"] for e in raw_entries(real_fixtures / name) if e.get("type") == "message"]
    roles = Counter(m["role"] for m in messages)
    cost = sum(m["usage"]["cost"]["total"] for m in messages if m["role"] == "assistant" and "usage" in m)
    output = sum(m["usage"]["output"] for m in messages if m["role"] == "assistant" and "usage" in m)
    totals = transcript_from_session(open_real(real_fixtures, name)).totals()
    assert totals.user_messages == roles["user"]
    assert totals.messages == roles["user"] + roles["assistant"]
    assert totals.usage.output == output
    assert totals.usage.cost == pytest.approx(cost)


@pytest.mark.parametrize("name", [OMP, PI_LARGE])
def test_context_of_the_uncompacted_session(real_fixtures: Path, name: str) -> None:
    session = open_real(real_fixtures, name)
    context = build_session_context(session.entries)
    assert len(context.messages) == FIGURES[name][3]
    assert Counter(m["role"] for m in context.messages) == {"user": 88, "assistant": 453, "toolResult": 373}
    assert context.leaf_id == session.entries[-1]["id"]
    assert context.thinking_level == "off"
    assert context.models == {"default": "anthropic/claude-sonnet-4-5"}
    assert (context.mode, context.mode_data, context.injected_ttsr_rules) == ("none", None, [])


def test_context_after_the_two_compactions(real_fixtures: Path) -> None:
    session = open_real(real_fixtures, PI_COMPACTION)
    context = build_session_context(session.entries)
    # Summary, then records 551..627 (77 messages), then the 368 messages after record 628.
    assert len(context.messages) == 446
    assert Counter(m["role"] for m in context.messages) == {
        "compactionSummary": 1,
        "user": 31,
        "assistant": 219,
        "toolResult": 192,
        "bashExecution": 3,
    }
    assert context.messages[0]["role"] == "compactionSummary"
    assert context.messages[0]["tokensBefore"] == 185014
    assert context.messages[1]["content"][0]["text"] == "can leave it"
    assert context.messages[1] is session.entries[550]["message"]
    assert context.messages[-1] is session.entries[-2]["message"]  # the last entry is a thinking change
    assert context.thinking_level == "off"
    assert context.models == {"default": "anthropic/claude-opus-4-5"}

    # At the first compaction: its summary, then records 293..358.
    first = build_session_context(session.entries, session.entries[358]["id"], session.by_id)
    assert len(first.messages) == 67
    assert first.messages[0]["tokensBefore"] == 175004
    assert first.messages[1]["content"][0]["text"] == "i reviwed what we have, it's good. continue"
    assert first.thinking_level == "high"


@pytest.mark.parametrize("name", ALL)
def test_context_is_stable(real_fixtures: Path, name: str) -> None:
    one = open_real(real_fixtures, name)
    two = open_real(real_fixtures, name)
    assert [e["id"] for e in one.entries] == [e["id"] for e in two.entries]
    a = orjson.dumps(build_session_context(one.entries).to_json())
    b = orjson.dumps(build_session_context(two.entries, two.tree.default_leaf, two.by_id).to_json())
    assert a == b


def test_omp_file_is_the_pi_large_session_carried_forward(real_fixtures: Path) -> None:
    # Same session id, same entries in the same order, plus omp's closing custom entry.
    omp = open_real(real_fixtures, OMP)
    pi = open_real(real_fixtures, PI_LARGE)
    assert omp.id == pi.id

    def shape(session: Session) -> list[tuple[Any, ...]]:
        return [(e["type"], e["timestamp"], e.get("message", {}).get("role")) for e in session.entries]

    assert shape(omp)[:-1] == shape(pi)
    assert omp.entries[-1]["type"] == "custom"
    assert omp.entries[-1]["customType"] == "session_exit"


def test_loading_never_modifies_the_files(real_fixtures: Path) -> None:
    before = {name: fingerprint(real_fixtures / name) for name in ALL}
    listing = sorted(p.name for p in real_fixtures.iterdir())
    for name in ALL:
        session = open_real(real_fixtures, name)
        transcript_from_session(session)
        build_session_context(session.entries)
        read_header(real_fixtures / name)
    assert {name: fingerprint(real_fixtures / name) for name in ALL} == before
    assert sorted(p.name for p in real_fixtures.iterdir()) == listing
