"""What a build of the Prompts page keeps for the next in the same process (watch), and its priming after start."""

from __future__ import annotations

import shutil
import sqlite3
import urllib.request
from pathlib import Path

import orjson
import pytest
from history_helpers import HistoryRow, omp_store
from sessions import BASE_MS
from site_helpers import build, make_session, written_on_reload

from sitegen.history.writer import add_prompt
from sitegen.site.build.pipeline import BuildConfig
from sitegen.site.live.watch import LiveSite, WatchEvent
from sitegen.site.prompts.kept import KEPT, PRIMERS, STATE, prime_prompts

T0 = BASE_MS // 1000


def _agent(tmp_path: Path, count: int = 600) -> Path:
    agent = tmp_path / "agent"
    make_session(agent, "/work/alpha", "sess-alpha", "ZZ_ALPHA_ZZ", entries=3)
    rows = [HistoryRow(f"ZZ_P{n:04d}_ZZ prompt", T0 + n, "/work/alpha", None) for n in range(count)]
    rows.append(HistoryRow("ZZ_ALPHA_ZZ first question", T0 + 1, "/work/alpha", "sess-alpha"))
    omp_store(agent / "history.db", rows)
    return agent


def _as_a_new_process() -> None:
    """Forget what this process kept of its builds, as a `sitegen watch` that starts has nothing."""
    KEPT.clear()
    PRIMERS.clear()


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def _same_as_a_fresh_build(site: Path, agent: Path, fresh: Path) -> None:
    build(fresh, agent)
    for folder in ("prompts", "search"):
        assert _files(site / folder) == _files(fresh / folder)
    assert (site / "prompts.html").read_bytes() == (fresh / "prompts.html").read_bytes()


def _add(store: Path, text: str, when: int, cwd: str = "/work/alpha") -> None:
    connection = sqlite3.connect(store)
    add_prompt(connection, HistoryRow(text, when, cwd, None))
    connection.commit()
    connection.close()


def test_watch_on_a_built_site_primes_what_the_next_build_reuses_before_a_prompt_arrives(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    site = tmp_path / "site"
    build(site, agent)
    _as_a_new_process()
    config = BuildConfig(out=site, agent_dirs=[agent], use_default_dirs=False, jobs=1)
    events: list[WatchEvent] = []
    with LiveSite(config, port=0, report=events.append) as live:
        first = live.start()
        # The first build found the page up to date and read nothing of the store...
        assert "prompts.html" not in first.written
        assert live.watching.wait(10)
        # ...and before any prompt arrives, what the next build reuses is there: every prompt of the
        # store read, and the rows made as the site shows them.
        state = orjson.loads((site / STATE).read_bytes())
        kept = KEPT[str(site)]
        assert kept.token == state["token"]
        store = str(agent / "history.db")
        assert len(kept.snapshots[store].prompts) == 601
        assert [chunk.name for chunk in kept.rows.chunks[store]] == state["store_chunks"][store]
        assert str(site) not in PRIMERS
        stream = urllib.request.urlopen(f"{live.url}__sitegen__/events?since={live.version.token}", timeout=10)
        _add(agent / "history.db", "ZZ_WATCHED_ZZ new prompt", T0 + 900)
        written = written_on_reload(stream)
        stream.close()
        assert "prompts.html" in written
        assert b"ZZ_WATCHED_ZZ new prompt" in urllib.request.urlopen(live.url + "prompts.html", timeout=10).read()
    assert [event.kind for event in events if event.kind == "failed"] == []
    _same_as_a_fresh_build(site, agent, tmp_path / "fresh")


def test_a_build_that_reads_the_stores_leaves_nothing_to_prime(tmp_path: Path) -> None:
    agent = _agent(tmp_path, 5)
    site = tmp_path / "site"
    build(site, agent)  # a first build reads the store and keeps it
    assert str(site) in KEPT and str(site) not in PRIMERS
    build(site, agent)  # up to date, with what it would reuse already kept
    assert str(site) not in PRIMERS
    assert not prime_prompts(site)


@pytest.mark.parametrize("meanwhile", ["nothing", "prompt", "session"])
def test_a_build_after_priming_makes_what_a_first_build_makes(tmp_path: Path, meanwhile: str) -> None:
    agent = _agent(tmp_path)
    site = tmp_path / "site"
    build(site, agent)
    _as_a_new_process()
    build(site, agent)  # up to date: reads nothing, leaves what to prime
    assert str(site) in PRIMERS and str(site) not in KEPT
    if meanwhile == "prompt":  # the store grew between the up-to-date build and the priming
        _add(agent / "history.db", "ZZ_EARLY_ZZ before priming", T0 + 800)
    elif meanwhile == "session":  # a session with a new project links prompts the store had
        make_session(agent, "/work/gamma", "sess-gamma", "ZZ_GAMMA_ZZ")
        _add(agent / "history.db", "ZZ_GAMMA_ZZ first question", T0 + 1, "/work/gamma")
    assert prime_prompts(site)
    assert str(site) in KEPT and str(site) not in PRIMERS
    _add(agent / "history.db", "ZZ_LATE_ZZ after priming", T0 + 901)
    build(site, agent)
    _same_as_a_fresh_build(site, agent, tmp_path / "fresh")


def test_priming_is_dropped_when_another_build_wrote_the_site_since(tmp_path: Path) -> None:
    agent = _agent(tmp_path, 5)
    site = tmp_path / "site"
    build(site, agent)
    _as_a_new_process()
    build(site, agent)
    primer = PRIMERS[str(site)]
    _add(agent / "history.db", "ZZ_OTHER_ZZ prompt", T0 + 800)
    _as_a_new_process()
    build(site, agent)  # as another process: a new state, a new token
    PRIMERS[str(site)] = primer
    KEPT.clear()
    assert not prime_prompts(site)
    assert str(site) not in KEPT


@pytest.mark.parametrize("edited", ["ZZ_P0007_ZZ prompt, edited", "ZZ_P0007_ZZ PROMPT", ""])
def test_a_prompt_edited_in_place_is_seen_by_the_next_build_in_the_same_process(tmp_path: Path, edited: str) -> None:
    # Its text alone changed (to another size, the same size, or emptied): no other column tells.
    agent = _agent(tmp_path, 20)
    site = tmp_path / "site"
    store = agent / "history.db"
    build(site, agent)
    assert str(site) in KEPT  # the next build reads the store after this one's snapshot
    connection = sqlite3.connect(store)
    connection.execute("UPDATE history SET prompt = ? WHERE prompt = 'ZZ_P0007_ZZ prompt'", (edited,))
    connection.commit()
    connection.close()
    assert "prompts.html" in build(site, agent).written
    html = (site / "prompts.html").read_text(encoding="utf-8")
    assert "ZZ_P0007_ZZ prompt<" not in html and (edited == "" or edited in html)
    _same_as_a_fresh_build(site, agent, tmp_path / "fresh")
    # And back: a prompt written into a row that was empty.
    connection = sqlite3.connect(store)
    connection.execute("UPDATE history SET prompt = 'ZZ_P0007_ZZ again' WHERE prompt = ?", (edited,))
    connection.commit()
    connection.close()
    build(site, agent)
    assert "ZZ_P0007_ZZ again" in (site / "prompts.html").read_text(encoding="utf-8")
    shutil.rmtree(tmp_path / "fresh")
    _same_as_a_fresh_build(site, agent, tmp_path / "fresh")
