"""Migrations v1 -> v2 -> v3 as the seed describes them, checked step by step against before/after files."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sitegen.session.load import load_raw
from sitegen.session.migrate import (
    MIGRATIONS,
    MigrationReport,
    header_version,
    migrate,
    migrate_v1_to_v2,
    migrate_v2_to_v3,
)
from sitegen.session.session import open_session

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
STEPS = FIXTURES / "migrate"

# Fields of an entry that name another entry by id.
_ID_FIELDS = ("parentId", "firstKeptEntryId", "targetId", "fromId")


def read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return records[0], records[1:]


def symbolic(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries with each id replaced by "@<position>", so generated ids compare by where they point."""
    names = {e["id"]: f"@{n}" for n, e in enumerate(entries, start=1) if isinstance(e.get("id"), str)}
    result = copy.deepcopy(entries)
    for e in result:
        if isinstance(e.get("id"), str):
            e["id"] = names[e["id"]]
        for key in _ID_FIELDS:
            if isinstance(e.get(key), str) and e[key] in names:
                e[key] = names[e[key]]
    return result


def test_migrations_are_an_ordered_list_of_steps() -> None:
    assert [(below, step) for below, _, step in MIGRATIONS] == [(2, migrate_v1_to_v2), (3, migrate_v2_to_v3)]


# --- one step at a time, against the before/after fixtures -------------------------------------------


def test_v1_to_v2_step_matches_its_after_fixture() -> None:
    header, entries = read(STEPS / "v1_to_v2.before.jsonl")
    want_header, want_entries = read(STEPS / "v1_to_v2.after.jsonl")
    report = MigrationReport(from_version=1)
    migrate_v1_to_v2(header, entries, report)
    assert header == want_header
    assert symbolic(entries) == want_entries
    assert report.ids_added == 6
    assert report.compactions_relinked == 1


def test_v1_to_v2_gives_every_entry_a_distinct_eight_character_id() -> None:
    header, entries = read(STEPS / "v1_to_v2.before.jsonl")
    migrate_v1_to_v2(header, entries, MigrationReport(from_version=1))
    ids = [e["id"] for e in entries]
    assert all(isinstance(i, str) and len(i) == 8 for i in ids)
    assert len(set(ids)) == len(ids)
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]


def test_v2_to_v3_step_matches_its_after_fixture() -> None:
    header, entries = read(STEPS / "v2_to_v3.before.jsonl")
    want_header, want_entries = read(STEPS / "v2_to_v3.after.jsonl")
    report = MigrationReport(from_version=2)
    migrate_v2_to_v3(header, entries, report)
    assert (header, entries) == (want_header, want_entries)
    assert report.hook_messages_renamed == 1


def test_v1_migrates_through_both_steps_to_v3() -> None:
    header, entries = read(STEPS / "v1_to_v2.before.jsonl")
    want_header, want_entries = read(STEPS / "v2_to_v3.after.jsonl")
    report = migrate(header, entries)
    assert header == want_header
    assert symbolic(entries) == want_entries
    assert report.from_version == 1
    assert report.to_version == 3
    assert report.steps == ["v1 -> v2", "v2 -> v3"]
    assert report.changed is True


def test_v2_file_runs_only_the_second_step() -> None:
    header, entries = read(STEPS / "v2_to_v3.before.jsonl")
    want_header, want_entries = read(STEPS / "v2_to_v3.after.jsonl")
    report = migrate(header, entries)
    assert (header, entries) == (want_header, want_entries)
    assert report.steps == ["v2 -> v3"]
    assert report.ids_added == 0


# --- v1: firstKeptEntryIndex counts the header as record 0 -------------------------------------------


def test_v1_first_kept_index_points_at_that_record_after_the_header() -> None:
    session = open_session(FIXTURES / "v1_compaction.jsonl")
    compaction = next(e for e in session.entries if e["type"] == "compaction")
    assert "firstKeptEntryIndex" not in compaction
    kept = session.by_id[compaction["firstKeptEntryId"]]
    # firstKeptEntryIndex 4 is the fourth record after the header: the second user message.
    assert kept is session.entries[3]
    assert kept["message"]["content"] == "ZZ_V1_REC4_USER_ZZ"
    assert session.migration.compactions_relinked == 1


@pytest.mark.parametrize("index", [0, 99, -1, "2", None])
def test_v1_first_kept_index_that_names_no_entry_links_nothing(index: object) -> None:
    header = {"type": "session", "id": "mig-bad-index"}
    entries: list[dict[str, Any]] = [
        {"type": "message", "message": {"role": "user", "content": "a"}},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": index},
    ]
    report = migrate(header, entries)
    assert "firstKeptEntryId" not in entries[1]
    assert report.compactions_relinked == 0
    assert header["version"] == 3


def test_v1_hook_messages_become_custom_and_other_fields_stay() -> None:
    session = open_session(FIXTURES / "v1_compaction.jsonl")
    hook = session.entries[6]
    assert hook["message"] == {
        "role": "custom",
        "customType": "my-hook",
        "content": "ZZ_V1_REC7_HOOK_ZZ",
        "display": True,
        "timestamp": 1764583207000,
    }
    # Header fields v1 files carry survive migration.
    assert session.header["provider"] == "anthropic"
    assert session.header["modelId"] == "claude-opus-4-5"
    assert session.header["branchedFrom"].endswith("_v1-parent.jsonl")
    assert session.header["version"] == 3


# --- versions and determinism ---------------------------------------------------------------------


def test_migration_is_deterministic() -> None:
    first = open_session(FIXTURES / "v1_compaction.jsonl")
    second = open_session(FIXTURES / "v1_compaction.jsonl")
    assert [e["id"] for e in first.entries] == [e["id"] for e in second.entries]
    assert first.entries == second.entries


def test_v3_file_is_unchanged() -> None:
    raw = load_raw(FIXTURES / "seed_v3.jsonl")
    header, entries = copy.deepcopy(raw.header), copy.deepcopy(raw.entries)
    report = migrate(raw.header, raw.entries)
    assert report.changed is False
    assert report.steps == []
    assert (raw.header, raw.entries) == (header, entries)


def test_v2_file_keeps_its_branches() -> None:
    # Relinking in file order is for v1 only; a v2 tree must keep its parentIds.
    session = open_session(FIXTURES / "v2_hook_message.jsonl")
    assert [e["parentId"] for e in session.entries] == [None, "aa000001", "aa000001", "aa000002"]
    assert [e["id"] for e in session.entries] == ["aa000001", "aa000002", "aa000003", "aa000004"]
    assert session.entries[1]["message"]["role"] == "custom"
    assert session.entries[1]["message"]["details"] == {"k": 1}
    # Only message roles are renamed, not a custom_message's customType.
    assert session.entries[3]["customType"] == "hookMessage"
    assert session.header["version"] == 3
    assert session.migration.steps == ["v2 -> v3"]


@pytest.mark.parametrize(("version", "expected"), [(None, 1), (1, 1), (0, 0), (2, 2), (3, 3)])
def test_header_version(version: object, expected: int) -> None:
    header: dict[str, Any] = {"type": "session", "id": "x"}
    if version is not None:
        header["version"] = version
    assert header_version(header) == expected


@pytest.mark.parametrize("version", [0, 1])
def test_explicit_old_versions_migrate_like_missing_ones(version: int) -> None:
    header: dict[str, Any] = {"type": "session", "id": "x", "version": version}
    entries: list[dict[str, Any]] = [{"type": "message", "message": {"role": "hookMessage", "content": "h"}}]
    report = migrate(header, entries)
    assert report.steps == ["v1 -> v2", "v2 -> v3"]
    assert isinstance(entries[0]["id"], str)
    assert entries[0]["parentId"] is None
    assert entries[0]["message"]["role"] == "custom"


def test_future_version_is_left_alone() -> None:
    header: dict[str, Any] = {"type": "session", "id": "x", "version": 4}
    entries: list[dict[str, Any]] = [{"type": "message", "message": {"role": "hookMessage", "content": "h"}}]
    assert migrate(header, entries).changed is False
    assert entries == [{"type": "message", "message": {"role": "hookMessage", "content": "h"}}]


def test_migration_happens_in_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    shutil.copyfile(FIXTURES / "v1_compaction.jsonl", path)
    before = path.read_bytes()
    session = open_session(path)
    assert session.migration.changed is True
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v1.jsonl"]
