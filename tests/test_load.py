"""Loading session files: lenient lines, truncated tails, the title slot, the header rule, no writes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.errors import NotASession, SessionNotFound, SitegenError
from sitegen.session.entries import EXTRA_ENTRY_TYPES, SEED_ENTRY_TYPES
from sitegen.session.load import HEADER_PREFIX_BYTES, load_raw, read_header
from sitegen.session.session import open_session

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"

HEADER = {"type": "session", "version": 3, "id": "load-0001", "timestamp": "2026-01-01T00:00:00.000Z"}


def json_lines(path: Path) -> list[dict[str, object]]:
    """The file's records as the standard library reads them, for comparison."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def entry(n: int) -> dict[str, object]:
    return {
        "type": "message",
        "id": f"e{n:07d}",
        "parentId": f"e{n - 1:07d}" if n else None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": f"ZZ_LOAD_{n}_ZZ"},
    }


def write_lines(path: Path, *lines: bytes, end: bytes = b"\n") -> Path:
    path.write_bytes(b"\n".join(lines) + end)
    return path


def dumps(record: object) -> bytes:
    return orjson.dumps(record)


# --- the seed's entries pass through intact --------------------------------------------------------


def test_seed_file_loads_header_and_every_entry_in_file_order() -> None:
    raw = load_raw(FIXTURES / "seed_v3.jsonl")
    records = json_lines(FIXTURES / "seed_v3.jsonl")
    assert raw.header == records[0]
    assert raw.entries == records[1:]
    assert [e["id"] for e in raw.entries][:3] == ["a1b2c3d4", "b1c2d3e4", "c1d2e3f4"]
    assert raw.malformed_lines == 0
    assert raw.truncated_tail is False
    assert raw.title_slot is None


def test_seed_file_covers_all_eleven_entry_types() -> None:
    raw = load_raw(FIXTURES / "seed_v3.jsonl")
    assert {e["type"] for e in raw.entries} == SEED_ENTRY_TYPES
    assert len(SEED_ENTRY_TYPES) == 11


@pytest.mark.parametrize(
    "name",
    [
        "seed_v3.jsonl",
        "pi_variants.jsonl",
        "omp_extra_types.jsonl",
        "unknown_types.jsonl",
        "title_slot.jsonl",
    ],
)
def test_entries_pass_through_open_session_unchanged(name: str) -> None:
    # v3 files need no migration and carry no blob refs: every field must survive, unknown ones too.
    records = json_lines(FIXTURES / name)
    session = open_session(FIXTURES / name)
    assert session.migration.changed is False
    assert session.entries == [r for r in records if r.get("type") not in ("session", "title")]


def test_real_file_variant_types_are_all_present_in_fixtures() -> None:
    seen = {
        e.get("type") for name in ("pi_variants.jsonl", "omp_extra_types.jsonl") for e in json_lines(FIXTURES / name)
    }
    assert seen >= EXTRA_ENTRY_TYPES


def test_unknown_types_and_roles_are_kept_not_fatal() -> None:
    raw = load_raw(FIXTURES / "unknown_types.jsonl")
    by_id = {e["id"]: e for e in raw.entries}
    assert by_id["u0000002"]["type"] == "quantum_fork"
    assert by_id["u0000002"]["payload"]["secret"] == "ZZ_UNK_TYPE_ZZ"
    assert by_id["u0000003"]["message"] == {
        "role": "robot",
        "content": "ZZ_UNK_ROLE_ZZ",
        "beep": 42,
        "timestamp": 1767873603000,
    }
    assert "type" not in by_id["u0000005"]
    assert by_id["u0000006"]["message"] == "ZZ_UNK_MESSAGE_NOT_OBJECT_ZZ"
    assert raw.header["futureHeaderField"] == {"x": 1}
    assert raw.malformed_lines == 0


# --- malformed lines and the truncated tail ----------------------------------------------------------


def test_malformed_lines_are_skipped_and_counted() -> None:
    raw = load_raw(FIXTURES / "malformed_lines.jsonl")
    # A cut-off line, prose, a JSON array and an object with trailing garbage; the blank line is free.
    assert raw.malformed_lines == 4
    assert [e["id"] for e in raw.entries] == ["m0000001", "m0000003", "m0000005"]
    assert raw.truncated_tail is False


def test_truncated_last_line_is_flagged_not_counted() -> None:
    raw = load_raw(FIXTURES / "truncated_tail.jsonl")
    assert not (FIXTURES / "truncated_tail.jsonl").read_bytes().endswith(b"\n")
    assert raw.truncated_tail is True
    assert raw.malformed_lines == 0
    assert [e["id"] for e in raw.entries] == ["r0000001"]


def test_complete_last_line_without_newline_is_an_entry(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", dumps(HEADER), dumps(entry(0)), dumps(entry(1)), end=b"")
    raw = load_raw(path)
    assert [e["id"] for e in raw.entries] == ["e0000000", "e0000001"]
    assert raw.truncated_tail is False
    assert raw.malformed_lines == 0


def test_garbage_last_line_with_newline_is_malformed_not_truncated(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", dumps(HEADER), dumps(entry(0)), b'{"type":"mess')
    raw = load_raw(path)
    assert raw.malformed_lines == 1
    assert raw.truncated_tail is False


def test_invalid_utf8_bytes_read_as_replacement_characters(tmp_path: Path) -> None:
    # As the agents read their files (UTF-8 with replacement, then JSON.parse): the line is kept.
    path = write_lines(tmp_path / "s.jsonl", dumps(HEADER), b'{"type":"x","bad":"\xff\xfe"}', dumps(entry(0)))
    raw = load_raw(path)
    assert raw.malformed_lines == 0
    assert raw.entries[0] == {"type": "x", "bad": "\ufffd\ufffd"}
    assert [e.get("id") for e in raw.entries] == [None, "e0000000"]


def test_lone_surrogate_escapes_keep_the_line_and_the_branch(tmp_path: Path) -> None:
    # orjson refuses "\ud83d" alone (half an emoji cut by a tool); JSON.parse takes it. Dropping the
    # line would cut the branch below it.
    cut = b'{"type":"message","id":"e0000001","parentId":"e0000000","timestamp":"2026-01-01T00:00:01Z",'
    cut += b'"message":{"role":"user","content":"half \\ud83d emoji","\\udc00key":["\\ud800",{"x":"\\udfff"}]}}'
    later = {**entry(2), "parentId": "e0000001"}
    path = write_lines(tmp_path / "s.jsonl", dumps(HEADER), dumps(entry(0)), cut, dumps(later))
    session = open_session(path)
    assert session.raw.malformed_lines == 0
    message = session.by_id["e0000001"]["message"]
    assert message["content"] == "half \ufffd emoji"
    assert message["\ufffdkey"] == ["\ufffd", {"x": "\ufffd"}]
    assert session.tree.path_to("e0000002") == ["e0000000", "e0000001", "e0000002"]
    json.dumps(session.raw.entries).encode("utf-8")  # nothing left that cannot be written


def test_lines_nested_past_what_the_parsers_reach_keep_the_line_and_the_branch(tmp_path: Path) -> None:
    # JSON.parse reads any depth; orjson stops at 1024 levels and the json module at the stack's end.
    depth = 5000
    cut = b'{"type":"message","id":"e0000001","parentId":"e0000000","timestamp":"2026-01-01T00:00:01Z",'
    cut += b'"message":{"role":"user","content":"ZZ_DEEP_ZZ \\" [{ \\\\","data":'
    cut += b'{"a":' * depth + b'"ZZ_BOTTOM_ZZ"' + b"}" * depth + b',"list":' + b"[" * depth + b"]" * depth
    cut += b',"after":"ZZ_AFTER_ZZ"}}'
    later = {**entry(2), "parentId": "e0000001"}
    path = write_lines(tmp_path / "s.jsonl", dumps(HEADER), dumps(entry(0)), cut, dumps(later))
    session = open_session(path)
    assert session.raw.malformed_lines == 0
    message = session.by_id["e0000001"]["message"]
    assert message["content"] == 'ZZ_DEEP_ZZ " [{ \\' and message["after"] == "ZZ_AFTER_ZZ"
    data, levels = message["data"], 1
    while isinstance(data, dict):
        data, levels = data["a"], levels + 1
    assert data == "…" and 100 < levels < depth  # clipped, with a marker where it was cut
    assert session.tree.path_to("e0000002") == ["e0000000", "e0000001", "e0000002"]


def test_numbers_on_a_line_orjson_refuses_are_read_as_orjson_reads_them(tmp_path: Path) -> None:
    # Integers past 64 bits become doubles (as orjson and JSON.parse read them), which every later
    # orjson.dumps can write; 5,000 digits are past what int() takes from text.
    cut = b'{"type":"message","id":"e0000001","parentId":"e0000000","timestamp":"2026-01-01T00:00:01Z",'
    cut += b'"message":{"role":"user","content":"half \\ud83d","n":[99999999999999999999999,-12,'
    cut += b"9" * 5000 + b"]}}"
    path = write_lines(tmp_path / "s.jsonl", dumps(HEADER), dumps(entry(0)), cut)
    raw = load_raw(path)
    assert raw.malformed_lines == 0
    assert raw.entries[1]["message"]["n"] == [1e23, -12, float("inf")]
    orjson.dumps(raw.entries)


def test_a_byte_order_mark_before_the_header_is_accepted(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", b"\xef\xbb\xbf" + dumps(HEADER), dumps(entry(0)))
    assert load_raw(path).header["id"] == HEADER["id"]
    assert read_header(path) is not None


def test_crlf_line_endings_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\r\n".join([dumps(HEADER), dumps(entry(0)), dumps(entry(1))]) + b"\r\n")
    raw = load_raw(path)
    assert raw.malformed_lines == 0
    assert len(raw.entries) == 2


def test_malformed_line_before_header_is_skipped(tmp_path: Path) -> None:
    # The seed's lenient parser drops unparseable lines; the first *parsed* record is the header.
    path = write_lines(tmp_path / "s.jsonl", b"%%% not json", dumps(HEADER), dumps(entry(0)))
    raw = load_raw(path)
    assert raw.header["id"] == "load-0001"
    assert raw.malformed_lines == 1
    assert len(raw.entries) == 1


def test_blank_lines_are_ignored_everywhere(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", b"", b"   ", dumps(HEADER), b"", dumps(entry(0)), b"\t", dumps(entry(1)))
    raw = load_raw(path)
    assert raw.malformed_lines == 0
    assert len(raw.entries) == 2


# --- the title slot and the header rule -------------------------------------------------------------


def test_title_slot_before_header_is_accepted() -> None:
    raw = load_raw(FIXTURES / "title_slot.jsonl")
    assert raw.title_slot is not None
    assert raw.title_slot["type"] == "title"
    assert raw.title_slot["title"] == "ZZ_TITLE_SLOT_ZZ"
    assert raw.header["id"] == "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001"
    assert [e["id"] for e in raw.entries] == ["t0000001", "t0000002"]
    assert raw.malformed_lines == 0
    assert open_session(FIXTURES / "title_slot.jsonl").title == "ZZ_TITLE_SLOT_ZZ"


def test_title_slot_without_header_is_not_a_session(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", b'{"type":"title","v":1,"title":"x","pad":"   "}')
    with pytest.raises(NotASession):
        load_raw(path)


@pytest.mark.parametrize("name", ["not_a_session.jsonl", "header_without_string_id.jsonl"])
def test_first_record_must_be_a_session_header(name: str) -> None:
    with pytest.raises(NotASession):
        load_raw(FIXTURES / name)
    assert read_header(FIXTURES / name) is None


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n\n  \n",
        b"not json\nstill not json\n",
        b'{"type":"session"}\n',
        b'{"type":"session","id":null}\n',
        b'{"type":"Session","id":"x"}\n',
        b'["session"]\n',
        b'{"type":"session","id":"x"',  # the header itself is still being written
    ],
)
def test_files_without_a_valid_header_are_not_sessions(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    with pytest.raises(NotASession):
        load_raw(path)
    assert read_header(path) is None


def test_missing_file_is_session_not_found_with_its_message(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "gone.jsonl"
    with pytest.raises(SessionNotFound) as caught:
        load_raw(path)
    assert str(caught.value) == f"File not found: {path}"
    with pytest.raises(SessionNotFound, match=r"^File not found: "):
        open_session(str(path))
    assert read_header(path) is None


def test_directory_is_a_sitegen_error_not_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(SitegenError):
        load_raw(tmp_path)


# --- the loader never writes ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_loading_never_writes(tmp_path: Path, name: str) -> None:
    # Inside an agent dir, so blob lookups and migrations have every chance to touch something.
    folder = tmp_path / "agent" / "sessions" / "--work--"
    folder.mkdir(parents=True)
    path = folder / name
    shutil.copyfile(FIXTURES / name, path)
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    tree_before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    with contextlib.suppress(NotASession):
        open_session(path)
    read_header(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == tree_before


def test_stat_is_recorded(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", dumps(HEADER), dumps(entry(0)))
    raw = load_raw(path)
    assert raw.size == path.stat().st_size
    assert raw.mtime_ns == path.stat().st_mtime_ns
    assert raw.path == path


# --- read_header: a prefix only ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_read_header_agrees_with_load_raw(name: str) -> None:
    try:
        raw = load_raw(FIXTURES / name)
    except NotASession:
        assert read_header(FIXTURES / name) is None
        return
    assert read_header(FIXTURES / name) == (raw.header, raw.title_slot)


def test_read_header_handles_a_header_longer_than_the_prefix(tmp_path: Path) -> None:
    long_title = "ZZ_LONG_" + "x" * (3 * HEADER_PREFIX_BYTES)
    header = {**HEADER, "title": long_title}
    path = write_lines(tmp_path / "s.jsonl", dumps(header), dumps(entry(0)))
    result = read_header(path)
    assert result is not None
    assert result[0]["title"] == long_title
    assert result[1] is None


def test_read_header_handles_title_slot_and_header_across_the_prefix(tmp_path: Path) -> None:
    slot = {"type": "title", "v": 1, "title": "ZZ_SLOT_ZZ", "pad": " " * (HEADER_PREFIX_BYTES - 100)}
    header = {**HEADER, "cwd": "/" + "d" * 500}
    path = write_lines(tmp_path / "s.jsonl", dumps(slot), dumps(header), dumps(entry(0)))
    assert len(dumps(slot)) < HEADER_PREFIX_BYTES < len(dumps(slot)) + len(dumps(header))
    result = read_header(path)
    assert result is not None
    assert result[0]["cwd"] == header["cwd"]
    assert result[1] is not None and result[1]["title"] == "ZZ_SLOT_ZZ"


def test_read_header_reads_a_prefix_only(tmp_path: Path) -> None:
    # A FIFO whose writer stays open: reading to the end would block, a prefix read returns.
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs os.mkfifo")
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    result: list[object] = []
    reader = threading.Thread(target=lambda: result.append(read_header(fifo)), daemon=True)
    reader.start()
    writer = open(fifo, "wb")  # noqa: SIM115 - kept open on purpose until the reader is done
    try:
        try:
            writer.write(dumps(HEADER) + b"\n")
            for n in range(400):  # about 60 KB: more than the prefix, less than a pipe buffer
                writer.write(dumps(entry(n)) + b"\n")
            writer.flush()
        except BrokenPipeError:
            pass  # the reader already took its prefix and closed the file: what this test wants
        reader.join(timeout=10)
        finished = not reader.is_alive()
    finally:
        with contextlib.suppress(BrokenPipeError):
            writer.close()
        reader.join(timeout=10)
    assert finished, "read_header kept reading past its prefix"
    assert result == [(HEADER, None)]


# --- arbitrary bytes --------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_load_or_are_not_a_session(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "s.jsonl"
    path.write_bytes(data)
    try:
        raw = load_raw(path)
    except NotASession:
        assert read_header(path) is None
        return
    assert raw.header["type"] == "session"
    assert isinstance(raw.header["id"], str)


_lines = st.one_of(
    st.binary(max_size=80).filter(lambda b: b"\n" not in b),
    st.builds(lambda n: dumps(entry(n)), st.integers(min_value=0, max_value=99)),
)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_lines, max_size=12), final_newline=st.booleans())
def test_after_a_header_every_line_is_an_entry_malformed_blank_or_the_tail(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], final_newline: bool
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "s.jsonl"
    body = b"\n".join([dumps(HEADER), *lines]) + (b"\n" if final_newline else b"")
    path.write_bytes(body)
    raw = load_raw(path)
    assert raw.header == HEADER
    blank = sum(1 for line in lines if not line.strip())
    assert len(raw.entries) + raw.malformed_lines + int(raw.truncated_tail) + blank == len(lines)
    assert raw.truncated_tail is False or (not final_newline and bool(lines))
    assert all(isinstance(e, dict) for e in raw.entries)
