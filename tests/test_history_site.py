"""The Prompts page in a built site: links to sessions, folding, escaping, problems, incremental builds."""

from __future__ import annotations

import os
import re
import sqlite3
import urllib.request
from pathlib import Path

import orjson
import pytest
from history_helpers import HistoryRow, documented_store, folder_state, omp_store, start_writer
from sessions import BASE_MS
from site_helpers import build, crawl, make_session, page_text, written_on_reload

from sitegen.history.writer import add_prompt
from sitegen.site.build.pipeline import BuildConfig, build_site
from sitegen.site.live.watch import LiveSite, WatchEvent
from sitegen.site.prompts import page as prompts_module
from sitegen.site.prompts.demo import demo_prompts
from sitegen.site.prompts.page import SESSIONS_STORE
from sitegen.site.prompts.rows import store_tag

T0 = BASE_MS // 1000  # the sessions' header time; their first user message is a second later


def _agent(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "sess-alpha", "ZZ_ALPHA_ZZ", entries=3)
    make_session(agent, "/work/beta", "sess-beta", "ZZ_BETA_ZZ")
    return agent


def _prompts_data(site: Path) -> list[list[object]]:
    """Every row of the page's data chunks."""
    rows = []
    for chunk in sorted((site / "prompts" / "c").glob("*.js")):
        text = chunk.read_text(encoding="utf-8")
        rows.extend(orjson.loads(text[text.index(",") + 1 : text.rindex(")")]))
    return rows


# The rows of the prompts typed in sessions that no history store holds (sitegen.site.prompts.session_prompts).
SESSIONS_TAG = "p" + store_tag(SESSIONS_STORE) + "-"


def _history_rows(site: Path) -> list[list[object]]:
    """The rows of the history stores only, without those of prompts found in the sessions alone."""
    return [row for row in _prompts_data(site) if not str(row[0]).startswith(SESSIONS_TAG)]


def test_prompts_link_to_their_session_entry_by_id_or_by_text_and_time(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    omp_store(
        agent / "history.db",
        [
            # By session id (and its entry, by text): the store says where it was sent.
            HistoryRow("ZZ_ALPHA_ZZ first question", T0 + 1, "/work/alpha", "sess-alpha"),
            # No session id: matched by text and time in the same project.
            HistoryRow("ZZ_ALPHA_ZZ follow-up 0", T0 + 5, "/work/alpha", None),
            # Same text, but a day away from any message: listed without a link.
            HistoryRow("ZZ_BETA_ZZ first question", T0 + 86400, "/work/beta", None),
            # A project no session has: no project link either.
            HistoryRow("ZZ_ORPHAN_ZZ elsewhere", T0 + 7, "/work/gone", None),
        ],
    )
    site = tmp_path / "site"
    build(site, agent)
    html = (site / "prompts.html").read_text(encoding="utf-8")
    alpha = "sessions/work-alpha-"
    items = re.findall(r'<li class="prompt" id="entry-p[0-9a-f]+-\d">(.*?)</li>', html, re.S)
    by_text = {re.findall(r'<pre class="prompt-text">(.*?)</pre>', body)[0]: body for body in items}
    assert re.search(alpha + r"[0-9a-f]+/[^\"]*sess-alpha\.html#entry-u1\"", by_text["ZZ_ALPHA_ZZ first question"])
    assert re.search(r"sess-alpha\.html#entry-u2\"", by_text["ZZ_ALPHA_ZZ follow-up 0"])
    assert "prompt-session" not in by_text["ZZ_BETA_ZZ first question"]
    assert 'href="projects/work-beta-' in by_text["ZZ_BETA_ZZ first question"]
    assert "prompt-session" not in by_text["ZZ_ORPHAN_ZZ elsewhere"]
    assert '<a class="prompt-project">/work/gone</a>' in by_text["ZZ_ORPHAN_ZZ elsewhere"]
    # Newest first, by day.
    order = [m for m in re.findall(r"ZZ_(\w+?)_ZZ", html)]
    assert order.index("BETA") < order.index("ORPHAN") < order.index("ALPHA")
    assert "<h2>2026-01-02</h2>" in html and "<h2>2026-01-01</h2>" in html
    assert crawl(site) == []


def test_the_page_is_linked_from_home_navigation_and_session_pages(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    omp_store(agent / "history.db", [HistoryRow("ZZ_LATEST_ZZ **bold** prompt", T0 + 9, "/work/alpha", None)])
    site = tmp_path / "site"
    build(site, agent)
    home = page_text(site / "index.html")
    # The store's prompt and the three the sessions hold that it does not.
    assert '<a href="prompts.html">4 prompts</a> in your prompt history, the latest: “ZZ_LATEST_ZZ bold prompt”' in home
    for page in ("index.html", "search.html", "stats.html", "problems.html", "prompts.html"):
        assert '<a href="prompts.html">Prompts</a>' in (site / page).read_text(encoding="utf-8"), page
    project = next((site / "projects").glob("*.html")).read_text(encoding="utf-8")
    assert '<a href="../prompts.html">Prompts</a>' in project
    session = next((site / "sessions").rglob("*sess-alpha.html")).read_text(encoding="utf-8")
    assert '<a href="../../prompts.html">Prompts</a>' in session


def test_prompts_are_plain_escaped_text_and_long_ones_fold(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    hostile = "ZZ_HOSTILE_ZZ <script>alert(1)</script> [click](javascript:alert(1)) <img src=x onerror=alert(1)>"
    long_prompt = "ZZ_LONG_ZZ\n" + "\n".join(f"line {n}" for n in range(40))
    huge = "ZZ_HUGE_ZZ " + "y" * 1_000_000
    omp_store(
        agent / "history.db",
        [
            HistoryRow(hostile, T0 + 1, "/work/<b>x</b>", None),
            HistoryRow(long_prompt, T0 + 2, "/work/alpha", None),
            HistoryRow(huge, T0 + 3, "/work/alpha", None),
        ],
    )
    site = tmp_path / "site"
    build(site, agent)
    html = (site / "prompts.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; [click](javascript:alert(1))" in html
    assert 'href="javascript' not in html
    assert '<pre class="prompt-text folded">ZZ_LONG_ZZ' in html
    assert "… 980,011 more characters are in the history store." in html
    assert len(html) < 200_000
    data = _history_rows(site)
    assert {row[0].split("-")[1]: len(row[7]) for row in data}["3"] == 20_000  # type: ignore[union-attr]


def test_control_and_bidi_characters_in_folders_are_shown_by_name(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "sess-alpha", "ZZ_ALPHA_ZZ", entries=3)
    folder = "/work/\u202egnp.exe\x07"  # one folder for both prompts: shown the same each time
    omp_store(
        agent / "history.db",
        [
            HistoryRow("ZZ_ONE_ZZ", T0 + 1, folder, "gone-session"),
            HistoryRow("ZZ_TWO_ZZ", T0 + 2, folder, None),
        ],
    )
    site = tmp_path / "site"
    build(site, agent)
    rows = {str(row[7]): row for row in _history_rows(site)}
    for text in ("ZZ_ONE_ZZ", "ZZ_TWO_ZZ"):
        assert rows[text][2] == "/work/\u27e8RLO\u27e9gnp.exe\ufffd"
    raw = "".join(path.read_text(encoding="utf-8") for path in (site / "prompts").rglob("*.js"))
    assert "\u202e" not in raw and "\x07" not in raw


def test_store_problems_are_on_the_problems_page_and_the_rest_is_built(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    (agent / "history.db").write_bytes(b"not a database at all, " * 20)
    other = tmp_path / "other"
    documented_store(other / "history.db", [("ZZ_GOOD_ZZ prompt", T0, "/work/alpha"), (None, T0, None)])
    before = {folder: folder_state(folder) for folder in (agent, other)}
    site = tmp_path / "site"
    result = build_site(BuildConfig(out=site, agent_dirs=[agent, other], use_default_dirs=False, jobs=1))
    assert result.sessions == 2
    assert f"{agent / 'history.db'}: not an SQLite database (encrypted, or another kind of file)" in result.problems
    assert f"{other / 'history.db'}: 1 prompt is empty or NULL (left out)" in result.problems
    problems = page_text(site / "problems.html")
    assert "No problems: every session file was rendered." in problems
    assert "not an SQLite database (encrypted, or another kind of file)" in problems
    assert "Problems (2)" in page_text(site / "index.html")
    assert "ZZ_GOOD_ZZ prompt" in page_text(site / "prompts.html")
    assert {folder: folder_state(folder) for folder in (agent, other)} == before


def test_no_store_says_where_it_looked(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "sessions").mkdir(parents=True)
    build(tmp_path / "empty-site", empty)
    text = page_text(tmp_path / "empty-site" / "prompts.html")
    assert "No prompts yet." in text and f"sitegen looked for <code>{empty / 'history.db'}</code>" in text
    assert "prompt history" not in page_text(tmp_path / "empty-site" / "index.html")
    # Without a store (pi keeps none), the page lists what was typed in the sessions.
    agent = _agent(tmp_path)
    site = tmp_path / "site"
    build(site, agent)
    text = page_text(site / "prompts.html")
    assert f"sitegen looked for <code>{agent / 'history.db'}</code>" in text
    assert "3 prompts are the user messages of the sessions." in text
    assert "ZZ_ALPHA_ZZ follow-up 0" in text and "ZZ_BETA_ZZ first question" in text


def test_an_unchanged_store_costs_nothing_and_a_grown_one_rewrites_its_last_chunk(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    rows = [HistoryRow(f"ZZ_P{n:04d}_ZZ prompt", T0 + n, "/work/alpha", None) for n in range(600)]
    omp_store(agent / "history.db", rows)
    site = tmp_path / "site"
    build(site, agent)
    chunks = sorted(p.name for p in (site / "prompts" / "c").iterdir())
    assert len(chunks) == 4  # 256 + 256 + 88, and the 3 prompts only the sessions hold
    stamp = (site / "prompts.html").stat().st_mtime_ns
    again = build(site, agent)
    assert not again.changed and "prompts.html" not in again.written
    assert (site / "prompts.html").stat().st_mtime_ns == stamp
    connection = sqlite3.connect(agent / "history.db")
    connection.execute(
        "INSERT INTO history (prompt, created_at, cwd) VALUES ('ZZ_GROWN_ZZ new', ?, '/work/alpha')", (T0 + 999,)
    )
    connection.commit()
    connection.close()
    grown = build(site, agent)
    assert "prompts.html" in grown.written and grown.rendered == []
    after = sorted(p.name for p in (site / "prompts" / "c").iterdir())
    assert len(set(after) - set(chunks)) == 1 and len(set(chunks) - set(after)) == 1
    assert "ZZ_GROWN_ZZ new" in page_text(site / "prompts.html")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_rebuild_in_the_same_process_makes_what_a_first_build_makes(tmp_path: Path) -> None:
    # watch builds again in the same process: it reads and links only what changed since.
    agent = _agent(tmp_path)
    rows = [HistoryRow(f"ZZ_P{n:04d}_ZZ prompt", T0 + n, "/work/alpha", None) for n in range(600)]
    rows += [
        HistoryRow("ZZ_ALPHA_ZZ follow-up 0", T0 + 5, "/work/alpha", None),
        HistoryRow("ZZ_GAMMA_ZZ first question", T0 + 1, "/work/gamma", None),
        HistoryRow("ZZ_BETA_ZZ first question", T0 + 1, "/work/beta", "sess-beta"),
    ]
    omp_store(agent / "history.db", rows)
    site = tmp_path / "site"
    build(site, agent)
    assert str(site) in prompts_module._KEPT
    # The agent reuses one prompt and adds one; a session of a new project has a prompt the store
    # had without a link, and the beta session is gone.
    connection = sqlite3.connect(agent / "history.db")
    add_prompt(connection, HistoryRow("ZZ_P0003_ZZ prompt", T0 + 700, "/work/beta", None))
    add_prompt(connection, HistoryRow("ZZ_NEW_ZZ prompt", T0 + 701, "/work/alpha", None))
    connection.commit()
    connection.close()
    make_session(agent, "/work/gamma", "sess-gamma", "ZZ_GAMMA_ZZ")
    next((agent / "sessions").glob("*beta*/*.jsonl")).unlink()
    build(site, agent)
    fresh = tmp_path / "fresh"
    build(fresh, agent)
    for folder in ("prompts", "search"):
        assert _files(site / folder) == _files(fresh / folder)
    html = (site / "prompts.html").read_text(encoding="utf-8")
    assert html == (fresh / "prompts.html").read_text(encoding="utf-8")
    rows = {row[7]: row for row in _prompts_data(site)}
    assert str(rows["ZZ_GAMMA_ZZ first question"][4]).endswith("sess-gamma.html#entry-u1")
    assert rows["ZZ_BETA_ZZ first question"][4] == "" and rows["ZZ_P0003_ZZ prompt"][2] == "/work/beta"
    assert "ZZ_NEW_ZZ prompt" in html


def test_a_large_first_build_on_workers_makes_what_one_process_makes(tmp_path: Path) -> None:
    # Big enough (about 6 MB) to be read while workers index it, segment by segment.
    agent = _agent(tmp_path)
    words = "fix the login handler and check the cache before the retry loop gives up "
    rows = [HistoryRow(f"ZZ{n:05d} {words * 3}", T0 + n, "/work/alpha", None) for n in range(14_000)]
    omp_store(agent / "history.db", rows)
    assert (agent / "history.db").stat().st_size > 5_000_000
    built = {}
    for jobs in (2, 1):
        site = tmp_path / "site"
        result = build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=jobs))
        assert result.problems == []
        built[jobs] = {**_files(site / "prompts"), **_files(site / "search"), "": (site / "prompts.html").read_bytes()}
        os.rename(site, tmp_path / f"site-{jobs}")
    assert built[2] == built[1]
    assert len(_history_rows(tmp_path / "site-2")) == 14_000


def test_a_store_written_while_a_large_first_build_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _agent(tmp_path)
    words = "check the cache and retry the login " * 6
    rows = [HistoryRow(f"ZZ{n:05d} {words}", T0 + n, "/w", None) for n in range(14_000)]
    store = omp_store(agent / "history.db", rows)
    feed = prompts_module._Feed.__call__
    touched: list[int] = []

    def agent_writes_meanwhile(self: object, snapshot: object) -> None:
        # After the first prompts were handed on, the file changes under the (lock-free) read, which
        # SQLite then begins again: the build starts over without handing prompts on early.
        if not touched:
            touched.append(1)
            os.utime(store, ns=(1, 1))
        feed(self, snapshot)  # type: ignore[arg-type]

    monkeypatch.setattr(prompts_module._Feed, "__call__", agent_writes_meanwhile)
    site = tmp_path / "site"
    assert build_site(BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=2)).problems == []
    assert touched
    monkeypatch.undo()
    fresh = tmp_path / "fresh"
    build_site(BuildConfig(out=fresh, agent_dirs=[agent], use_default_dirs=False, jobs=1))
    assert _files(site / "prompts") == _files(fresh / "prompts")
    assert _files(site / "search") == _files(fresh / "search")


def test_a_first_session_links_prompts_kept_from_a_build_without_one(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    # No folder: only its text can link it.
    omp_store(agent / "history.db", [HistoryRow("ZZ_GAMMA_ZZ first question", T0 + 1, None, None)])
    site = tmp_path / "site"
    build(site, agent)
    assert _prompts_data(site)[0][4] == ""
    make_session(agent, "/work/gamma", "sess-gamma", "ZZ_GAMMA_ZZ")
    build(site, agent)
    assert str(_prompts_data(site)[0][4]).endswith("sess-gamma.html#entry-u1")


def test_a_build_that_makes_no_other_keeps_no_prompt_rows(tmp_path: Path) -> None:
    """sitegen build (keep_for_next off) frees the Prompts page's rows at once; the page is the same."""
    agent = _agent(tmp_path)
    omp_store(
        agent / "history.db", [HistoryRow(f"ZZ_P{n:04d}_ZZ prompt", T0 + n, "/work/alpha", None) for n in range(5)]
    )
    kept, once = tmp_path / "kept", tmp_path / "once"
    build(kept, agent)
    build_site(BuildConfig(out=once, agent_dirs=[agent], use_default_dirs=False, jobs=1, keep_for_next=False))
    assert str(kept) in prompts_module._KEPT and str(once) not in prompts_module._KEPT
    assert (once / "prompts.html").read_bytes() == (kept / "prompts.html").read_bytes()
    assert _files(once / "prompts") == _files(kept / "prompts")


@pytest.mark.parametrize("same_process", [True, False])
def test_a_locked_store_shows_the_last_good_prompts(tmp_path: Path, same_process: bool) -> None:
    agent = _agent(tmp_path)
    documented_store(agent / "history.db", [("ZZ_BEFORE_LOCK_ZZ prompt", T0, "/work/alpha")])
    site = tmp_path / "site"
    build(site, agent)
    if not same_process:
        # What this process kept of the last build (as watch does); a new process has nothing.
        prompts_module._KEPT.clear()
    holder = sqlite3.connect(agent / "history.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO history (prompt, created_at) VALUES ('ZZ_UNCOMMITTED_ZZ', 1)")
    # As a writer that spilled to the file while holding the lock: the store looks changed.
    os.utime(agent / "history.db", ns=(1, 1))
    try:
        locked = build(site, agent)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = "locked by another process: the prompts the last build read are shown"
    assert f"{agent / 'history.db'}: {message}" in locked.problems
    text = page_text(site / "prompts.html")
    assert "ZZ_BEFORE_LOCK_ZZ prompt" in text and "ZZ_UNCOMMITTED_ZZ" not in text
    assert message in page_text(site / "problems.html")


def test_builds_while_the_agent_writes_see_every_committed_prompt_once(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    store = agent / "history.db"
    writer = start_writer(store, 300, pause=0.005)
    site = tmp_path / "site"
    assert writer.stdout is not None
    try:
        seen = []
        while True:
            line = writer.stdout.readline().strip()
            build(site, agent)
            texts = [row[7] for row in _history_rows(site)]
            assert len(texts) == len(set(texts))  # nothing twice
            numbers = sorted(int(t[10:15]) for t in texts)  # type: ignore[index]
            assert numbers == list(range(len(numbers)))  # a snapshot: every commit up to one
            seen.append(len(numbers))
            if line == "done":
                break
            # Let the writer run ahead a little between builds.
            for _ in range(20):
                if writer.stdout.readline().strip() == "done":
                    line = "done"
                    break
            if line == "done":
                build(site, agent)
                break
        texts = [row[7] for row in _history_rows(site)]
        assert sorted(texts) == [f"ZZ_PROMPT_{n:05d}_ZZ concurrent prompt" for n in range(300)]
        # The agent's files, read while it still has them open, are unchanged by a build.
        before = folder_state(agent)
        wal = Path(f"{store}-wal")
        assert wal.exists() and Path(f"{store}-shm").exists()
        os.utime(site / "prompts.html", ns=(0, 0))
        build(site, agent)
        assert folder_state(agent) == before
        assert sorted(os.listdir(agent)) == ["history.db", "history.db-shm", "history.db-wal", "sessions"]
    finally:
        assert writer.stdin is not None
        writer.stdin.write("\n")
        writer.stdin.close()
        writer.wait(10)
    assert seen == sorted(seen) and len(seen) > 2


def test_the_demo_has_a_history_of_its_own_sessions_prompts(tmp_path: Path) -> None:
    site = tmp_path / "site"
    first = build_site(BuildConfig(out=site, demo=True, jobs=1))
    assert not [p for p in first.problems if "history.db" in p]
    typed = demo_prompts()
    rows = _history_rows(site)
    assert sorted(str(row[7]) for row in rows) == sorted(p.prompt for p in typed)
    # The odek sessions' prompts, which no store holds, are listed from the sessions, linked to them.
    odek = [row for row in _prompts_data(site) if str(row[0]).startswith(SESSIONS_TAG)]
    assert odek and all("sessions/odek-" in str(row[4]) for row in odek)
    # Every demo prompt leads to the entry it was sent as.
    entries = {str(row[4]).rsplit("#entry-", 1)[1] for row in rows}
    assert entries == {p.entry_id for p in typed}
    assert crawl(site) == []
    again = build_site(BuildConfig(out=site, demo=True, jobs=1))
    assert not again.changed


def test_watch_picks_up_a_grown_store(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    store = agent / "history.db"
    writer = start_writer(store, 1)  # the agent, with its store open in WAL mode
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "0"
    config = BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1)
    events: list[WatchEvent] = []
    try:
        with LiveSite(config, port=0, report=events.append) as live:
            live.start()
            assert live.watching.wait(5)
            assert b"ZZ_PROMPT_00000_ZZ" in urllib.request.urlopen(live.url + "prompts.html", timeout=10).read()
            stream = urllib.request.urlopen(f"{live.url}__sitegen__/events?since={live.version.token}", timeout=10)
            # Another prompt, committed to the WAL only (the database file does not change).
            connection = sqlite3.connect(store, timeout=5)
            connection.execute(
                "INSERT INTO history (prompt, created_at, cwd) VALUES ('ZZ_WATCHED_ZZ new prompt', ?, '/work')", (T0,)
            )
            connection.commit()
            connection.close()
            written = written_on_reload(stream)
            stream.close()
            assert "prompts.html" in written
            assert b"ZZ_WATCHED_ZZ new prompt" in urllib.request.urlopen(live.url + "prompts.html", timeout=10).read()
    finally:
        assert writer.stdin is not None
        writer.stdin.write("\n")
        writer.stdin.close()
        writer.wait(10)
    assert events[-1].kind == "built"
