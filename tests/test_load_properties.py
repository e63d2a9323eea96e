"""Properties of load_raw on any bytes: it loads or says NotASession, counts bad lines, writes nothing."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.errors import NotASession
from sitegen.session.entries import is_header
from sitegen.session.load import RawSession, load_raw

PROPERTY = settings(max_examples=150, deadline=None)
# A fixed, old mtime, so any write by the loader would show.
OLD_MTIME_NS = 1_600_000_000_123_456_789


@contextmanager
def session_file(data: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as temp:
        path = Path(temp) / "s.jsonl"
        path.write_bytes(data)
        os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
        yield path


def load_untouched(path: Path) -> RawSession | None:
    """load_raw, checking it raised nothing but NotASession and left the file as it was."""
    before = path.read_bytes()
    try:
        raw: RawSession | None = load_raw(path)
    except NotASession as error:
        assert "\n" not in str(error)
        raw = None
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == OLD_MTIME_NS
    if raw is not None:
        assert is_header(raw.header)
        assert all(type(entry) is dict for entry in raw.entries)
        assert raw.size == len(before)
    return raw


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


# Lines the loader must count as malformed: not blank, no newline inside, not a JSON object.
garbage_lines = st.binary(min_size=1, max_size=40).filter(
    lambda line: b"\n" not in line and bool(line.strip()) and not _is_object(line)
)
texts = st.text(max_size=30)
header_lines = st.builds(
    lambda sid, cwd: {
        "type": "session",
        "version": 3,
        "id": sid,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    },
    texts,
    texts,
)
entry_dicts = st.builds(
    lambda n, text, role: {
        "type": "message",
        "id": f"{n:08x}",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": role, "content": text},
    },
    st.integers(0, 2**32 - 1),
    texts,
    st.sampled_from(["user", "assistant", "toolResult"]),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


def dump(record: Any) -> bytes:
    return orjson.dumps(record)


@PROPERTY
@given(data=st.binary(max_size=3000))
def test_any_bytes_load_or_are_not_a_session(data: bytes) -> None:
    with session_file(data) as path:
        load_untouched(path)


@PROPERTY
@given(
    lines=st.lists(
        st.one_of(header_lines.map(dump), entry_dicts.map(dump), json_values.map(dump), garbage_lines),
        max_size=12,
    ),
    ending=st.sampled_from([b"\n", b"\r\n", b""]),
)
def test_any_mix_of_lines_loads_or_is_not_a_session(lines: list[bytes], ending: bytes) -> None:
    with session_file(b"\n".join(lines) + ending) as path:
        load_untouched(path)


@PROPERTY
@given(
    header=header_lines,
    entries=st.lists(entry_dicts, max_size=10),
    inserts=st.lists(st.tuples(st.integers(0, 11), garbage_lines), max_size=6),
)
def test_garbage_lines_are_skipped_and_counted(
    header: dict[str, Any], entries: list[dict[str, Any]], inserts: list[tuple[int, bytes]]
) -> None:
    lines = [dump(header), *(dump(entry) for entry in entries)]
    for position, garbage in inserts:
        lines.insert(min(position, len(lines)), garbage)
    with session_file(b"".join(line + b"\n" for line in lines)) as path:
        raw = load_untouched(path)
    assert raw is not None
    assert (raw.header, raw.entries) == (header, entries)
    assert raw.malformed_lines == len(inserts)
    assert not raw.truncated_tail
    assert sorted(line for _, line in raw.unparsed) == sorted(garbage + b"\n" for _, garbage in inserts)


@PROPERTY
@given(header=header_lines, entries=st.lists(entry_dicts, min_size=1, max_size=8), cut=st.integers(0, 10**6))
def test_a_cut_off_tail_loses_only_the_last_line(
    header: dict[str, Any], entries: list[dict[str, Any]], cut: int
) -> None:
    head = dump(header) + b"\n"
    body = b"".join(dump(entry) + b"\n" for entry in entries)
    kept = body[: cut % (len(body) + 1)]
    with session_file(head + kept) as path:
        raw = load_untouched(path)
    assert raw is not None
    complete = kept.count(b"\n")
    fragment = kept[kept.rfind(b"\n") + 1 :]
    # A line cut just before its newline is still a whole object, and is loaded.
    whole = 1 if fragment and _is_object(fragment) else 0
    assert raw.entries == entries[: complete + whole]
    assert raw.truncated_tail == (bool(fragment.strip()) and not whole)
    assert raw.malformed_lines == 0
