"""Blob refs: where the store is, what counts as a ref, and rehydration of images and data URLs on load."""

from __future__ import annotations

import base64
import hashlib
import logging
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.session.blobs import BlobStore, blob_hash, is_blob_ref, rehydrate_entries, store_dirs_for_session
from sitegen.session.session import open_session

PNG = b"\x89PNG\r\n\x1a\nZZ_BLOB_IMAGE_ZZ" + bytes(range(256))
PNG_HASH = hashlib.sha256(PNG).hexdigest()
PNG_B64 = base64.b64encode(PNG).decode()
DATA_URL = "data:image/png;base64,WlpfREFUQV9VUkxfWlo="
DATA_URL_HASH = hashlib.sha256(DATA_URL.encode()).hexdigest()
DECOY = b"ZZ_DECOY_BLOB_MUST_NOT_BE_READ_ZZ"


def ref(digest: str) -> str:
    return "blob:sha256:" + digest


def header(session_id: str = "blob-0001") -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-02-01T00:00:00.000Z"}


def message(entry_id: str, parent: str | None, role: str, content: object, **extra: object) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-02-01T00:00:01.000Z",
        "message": {"role": role, "content": content, **extra},
    }


def image(data: str) -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": "image/png"}


def write_session(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header(), *entries]))
    return path


def agent_dir(tmp_path: Path) -> tuple[Path, Path]:
    """An agent dir with its blobs/ folder and a session folder under sessions/."""
    agent = tmp_path / "agent"
    blobs = agent / "blobs"
    blobs.mkdir(parents=True)
    return blobs, agent / "sessions" / "--work-proj--" / "2026-02-01T00-00-00-000Z_blob-0001.jsonl"


# --- what is a ref ----------------------------------------------------------------------------------


def test_well_formed_ref() -> None:
    assert blob_hash(ref(PNG_HASH)) == PNG_HASH
    assert is_blob_ref(ref(PNG_HASH))


@pytest.mark.parametrize(
    "value",
    [
        ref("a" * 63),
        ref("a" * 65),
        ref("A" * 64),
        ref(PNG_HASH.upper()),
        ref(PNG_HASH[:-1] + "g"),
        "blob:sha256:",
        ref(PNG_HASH) + "\n",
        " " + ref(PNG_HASH),
        "blob:sha1:" + PNG_HASH,
        "BLOB:SHA256:" + PNG_HASH,
        PNG_HASH,
        None,
        42,
        ["blob:sha256:" + PNG_HASH],
    ],
)
def test_anything_else_is_not_a_ref(value: object) -> None:
    assert blob_hash(value) is None
    assert not is_blob_ref(value)


def test_malformed_refs_are_untouched_and_never_looked_up(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    # Decoys named exactly as a lax parser would look them up: reading any of them is a bug.
    bad = {
        "63": "b" * 63,
        "65": "c" * 65,
        "upper": "D" * 64,
        "newline": "e" * 64,
        "prefix": "f" * 64,
    }
    for name in ("b" * 63, "c" * 64, "c" * 65, "D" * 64, "d" * 64, "e" * 64, "f" * 64):
        (blobs / name).write_bytes(DECOY)
    values = [
        ref(bad["63"]),
        ref(bad["65"]),
        ref(bad["upper"]),
        ref(bad["newline"]) + "\n",
        "blob:sha256:",
        "prefix-" + ref(bad["prefix"]),
    ]
    entries = [
        message("b0000001", None, "user", [image(v) for v in values]),
        message("b0000002", "b0000001", "user", [{"type": "image_url", "image_url": v} for v in values]),
        message("b0000003", "b0000002", "user", [{"type": "image_url", "image_url": {"url": v}} for v in values]),
    ]
    session = open_session(write_session(path, entries))
    content = [e["message"]["content"] for e in session.entries]
    assert [b["data"] for b in content[0]] == values
    assert [b["image_url"] for b in content[1]] == values
    assert [b["image_url"]["url"] for b in content[2]] == values


# --- where the store is -----------------------------------------------------------------------------


def test_store_is_the_blobs_folder_of_the_agent_dir_above_sessions(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    assert store_dirs_for_session(path, [tmp_path / "elsewhere"]) == [blobs.resolve()]


def test_subagent_transcripts_in_the_artifact_folder_share_the_agent_store(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    (blobs / PNG_HASH).write_bytes(PNG)
    nested = path.with_suffix("") / "Alpha" / "Child.jsonl"
    assert store_dirs_for_session(nested, []) == [blobs.resolve()]
    session = open_session(write_session(nested, [message("b0000001", None, "user", [image(ref(PNG_HASH))])]))
    assert session.entries[0]["message"]["content"][0]["data"] == PNG_B64


def test_store_falls_back_to_the_default_agent_dirs(tmp_path: Path) -> None:
    loose = tmp_path / "custom-session-dir" / "s.jsonl"
    defaults = [tmp_path / "home" / ".pi" / "agent", tmp_path / "home" / ".omp" / "agent"]
    assert store_dirs_for_session(loose, defaults) == [d / "blobs" for d in defaults]


def test_default_stores_are_searched_in_order(tmp_path: Path) -> None:
    pi, omp = tmp_path / "home" / ".pi" / "agent", tmp_path / "home" / ".omp" / "agent"
    (omp / "blobs").mkdir(parents=True)
    (omp / "blobs" / PNG_HASH).write_bytes(PNG)
    path = write_session(tmp_path / "loose" / "s.jsonl", [message("b0000001", None, "user", [image(ref(PNG_HASH))])])
    session = open_session(path, default_agent_dirs=[pi, omp])
    assert session.entries[0]["message"]["content"][0]["data"] == PNG_B64


def test_session_in_an_agent_dir_does_not_read_the_default_stores(tmp_path: Path) -> None:
    _, path = agent_dir(tmp_path)
    other = tmp_path / "home" / ".omp" / "agent"
    (other / "blobs").mkdir(parents=True)
    (other / "blobs" / PNG_HASH).write_bytes(PNG)
    write_session(path, [message("b0000001", None, "user", [image(ref(PNG_HASH))])])
    session = open_session(path, default_agent_dirs=[other])
    assert session.entries[0]["message"]["content"][0]["data"] == ref(PNG_HASH)


# --- rehydration ------------------------------------------------------------------------------------


def test_image_blocks_in_messages_and_custom_messages_are_rehydrated(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    (blobs / PNG_HASH).write_bytes(PNG)
    entries = [
        message("b0000001", None, "user", [{"type": "text", "text": "look"}, image(ref(PNG_HASH))]),
        message(
            "b0000002",
            "b0000001",
            "toolResult",
            [image(ref(PNG_HASH))],
            toolCallId="c1",
            toolName="screenshot",
            isError=False,
        ),
        {
            "type": "custom_message",
            "id": "b0000003",
            "parentId": "b0000002",
            "timestamp": "2026-02-01T00:00:03.000Z",
            "customType": "ext",
            "content": [image(ref(PNG_HASH))],
            "display": True,
        },
    ]
    session = open_session(write_session(path, entries))
    assert session.entries[0]["message"]["content"] == [{"type": "text", "text": "look"}, image(PNG_B64)]
    assert session.entries[1]["message"]["content"] == [image(PNG_B64)]
    assert session.entries[2]["content"] == [image(PNG_B64)]


def test_provider_image_url_data_urls_are_rehydrated_in_both_forms(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    (blobs / DATA_URL_HASH).write_bytes(DATA_URL.encode())
    entries = [
        message(
            "b0000001",
            None,
            "user",
            [
                {"type": "image_url", "image_url": ref(DATA_URL_HASH)},
                {"type": "image_url", "image_url": {"url": ref(DATA_URL_HASH), "detail": "high"}},
            ],
        ),
        {
            "type": "custom_message",
            "id": "b0000002",
            "parentId": "b0000001",
            "timestamp": "2026-02-01T00:00:02.000Z",
            "customType": "ext",
            "content": [{"type": "image_url", "image_url": {"url": ref(DATA_URL_HASH)}}],
        },
    ]
    session = open_session(write_session(path, entries))
    assert session.entries[0]["message"]["content"] == [
        {"type": "image_url", "image_url": DATA_URL},
        {"type": "image_url", "image_url": {"url": DATA_URL, "detail": "high"}},
    ]
    assert session.entries[1]["content"] == [{"type": "image_url", "image_url": {"url": DATA_URL}}]


def test_refs_outside_message_content_are_left_alone(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    (blobs / PNG_HASH).write_bytes(PNG)
    entries = [
        {
            "type": "custom",
            "id": "b0000001",
            "parentId": None,
            "timestamp": "2026-02-01T00:00:01.000Z",
            "customType": "ext",
            "data": {"content": [image(ref(PNG_HASH))]},
        },
        message("b0000002", "b0000001", "user", "plain text " + ref(PNG_HASH)),
    ]
    session = open_session(write_session(path, entries))
    assert session.entries[0]["data"] == {"content": [image(ref(PNG_HASH))]}
    assert session.entries[1]["message"]["content"] == "plain text " + ref(PNG_HASH)


def test_missing_blob_warns_and_keeps_the_ref(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blobs, path = agent_dir(tmp_path)
    (blobs / PNG_HASH).write_bytes(PNG)
    missing = "0" * 64
    entries = [
        message("b0000001", None, "user", [image(ref(missing)), image(ref(PNG_HASH))]),
        message("b0000002", "b0000001", "user", [{"type": "image_url", "image_url": {"url": ref(missing)}}]),
    ]
    write_session(path, entries)
    listing = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with caplog.at_level(logging.WARNING):
        session = open_session(path)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == listing
    assert session.entries[0]["message"]["content"] == [image(ref(missing)), image(PNG_B64)]
    assert session.entries[1]["message"]["content"][0]["image_url"]["url"] == ref(missing)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and missing in r.getMessage()]
    assert len(warnings) == 2


def test_omp_copy_with_an_extension_is_found(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    (blobs / f"{PNG_HASH}.png").write_bytes(PNG)
    session = open_session(write_session(path, [message("b0000001", None, "user", [image(ref(PNG_HASH))])]))
    assert session.entries[0]["message"]["content"][0]["data"] == PNG_B64


def test_rehydrate_false_keeps_refs(tmp_path: Path) -> None:
    blobs, path = agent_dir(tmp_path)
    (blobs / PNG_HASH).write_bytes(PNG)
    session = open_session(
        write_session(path, [message("b0000001", None, "user", [image(ref(PNG_HASH))])]), rehydrate=False
    )
    assert session.entries[0]["message"]["content"][0]["data"] == ref(PNG_HASH)


# --- the store itself -------------------------------------------------------------------------------


def test_put_then_get_round_trip_is_content_addressed(tmp_path: Path) -> None:
    store = BlobStore([tmp_path / "blobs"])
    assert store.put(PNG) == ref(PNG_HASH)
    assert (tmp_path / "blobs" / PNG_HASH).read_bytes() == PNG
    assert store.put(PNG) == ref(PNG_HASH)  # idempotent
    assert sorted(p.name for p in (tmp_path / "blobs").iterdir()) == [PNG_HASH]
    assert store.get(PNG_HASH) == PNG
    assert store.get("1" * 64) is None


def test_get_on_missing_folders_is_none(tmp_path: Path) -> None:
    assert BlobStore([tmp_path / "nope", tmp_path / "also-nope"]).get(PNG_HASH) is None
    assert BlobStore([]).get(PNG_HASH) is None


def test_rehydrate_entries_directly(tmp_path: Path) -> None:
    (tmp_path / PNG_HASH).write_bytes(PNG)
    entries = [message("b0000001", None, "user", [image(ref(PNG_HASH))])]
    rehydrate_entries(entries, BlobStore([tmp_path]))
    assert entries[0]["message"]["content"][0]["data"] == PNG_B64
