"""The session writer and its storage: tree appends, deferred and latched persistence, size controls."""

from __future__ import annotations

import base64
import copy
import errno
import hashlib
import logging
import os
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.errors import NotASession, PersistError
from sitegen.session.load import load_raw
from sitegen.session.session import open_session
from sitegen.session.storage import (
    FileSessionStorage,
    MemoryBlobStore,
    MemorySessionStorage,
    SessionStorage,
    SessionStorageWriter,
    atomic_write_bytes,
)
from sitegen.session.writer import (
    MAX_PERSIST_CHARS,
    TRUNCATION_NOTICE,
    SessionWriter,
    prepare_entry_for_persistence,
)

START = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
SESSION_ID = "0193c1a2-7d3e-7abc-8def-0123456789ab"


def fake_clock() -> Callable[[], datetime]:
    """A clock that starts at START and moves one second per reading."""
    ticks = iter(range(10**9))
    return lambda: START + timedelta(seconds=next(ticks))


def counter_ids() -> Callable[[], str]:
    numbers = iter(range(1, 10**9))
    return lambda: f"{next(numbers):08x}"


def new_writer(folder: Path, storage: SessionStorage | None = None, **options: Any) -> SessionWriter:
    return SessionWriter.create(
        folder,
        cwd="/work/demo",
        storage=storage,
        clock=fake_clock(),
        entry_ids=counter_ids(),
        session_id=SESSION_ID,
        **options,
    )


def user(text: str = "hello") -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    content = list(blocks) or [{"type": "text", "text": "done"}]
    return {"role": "assistant", "provider": "p", "model": "m", "content": content, "timestamp": 2}


def image(size: int, seed: int = 0) -> str:
    """Valid base64 of `size` bytes."""
    data = hashlib.shake_256(f"{seed}".encode()).digest(size) if size else b""
    return base64.b64encode(data).decode("ascii")


def stored_lines(writer: SessionWriter) -> list[dict[str, Any]]:
    text = writer.storage.read_text(writer.path)
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    return tmp_path / "agent" / "sessions" / "--work-demo--"


# --- creating and appending ---


def test_create_names_the_file_after_time_and_id(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    assert writer.header == {
        "type": "session",
        "version": 3,
        "id": SESSION_ID,
        "timestamp": "2026-01-02T03:04:05.678Z",
        "cwd": "/work/demo",
    }
    assert writer.path == sessions_dir / f"2026-01-02T03-04-05-678Z_{SESSION_ID}.jsonl"
    generated = SessionWriter.create(sessions_dir, cwd="/w")
    assert uuid.UUID(generated.session_id).version == 4
    assert generated.header["timestamp"].endswith("Z")


def test_every_append_method_adds_one_entry_under_the_leaf(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    first = writer.append_message(user())
    returned = [
        first,
        writer.append_message(assistant()),
        writer.append_thinking_level_change("high"),
        writer.append_model_change("openai/gpt-4o", "default"),
        writer.append_compaction("sum", first, 42000, short_summary="short", details={"read": ["a"]}),
        writer.append_custom("ext", {"state": 1}),
        writer.append_custom_message("ext", "C", details={"d": 0}),
        writer.append_label(first, "checkpoint"),
        writer.append_label(first, None),
        writer.append_ttsr_injection(["ruleA", "ruleB"]),
        writer.append_session_init("S", "T", ["read"], {}),
        writer.append_mode_change("plan", {"planFile": "/tmp/plan.md"}),
    ]
    assert [
        {k: v for k, v in entry.items() if k not in ("id", "parentId", "timestamp")} for entry in writer.entries
    ] == [
        {"type": "message", "message": user()},
        {"type": "message", "message": assistant()},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "model_change", "model": "openai/gpt-4o", "role": "default"},
        {
            "type": "compaction",
            "summary": "sum",
            "shortSummary": "short",
            "firstKeptEntryId": first,
            "tokensBefore": 42000,
            "details": {"read": ["a"]},
            "fromExtension": False,
        },
        {"type": "custom", "customType": "ext", "data": {"state": 1}},
        {"type": "custom_message", "customType": "ext", "content": "C", "display": True, "details": {"d": 0}},
        {"type": "label", "targetId": first, "label": "checkpoint"},
        {"type": "label", "targetId": first},
        {"type": "ttsr_injection", "injectedRules": ["ruleA", "ruleB"]},
        {"type": "session_init", "systemPrompt": "S", "task": "T", "tools": ["read"], "outputSchema": {}},
        {"type": "mode_change", "mode": "plan", "data": {"planFile": "/tmp/plan.md"}},
    ]
    # One entry per call, each under the one before it, each the leaf in turn.
    assert returned == [entry["id"] for entry in writer.entries]
    assert [entry["parentId"] for entry in writer.entries] == [None, *returned[:-1]]
    assert writer.leaf_id == returned[-1]
    assert len(set(returned)) == len(returned)
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in returned)
    assert writer.entries[0]["timestamp"] == "2026-01-02T03:04:06.678Z"
    writer.flush()
    assert stored_lines(writer)[1:] == writer.entries


def test_entry_ids_stay_unique_when_the_generator_repeats(sessions_dir: Path) -> None:
    repeats = iter(["aaaaaaaa", "aaaaaaaa", "aaaaaaaa", "bbbbbbbb"])
    writer = SessionWriter.create(sessions_dir, cwd="/w", entry_ids=lambda: next(repeats))
    assert [writer.append_message(user()), writer.append_message(user())] == ["aaaaaaaa", "bbbbbbbb"]


def test_labels_and_branches_need_an_existing_entry(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    with pytest.raises(ValueError, match="not found"):
        writer.append_label("deadbeef", "x")
    with pytest.raises(ValueError, match="not found"):
        writer.branch("deadbeef")
    with pytest.raises(ValueError, match="cannot set"):
        writer.append_entry("custom", {"id": "mine"})
    assert writer.entries == []


def test_branch_and_reset_move_only_the_leaf(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    root = writer.append_message(user("one"))
    writer.append_message(assistant())
    writer.append_message(user("two"))
    snapshot = copy.deepcopy(writer.entries)
    writer.branch(root)
    assert writer.leaf_id == root
    assert writer.entries == snapshot
    fork = writer.append_message(user("fork"))
    assert writer.by_id[fork]["parentId"] == root
    writer.reset_leaf()
    assert writer.leaf_id is None
    second_root = writer.append_model_change("a/b")
    assert writer.by_id[second_root]["parentId"] is None


def test_branch_with_summary(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    root = writer.append_message(user())
    writer.append_message(assistant())
    summary_id = writer.branch_with_summary(root, "abandoned", details={"note": 1}, from_extension=True)
    summary = writer.by_id[summary_id]
    assert (summary["parentId"], summary["fromId"], summary["summary"]) == (root, root, "abandoned")
    assert (summary["details"], summary["fromExtension"]) == ({"note": 1}, True)
    from_root = writer.by_id[writer.branch_with_summary(None, "from the top")]
    assert from_root["parentId"] is None
    assert from_root["fromId"] == "root"
    assert from_root["fromExtension"] is False
    assert "details" not in from_root


# --- when things are written ---


def test_nothing_is_written_before_the_first_assistant_message(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.append_message(user())
    writer.append_model_change("a/b")
    writer.flush()
    assert not sessions_dir.exists()
    assert not writer.is_persisted
    writer.append_message(assistant())
    assert writer.is_persisted
    assert stored_lines(writer) == [writer.header, *writer.entries]
    # Afterwards each append reaches the file at once, without a flush.
    writer.append_message(user("later"))
    assert stored_lines(writer)[-1] == writer.entries[-1]
    assert len(stored_lines(writer)) == 5
    # force writes a session that never got an answer.
    unanswered = new_writer(sessions_dir.parent / "other")
    unanswered.append_message(user())
    unanswered.flush(force=True)
    assert stored_lines(unanswered) == [unanswered.header, *unanswered.entries]


# --- preparing entries for disk ---


def test_large_strings_are_truncated_with_a_notice() -> None:
    exact = "x" * MAX_PERSIST_CHARS
    over = "é" * (MAX_PERSIST_CHARS + 1)
    entry = {"type": "message", "message": {"content": [{"type": "text", "text": over}], "note": exact}}
    prepared = prepare_entry_for_persistence(entry, None)
    text = prepared["message"]["content"][0]["text"]
    assert len(text) == MAX_PERSIST_CHARS
    assert text.endswith(TRUNCATION_NOTICE)
    assert text.startswith("é" * 1000)
    assert prepared["message"]["note"] == exact
    assert entry["message"]["content"][0]["text"] == over  # the input is untouched


def test_oversized_signatures_are_cleared_not_cut() -> None:
    big = "s" * (MAX_PERSIST_CHARS + 10)
    content = [{"type": "thinking", "thinkingSignature": big}, {"type": "text", "textSignature": big}]
    message = {"content": content, "thoughtSignature": big, "small": {"thinkingSignature": "keep"}}
    prepared = prepare_entry_for_persistence({"message": message}, None)["message"]
    assert prepared["content"][0]["thinkingSignature"] == ""
    assert prepared["content"][1]["textSignature"] == ""
    assert prepared["thoughtSignature"] == ""
    assert prepared["small"]["thinkingSignature"] == "keep"


def test_transient_fields_are_stripped_wherever_they_are() -> None:
    entry = {
        "type": "message",
        "jsonlEvents": ["a"],
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "arguments": {"a": 1}, "partialJson": '{"a":'}],
            "deep": [{"x": {"partialJson": "1", "jsonlEvents": [], "kept": True}}],
        },
    }
    original = copy.deepcopy(entry)
    prepared = prepare_entry_for_persistence(entry, None)
    assert "partialJson" not in orjson.dumps(prepared).decode()
    assert "jsonlEvents" not in orjson.dumps(prepared).decode()
    assert prepared["message"]["deep"] == [{"x": {"kept": True}}]
    assert entry == original


def test_line_count_follows_truncated_content() -> None:
    content = "line\n" * 200_000
    entry = {"details": {"content": content, "lineCount": 200_001}, "other": {"content": "a", "lineCount": 7}}
    prepared = prepare_entry_for_persistence(entry, None)
    kept = prepared["details"]["content"]
    assert kept.endswith(TRUNCATION_NOTICE)
    assert prepared["details"]["lineCount"] == kept.count("\n") + 1 < 200_001
    assert prepared["other"]["lineCount"] == 7  # not truncated: left as written


@pytest.mark.parametrize(("data", "externalized"), [(image(765), False), ("A" * 1023, False), (image(768), True)])
def test_image_externalization_threshold(data: str, externalized: bool) -> None:
    blobs = MemoryBlobStore()
    entry = {"message": {"content": [{"type": "image", "data": data, "mimeType": "image/png"}]}}
    stored = prepare_entry_for_persistence(entry, blobs)["message"]["content"][0]["data"]
    if externalized:
        assert len(data) == 1024
        digest = stored.removeprefix("blob:sha256:")
        assert blobs.blobs[digest] == base64.b64decode(data)
        assert digest == hashlib.sha256(base64.b64decode(data)).hexdigest()
    else:
        assert stored == data
        assert blobs.blobs == {}
    assert entry["message"]["content"][0]["data"] == data


def test_images_that_would_not_come_back_identical_stay_inline() -> None:
    blobs = MemoryBlobStore()
    ref = "blob:sha256:" + "a" * 64
    wrapped = image(2000)[:1000] + "\n" + image(2000)[1000:]
    content = [{"type": "image", "data": ref}, {"type": "image", "data": wrapped}]
    prepared = prepare_entry_for_persistence({"content": content}, blobs)
    assert [block["data"] for block in prepared["content"]] == [ref, wrapped]
    assert blobs.blobs == {}


def test_provider_image_urls_are_stored_as_their_original_string() -> None:
    blobs = MemoryBlobStore()
    url = "data:image/png;base64," + image(10)
    content = [
        {"type": "image_url", "image_url": {"url": url, "detail": "auto"}},
        {"type": "input_image", "image_url": url},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "image_url", "image_url": "data:text/plain;base64,QQ=="},
    ]
    prepared = prepare_entry_for_persistence({"message": {"content": content}}, blobs)["message"]["content"]
    ref = "blob:sha256:" + hashlib.sha256(url.encode()).hexdigest()
    assert prepared[0]["image_url"] == {"url": ref, "detail": "auto"}
    assert prepared[1]["image_url"] == ref
    assert prepared[2:] == content[2:]
    assert list(blobs.blobs.values()) == [url.encode()]


def test_round_trip_through_open_session_rehydrates_images(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    url = "data:image/jpeg;base64," + image(50, seed=3)
    writer.append_message({"role": "user", "content": [{"type": "image", "data": image(4000)}]})
    writer.append_message(assistant({"type": "text", "text": "seen"}, {"type": "image_url", "image_url": url}))
    writer.append_custom_message("ext", [{"type": "image", "data": image(900, seed=2), "mimeType": "x"}])
    writer.flush()
    on_disk = writer.path.read_text()
    assert image(4000) not in on_disk and url not in on_disk
    assert len(os.listdir(sessions_dir.parent.parent / "blobs")) == 3
    assert open_session(writer.path).entries == writer.entries


# --- rewrites, opening, storage failures ---


def test_set_title_rewrites_atomically(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.append_message(user())
    writer.append_message(assistant())
    writer.append_message(user("appended, so the append handle is open"))
    writer.set_title("ZZ_TITLE_1_ZZ")
    writer.append_message(user("after"))
    assert os.listdir(sessions_dir) == [writer.path.name]
    assert stored_lines(writer) == [{**writer.header, "title": "ZZ_TITLE_1_ZZ"}, *writer.entries]
    assert open_session(writer.path).title == "ZZ_TITLE_1_ZZ"


def test_atomic_write_bytes_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    atomic_write_bytes(target, b"one\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    target.chmod(0o640)
    atomic_write_bytes(target, b"two\n")
    assert (target.read_bytes(), stat.S_IMODE(target.stat().st_mode)) == (b"two\n", 0o640)
    (tmp_path / "folder").mkdir()
    with pytest.raises(OSError):
        atomic_write_bytes(tmp_path / "folder", b"x")  # the rename fails: a folder is in the way
    assert sorted(os.listdir(tmp_path)) == ["folder", "s.jsonl"]


def test_open_appends_under_the_last_entry(sessions_dir: Path) -> None:
    first = new_writer(sessions_dir)
    first.append_message(user())
    first.append_message(assistant())
    reopened = SessionWriter.open(first.path, clock=fake_clock(), entry_ids=counter_ids())
    assert (reopened.header, reopened.entries) == (first.header, first.entries)
    assert reopened.leaf_id == first.leaf_id
    new_id = reopened.append_message(user("again"))
    assert new_id not in first.by_id  # the generator repeats 00000001, 00000002: skipped
    assert reopened.by_id[new_id]["parentId"] == first.leaf_id
    assert load_raw(first.path).entries == reopened.entries


def test_open_migrates_old_files_and_keeps_lines_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    title_slot = {"type": "title", "v": 1, "title": "Old", "updatedAt": "x", "pad": "   "}
    lines = [
        orjson.dumps(title_slot).decode(),
        '{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}',
        '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"hookMessage","content":"h"}}',
        "ZZ_GARBAGE_ZZ",
        '{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[]}}',
        '{"type":"message","message":',  # cut off mid-write
    ]
    path.write_text("\n".join(lines))
    writer = SessionWriter.open(path, entry_ids=counter_ids())
    assert writer.header["version"] == 3
    assert writer.entries[0]["message"]["role"] == "custom"
    assert writer.entries[1]["parentId"] == writer.entries[0]["id"]
    raw = load_raw(path)
    assert (raw.header["version"], raw.title_slot, raw.malformed_lines) == (3, title_slot, 2)
    assert raw.entries == writer.entries
    writer.append_message(user("new"))
    raw = load_raw(path)
    assert raw.entries[-1]["message"]["content"] == "new"
    assert b"ZZ_GARBAGE_ZZ" in path.read_bytes()
    writer.set_title("New")
    assert (load_raw(path).title_slot or {}).get("title") == "New"


def test_open_appends_after_a_half_written_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    header = '{"type":"session","version":3,"id":"s2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}'
    answer = '{"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":[]}}'
    path.write_text(f'{header}\n{answer}\n{{"type":"mess')
    writer = SessionWriter.open(path)
    writer.append_model_change("a/b")
    raw = load_raw(path)
    assert [e["id"] for e in raw.entries] == ["a1", writer.leaf_id]
    assert (raw.malformed_lines, raw.truncated_tail) == (1, False)


def test_open_missing_starts_new_and_refuses_non_sessions(tmp_path: Path) -> None:
    writer = SessionWriter.open(tmp_path / "new.jsonl", cwd="/w")
    assert (writer.entries, writer.header["cwd"], writer.header["version"]) == ([], "/w", 3)
    (tmp_path / "notes.jsonl").write_text('{"hello": "world"}\n')
    with pytest.raises(NotASession):
        SessionWriter.open(tmp_path / "notes.jsonl")


class _BrokenWriter:
    """A writer whose disk fills up on the first append."""

    def write_line(self, line: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None: ...
    def fsync(self) -> None: ...
    def close(self) -> None: ...

    def error(self) -> OSError | None:
        return None


class _FullDiskStorage(MemorySessionStorage):
    def open_writer(self, path: str | os.PathLike[str]) -> SessionStorageWriter:
        return _BrokenWriter()


def test_first_error_is_latched_logged_once_and_raised_again(
    sessions_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    writer = new_writer(sessions_dir, storage=_FullDiskStorage())
    writer.storage.ensure_dir(sessions_dir)
    writer.append_message(user())
    writer.append_message(assistant())  # the whole-file write still works
    with caplog.at_level(logging.ERROR), pytest.raises(PersistError, match="No space left") as first:
        writer.append_message(user("lost"))
    assert writer.entries[-1]["message"]["content"] == "lost"  # memory is updated first
    for operation in (lambda: writer.append_message(user()), writer.flush, writer.rewrite, writer.close):
        with pytest.raises(PersistError) as again:
            operation()
        assert again.value is first.value
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 1
    assert "\n" not in str(first.value)


def test_a_regular_file_in_the_path_fails_the_first_write(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("not a folder")
    writer = new_writer(tmp_path / "plain" / "sessions")
    writer.append_message(user())
    with pytest.raises(PersistError):
        writer.append_message(assistant())
    with pytest.raises(PersistError):
        writer.close()


def test_memory_and_file_storage_write_the_same_session(sessions_dir: Path) -> None:
    def script(writer: SessionWriter) -> None:
        root = writer.append_message(user("ünïcode ✓"))
        writer.append_message(assistant({"type": "image", "data": image(3000), "mimeType": "image/png"}))
        writer.branch(root)
        writer.append_label(root, "start")
        writer.set_title("same")
        writer.branch_with_summary(None, "gone")
        writer.flush()

    on_disk, in_memory = new_writer(sessions_dir), new_writer(sessions_dir, storage=MemorySessionStorage())
    script(on_disk)
    script(in_memory)
    assert in_memory.storage.read_text(in_memory.path) == on_disk.path.read_text()
    assert isinstance(in_memory.blob_store, MemoryBlobStore)
    blobs_dir = sessions_dir.parent.parent / "blobs"
    assert {d: (blobs_dir / d).read_bytes() for d in os.listdir(blobs_dir)} == in_memory.blob_store.blobs


@pytest.fixture(params=["file", "memory"])
def storage_root(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SessionStorage, Path]]:
    yield (FileSessionStorage() if request.param == "file" else MemorySessionStorage()), tmp_path / "root"


def test_storages_agree(storage_root: tuple[SessionStorage, Path]) -> None:
    storage, root = storage_root
    with pytest.raises(FileNotFoundError):
        storage.write_text(root / "a.jsonl", "x")
    assert storage.list_files(root) == []
    storage.ensure_dir(root / "sub")
    storage.write_text(root / "file", "")
    with pytest.raises(OSError):
        storage.ensure_dir(root / "file" / "below")
    storage.unlink(root / "file")
    storage.write_text(root / "b.jsonl", "é\nline\n")
    storage.write_text(root / "a.txt", "x")
    assert storage.list_files(root, ".jsonl") == [root / "b.jsonl"]
    assert storage.list_files(root) == [root / "a.txt", root / "b.jsonl"]
    assert storage.read_text_prefix(root / "b.jsonl", 1) == ""  # half of é is dropped, not garbled
    assert storage.read_text_prefix(root / "b.jsonl", 3) == "é\n"
    assert storage.stat(root / "b.jsonl").size == 8
    writer = storage.open_writer(root / "b.jsonl")
    writer.write_line("more")
    writer.flush()
    writer.fsync()
    writer.close()
    assert writer.error() is None
    assert storage.read_text(root / "b.jsonl") == "é\nline\nmore\n"
    storage.rename(root / "b.jsonl", root / "sub" / "c.jsonl")
    assert (storage.exists(root / "b.jsonl"), storage.exists(root / "sub" / "c.jsonl")) == (False, True)
    storage.unlink(root / "sub" / "c.jsonl")
    for missing in (lambda: storage.unlink(root / "nope"), lambda: storage.read_text(root / "nope")):
        with pytest.raises(FileNotFoundError):
            missing()


# --- the round trip, for any messages ---

_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_images = st.binary(max_size=1500).map(lambda raw: base64.b64encode(raw).decode("ascii"))
_blocks = st.one_of(
    _texts.map(lambda text: {"type": "text", "text": text}),
    _images.map(lambda data: {"type": "image", "data": data, "mimeType": "image/png"}),
    _images.map(lambda data: {"type": "image_url", "image_url": {"url": "data:image/png;base64," + data}}),
)
_messages = st.tuples(st.sampled_from(["user", "assistant", "toolResult"]), st.lists(_blocks, max_size=4), _texts)


@settings(max_examples=60, deadline=None)
@given(messages=st.lists(_messages, min_size=1, max_size=6))
def test_any_session_round_trips_through_the_loader(messages: list[tuple[str, list[Any], str]]) -> None:
    with tempfile.TemporaryDirectory() as temp:
        writer = new_writer(Path(temp) / "agent" / "sessions" / "--p--")
        for role, content, note in messages:
            writer.append_message({"role": role, "content": content, "note": note})
        writer.flush(force=True)
        assert open_session(writer.path).entries == writer.entries
        on_disk = writer.path.read_text()
        for _, content, _ in messages:
            for block in content:
                if block["type"] == "image" and len(block["data"]) >= 1024:
                    assert block["data"] not in on_disk
