"""transcript_from_session: one node per entry, known kinds mapped, unknown ones kept, tool results paired."""

from __future__ import annotations

import base64
import hashlib
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessions import SessionBuilder, text, tool_call

from sitegen.render.export import export_html
from sitegen.session.entries import entry_time_ms, is_header, iso_to_ms, message_text, shorten
from sitegen.session.session import open_session
from sitegen.transcript.from_pi import parts_of, transcript_from_session, usage_of
from sitegen.transcript.model import NODE_KINDS, Transcript

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"


def transcript(name: str) -> Transcript:
    return transcript_from_session(open_session(FIXTURES / name))


def kinds(t: Transcript) -> list[tuple[str, str]]:
    return [(n.id, n.kind) for n in t.nodes]


# --- entries helpers --------------------------------------------------------------------------------


def test_header_rule() -> None:
    assert is_header({"type": "session", "id": "x"})
    assert not is_header({"type": "session", "id": 1})
    assert not is_header({"type": "session"})
    assert not is_header({"type": "title", "id": "x"})
    assert not is_header(["session"])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-02-16T10:20:30.000Z", 1771237230000),
        ("2026-02-16T10:20:30Z", 1771237230000),
        ("2026-02-16T12:20:30.250+02:00", 1771237230250),
        (1760000000000, 1760000000000),
        ("not a time", None),
        ("", None),
        (None, None),
        (True, None),
    ],
)
def test_iso_to_ms(value: object, expected: int | None) -> None:
    assert iso_to_ms(value) == expected


def _iso_to_ms_by_tidying(value: str) -> int | None:
    """iso_to_ms as it read every string before its fast path: stripped, a final z as +00:00."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return int((moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp() * 1000)


@settings(max_examples=400, deadline=None)
@given(
    moment=st.datetimes(timezones=st.sampled_from([None, UTC, timezone(timedelta(hours=-7, minutes=-30))])),
    form=st.sampled_from(["js", "iso", "seconds", "date", "lower-z", "padded"]),
    junk=st.text(max_size=30),
)
def test_iso_to_ms_reads_every_form_as_tidying_it_first_did(moment: datetime, form: str, junk: str) -> None:
    """The agents' form is parsed as it is; any other string gives what tidying it first gave."""
    utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment
    texts = {
        "js": utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z",
        "iso": moment.isoformat(),
        "seconds": moment.isoformat(timespec="seconds"),
        "date": moment.date().isoformat(),
        "lower-z": utc.strftime("%Y-%m-%dT%H:%M:%S") + "z",
        "padded": f"  {moment.isoformat()}\n",
    }
    for value in (texts[form], junk, texts[form] + junk):
        assert iso_to_ms(value) == _iso_to_ms_by_tidying(value)


def test_entry_time_and_message_text() -> None:
    assert entry_time_ms({"timestamp": "1970-01-01T00:00:01.500Z"}) == 1500
    assert entry_time_ms({}) is None
    assert message_text("plain") == "plain"
    assert message_text(
        [{"type": "text", "text": "a"}, {"type": "image", "data": "x"}, {"type": "text", "text": "b"}]
    ) == ("a\nb")
    assert message_text(None) == ""


# --- node kinds -------------------------------------------------------------------------------------


def test_seed_file_nodes() -> None:
    t = transcript("seed_v3.jsonl")
    assert kinds(t) == [
        ("a1b2c3d4", "assistant"),
        ("b1c2d3e4", "model_change"),
        ("c1d2e3f4", "thinking_change"),
        ("d1e2f3a4", "compaction"),
        ("e1f2a3b4", "branch_summary"),
        ("f1a2b3c4", "custom"),
        ("a2b3c4d5", "custom_message"),
        ("b2c3d4e5", "label"),
        ("c2d3e4f5", "rule_injection"),
        ("d2e3f4a5", "session_init"),
        ("e2f3a4b5", "mode_change"),
    ]
    by_id = t.by_id
    assert by_id["a1b2c3d4"].model == "anthropic/claude-sonnet-4-5"
    assert by_id["a1b2c3d4"].usage is not None and by_id["a1b2c3d4"].usage.input == 100
    assert by_id["b1c2d3e4"].model == "openai/gpt-4o"
    assert by_id["d1e2f3a4"].meta["firstKeptEntryId"] == "a1b2c3d4"
    assert by_id["d1e2f3a4"].meta["tokensBefore"] == 42000
    assert by_id["e1f2a3b4"].meta["fromId"] == "a1b2c3d4"
    assert by_id["c2d3e4f5"].meta["injectedRules"] == ["ruleA", "ruleB"]
    assert by_id["e2f3a4b5"].meta["mode"] == "plan"
    assert t.system_prompt == "..."
    assert t.tools == ["read", "edit"]
    assert t.title == "optional session title"
    assert t.parent_session == "optional lineage marker"
    assert t.version == 3
    assert t.session_id == "1f9d2a6b9c0d1234"
    assert t.cwd == "/work/pi"
    assert t.created_ms == iso_to_ms("2026-02-16T10:20:30.000Z")
    assert t.modified_ms == iso_to_ms("2026-02-16T10:30:00.000Z")
    assert t.default_leaf == "e2f3a4b5"
    assert [n.id for n in t.path_nodes("d1e2f3a4")] == ["a1b2c3d4", "b1c2d3e4", "c1d2e3f4", "d1e2f3a4"]
    assert {n.kind for n in t.nodes} <= NODE_KINDS


def test_unknown_types_and_roles_become_unknown_nodes() -> None:
    t = transcript("unknown_types.jsonl")
    assert kinds(t) == [
        ("u0000001", "user"),
        ("u0000002", "unknown"),
        ("u0000003", "unknown"),
        ("u0000004", "assistant"),
        ("u0000005", "unknown"),
        ("u0000006", "unknown"),
    ]
    by_id = t.by_id
    assert "ZZ_UNK_TYPE_ZZ" in by_id["u0000002"].meta["raw"]
    assert by_id["u0000002"].meta["entryType"] == "quantum_fork"
    assert "ZZ_UNK_ROLE_ZZ" in by_id["u0000003"].meta["raw"]
    assert by_id["u0000003"].role == "robot"
    assert "ZZ_UNK_NO_TYPE_ZZ" in by_id["u0000005"].meta["raw"]
    assert "ZZ_UNK_MESSAGE_NOT_OBJECT_ZZ" in by_id["u0000006"].meta["raw"]
    # An unknown content block is kept as JSON text beside the known ones.
    parts = by_id["u0000001"].parts
    assert [p.kind for p in parts] == ["text", "other"]
    assert "ZZ_UNK_BLOCK_ZZ" in parts[1].text


def test_pi_variants() -> None:
    t = transcript("pi_variants.jsonl")
    assert kinds(t) == [
        ("p0000001", "user"),
        ("p0000002", "model_change"),
        ("p0000003", "title"),
        ("p0000004", "assistant"),
        ("p0000005", "notice"),
        ("p0000006", "title"),
        ("p0000007", "execution"),
    ]
    by_id = t.by_id
    assert by_id["p0000002"].model == "anthropic/claude-opus-4-5"
    assert by_id["p0000002"].meta["role"] == "default"
    assert by_id["p0000004"].model == "openai/gpt-5"
    # The latest session_info names the session.
    assert t.title == "ZZ_PI_NAME_NEW_ZZ"
    bash = by_id["p0000007"]
    assert bash.meta["language"] == "bash"
    assert bash.meta["command"] == "ls ZZ_PI_BASH_ZZ"
    assert bash.meta["exitCode"] == 0
    assert bash.hidden is True


def test_omp_extra_types_and_roles() -> None:
    t = transcript("omp_extra_types.jsonl")
    assert kinds(t) == [
        ("o0000001", "custom_message"),
        ("o0000002", "model_change"),
        ("o0000003", "model_change"),
        ("o0000004", "title"),
        ("o0000005", "notice"),
        ("o0000006", "notice"),
        ("o0000007", "notice"),
        ("o0000008", "notice"),
        ("o0000009", "custom_message"),
        ("o0000010", "execution"),
        ("o0000011", "execution"),
        ("o0000012", "assistant"),
        ("o0000013", "tool_result"),
    ]
    by_id = t.by_id
    assert by_id["o0000001"].meta["customType"] == "developer"
    assert (by_id["o0000002"].model, by_id["o0000002"].meta["role"]) == ("anthropic/claude-haiku-4-5", "smol")
    assert (by_id["o0000003"].model, by_id["o0000003"].meta["role"]) == (
        "anthropic/claude-opus-4-5",
        "default",
    )
    assert t.title == "ZZ_OMP_TITLE_ZZ"
    assert by_id["o0000009"].meta["customType"] == "fileMention"
    assert (by_id["o0000010"].meta["language"], by_id["o0000010"].meta["code"]) == (
        "python",
        "print('ZZ_OMP_PY_ZZ')",
    )
    assert (by_id["o0000011"].meta["language"], by_id["o0000011"].meta["exitCode"]) == ("js", 1)
    assistant = by_id["o0000012"]
    assert [p.kind for p in assistant.parts] == ["thinking", "tool_call"]
    assert assistant.parts[0].text == "ZZ_OMP_THINK_ZZ"
    assert assistant.meta["stopReason"] == "toolUse"
    call = assistant.tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("call_1", "read", {"path": "ZZ_OMP_ARG_ZZ"})
    assert call.result is not None
    assert call.result is by_id["o0000013"].result
    assert call.result.parts[0].text == "ZZ_OMP_RESULT_ZZ"
    assert call.result.details == {"diff": "+a\n-b"}
    assert call.result.is_error is False
    totals = t.totals()
    assert (totals.messages, totals.user_messages, totals.tool_calls) == (1, 0, 1)
    assert (totals.usage.input, totals.usage.output, totals.usage.cache_read, totals.usage.cache_write) == (
        100,
        50,
        10,
        5,
    )
    assert totals.usage.cost == pytest.approx(0.0033)
    assert totals.models == ["anthropic/claude-opus-4-5"]


def test_hidden_custom_messages() -> None:
    t = transcript("v2_hook_message.jsonl")
    hook = t.by_id["aa000002"]
    assert (hook.kind, hook.role, hook.hidden) == ("custom_message", "custom", True)
    assert hook.meta["customType"] == "my-hook"
    assert t.by_id["aa000004"].hidden is False


def test_title_slot_title() -> None:
    assert transcript("title_slot.jsonl").title == "ZZ_TITLE_SLOT_ZZ"


def test_v1_file_converts_after_migration() -> None:
    session = open_session(FIXTURES / "v1_compaction.jsonl")
    t = transcript_from_session(session)
    assert [n.kind for n in t.nodes] == [
        "user",
        "assistant",
        "thinking_change",
        "user",
        "assistant",
        "compaction",
        "custom_message",
        "user",
        "assistant",
    ]
    compaction = next(n for n in t.nodes if n.kind == "compaction")
    assert compaction.meta["firstKeptEntryId"] == t.nodes[3].id
    assert t.parent_session is not None and t.parent_session.endswith("_v1-parent.jsonl")
    assert t.nodes[0].parent_id is None
    assert [n.parent_id for n in t.nodes[1:]] == [n.id for n in t.nodes[:-1]]


def test_malformed_and_truncated_counts_reach_the_transcript() -> None:
    t = transcript("malformed_lines.jsonl")
    assert (t.malformed_lines, t.truncated_tail) == (4, False)
    t = transcript("truncated_tail.jsonl")
    assert (t.malformed_lines, t.truncated_tail) == (0, True)
    assert [n.id for n in t.nodes] == ["r0000001"]


def test_artifacts_dir_is_the_session_path_without_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "2026-01-01T00-00-00-000Z_abc.jsonl"
    shutil.copyfile(FIXTURES / "seed_v3.jsonl", path)
    t = transcript_from_session(open_session(path))
    assert t.artifacts_dir == tmp_path / "2026-01-01T00-00-00-000Z_abc"
    assert t.source_path == path


def test_duplicate_ids_give_one_node(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "dup", "timestamp": "2026-01-01T00:00:00.000Z"}
    first = {
        "type": "message",
        "id": "d1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "ZZ_FIRST_ZZ"},
    }
    copy = {**first, "message": {"role": "user", "content": "ZZ_COPY_ZZ"}}
    path = tmp_path / "dup.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (header, first, copy)))
    t = transcript_from_session(open_session(path))
    # The last record of an id is the one, as in pi's and omp's index.
    assert [(n.id, n.parts[0].text) for n in t.nodes] == [("d1", "ZZ_COPY_ZZ")]


# --- content parts ----------------------------------------------------------------------------------


def test_titles_are_shortened_at_a_word_boundary() -> None:
    assert shorten("  Fix the\n  login   bug ", 70) == "Fix the login bug"
    long = "Please **Fetch**: `https://example.com/docs` and summarise, then " + "word " * 50
    short = shorten(long, 60)
    assert len(short) <= 60 and short.endswith("…") and short[:-1] == long[: len(short) - 1]
    assert long[len(short) - 1] in " ,"  # cut between words
    assert shorten("x" * 100, 10) == "x" * 9 + "…"  # one long word is cut inside it


def test_reused_call_ids_pair_with_the_call_on_the_results_own_path(tmp_path: Path) -> None:
    # Providers that number calls per turn reuse "call_0" on every branch: each result must
    # reach the call it answers, not whichever call with that id came last in the file.
    b = SessionBuilder()
    b.user("u1", "go")
    b.assistant("a1", [tool_call("call_0", "bash", command="echo one")])
    b.tool_result("r1", "call_0", "bash", "one")
    b.assistant("a2", [tool_call("call_0", "bash", command="echo two")], parent="u1")
    b.tool_result("r2", "call_0", "bash", "two")
    b.assistant("a3", [tool_call("call_0", "bash", command="echo three")])
    b.tool_result("r3", "call_0", "bash", "three")
    b.user("u2", "late", parent="r1")  # appended after, on the first branch
    b.assistant("a4", [text("ok")])
    t = transcript_from_session(open_session(b.write(tmp_path / "s.jsonl")))
    results = {n.id: [c.result.node_id if c.result else None for c in n.tool_calls] for n in t.nodes}
    assert results["a1"] == ["r1"]
    assert results["a2"] == ["r2"]
    assert results["a3"] == ["r3"]


def test_wrong_typed_fields_still_render(tmp_path: Path) -> None:
    # Files from other versions, or edited by hand: every known field with a type it should not have.
    b = SessionBuilder()
    b.add("session_init", "i1", None, systemPrompt=5, tools=5, task={"x": 1})
    b.add("ttsr_injection", "t1", injectedRules=5)
    b.add("model_change", "m1", model=5, provider=["x"])
    b.add("thinking_level_change", "th", thinkingLevel={"a": 1})
    b.add("label", "l1", targetId=5, label=7)
    b.add("session_info", "s1", name=5)
    b.add("compaction", "c1", summary=5, tokensBefore="lots", firstKeptEntryId=9, shortSummary=3)
    b.add("branch_summary", "b1", summary=["x"], fromId=5)
    b.add("custom_message", "cm", customType=5, content=5, display=False)
    b.message("x1", "bashExecution", None, command=5, output=7, exitCode="1")
    b.message("u1", "user", [{"type": "text", "text": 5}, {"type": "toolCall", "id": 5, "name": 5, "arguments": 5}])
    b.message("a1", "assistant", [{"type": "thinking", "thinking": 5}], model=5, usage={"input": "x"}, stopReason=5)
    b.message("r1", "toolResult", [{"type": "text", "text": 5}], toolCallId=5, toolName=5, details={"diff": 5})
    t = transcript_from_session(open_session(b.write(tmp_path / "typed.jsonl")))
    meta = {n.id: n.meta for n in t.nodes}
    assert meta["t1"]["injectedRules"] == [5] and meta["i1"]["tools"] == [5] and meta["i1"]["systemPrompt"] == "5"
    assert meta["c1"]["tokensBefore"] is None and meta["c1"]["summary"] == "5"
    assert meta["x1"]["exitCode"] == 1 and meta["x1"]["command"] == "5"
    html = export_html(t)
    assert 'id="entry-r1"' in html and "rules: <code>5</code>" in html


def test_parts_of_content_forms() -> None:
    assert [(p.kind, p.text) for p in parts_of("hello")] == [("text", "hello")]
    assert parts_of(None) == []
    parts = parts_of(
        [
            {"type": "text", "text": "t"},
            {"type": "thinking", "thinking": "th"},
            {"type": "image", "data": "QUJD", "mimeType": "image/jpeg"},
            {"type": "image_url", "image_url": {"url": "data:image/webp;base64,WlpA"}},
            {"type": "image_url", "image_url": "blob:sha256:" + "a" * 64},
            {"type": "image_url", "image_url": "https://example.invalid/x.png"},
            "bare string",
        ]
    )
    assert [(p.kind, p.mime, p.data) for p in parts] == [
        ("text", "", ""),
        ("thinking", "", ""),
        ("image", "image/jpeg", "QUJD"),
        ("image", "image/webp", "WlpA"),
        ("image", "image/png", "blob:sha256:" + "a" * 64),
        ("other", "", ""),
        ("other", "", ""),
    ]


def test_rehydrated_image_reaches_the_part(tmp_path: Path) -> None:
    png = b"\x89PNG ZZ_PART_IMAGE_ZZ"
    digest = hashlib.sha256(png).hexdigest()
    agent = tmp_path / "agent"
    (agent / "blobs").mkdir(parents=True)
    (agent / "blobs" / digest).write_bytes(png)
    path = agent / "sessions" / "--w--" / "s.jsonl"
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": "img", "timestamp": "2026-01-01T00:00:00.000Z"}
    entry = {
        "type": "message",
        "id": "i1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "image", "data": "blob:sha256:" + digest, "mimeType": "image/png"}],
        },
    }
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (header, entry)))
    part = transcript_from_session(open_session(path)).nodes[0].parts[0]
    assert (part.kind, part.mime) == ("image", "image/png")
    assert base64.b64decode(part.data) == png


def test_usage_of() -> None:
    usage = usage_of({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "cost": {"total": 0.5}})
    assert usage is not None
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.cost) == (1, 2, 3, 4, 0.5)
    assert usage.total_tokens == 10
    assert usage_of(None) is None
    broken = usage_of({"input": "many", "cost": True})
    assert broken is not None and (broken.input, broken.cost) == (0, 0.0)
