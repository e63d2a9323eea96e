"""The model's context by the rules of the agent that wrote the file: omp 18's for omp's files (one small
file per rule, expected results written here), pi 0.73's for pi's and other tools' files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from context_rule_files import DELIBERATE, OMP_RULE_FILES, OTHER_RULE_FILES, RuleFile, message_texts
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.session.context import LAST_ENTRY, OMP_RULES, PI_RULES, build_session_context
from sitegen.session.session import Session, open_session

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"


def opened(make: Callable[[], RuleFile], tmp_path: Path) -> tuple[RuleFile, Session]:
    rule_file = make()
    return rule_file, open_session(rule_file.write(tmp_path))


def context_at(session: Session, leaf: str) -> list[str]:
    context = build_session_context(session.entries, leaf or LAST_ENTRY, session.by_id, session.context_rules)
    return message_texts(context.messages)


@pytest.mark.parametrize("make", OMP_RULE_FILES, ids=lambda make: make.__name__)
def test_omp_files_follow_omp_rules(make: Callable[[], RuleFile], tmp_path: Path) -> None:
    rule_file, session = opened(make, tmp_path)
    assert session.context_rules == OMP_RULES
    for leaf, texts in rule_file.expected.items():
        assert context_at(session, leaf) == texts, leaf


@pytest.mark.parametrize("make", OTHER_RULE_FILES + DELIBERATE, ids=lambda make: make.__name__)
def test_other_files_follow_pi_rules(make: Callable[[], RuleFile], tmp_path: Path) -> None:
    rule_file, session = opened(make, tmp_path)
    assert session.context_rules == PI_RULES
    for leaf, texts in rule_file.expected.items():
        assert context_at(session, leaf) == texts, leaf


def test_which_rules_a_file_follows(tmp_path: Path) -> None:
    # omp's agent dir, omp's title slot, or an entry only omp writes; pi's dir wins over content.
    assert open_session(FIXTURES / "omp_extra_types.jsonl").context_rules == OMP_RULES
    assert open_session(FIXTURES / "title_slot.jsonl").context_rules == OMP_RULES
    assert open_session(FIXTURES / "pi_variants.jsonl").context_rules == PI_RULES
    assert open_session(FIXTURES / "v1_compaction.jsonl").context_rules == PI_RULES
    moved = tmp_path / ".pi" / "agent" / "sessions" / "--w--" / "omp_extra_types.jsonl"
    moved.parent.mkdir(parents=True)
    moved.write_bytes((FIXTURES / "omp_extra_types.jsonl").read_bytes())
    assert open_session(moved).context_rules == PI_RULES
    xdg = tmp_path / "data" / "omp" / "sessions" / "--w--" / "plain.jsonl"
    xdg.parent.mkdir(parents=True)
    xdg.write_bytes((FIXTURES / "pi_variants.jsonl").read_bytes())
    assert open_session(xdg).context_rules == OMP_RULES


def test_omp_default_model_is_inferred_until_an_explicit_default(tmp_path: Path) -> None:
    from context_rule_files import default_model

    _, session = opened(default_model, tmp_path)
    rules = session.context_rules
    at_a2 = build_session_context(session.entries, "a2", session.by_id, rules)
    assert at_a2.models == {"default": "google/gemini-2.5-pro", "smol": "anthropic/claude-haiku-4-5"}
    # pi's provider/modelId model_change is not omp's: a2's model stays the default.
    assert build_session_context(session.entries, "m2", session.by_id, rules).models["default"] == (
        "google/gemini-2.5-pro"
    )
    final = build_session_context(session.entries, LAST_ENTRY, session.by_id, rules)
    assert final.models == {"default": "anthropic/claude-opus-4-5", "smol": "anthropic/claude-haiku-4-5"}
    # thinkingLevel null reads as "off" in omp's files.
    assert build_session_context(session.entries, "h1", session.by_id, rules).thinking_level == "high"
    assert final.thinking_level == "off"
    # By pi's rules the last model named wins and a null thinking level stays null.
    pi = build_session_context(session.entries, LAST_ENTRY, session.by_id, PI_RULES)
    assert pi.models["default"] == "openai/gpt-5"
    assert pi.thinking_level is None


def test_pi_files_keep_a_null_thinking_level(tmp_path: Path) -> None:
    from context_rule_files import empty_branch_summary

    _, session = opened(empty_branch_summary, tmp_path)
    context = build_session_context(session.entries, LAST_ENTRY, session.by_id, session.context_rules)
    assert context.thinking_level is None
    assert build_session_context(session.entries, "h1", session.by_id, session.context_rules).thinking_level == "high"
    # The empty summary is skipped, the other one reaches the model.
    assert [m.get("summary") for m in context.messages if m["role"] == "branchSummary"] == ["ZZ_BRANCH_ZZ"]


def test_unanswered_calls_lose_their_signature_and_redacted_reasoning(tmp_path: Path) -> None:
    from context_rule_files import unanswered_calls

    _, session = opened(unanswered_calls, tmp_path)
    context = build_session_context(session.entries, "t1", session.by_id, session.context_rules)
    turn = context.messages[1]
    assert [block["type"] for block in turn["content"]] == ["thinking", "toolCall"]
    assert "thinkingSignature" not in turn["content"][0]
    # The file's own entry is untouched.
    assert len(session.by_id["a1"]["message"]["content"]) == 4


def test_context_notes_open_the_context(tmp_path: Path) -> None:
    from context_rule_files import context_notes

    _, session = opened(context_notes, tmp_path)
    first = build_session_context(session.entries, "u3", session.by_id, session.context_rules).messages[0]
    assert (first["role"], first["customType"], first["display"]) == ("custom", "experimental_context_notes", False)


def test_remote_compaction_summary_carries_the_provider_payload(tmp_path: Path) -> None:
    from context_rule_files import remote_compaction

    _, session = opened(remote_compaction, tmp_path)
    summary = build_session_context(session.entries, "u5", session.by_id, session.context_rules).messages[0]
    assert summary["providerPayload"] == {
        "type": "anthropicCompaction",
        "provider": "anthropic",
        "content": "ZZ_NATIVE_ZZ",
    }
    assert (summary["tokensAfter"], summary["method"]) == (20, "remote")


def test_entries_without_ids_are_chained_and_counted(tmp_path: Path) -> None:
    from context_rule_files import entries_without_ids

    _, session = opened(entries_without_ids, tmp_path)
    assert session.migration.ids_chained == 3
    assert [e["parentId"] for e in session.entries] == [None, session.entries[0]["id"], session.entries[1]["id"]]
    assert session.tree.default_leaf == session.entries[-1]["id"]
    # The same ids on every load.
    assert [e["id"] for e in open_session(session.path).entries] == [e["id"] for e in session.entries]


def test_context_command_names_the_rules(tmp_path: Path) -> None:
    from context_rule_files import duplicate_ids, failed_turns

    runner = CliRunner()
    omp_file = failed_turns().write(tmp_path)
    result = runner.invoke(app, ["context", str(omp_file), "--json"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert data["rules"] == "omp 18"
    assert len(data["messages"]) == 7
    result = runner.invoke(app, ["context", str(omp_file), "--leaf", "a2"])
    assert "Rules: omp 18" in result.stdout
    assert "Messages: 2 (user 2)" in result.stdout
    pi_file = duplicate_ids().write(tmp_path)
    data = orjson.loads(runner.invoke(app, ["context", str(pi_file), "--json"]).stdout)
    assert data["rules"] == "pi 0.73"
    assert [m["content"] for m in data["messages"]] == ["ZZ_SECOND_COPY_ZZ", "ZZ_CHILD_ZZ", "ZZ_LAST_ZZ"]


def test_a_site_shows_entries_without_ids_and_names_the_file_on_the_problems_page(tmp_path: Path) -> None:
    from context_rule_files import entries_without_ids
    from site_helpers import build, page_text

    rule_file = entries_without_ids()
    rule_file.agent = "pi"
    source = rule_file.write(tmp_path)
    site = tmp_path / "site"
    result = build(site, tmp_path / ".pi" / "agent")
    assert result.problems == []
    page = next(site.glob("sessions/*/entries_without_ids.html"))
    text = page_text(page)
    assert all(token in text for token in ("ZZ_U1_ZZ", "ZZ_A1_ZZ", "ZZ_U2_ZZ"))
    problems = page_text(site / "problems.html")
    assert "Read with repairs" in problems
    assert f"<code>{source}</code></a></td><td>3 entries without an id, shown in file order</td>" in problems
    # A rebuild that renders nothing keeps the line (the manifest remembers it).
    assert build(site, tmp_path / ".pi" / "agent").rendered == []
    assert "3 entries without an id" in page_text(site / "problems.html")


def test_dump_follows_the_files_rules(tmp_path: Path) -> None:
    from context_rule_files import failed_turns

    result = CliRunner().invoke(app, ["dump", str(failed_turns().write(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "ZZ_U4_ZZ" in result.stdout and "ZZ_A6_INTERRUPTED_ZZ" in result.stdout
    # Failed and retried turns, and the failed turn's tool result, are not what the model saw.
    assert not any(token in result.stdout for token in ("ZZ_A1_ZZ", "ZZ_T1_ZZ", "ZZ_A2_ABORTED_ZZ", "ZZ_A4_RETRIED_ZZ"))


def test_a_null_thinking_level_is_printed_as_each_agent_reads_it(tmp_path: Path) -> None:
    from context_rule_files import default_model, empty_branch_summary

    runner = CliRunner()
    pi_text = runner.invoke(app, ["context", str(empty_branch_summary().write(tmp_path))]).stdout
    assert "Thinking level: null" in pi_text
    omp_text = runner.invoke(app, ["context", str(default_model().write(tmp_path))]).stdout
    assert "Thinking level: off" in omp_text
    assert "Models: default=anthropic/claude-opus-4-5, smol=anthropic/claude-haiku-4-5" in omp_text


def test_omp_context_keeps_the_configured_level_and_the_service_tier(tmp_path: Path) -> None:
    from context_rule_files import default_model

    _, session = opened(default_model, tmp_path)
    at_s1 = build_session_context(session.entries, "s1", session.by_id, session.context_rules).to_json()
    assert (at_s1["configuredThinkingLevel"], at_s1["serviceTier"]) == ("auto", {"anthropic": "priority"})
    final = build_session_context(session.entries, LAST_ENTRY, session.by_id, session.context_rules).to_json()
    assert final["serviceTier"] == {"openai": "flex"}
    assert "configuredThinkingLevel" not in final  # null, as the last change says
    assert "serviceTier" not in build_session_context(session.entries, "h1", session.by_id, PI_RULES).to_json()
