"""Times come from the session's activity: records written later (session_exit, titles, labels) never stretch
it, and a forked file's header written after its entries does not make the start later than the end."""

from __future__ import annotations

from pathlib import Path

import orjson

from sitegen.render.header import header_facts
from sitegen.session.entries import iso_to_ms
from sitegen.session.session import open_session
from sitegen.transcript.from_pi import transcript_from_session
from sitegen.transcript.model import Transcript


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return path


def _user(entry_id: str, parent: str | None, when: str, text: str = "ZZ_TIMES_PROMPT_ZZ") -> dict[str, object]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": when,
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }


def _load(path: Path) -> Transcript:
    return transcript_from_session(open_session(path))


def test_late_records_do_not_stretch_the_session(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "late.jsonl",
        [
            {"type": "session", "version": 3, "id": "s-late", "timestamp": "2025-11-20T14:00:00.000Z", "cwd": "/w"},
            _user("a1", None, "2025-11-20T14:00:05.000Z"),
            _user("a2", "a1", "2025-11-20T16:41:05.000Z", "second"),
            # Written when the terminal closed, nine months later, and other bookkeeping after the work.
            {
                "type": "custom",
                "customType": "session_exit",
                "data": {"reason": "sighup", "kind": "signal", "recordedAt": "2026-08-13T16:50:39.358Z"},
                "id": "x1",
                "parentId": "a2",
                "timestamp": "2026-08-13T16:50:39.358Z",
            },
            {"type": "title_change", "id": "t1", "parentId": "x1", "timestamp": "2026-09-01T00:00:00.000Z",
             "title": "later"},
            {"type": "label", "id": "l1", "parentId": "t1", "timestamp": "2026-09-02T00:00:00.000Z",
             "targetId": "a1", "label": "keep"},
        ],
    )  # fmt: skip
    transcript = _load(path)
    assert transcript.created_ms == iso_to_ms("2025-11-20T14:00:00.000Z")
    assert transcript.modified_ms == iso_to_ms("2025-11-20T16:41:05.000Z")
    facts = header_facts(transcript, transcript.totals())
    assert facts.duration == "2 h 41 min"
    assert "2026" not in facts.span


def test_a_forked_header_after_its_entries_starts_at_the_first_entry(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "fork.jsonl",
        [
            {"type": "session", "version": 3, "id": "s-fork", "timestamp": "2025-12-01T09:00:00.000Z", "cwd": "/w"},
            _user("b1", None, "2025-11-30T08:00:00.000Z"),
            _user("b2", "b1", "2025-11-30T08:30:00.000Z", "next"),
        ],
    )
    transcript = _load(path)
    assert transcript.created_ms == iso_to_ms("2025-11-30T08:00:00.000Z")
    assert transcript.modified_ms == iso_to_ms("2025-11-30T08:30:00.000Z")
    assert transcript.created_ms is not None and transcript.created_ms <= transcript.modified_ms
    assert header_facts(transcript, transcript.totals()).duration == "30 min"


def test_listings_take_times_and_order_from_activity(tmp_path: Path) -> None:
    from sitegen.session.discover import list_all

    folder = tmp_path / "agent" / "sessions" / "--w--"
    folder.mkdir(parents=True)
    # Worked on long ago; its terminal closed today (session_exit), which wrote the file last.
    closed = _write(
        folder / "a_closed.jsonl",
        [
            {"type": "session", "version": 3, "id": "s-closed", "timestamp": "2025-01-01T10:00:00.000Z", "cwd": "/w"},
            _user("c1", None, "2025-01-01T10:00:05.000Z"),
            {"type": "custom", "customType": "session_exit", "data": {"reason": "sighup"}, "id": "c2",
             "parentId": "c1", "timestamp": "2026-08-13T16:50:39.358Z"},
        ],
    )  # fmt: skip
    # A fork written in March of entries from February: its header is after them.
    fork = _write(
        folder / "b_fork.jsonl",
        [
            {"type": "session", "version": 3, "id": "s-fork", "timestamp": "2025-03-01T09:00:00.000Z", "cwd": "/w"},
            _user("f1", None, "2025-02-01T08:00:00.000Z"),
        ],
    )
    import os

    os.utime(fork, (1_700_000_000, 1_700_000_000))
    infos = list_all([tmp_path / "agent"], session_dirs=[], env={})
    assert [info.id for info in infos] == ["s-fork", "s-closed"]  # by activity, not by file time
    by_id = {info.id: info for info in infos}
    assert by_id["s-closed"].last_activity == iso_to_ms("2025-01-01T10:00:05.000Z")
    assert by_id["s-fork"].created == "2025-02-01T08:00:00.000Z"
    assert closed.exists()


def test_the_real_omp_session_lasted_as_long_as_its_work(real_fixtures: Path) -> None:
    # omp appended session_exit when the terminal closed, nine months after the last entry.
    from sitegen.session.discover import read_session_info

    path = real_fixtures / "omp-large-session.title-v3.jsonl"
    transcript = _load(path)
    facts = header_facts(transcript, transcript.totals())
    assert facts.duration == "2 h 41 min" and facts.span == "2025-11-20 23:33 – 2025-11-21 02:14 UTC"
    info = read_session_info(path)
    assert info is not None and info.last_activity == transcript.modified_ms
