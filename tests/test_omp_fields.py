"""omp 18's fields where a reader expects them: the header's session and agent details, the compaction card's
method, tokens after and warning, attribution on messages; unknown usage reads "—", never 0 or $0.00."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from sitegen.render.export import export_html
from sitegen.resources import resource_dir
from sitegen.session.session import open_session
from sitegen.site.build.pipeline import BuildConfig, build_site
from sitegen.transcript.from_pi import transcript_from_session

HEADER = {
    "type": "session",
    "version": 3,
    "id": "omp18-fields",
    "timestamp": "2026-04-01T09:00:00.000Z",
    "cwd": "/w/app",
    "title": "ZZ_TITLE_ZZ",
    "titleSource": "auto",
    "additionalDirectories": ["/w/ZZ_EXTRA_DIR_ZZ", "/w/shared<b>"],
    "previousSessionFiles": ["/old/ZZ_PREVIOUS_FILE_ZZ.jsonl"],
}


def _entry(kind: str, entry_id: str, parent: str | None, **fields: object) -> dict[str, object]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": "2026-04-01T09:00:01.000Z", **fields}


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return path


def _session(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "fields.jsonl",
        [
            HEADER,
            _entry(
                "session_init", "i1", None, systemPrompt="sys", task="look around", tools=["read"],
                agent="ZZ_AGENT_SCOUT_ZZ", modelRole="smol", resolvedModel="anthropic/ZZ_RESOLVED_ZZ",
                readOnly=True, spawns="", advisor="on", isolated=False,
            ),
            _entry("message", "u1", "i1", message={"role": "user", "content": "hello"}),
            _entry(
                "compaction", "c1", "u1", summary="short", firstKeptEntryId="u1", tokensBefore=120000,
                tokensAfter=24000, method="snapcompact", warning="ZZ_WARNING_ZZ freed too little",
            ),
            _entry(
                "custom_message", "m1", "c1", customType="notice", content="ZZ_CUSTOM_ZZ", display=True,
                attribution="agent",
            ),
        ],
    )  # fmt: skip


def test_the_header_shows_the_session_and_agent_details(tmp_path: Path) -> None:
    transcript = transcript_from_session(open_session(_session(tmp_path)))
    assert transcript.session_details == [
        ("Title", ["auto (generated from the first prompt)"]),
        ("Other folders", ["/w/ZZ_EXTRA_DIR_ZZ", "/w/shared<b>"]),
        ("Earlier files", ["/old/ZZ_PREVIOUS_FILE_ZZ.jsonl"]),
    ]
    assert transcript.agent_details == [
        ("Agent", ["ZZ_AGENT_SCOUT_ZZ"]),
        ("Model role", ["smol"]),
        ("Model", ["anthropic/ZZ_RESOLVED_ZZ"]),
        ("Read-only", ["yes"]),
        ("May start", ["none"]),
        ("Advisor", ["on"]),
        ("Isolated worktree", ["no"]),
    ]
    html = export_html(transcript)
    details = html[html.index('id="session-details"') : html.index('id="agent-details"')]
    assert "ZZ_EXTRA_DIR_ZZ" in details and "ZZ_PREVIOUS_FILE_ZZ" in details and "generated from" in details
    assert "/w/shared&lt;b&gt;" in details and "/w/shared<b>" not in details
    agent = html[html.index('id="agent-details"') :]
    assert "ZZ_AGENT_SCOUT_ZZ" in agent[: agent.index("</details>")]


def test_the_compaction_card_and_attribution(tmp_path: Path) -> None:
    html = export_html(transcript_from_session(open_session(_session(tmp_path))))
    card = html[html.index('id="entry-c1"') :]
    card = card[: card.index("</article>")]
    assert "120k tokens before compaction, about 24k after." in card
    assert '<span class="compaction-method">snapcompact</span>' in card
    assert '<p class="problem compaction-warning">ZZ_WARNING_ZZ freed too little</p>' in card
    custom = html[html.index('id="entry-m1"') :]
    assert '<span class="badge attribution" title="Who sent it">by agent</span>' in custom[: custom.index("</header>")]


def test_a_title_slot_source_wins_over_the_header(tmp_path: Path) -> None:
    slot = {"type": "title", "v": 1, "title": "Named", "source": "user", "updatedAt": "x", "pad": " " * 32}
    path = _write(tmp_path / "slot.jsonl", [slot, HEADER])
    assert transcript_from_session(open_session(path)).session_details[0] == ("Title", ["user (set by the user)"])


def test_unknown_usage_reads_a_dash_on_listings_stats_and_the_page(tmp_path: Path) -> None:
    odek = tmp_path / "odek"
    shutil.copytree(resource_dir("demo") / "odek" / "sessions", odek)
    site = tmp_path / "site"
    build_site(BuildConfig(out=site, odek_dirs=[odek], use_default_dirs=False, jobs=1))
    home = (site / "index.html").read_text()
    assert "$0.00" not in home and "tokens and cost unknown" in home
    project = next((site / "projects").glob("*.html")).read_text()
    assert "$0.00" not in project and ">—</td>" in project
    stats = (site / "stats.html").read_text()
    assert "$0.00" not in stats and "<dt>Cost</dt><dd>—</dd>" in stats
    every = (site / "sessions.html").read_text()
    assert "$0.00" not in every and ">—</td>" in every
    # The rows the page draws as the reader scrolls carry no cost either (null, drawn as "—").
    data = orjson.loads((site / "sessions.js").read_text().split("(", 1)[1].rsplit(")", 1)[0])
    assert {row[data[0].index("cost")] for row in data[1]} == {None}
    page = next((site / "sessions").rglob("*.html")).read_text()
    totals = page[page.index('<table class="totals">') : page.index("</table>")]
    assert "$0.0000" not in totals and "<td>—</td>" in totals


def _index_tables(store: Path, titles: list[tuple[str, str]], recaps: list[tuple[str, str, str, int]]) -> None:
    """omp 18's session index in history.db: session_titles and session_recaps, as it creates them."""
    import sqlite3

    connection = sqlite3.connect(store)
    connection.executescript(
        "CREATE TABLE IF NOT EXISTS session_titles (session_id TEXT PRIMARY KEY, title TEXT NOT NULL,"
        " updated_at INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE IF NOT EXISTS session_recaps (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,"
        " cwd TEXT NOT NULL, recap TEXT NOT NULL, created_at INTEGER NOT NULL DEFAULT 0);"
    )
    connection.executemany("INSERT OR REPLACE INTO session_titles (session_id, title) VALUES (?, ?)", titles)
    connection.executemany(
        "INSERT INTO session_recaps (session_id, cwd, recap, created_at) VALUES (?, ?, ?, ?)", recaps
    )
    connection.commit()
    connection.close()


def test_idle_recaps_and_titles_from_history_db(tmp_path: Path) -> None:
    from history_helpers import HistoryRow, folder_state, omp_store

    agent = tmp_path / "agent"
    _write(agent / "sessions" / "--w-app--" / "a_omp18-fields.jsonl", [HEADER, _entry("message", "u1", None,
           message={"role": "user", "content": "hello"})])  # fmt: skip
    store = omp_store(agent / "history.db", [HistoryRow("ZZ_GONE_PROMPT_ZZ", 1775000000, "/w/gone", "gone-1")])
    _index_tables(
        store,
        [("omp18-fields", "ZZ_INDEX_TITLE_ZZ"), ("gone-1", "ZZ_GONE_TITLE_ZZ")],
        [("omp18-fields", "/w/app", "ZZ_RECAP_ONE_ZZ <b>done</b>", 1775000100)],
    )
    before = folder_state(agent)
    site = tmp_path / "site"
    build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=1))
    page = next((site / "sessions").rglob("*omp18-fields.html")).read_text()
    recaps = page[page.index('id="recaps"') :]
    assert "Idle recaps (1)" in recaps and "ZZ_RECAP_ONE_ZZ &lt;b&gt;done&lt;/b&gt;" in recaps
    assert "<dt>Title in history.db</dt><dd>ZZ_INDEX_TITLE_ZZ</dd>" in page
    prompts = (site / "prompts.html").read_text()
    assert "ZZ_RECAP_ONE_ZZ &lt;b&gt;done&lt;/b&gt;" in prompts[prompts.index('id="recaps"') :]
    # A prompt of a session the site has no page for is named by the index's title.
    assert '<span class="prompt-session">ZZ_GONE_TITLE_ZZ</span>' in prompts
    assert folder_state(agent) == before
    # A recap added later makes the page again, though the session file is unchanged.
    _index_tables(store, [], [("omp18-fields", "/w/app", "ZZ_RECAP_TWO_ZZ", 1775000200)])
    again = build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=1))
    assert again.rendered
    page = next((site / "sessions").rglob("*omp18-fields.html")).read_text()
    assert "Idle recaps (2)" in page and "ZZ_RECAP_TWO_ZZ" in page
