"""Prompts for every agent: what the user typed in each session (not tool results, not what the agent
injected), merged with history.db where it exists, one row per prompt, in `sitegen history` and the site."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
from history_helpers import HistoryRow, omp_store
from site_helpers import build, run_sitegen

from sitegen.session.typed import read_typed_prompts


def _message(entry_id: str, parent: str | None, second: int, message: dict[str, object]) -> dict[str, object]:
    stamp = f"2026-02-01T10:00:{second:02d}.000Z"
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}


def _session(folder: Path, session_id: str, cwd: str, records: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-02-01T10:00:00.000Z", "cwd": cwd}
    path = folder / f"2026-02-01T10-00-00-000Z_{session_id}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in [header, *records]))
    return path


def _pi_home(root: Path) -> Path:
    """A pi agent dir (no history.db) with typed prompts, an injected one, a tool result and a /fork copy."""
    sessions = root / "home" / ".pi" / "agent" / "sessions"
    records = [
        _message("u1", None, 1, {"role": "user", "content": "ZZ_TYPED_ONE_ZZ fix the parser"}),
        _message("a1", "u1", 2, {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "ls"}]}),
        _message("r1", "a1", 3, {"role": "toolResult", "toolCallId": "c1", "toolName": "ls",
                                 "content": "ZZ_RESULT_ZZ"}),
        _message("i1", "r1", 4, {"role": "user", "content": "ZZ_INJECTED_ZZ", "attribution": "agent"}),
        _message("s1", "i1", 5, {"role": "user", "content": "ZZ_SYNTHETIC_ZZ", "synthetic": True}),
        _message("u2", "s1", 6, {"role": "user", "content": [{"type": "text", "text": "ZZ_TYPED_TWO_ZZ and tests"}]}),
    ]  # fmt: skip
    _session(sessions / "--w-parser--", "pi-one", "/w/parser", records)
    # A /fork copy: the same entries, a new header.
    _session(sessions / "--w-parser--", "pi-two", "/w/parser", records[:1])
    return sessions


def test_the_file_reader_keeps_what_the_user_typed(tmp_path: Path) -> None:
    sessions = _pi_home(tmp_path)
    path = next((sessions / "--w-parser--").glob("*pi-one.jsonl"))
    assert [(p.entry_id, p.text) for p in read_typed_prompts(path)] == [
        ("u1", "ZZ_TYPED_ONE_ZZ fix the parser"),
        ("u2", "ZZ_TYPED_TWO_ZZ and tests"),
    ]


def test_history_lists_a_pi_users_prompts(tmp_path: Path) -> None:
    sessions = _pi_home(tmp_path)
    done = run_sitegen("history", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split("  ", 2)[2] for line in lines] == ["ZZ_TYPED_TWO_ZZ and tests", "ZZ_TYPED_ONE_ZZ fix the parser"]
    assert "ZZ_INJECTED_ZZ" not in done.stdout and "ZZ_SYNTHETIC_ZZ" not in done.stdout
    objects = [
        json.loads(line) for line in run_sitegen("history", "--json", "parser", cwd=tmp_path).stdout.splitlines()
    ]
    assert [(o["prompt"], o["entry_id"]) for o in objects] == [("ZZ_TYPED_ONE_ZZ fix the parser", "u1")]
    assert objects[0]["store"] == str(next((sessions / "--w-parser--").glob("*pi-one.jsonl")))
    assert run_sitegen("history", "--project", str(tmp_path / "nowhere"), cwd=tmp_path).stdout == ""


def test_history_merges_a_store_one_row_per_prompt(tmp_path: Path) -> None:
    sessions = _pi_home(tmp_path)
    agent = sessions.parent
    second = 1769940001  # 2026-02-01T10:00:01Z, when u1 was sent
    omp_store(
        agent / "history.db",
        [
            # The same words a second later (no session id): the store's row stands for it.
            HistoryRow("ZZ_TYPED_ONE_ZZ   fix the parser", second + 1, "/w/parser", None),
            HistoryRow("ZZ_STORE_ONLY_ZZ", second + 9, "/w/parser", None),
        ],
    )
    # A store that names a session holds what was typed in it, as typed (omp keeps /templates expanded).
    _session(sessions / "--w-tpl--", "omp-tpl", "/w/tpl", [
        _message("t1", None, 1, {"role": "user", "content": "ZZ_EXPANDED_TEMPLATE_ZZ review the diff carefully"}),
    ])  # fmt: skip
    omp_store(tmp_path / "home" / ".omp" / "agent" / "history.db", [HistoryRow("/review", second, "/w/tpl", "omp-tpl")])
    done = run_sitegen("history", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    texts = [line.split("  ", 2)[2] for line in done.stdout.splitlines()]
    assert sorted(texts) == sorted(
        ["ZZ_STORE_ONLY_ZZ", "ZZ_TYPED_ONE_ZZ   fix the parser", "ZZ_TYPED_TWO_ZZ and tests", "/review"]
    )


def test_the_prompts_page_lists_every_sessions_prompts_once(tmp_path: Path) -> None:
    sessions = _pi_home(tmp_path)
    agent = sessions.parent
    site = tmp_path / "site"
    build(site, agent)
    html = (site / "prompts.html").read_text(encoding="utf-8")
    items = re.findall(r'<li class="prompt" id="entry-p[0-9a-f]+-\d+">(.*?)</li>', html, re.S)
    texts = [re.findall(r'<pre class="prompt-text">(.*?)</pre>', item)[0] for item in items]
    assert sorted(texts) == ["ZZ_TYPED_ONE_ZZ fix the parser", "ZZ_TYPED_TWO_ZZ and tests"]
    linked = {text: item for text, item in zip(texts, items, strict=True)}
    assert re.search(r'pi-one\.html#entry-u1"', linked["ZZ_TYPED_ONE_ZZ fix the parser"])
    assert re.search(r'pi-one\.html#entry-u2"', linked["ZZ_TYPED_TWO_ZZ and tests"])
    assert "ZZ_INJECTED_ZZ" not in html and "ZZ_RESULT_ZZ" not in html
    assert "2 prompts are the user messages of the sessions." in html
    # A store with the first prompt: it is listed once, from the store, still linked to its entry.
    omp_store(agent / "history.db", [HistoryRow("ZZ_TYPED_ONE_ZZ fix the parser", 1769940001, "/w/parser", None)])
    build(site, agent)
    html = (site / "prompts.html").read_text(encoding="utf-8")
    assert html.count("ZZ_TYPED_ONE_ZZ fix the parser</pre>") == 1 and "ZZ_TYPED_TWO_ZZ and tests</pre>" in html
    assert "1 of them found in the sessions only" in html


def test_history_lists_odek_prompts(tmp_path: Path) -> None:
    import shutil

    from sitegen.resources import resource_dir
    from sitegen.site.prompts.session_prompts import typed_prompts
    from sitegen.transcript.load import load_transcript

    store = tmp_path / "home" / ".odek" / "sessions"
    shutil.copytree(resource_dir("demo") / "odek" / "sessions", store)
    expected = {
        text
        for path in store.glob("*.json")
        if path.name != "index.json"
        for *_, text in typed_prompts(load_transcript(path))
    }
    assert expected
    done = run_sitegen("history", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert {o["prompt"] for o in objects} == expected
    assert all(o["store"].endswith(".json") and o["entry_id"] for o in objects)
