"""The odek store reader: ids, loading refusals, index and scan listing, latest, turns and times."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.errors import AmbiguousSession, NotASession, SessionNotFound
from sitegen.odek.store import (
    MAX_SESSION_BYTES,
    InvalidSessionId,
    OdekStore,
    default_odek_dirs,
    is_session_filename,
    load_odek_file,
    parse_time_ns,
    validate_session_id,
)

ZERO = "0001-01-01T00:00:00Z"
ID_A = "20260518-0123456789abcdef0123456789abcdef"
ID_B = "20260519-fedcba9876543210fedcba9876543210"
ID_C = "20260301-abc123"


def session_doc(session_id: str, updated: str, *, users: int = 1, **extra: Any) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are odek."}]
    for n in range(users):
        messages.append({"role": "user", "content": f"question {n}"})
        messages.append({"role": "assistant", "content": f"answer {n}"})
    doc: dict[str, Any] = {
        "id": session_id,
        "created_at": "2026-05-18T09:00:00.000000001Z",
        "updated_at": updated,
        "model": "gpt-5",
        "turns": users,
        "task": f"task of {session_id}",
        "sandbox": False,
        "messages": messages,
    }
    doc.update(extra)
    return doc


def write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(value))
    return path


def index_row(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    row = {
        "id": doc["id"],
        "title": doc["task"],
        "created_at": doc["created_at"],
        "updated_at": doc["updated_at"],
        "turns": doc["turns"],
    }
    row.update(changes)
    return row


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


# --- ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "/etc/passwd", "a\\b", "a..b", "..hidden", "x\x00y"])
def test_validate_session_id_rejects_what_odek_rejects(bad: str) -> None:
    with pytest.raises(InvalidSessionId):
        validate_session_id(bad)


@pytest.mark.parametrize("good", [ID_A, ID_C, "a.b", "x-y_z", ".x"])
def test_validate_session_id_accepts_safe_ids(good: str) -> None:
    assert validate_session_id(good) == good


def test_validate_session_id_rejects_non_strings() -> None:
    with pytest.raises(InvalidSessionId):
        validate_session_id(None)


def test_invalid_id_is_refused_before_any_path_is_built(store_dir: Path, tmp_path: Path) -> None:
    # A session file outside the store that a traversal id would reach.
    write(tmp_path / "outside.json", session_doc("../outside", "2026-05-18T10:00:00Z"))
    store = OdekStore(store_dir)
    for bad in ("../outside", "..", "a/../../outside", "x\x00"):
        with pytest.raises(InvalidSessionId):
            store.load(bad)
        with pytest.raises(InvalidSessionId):
            store.path(bad)


# --- loading ---------------------------------------------------------------------------------


def test_load_reads_a_session_and_ignores_unknown_keys(store_dir: Path) -> None:
    doc = session_doc(ID_A, "2026-05-18T10:00:00Z", future_field={"x": 1}, buffer=["did a", 3, "did b"])
    write(store_dir / f"{ID_A}.json", doc)
    session = OdekStore(store_dir).load(ID_A)
    assert session.id == ID_A
    assert session.model == "gpt-5"
    assert session.task == f"task of {ID_A}"
    assert session.buffer == ["did a", "did b"]
    assert session.data["future_field"] == {"x": 1}
    assert len(session.messages) == 3


def test_load_missing_session(store_dir: Path) -> None:
    store_dir.mkdir()
    with pytest.raises(SessionNotFound) as caught:
        OdekStore(store_dir).load(ID_A)
    assert not isinstance(caught.value, InvalidSessionId)


def test_load_refuses_id_mismatch(store_dir: Path) -> None:
    write(store_dir / f"{ID_A}.json", session_doc(ID_B, "2026-05-18T10:00:00Z"))
    with pytest.raises(NotASession, match="ID mismatch"):
        OdekStore(store_dir).load(ID_A)


def test_load_refuses_a_file_without_id(store_dir: Path) -> None:
    doc = session_doc(ID_A, "2026-05-18T10:00:00Z")
    del doc["id"]
    write(store_dir / f"{ID_A}.json", doc)
    with pytest.raises(NotASession, match="ID mismatch"):
        OdekStore(store_dir).load(ID_A)


def test_load_refuses_files_over_32_mib(store_dir: Path) -> None:
    store_dir.mkdir()
    path = store_dir / f"{ID_A}.json"
    path.write_bytes(orjson.dumps({"id": ID_A}))
    os.truncate(path, 33 * 1024 * 1024)  # sparse: no 33 MiB actually written
    assert path.stat().st_size > MAX_SESSION_BYTES
    with pytest.raises(NotASession, match="32 MiB") as caught:
        OdekStore(store_dir).load(ID_A)
    assert "\n" not in str(caught.value)


def test_load_reports_parse_errors(store_dir: Path) -> None:
    store_dir.mkdir()
    (store_dir / f"{ID_A}.json").write_text('{"id": "' + ID_A + '", "messages": [', encoding="utf-8")
    with pytest.raises(NotASession, match="Cannot parse") as caught:
        OdekStore(store_dir).load(ID_A)
    assert "\n" not in str(caught.value)


def test_load_refuses_non_object_json_and_directories(store_dir: Path) -> None:
    write(store_dir / f"{ID_A}.json", [1, 2])
    (store_dir / f"{ID_B}.json").mkdir()
    with pytest.raises(NotASession, match="JSON object"):
        OdekStore(store_dir).load(ID_A)
    with pytest.raises(NotASession, match="directory"):
        OdekStore(store_dir).load(ID_B)


def test_load_odek_file_checks_the_name(tmp_path: Path) -> None:
    write(tmp_path / "notes.txt", {"id": "notes"})
    with pytest.raises(NotASession):
        load_odek_file(tmp_path / "notes.txt")
    write(tmp_path / f"{ID_C}.json", session_doc(ID_C, "2026-05-18T10:00:00Z"))
    assert load_odek_file(tmp_path / f"{ID_C}.json").id == ID_C


# --- times and turns -------------------------------------------------------------------------


def test_parse_time_keeps_nanoseconds_and_offsets() -> None:
    base = parse_time_ns("2026-05-18T10:00:00Z")
    assert base is not None
    assert parse_time_ns("2026-05-18T10:00:00.123456789Z") == base + 123_456_789
    assert parse_time_ns("2026-05-18T12:00:00.5+02:00") == base + 500_000_000
    assert parse_time_ns("2026-05-18T10:00:00.000000001Z") == base + 1


@pytest.mark.parametrize("unknown", [ZERO, "0001-01-01T00:00:00.000000000Z", "", "yesterday", None, 5])
def test_zero_and_unreadable_times_are_unknown(unknown: object) -> None:
    assert parse_time_ns(unknown) is None


def test_session_times_and_zero_times(store_dir: Path) -> None:
    write(store_dir / f"{ID_A}.json", session_doc(ID_A, ZERO, created_at=ZERO))
    session = OdekStore(store_dir).load(ID_A)
    assert session.created_ns is None
    assert session.updated_ns is None
    entry = session.entry()
    assert entry.created_ms is None and entry.updated_ms is None


def test_turns_count_user_messages(store_dir: Path) -> None:
    # A direct Save leaves the stored count stale; odek's countUserTurns is the truth.
    doc = session_doc(ID_A, "2026-05-18T10:00:00Z", users=3)
    doc["turns"] = 0
    doc["messages"].append({"role": "tool", "content": "x", "tool_call_id": "c"})
    write(store_dir / f"{ID_A}.json", doc)
    session = OdekStore(store_dir).load(ID_A)
    assert session.turns == 3
    assert OdekStore(store_dir).list()[0].turns == 3


# --- listing ---------------------------------------------------------------------------------


def make_three(store_dir: Path) -> list[dict[str, Any]]:
    docs = [
        session_doc(ID_A, "2026-05-18T10:00:00.000000002Z"),
        session_doc(ID_B, "2026-05-19T08:00:00Z", users=2),
        session_doc(ID_C, "2026-05-18T10:00:00.000000001Z"),
    ]
    for doc in docs:
        write(store_dir / f"{doc['id']}.json", doc)
    return docs


def test_list_from_index_orders_by_updated_descending(store_dir: Path) -> None:
    docs = make_three(store_dir)
    # The index is in no particular order and its titles may differ from the files': it is used as is.
    rows = [index_row(docs[2]), index_row(docs[0], title="From index"), index_row(docs[1])]
    write(store_dir / "index.json", rows)
    entries = OdekStore(store_dir).list()
    assert [e.id for e in entries] == [ID_B, ID_A, ID_C]
    assert entries[1].title == "From index"
    assert entries[0].turns == 2
    assert entries[0].path == store_dir / f"{ID_B}.json"


def test_list_skips_stale_index_entries_with_a_warning(store_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    docs = make_three(store_dir)
    gone = session_doc("20260101-aaaaaa", "2026-06-01T00:00:00Z")
    write(store_dir / "index.json", [index_row(d) for d in [*docs, gone]] + [{"id": "../evil"}])
    with caplog.at_level(logging.WARNING, logger="sitegen.odek.store"):
        entries = OdekStore(store_dir).list()
    assert [e.id for e in entries] == [ID_B, ID_A, ID_C]
    assert "20260101-aaaaaa" in caplog.text
    assert "stale" in caplog.text


def test_list_adds_sessions_the_index_missed(store_dir: Path) -> None:
    docs = make_three(store_dir)
    write(store_dir / "index.json", [index_row(docs[0])])
    assert [e.id for e in OdekStore(store_dir).list()] == [ID_B, ID_A, ID_C]


@pytest.mark.parametrize("index", ["missing", "garbage", "object", "empty", "directory"])
def test_list_falls_back_to_scanning(store_dir: Path, index: str) -> None:
    make_three(store_dir)
    path = store_dir / "index.json"
    if index == "garbage":
        path.write_text("[{not json", encoding="utf-8")
    elif index == "object":
        write(path, {"id": ID_A})
    elif index == "empty":
        write(path, [])
    elif index == "directory":
        path.mkdir()
    # Files that are not sessions, as the store holds them beside the sessions.
    write(store_dir / "vectors_meta.json", {"id": "vectors_meta"})
    (store_dir / "vectors.gob").write_bytes(b"\x00gob")
    write(store_dir / f".{ID_A}.json.tmp-9f3a2c", session_doc(ID_A, "2030-01-01T00:00:00Z"))
    write(store_dir / ".hidden.json", session_doc(".hidden", "2030-01-01T00:00:00Z"))
    write(store_dir / "audit" / f"{ID_A}.json", {"session_id": ID_A, "ingests": [], "turns": []})
    entries = OdekStore(store_dir).list()
    assert [e.id for e in entries] == [ID_B, ID_A, ID_C]
    assert entries[0].title == f"task of {ID_B}"


def test_scan_skips_unloadable_files_with_a_warning(store_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    make_three(store_dir)
    write(store_dir / "20260520-badbad.json", session_doc("20260520-other", "2030-01-01T00:00:00Z"))
    (store_dir / "20260521-broken.json").write_text("{", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="sitegen.odek.store"):
        entries = OdekStore(store_dir).list()
    assert [e.id for e in entries] == [ID_B, ID_A, ID_C]
    assert "ID mismatch" in caplog.text and "20260521-broken" in caplog.text


def test_unknown_update_times_sort_last(store_dir: Path) -> None:
    make_three(store_dir)
    write(store_dir / "20260101-zzzzzz.json", session_doc("20260101-zzzzzz", ZERO))
    assert [e.id for e in OdekStore(store_dir).list()][-1] == "20260101-zzzzzz"


def test_list_of_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert OdekStore(tmp_path / "nope").list() == []


def test_is_session_filename() -> None:
    assert is_session_filename(f"{ID_A}.json")
    for name in ("index.json", "vectors_meta.json", ".x.json", f".{ID_A}.json.tmp-1f2e", "a.jsonl", "..json"):
        assert not is_session_filename(name), name


# --- latest and resolve ----------------------------------------------------------------------


def test_latest_is_the_most_recently_updated(store_dir: Path) -> None:
    docs = make_three(store_dir)
    write(store_dir / "index.json", [index_row(d) for d in docs])
    assert OdekStore(store_dir).latest().id == ID_B


def test_latest_by_scan_and_empty_store(store_dir: Path, tmp_path: Path) -> None:
    make_three(store_dir)
    assert OdekStore(store_dir).latest().id == ID_B
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SessionNotFound, match="No odek sessions"):
        OdekStore(empty).latest()


def test_resolve_exact_prefix_and_ambiguous(store_dir: Path) -> None:
    make_three(store_dir)
    store = OdekStore(store_dir)
    assert store.resolve(ID_C).id == ID_C
    assert store.resolve("20260519").id == ID_B
    with pytest.raises(AmbiguousSession):
        store.resolve("202605")
    with pytest.raises(SessionNotFound):
        store.resolve("1999")


def test_reading_never_writes(store_dir: Path) -> None:
    docs = make_three(store_dir)
    write(store_dir / "index.json", [index_row(d) for d in docs] + [index_row(docs[0], id="20200101-gone00")])
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in store_dir.iterdir()}
    store = OdekStore(store_dir)
    store.list()
    store.latest()
    store.load(ID_C)
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in store_dir.iterdir()}
    assert after == before


# --- discovery -------------------------------------------------------------------------------


def test_default_odek_dirs(isolated_home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "more"
    extra.mkdir()
    assert default_odek_dirs() == []
    home_store = isolated_home / ".odek" / "sessions"
    home_store.mkdir(parents=True)
    assert default_odek_dirs([extra, str(extra), home_store]) == [home_store, extra]
    with pytest.raises(SessionNotFound, match="not found"):
        default_odek_dirs([tmp_path / "absent"])
