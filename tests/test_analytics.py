"""Where the time and the tokens went (issue 34): tool calls, durations, active time and speed, checked
against counts made straight from the session files; `sitegen stats`; the stats page's new sections."""

from __future__ import annotations

import importlib.util
import statistics
import sys
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from sessions import BASE_MS, SessionBuilder, text, tool_call
from typer.testing import CliRunner

from sitegen.cli import app
from sitegen.render.timeline import timeline_spans
from sitegen.transcript.activity import (
    ACTIVE_GAP_MS,
    active_by_day,
    active_runs,
    call_duration,
    call_durations,
    merge_runs,
    tool_uses,
)
from sitegen.transcript.load import load_transcript

runner = CliRunner()
CORPUS_PY = Path(__file__).resolve().parent.parent / "bench" / "corpus.py"
MINUTE = 60_000


def ms_of(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def timed_session(
    session_id: str = "time-0001", cwd: str = "/work/timed", model: str = "model-t", hours_later: int = 0
) -> SessionBuilder:
    """Two prompts 25 minutes apart: a failed bash call that took 3 s and a read that took 1 s, then after
    the gap an edit that took 4 s; each reply written 2 s after what came before it."""
    b = SessionBuilder(session_id=session_id, cwd=cwd)
    b.clock += hours_later * 3_600_000  # the same ids at the same times would be a /fork copy, counted once
    b.user("u1", "Run the tests ZZ_U1_ZZ")  # +1 s
    b.clock += 1000
    b.assistant("a1", [tool_call("c1", "bash", command="pytest -q")], model=model)  # +3 s
    b.clock += 2000
    b.tool_result("r1", "c1", "bash", "2 failed", isError=True)  # +6 s: took 3 s
    b.clock += 1000
    b.assistant("a2", [tool_call("c2", "read", path="src/app.py")], model=model)  # +8 s
    b.tool_result("r2", "c2", "read", "print('hi')")  # +9 s: took 1 s
    b.clock += 25 * MINUTE
    b.user("u2", "Now fix it")
    b.clock += 1000
    b.assistant("a3", [tool_call("c3", "edit", path="src/app.py", oldText="hi", newText="ho")], model=model)
    b.clock += 3000
    b.tool_result("r3", "c3", "edit", "Edited.")  # took 4 s
    b.clock += 1000
    b.assistant("a4", [text("Done.")], model=model)
    return b


def write_agent(folder: Path, *builders: SessionBuilder) -> Path:
    agent = folder / "agent"
    for n, builder in enumerate(builders):
        project = "--" + builder.header["cwd"].strip("/").replace("/", "-") + "--"
        builder.write(agent / "sessions" / project / f"2026-01-0{n + 1}T00-00-00-000Z_{builder.header['id']}.jsonl")
    return agent


def stats_json(*args: str | Path) -> dict[str, Any]:
    result = runner.invoke(app, ["stats", "--json", *map(str, args)])
    assert result.exit_code == 0, result.output
    return orjson.loads(result.stdout)


# ---------------------------------------------------------------------------------------------------------
# Counting straight from the files, as a reader of the format would, without sitegen's loader.


def counts_from_files(paths: list[Path]) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, Any]]]:
    """Per model (messages with usage, tokens, cost) and per tool (calls, failures, durations in ms)."""
    models: dict[str, dict[str, float]] = {}
    tools: dict[str, dict[str, Any]] = {}
    for path in paths:
        lines = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        entries = [e for e in lines[1:] if isinstance(e, dict) and isinstance(e.get("id"), str)]
        results: dict[str, tuple[int, bool]] = {}
        for entry in entries:
            message = entry.get("message") if entry.get("type") == "message" else None
            if isinstance(message, dict) and message.get("role") == "toolResult":
                results[message["toolCallId"]] = (ms_of(entry["timestamp"]), bool(message.get("isError")))
        for entry in entries:
            message = entry.get("message") if entry.get("type") == "message" else None
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            usage = message.get("usage")
            if isinstance(usage, dict):
                name = f"{message['provider']}/{message['model']}" if message.get("provider") else message["model"]
                row = models.setdefault(name, {"messages": 0, "input": 0, "output": 0, "cost": 0.0})
                row["messages"] += 1
                row["input"] += usage.get("input", 0)
                row["output"] += usage.get("output", 0)
                row["cost"] += usage["cost"]["total"] if isinstance(usage.get("cost"), dict) else 0.0
            for block in message.get("content") or []:
                if not (isinstance(block, dict) and block.get("type") == "toolCall"):
                    continue
                tool = tools.setdefault(block["name"], {"calls": 0, "failures": 0, "durations": []})
                tool["calls"] += 1
                answer = results.get(block["id"])
                if answer is not None:
                    tool["failures"] += answer[1]
                    took = answer[0] - ms_of(entry["timestamp"])
                    if took >= 0:
                        tool["durations"].append(took)
    return models, tools


def assert_report_matches_files(report: dict[str, Any], paths: list[Path]) -> None:
    models, tools = counts_from_files(paths)
    got_models = {m["model"]: m for m in report["models"] if m["messages"]}
    assert set(got_models) == set(models)
    for name, row in models.items():
        got = got_models[name]
        assert (got["messages"], got["input"], got["output"]) == (row["messages"], row["input"], row["output"])
        assert got["cost"] == pytest.approx(row["cost"], abs=1e-5)
    got_tools = {t["tool"]: t for t in report["tools"]}
    assert set(got_tools) == set(tools)
    for name, row in tools.items():
        got = got_tools[name]
        assert (got["calls"], got["failures"]) == (row["calls"], row["failures"])
        expected = statistics.median(row["durations"]) / 1000 if row["durations"] else None
        assert got["median_seconds"] == pytest.approx(expected)


# ---------------------------------------------------------------------------------------------------------
# The core: calls, durations, active runs.


def test_tool_uses_time_each_call_from_its_message_to_its_result(tmp_path: Path) -> None:
    transcript = load_transcript(timed_session().write(tmp_path / "t.jsonl"))
    uses = tool_uses(transcript)
    assert [(u.name, u.duration_ms, u.failed) for u in uses] == [
        ("bash", 3000, True),
        ("read", 1000, False),
        ("edit", 4000, False),
    ]
    assert uses[0].output_bytes == len("2 failed")


def test_one_rule_times_a_call_for_the_stats_the_cards_and_the_timeline(tmp_path: Path) -> None:
    # call_duration owns the rule: from the call's message to its result's entry, None when a time is
    # unknown, when there is no result, or when the result is older than the call (a clock that went
    # back); 0 ms for one stamped with its call's time. tool_uses (stats), call_durations (the cards'
    # "took") and the timeline's spans all time calls by it.
    b = SessionBuilder(session_id="rule-0001")
    b.user("u1", "go")
    b.assistant("a1", [tool_call("c1", "bash", command="make")])
    b.clock += 2000
    b.tool_result("r1", "c1", "bash", "made")  # 3 s after its call
    b.assistant("a2", [tool_call("c2", "bash", command="date")])
    b.tool_result("r2", "c2", "bash", "back")
    b.entries[-1]["timestamp"] = b.entries[-3]["timestamp"]  # older than its call: the clock went back
    b.assistant("a3", [tool_call("c3", "read", path="a")])
    b.tool_result("r3", "c3", "read", "same time")
    b.entries[-1]["timestamp"] = b.entries[-2]["timestamp"]  # stamped with its call's time: 0 ms
    b.assistant("a4", [tool_call("c4", "read", path="b")])
    b.tool_result("r4", "c4", "read", "no time")
    del b.entries[-1]["timestamp"]  # the result's time unknown
    b.assistant("a5", [tool_call("c5", "read", path="c")])
    del b.entries[-1]["timestamp"]  # the call's time unknown
    b.tool_result("r5", "c5", "read", "late")
    b.assistant("a6", [tool_call("c6", "read", path="d")])  # never answered
    b.user("u2", "stop")
    transcript = load_transcript(b.write(tmp_path / "rule.jsonl"))
    by_call = {node.id: node for node in transcript.nodes if node.tool_calls}
    ruled = {
        call.result.node_id if call.result else node_id: call_duration(transcript, node, call.result)
        for node_id, node in by_call.items()
        for call in node.tool_calls
    }
    assert ruled == {"r1": 3000, "r2": None, "r3": 0, "r4": None, "r5": None, "a6": None}
    assert [use.duration_ms for use in tool_uses(transcript)] == list(ruled.values())
    assert call_durations(transcript) == {"r1": 3000, "r3": 0}
    spans = [span for span in timeline_spans(transcript, transcript.nodes) if span.lane == "tools"]
    assert [(span.target, span.end - span.start) for span in spans] == [("r1", 3000), ("r3", 0)]


def test_active_time_counts_gaps_of_at_most_ten_minutes() -> None:
    late = BASE_MS + 15 * MINUTE + ACTIVE_GAP_MS + 1
    runs = active_runs([BASE_MS, BASE_MS + 5 * MINUTE, BASE_MS + 15 * MINUTE, late])
    assert runs == [[BASE_MS, BASE_MS + 15 * MINUTE]]
    # Overlapping runs (two sessions at once, a /fork copy) count once; a run over midnight is split.
    assert merge_runs([[0, 10], [5, 20], [30, 40]]) == [[0, 20], [30, 40]]
    before_midnight = BASE_MS - 2 * MINUTE
    assert active_by_day([[before_midnight, BASE_MS + 3 * MINUTE]]) == {
        "2025-12-31": 2 * MINUTE,
        "2026-01-01": 3 * MINUTE,
    }


# ---------------------------------------------------------------------------------------------------------
# sitegen stats


def test_stats_json_has_the_documented_fields_and_the_files_figures(tmp_path: Path) -> None:
    agent = write_agent(tmp_path, timed_session(), timed_session("time-0002", "/work/other", "model-u", hours_later=2))
    report = stats_json("--agent-dir", agent)
    assert {"models", "tools", "projects", "totals"} <= set(report)
    assert {"model", "messages", "input", "output", "cost"} <= set(report["models"][0])
    assert {"tool", "calls", "failures", "median_seconds"} <= set(report["tools"][0])
    assert_report_matches_files(report, sorted(agent.rglob("*.jsonl")))
    bash = next(t for t in report["tools"] if t["tool"] == "bash")
    assert (bash["calls"], bash["failures"], bash["median_seconds"], bash["failure_rate"]) == (2, 2, 3.0, 1.0)
    # Each session: 8 s from u1 to r2, then (the 25 minutes between are idle) 8 s from u2 to a4.
    assert report["totals"]["active_seconds"] == 2 * (8 + 8)
    # 100 fresh, 1,000 cache read and 10 cache written per message: cache reads of all input.
    model = next(m for m in report["models"] if m["model"] == "anthropic/model-t")
    assert model["messages"] == 4
    assert model["cache_hit_rate"] == pytest.approx(1000 / 1110)
    # 20 output tokens in 2 s, four times.
    assert model["output_tokens_per_second"] == pytest.approx(10.0)


def test_stats_filters_by_project_and_days(tmp_path: Path) -> None:
    later = timed_session("time-0003", "/work/timed/sub", hours_later=3)
    later.clock += 40 * 86_400_000
    later.user("u9", "a month later")
    later.assistant("a9", [text("Back again.")])
    agent = write_agent(tmp_path, timed_session(), later, timed_session("time-0002", "/work/other", hours_later=6))
    assert stats_json("--agent-dir", agent, "--project", "/work/timed")["sessions"] == 2
    assert stats_json("--agent-dir", agent, "--project", "/work/timed/sub")["sessions"] == 1
    january = stats_json("--agent-dir", agent, "--until", "2026-01-05")
    assert january["sessions"] == 3 and january["until"] == "2026-01-05"
    february = stats_json("--agent-dir", agent, "--since", "2026-02-01")
    assert february["sessions"] == 1 and february["tools"] == []
    text_out = runner.invoke(app, ["stats", "--agent-dir", str(agent)])
    assert text_out.exit_code == 0
    assert "bash" in text_out.stdout and "median s" in text_out.stdout


def test_stats_bad_date_is_a_usage_error(tmp_path: Path) -> None:
    agent = write_agent(tmp_path, timed_session())
    result = runner.invoke(app, ["stats", "--agent-dir", str(agent), "--since", "last week"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["stats", "--agent-dir", str(agent), "--since", "2026-02-01", "--until", "2026-01-01"])
    assert result.exit_code == 1 and "after" in result.stderr


def test_unknown_usage_stays_unknown(tmp_path: Path) -> None:
    b = SessionBuilder(session_id="nousage-1", cwd="/work/nousage")
    b.user("u1", "hello")
    b.message("a1", "assistant", [text("hi")], provider="p", model="silent")  # no usage at all
    report = stats_json("--agent-dir", write_agent(tmp_path, b))
    (model,) = report["models"]
    assert model["model"] == "p/silent"
    assert (model["input"], model["output"], model["cost"], model["cache_hit_rate"]) == (None, None, None, None)


@pytest.fixture(scope="module")
def corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_corpus_analytics", CORPUS_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_stats_match_the_bench_corpus_counted_from_its_files(corpus: ModuleType, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    corpus.write_corpus(agent, sessions=6, total_mb=1.5, seed=3)
    paths = sorted((agent / "sessions").rglob("*.jsonl"))
    report = stats_json("--agent-dir", agent)
    # The corpus's subagent transcripts sit in artifact folders: only the session files are counted.
    top = [p for p in paths if p.parent.parent == agent / "sessions"]
    assert report["sessions"] == len(top) == 6
    assert report["tools"] and report["models"]
    assert_report_matches_files(report, top)


def test_a_fork_copy_counts_its_calls_and_active_time_once(tmp_path: Path) -> None:
    # /fork copies the entries (same ids, same times) into a new file, which then goes on.
    copy = timed_session("fork-0002", "/work/timed", hours_later=0)
    copy.header["parentSession"] = "time-0001"
    copy.clock += 60_000
    copy.assistant("f1", [tool_call("cf", "bash", command="make")])
    copy.tool_result("rf", "cf", "bash", "ok")
    report = stats_json("--agent-dir", write_agent(tmp_path, timed_session(), copy))
    bash = next(t for t in report["tools"] if t["tool"] == "bash")
    assert (bash["calls"], bash["failures"]) == (2, 1)  # the original's failed call once, the copy's own
    assert {t["tool"]: t["calls"] for t in report["tools"]} == {"bash": 2, "read": 1, "edit": 1}
    # The copy's own minute and the second after: the rest overlaps the original.
    assert report["totals"]["active_seconds"] == 16 + 62
