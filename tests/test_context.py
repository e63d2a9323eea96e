"""build_session_context exactly as the seed's algorithm: leaf choice, runtime state, and the message list."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from sessions import shallow_stack

from sitegen.session.context import LAST_ENTRY, OMP_RULES, build_session_context, model_of_change
from sitegen.session.session import open_session

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
EPOCH = datetime(2026, 4, 1, tzinfo=UTC)
EPOCH_MS = int(EPOCH.timestamp() * 1000)


def at(second: int) -> str:
    return (EPOCH + timedelta(seconds=second)).isoformat().replace("+00:00", ".000Z")


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


class Chain:
    """Builds entries; each one's parent is the previous one unless given."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def add(self, kind: str, entry_id: str, parent: str | bool | None = True, **fields: Any) -> dict[str, Any]:
        if parent is True:
            parent = self.entries[-1]["id"] if self.entries else None
        e = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": at(len(self.entries)), **fields}
        self.entries.append(e)
        return e

    def user(self, entry_id: str, text: str, parent: str | bool | None = True) -> dict[str, Any]:
        return self.add("message", entry_id, parent, message={"role": "user", "content": text})

    def assistant(
        self,
        entry_id: str,
        text: str,
        provider: str = "anthropic",
        model: str = "claude-sonnet-4-5",
        **kw: Any,
    ) -> dict[str, Any]:
        message = {
            "role": "assistant",
            "provider": provider,
            "model": model,
            "content": [{"type": "text", "text": text}],
        }
        return self.add("message", entry_id, message=message, **kw)


def texts(messages: list[dict[str, Any]]) -> list[str]:
    """A short signature of each message: its text, or its role for non-text ones."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list) and content and isinstance(content[0], dict) and "text" in content[0]:
            out.append(content[0]["text"])
        else:
            out.append(m.get("role", "?"))
    return out


# --- the leaf -------------------------------------------------------------------------------------


def test_leaf_none_is_an_empty_context() -> None:
    c = Chain()
    c.add("model_change", "m1", model="openai/gpt-4o")
    c.add("thinking_level_change", "t1", thinkingLevel="high")
    c.user("u1", "ZZ_U1_ZZ")
    context = build_session_context(c.entries, None)
    assert context.to_json() == {
        "rules": "pi 0.73",
        "leafId": None,
        "messages": [],
        "thinkingLevel": "off",
        "models": {},
        "injectedTtsrRules": [],
        "mode": "none",
        "modeData": None,
    }


def test_no_entries_is_an_empty_context() -> None:
    assert build_session_context([]).to_json()["messages"] == []
    assert build_session_context([]).leaf_id is None


def test_explicit_leaf_walks_only_its_own_path() -> None:
    c = Chain()
    c.user("u1", "ZZ_ROOT_ZZ")
    c.assistant("a1", "ZZ_A1_ZZ")
    c.user("u2", "ZZ_BRANCH_ONE_ZZ", parent="a1")
    c.user("u3", "ZZ_BRANCH_TWO_ZZ", parent="a1")
    assert texts(build_session_context(c.entries, "u2").messages) == [
        "ZZ_ROOT_ZZ",
        "ZZ_A1_ZZ",
        "ZZ_BRANCH_ONE_ZZ",
    ]
    assert build_session_context(c.entries, "u2").leaf_id == "u2"
    assert texts(build_session_context(c.entries, "a1").messages) == ["ZZ_ROOT_ZZ", "ZZ_A1_ZZ"]


def test_default_and_unknown_leaf_fall_back_to_the_last_entry_in_file_order() -> None:
    c = Chain()
    c.user("u1", "ZZ_ROOT_ZZ")
    c.user("u2", "ZZ_NEWER_BRANCH_ZZ")
    late = c.user("u3", "ZZ_LAST_LINE_ZZ", parent="u1")
    late["timestamp"] = at(-100)  # older than everything: file order decides, not time
    for context in (
        build_session_context(c.entries),
        build_session_context(c.entries, LAST_ENTRY),
        build_session_context(c.entries, "no-such-id"),
    ):
        assert context.leaf_id == "u3"
        assert texts(context.messages) == ["ZZ_ROOT_ZZ", "ZZ_LAST_LINE_ZZ"]


def test_by_id_argument_gives_the_same_result() -> None:
    session = open_session(FIXTURES / "seed_v3.jsonl")
    for leaf in ("d1e2f3a4", "e2f3a4b5"):
        assert (
            build_session_context(session.entries, leaf, session.by_id).to_json()
            == build_session_context(session.entries, leaf).to_json()
        )


# --- runtime state --------------------------------------------------------------------------------


def test_thinking_level_is_the_latest_on_the_path() -> None:
    c = Chain()
    c.user("u1", "x")
    assert build_session_context(c.entries).thinking_level == "off"
    c.add("thinking_level_change", "t1", thinkingLevel="low")
    c.add("thinking_level_change", "t2", thinkingLevel="high")
    c.add("thinking_level_change", "t3", parent="u1", thinkingLevel="minimal")  # a sibling branch
    assert build_session_context(c.entries, "t2").thinking_level == "high"
    assert build_session_context(c.entries, "t1").thinking_level == "low"
    assert build_session_context(c.entries, "t3").thinking_level == "minimal"
    assert build_session_context(c.entries, "u1").thinking_level == "off"


def test_models_from_model_changes_by_role() -> None:
    c = Chain()
    c.user("u1", "x")
    c.add("model_change", "m1", model="anthropic/claude-haiku-4-5", role="smol")
    c.add("model_change", "m2", model="openai/gpt-4o")  # no role: default
    c.add("model_change", "m3", model="openai/o3", role="slow", resolvedModelIsFallback=True)
    c.add("model_change", "m4", model="anthropic/claude-opus-4-5", role="default")
    c.assistant("a1", "y", provider="google", model="gemini-2.5-pro")
    # The seed's (omp's) rule: an explicit default is kept over later answers.
    assert build_session_context(c.entries, rules=OMP_RULES).models == {
        "smol": "anthropic/claude-haiku-4-5",
        "default": "anthropic/claude-opus-4-5",
        "slow": "openai/o3",
    }
    # pi's: the last model named, by a model_change or an answer, is the default.
    assert build_session_context(c.entries).models["default"] == "google/gemini-2.5-pro"
    assert build_session_context(c.entries, "m2").models == {
        "smol": "anthropic/claude-haiku-4-5",
        "default": "openai/gpt-4o",
    }


def test_pi_model_change_with_provider_and_model_id() -> None:
    c = Chain()
    c.add("model_change", "m1", provider="anthropic", modelId="claude-opus-4-5")
    assert build_session_context(c.entries).models == {"default": "anthropic/claude-opus-4-5"}
    assert model_of_change({"type": "model_change", "provider": "anthropic", "modelId": "x"}) == "anthropic/x"
    assert model_of_change({"type": "model_change", "model": "openai/gpt-4o", "provider": "p", "modelId": "m"}) == (
        "openai/gpt-4o"
    )
    assert model_of_change({"type": "model_change"}) is None


def test_fallback_default_model_from_the_assistant_message() -> None:
    c = Chain()
    c.user("u1", "x")
    c.assistant("a1", "y", provider="anthropic", model="claude-sonnet-4-5")
    assert build_session_context(c.entries).models == {"default": "anthropic/claude-sonnet-4-5"}
    assert build_session_context(c.entries, "u1").models == {}


def test_explicit_model_change_beats_the_assistant_fallback() -> None:
    c = Chain()
    c.add("model_change", "m1", model="openai/gpt-4o")
    c.user("u1", "x")
    c.assistant("a1", "y", provider="anthropic", model="claude-sonnet-4-5")
    assert build_session_context(c.entries, rules=OMP_RULES).models == {"default": "openai/gpt-4o"}
    assert build_session_context(c.entries).models == {"default": "anthropic/claude-sonnet-4-5"}


def test_injected_ttsr_rules_are_deduplicated_in_order() -> None:
    c = Chain()
    c.add("ttsr_injection", "r1", injectedRules=["ruleA", "ruleB"])
    c.user("u1", "x")
    c.add("ttsr_injection", "r2", injectedRules=["ruleB", "ruleC", "ruleA"])
    c.add("ttsr_injection", "r3", parent="r1", injectedRules=["ruleZ"])  # other branch
    assert build_session_context(c.entries, "r2").injected_ttsr_rules == ["ruleA", "ruleB", "ruleC"]
    assert build_session_context(c.entries, "r3").injected_ttsr_rules == ["ruleA", "ruleB", "ruleZ"]


def test_mode_and_mode_data_from_the_latest_mode_change() -> None:
    c = Chain()
    c.user("u1", "x")
    assert (build_session_context(c.entries).mode, build_session_context(c.entries).mode_data) == (
        "none",
        None,
    )
    c.add("mode_change", "d1", mode="plan", data={"planFile": "/tmp/plan.md"})
    c.add("mode_change", "d2", mode="agent")
    c.add("mode_change", "d3", parent="d1", mode="review", data={"ZZ": 1})
    assert (
        build_session_context(c.entries, "d1").mode,
        build_session_context(c.entries, "d1").mode_data,
    ) == (
        "plan",
        {"planFile": "/tmp/plan.md"},
    )
    assert (
        build_session_context(c.entries, "d2").mode,
        build_session_context(c.entries, "d2").mode_data,
    ) == (
        "agent",
        None,
    )
    assert build_session_context(c.entries, "d3").mode_data == {"ZZ": 1}


# --- messages ---------------------------------------------------------------------------------------


def test_custom_message_becomes_a_custom_agent_message() -> None:
    c = Chain()
    e = c.add(
        "custom_message",
        "cm1",
        customType="my-extension",
        content=[{"type": "text", "text": "ZZ_CUSTOM_ZZ"}],
        display=False,
        details={"debug": True},
    )
    assert build_session_context(c.entries).messages == [
        {
            "role": "custom",
            "customType": "my-extension",
            "content": [{"type": "text", "text": "ZZ_CUSTOM_ZZ"}],
            "display": False,
            "details": {"debug": True},
            "timestamp": ms(e["timestamp"]),
        }
    ]
    assert ms(e["timestamp"]) == EPOCH_MS


def test_branch_summary_becomes_a_branch_summary_message() -> None:
    c = Chain()
    c.user("u1", "x")
    e = c.add("branch_summary", "b1", fromId="root", summary="ZZ_BRANCH_SUMMARY_ZZ", details={"n": 1})
    assert build_session_context(c.entries).messages[1] == {
        "role": "branchSummary",
        "summary": "ZZ_BRANCH_SUMMARY_ZZ",
        "fromId": "root",
        "timestamp": ms(e["timestamp"]),
    }


def test_message_entries_pass_through_unchanged() -> None:
    c = Chain()
    stored = {"role": "robot", "content": "ZZ_ROBOT_ZZ", "beep": [1, 2], "timestamp": 5}
    c.add("message", "x1", message=copy.deepcopy(stored))
    c.add("message", "x2", message={"role": "bashExecution", "command": "ls", "excludeFromContext": True})
    assert build_session_context(c.entries).messages == [
        stored,
        {"role": "bashExecution", "command": "ls", "excludeFromContext": True},
    ]


def test_custom_session_init_and_other_entries_add_no_messages() -> None:
    c = Chain()
    c.user("u1", "ZZ_U1_ZZ")
    c.add("custom", "c1", customType="ext", data={"state": 1})
    c.add("session_init", "s1", systemPrompt="sp", task="t", tools=["read"])
    c.add("label", "l1", targetId="u1", label="x")
    c.add("model_change", "m1", model="a/b")
    c.add("thinking_level_change", "t1", thinkingLevel="high")
    c.add("ttsr_injection", "r1", injectedRules=["a"])
    c.add("mode_change", "d1", mode="plan")
    c.add("session_info", "i1", name="n")
    c.add("quantum_fork", "q1", payload=1)
    c.user("u2", "ZZ_U2_ZZ")
    assert texts(build_session_context(c.entries).messages) == ["ZZ_U1_ZZ", "ZZ_U2_ZZ"]


def test_compaction_summary_first_then_kept_entries_then_the_rest() -> None:
    c = Chain()
    c.user("u1", "ZZ_DROPPED_1_ZZ")
    c.assistant("a1", "ZZ_DROPPED_2_ZZ")
    c.user("u2", "ZZ_KEPT_1_ZZ")
    c.add("custom_message", "cm", customType="ext", content="ZZ_KEPT_2_ZZ", display=True)
    c.assistant("a2", "ZZ_KEPT_3_ZZ")
    comp = c.add("compaction", "k1", summary="ZZ_SUMMARY_ZZ", firstKeptEntryId="u2", tokensBefore=9000)
    c.user("u3", "ZZ_AFTER_1_ZZ")
    c.assistant("a3", "ZZ_AFTER_2_ZZ")
    messages = build_session_context(c.entries).messages
    assert messages[0] == {
        "role": "compactionSummary",
        "summary": "ZZ_SUMMARY_ZZ",
        "tokensBefore": 9000,
        "timestamp": ms(comp["timestamp"]),
    }
    assert texts(messages[1:]) == [
        "ZZ_KEPT_1_ZZ",
        "ZZ_KEPT_2_ZZ",
        "ZZ_KEPT_3_ZZ",
        "ZZ_AFTER_1_ZZ",
        "ZZ_AFTER_2_ZZ",
    ]


def test_compaction_whose_first_kept_entry_is_not_on_the_path_keeps_only_what_follows() -> None:
    c = Chain()
    c.user("u1", "ZZ_DROPPED_ZZ")
    c.add("compaction", "k1", summary="S", firstKeptEntryId="elsewhere", tokensBefore=1)
    c.user("u2", "ZZ_AFTER_ZZ")
    assert texts(build_session_context(c.entries).messages) == ["compactionSummary", "ZZ_AFTER_ZZ"]


def test_the_latest_compaction_on_the_path_governs() -> None:
    c = Chain()
    c.user("u1", "ZZ_1_ZZ")
    c.add("compaction", "k1", summary="ZZ_OLD_SUMMARY_ZZ", firstKeptEntryId="u1", tokensBefore=1)
    c.user("u2", "ZZ_2_ZZ")
    c.user("u3", "ZZ_3_ZZ")
    c.add("compaction", "k2", summary="ZZ_NEW_SUMMARY_ZZ", firstKeptEntryId="u3", tokensBefore=2)
    c.user("u4", "ZZ_4_ZZ")
    messages = build_session_context(c.entries).messages
    assert messages[0]["summary"] == "ZZ_NEW_SUMMARY_ZZ"
    assert texts(messages[1:]) == ["ZZ_3_ZZ", "ZZ_4_ZZ"]
    # At a leaf before the second compaction, the first one applies.
    assert [m.get("summary") for m in build_session_context(c.entries, "u2").messages][:1] == ["ZZ_OLD_SUMMARY_ZZ"]
    assert texts(build_session_context(c.entries, "u2").messages[1:]) == ["ZZ_1_ZZ", "ZZ_2_ZZ"]


def test_compaction_on_another_branch_is_ignored() -> None:
    c = Chain()
    c.user("u1", "ZZ_1_ZZ")
    c.user("u2", "ZZ_2_ZZ")
    c.add("compaction", "k1", summary="S", firstKeptEntryId="u2", tokensBefore=1)
    c.user("u3", "ZZ_OTHER_BRANCH_ZZ", parent="u2")
    assert texts(build_session_context(c.entries, "u3").messages) == [
        "ZZ_1_ZZ",
        "ZZ_2_ZZ",
        "ZZ_OTHER_BRANCH_ZZ",
    ]


# --- the seed file and the v1 file end to end ------------------------------------------------------


def test_seed_file_at_its_default_leaf_excludes_the_other_branch() -> None:
    session = open_session(FIXTURES / "seed_v3.jsonl")
    context = build_session_context(session.entries, rules=session.context_rules)
    assistant = session.by_id["a1b2c3d4"]["message"]
    assert context.to_json() == {
        "rules": "omp 18",
        "leafId": "e2f3a4b5",
        "messages": [
            assistant,
            {
                "role": "branchSummary",
                "summary": "Summary of abandoned path",
                "fromId": "a1b2c3d4",
                "timestamp": ms("2026-02-16T10:24:00.000Z"),
            },
            {
                "role": "custom",
                "customType": "my-extension",
                "content": "Injected context",
                "display": True,
                "details": {"debug": False},
                "timestamp": ms("2026-02-16T10:26:00.000Z"),
            },
        ],
        # The thinking and model changes live on the compacted branch, not on this path.
        "thinkingLevel": "off",
        "models": {"default": "anthropic/claude-sonnet-4-5"},
        "injectedTtsrRules": ["ruleA", "ruleB"],
        "mode": "plan",
        "modeData": {"planFile": "/tmp/plan.md"},
    }


def test_seed_file_at_the_compaction_leaf() -> None:
    session = open_session(FIXTURES / "seed_v3.jsonl")
    context = build_session_context(session.entries, "d1e2f3a4", rules=session.context_rules)
    assert context.to_json() == {
        "rules": "omp 18",
        "leafId": "d1e2f3a4",
        "messages": [
            {
                "role": "compactionSummary",
                "summary": "Conversation summary",
                # omp's summary message carries the short summary too.
                "shortSummary": "Short recap",
                "tokensBefore": 42000,
                "timestamp": ms("2026-02-16T10:23:00.000Z"),
            },
            session.by_id["a1b2c3d4"]["message"],
        ],
        "thinkingLevel": "high",
        # omp keeps the level the change named as the configured one too.
        "configuredThinkingLevel": "high",
        "models": {"default": "openai/gpt-4o"},
        "injectedTtsrRules": [],
        "mode": "none",
        "modeData": None,
    }


def test_v1_file_context_after_migration() -> None:
    session = open_session(FIXTURES / "v1_compaction.jsonl")
    context = build_session_context(session.entries)
    assert texts(context.messages) == [
        "compactionSummary",
        "ZZ_V1_REC4_USER_ZZ",
        "ZZ_V1_REC5_ASSISTANT_ZZ",
        "ZZ_V1_REC7_HOOK_ZZ",
        "ZZ_V1_REC8_USER_ZZ",
        "ZZ_V1_REC9_ASSISTANT_ZZ",
    ]
    assert context.messages[0]["summary"] == "ZZ_V1_COMPACTION_SUMMARY_ZZ"
    assert context.messages[0]["tokensBefore"] == 1234
    assert context.messages[3]["role"] == "custom"
    assert context.thinking_level == "high"
    assert context.models == {"default": "anthropic/claude-opus-4-5"}


def test_omp_fixture_models_and_roles() -> None:
    context = build_session_context(open_session(FIXTURES / "omp_extra_types.jsonl").entries)
    assert context.models == {"smol": "anthropic/claude-haiku-4-5", "default": "anthropic/claude-opus-4-5"}
    assert [m["role"] for m in context.messages] == [
        "developer",
        "fileMention",
        "pythonExecution",
        "jsExecution",
        "assistant",
        "toolResult",
    ]


def test_pi_fixture_models() -> None:
    context = build_session_context(open_session(FIXTURES / "pi_variants.jsonl").entries)
    # pi 0.73.1 itself says so: the later assistant's openai/gpt-5 follows the explicit model_change.
    assert context.models == {"default": "openai/gpt-5"}


# --- robustness -------------------------------------------------------------------------------------


def test_parent_cycle_terminates() -> None:
    c = Chain()
    c.user("u1", "ZZ_1_ZZ", parent="u2")
    c.user("u2", "ZZ_2_ZZ", parent="u1")
    with shallow_stack():
        context = build_session_context(c.entries)
    assert sorted(texts(context.messages)) == ["ZZ_1_ZZ", "ZZ_2_ZZ"]


def test_a_30000_deep_chain(tmp_path: Path) -> None:
    c = Chain()
    for i in range(30_000):
        c.user(f"c{i:07d}", f"m{i}")
    header = {"type": "session", "version": 3, "id": "deep", "timestamp": at(0)}
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *c.entries]))
    with shallow_stack():
        session = open_session(path)
        context = build_session_context(session.entries, by_id=session.by_id)
    assert len(context.messages) == 30_000
    assert context.messages[-1]["content"] == "m29999"


def test_duplicate_ids_resolve_like_the_session_index(tmp_path: Path) -> None:
    # /fork copies entries verbatim, so a repeated id is possible; every view must pick the same copy.
    c = Chain()
    c.user("d1", "ZZ_FIRST_COPY_ZZ")
    c.user("d2", "ZZ_CHILD_ZZ")
    c.user("d1", "ZZ_SECOND_COPY_ZZ", parent=None)
    c.user("d3", "ZZ_LAST_ZZ", parent="d2")
    header = {"type": "session", "version": 3, "id": "dups", "timestamp": at(0)}
    path = tmp_path / "dups.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *c.entries]))
    session = open_session(path)
    with_index = build_session_context(session.entries, "d3", session.by_id)
    # The last record of an id is the one (pi's and omp's index): d2's parent is the second copy.
    assert texts(with_index.messages) == ["ZZ_SECOND_COPY_ZZ", "ZZ_CHILD_ZZ", "ZZ_LAST_ZZ"]
    assert build_session_context(session.entries, "d3").to_json() == with_index.to_json()
