"""Related sessions: similar text ranks first, unrelated sessions are not listed, updates are incremental."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from sessions import SessionBuilder, text
from site_helpers import build

from sitegen.site.pages.related import related_sessions, remembered_related


def test_similar_sessions_rank_first() -> None:
    terms = {
        "a": {"postgres": 5, "migration": 4, "index": 2},
        "b": {"postgres": 3, "migration": 2, "vacuum": 1},
        "c": {"react": 5, "component": 3, "hooks": 2},
        "d": {"react": 2, "hooks": 4, "state": 1},
        "e": {"kubernetes": 3},
    }
    related = related_sessions(terms)
    assert related["a"][0] == "b" and related["c"][0] == "d"
    assert "c" not in related["a"] and related["e"] == []


def test_related_is_deterministic() -> None:
    terms = {f"s{i}": {"shared": 1 + i % 3, f"own{i}": 2} for i in range(20)}
    assert related_sessions(terms) == related_sessions(dict(reversed(list(terms.items()))))
    assert all(len(v) <= 5 for v in related_sessions(terms).values())


def write(agent: Path, session_id: str, words: str) -> Path:
    b = SessionBuilder(session_id=session_id, cwd="/work/rel")
    b.user("u1", words)
    b.assistant("a1", [text(words)])
    return b.write(agent / "sessions" / "--work-rel--" / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl")


def related_items(site: Path, session_id: str) -> list[dict[str, str]]:
    script = next(site.glob(f"sessions/*/*_{session_id}.related.js")).read_bytes()
    assert script.startswith(b"window.sitegen.related(") and script.endswith(b");\n")
    items: list[dict[str, str]] = orjson.loads(script[len(b"window.sitegen.related(") : -3])
    return items


def built_site(tmp_path: Path) -> tuple[Path, Path]:
    """Two sessions about postgres and one about react, built: (agent dir, site)."""
    agent = tmp_path / "agent"
    write(agent, "pg-1", "postgres migration index vacuum replication postgres")
    write(agent, "pg-2", "postgres vacuum replication migration")
    write(agent, "ui-1", "react hooks component state rendering")
    site = tmp_path / "site"
    build(site, agent)
    return agent, site


def test_site_pages_list_related_sessions(tmp_path: Path) -> None:
    agent, site = built_site(tmp_path)
    items = related_items(site, "pg-1")
    assert [i["title"] for i in items][:1] == ["postgres vacuum replication migration"]
    assert items[0]["url"].endswith("_pg-2.html")
    page = next(site.glob("sessions/*/*_pg-1.html")).read_text()
    assert 'id="related"' in page and "_pg-1.related.js" in page
    # A new similar session appears in the existing session's list without re-rendering its page.
    page_mtime = next(site.glob("sessions/*/*_pg-1.html")).stat().st_mtime_ns
    write(agent, "pg-3", "postgres replication vacuum index migration")
    result = build(site, agent)
    assert result.rendered == ["2026-01-01T00-00-00-000Z_pg-3"]
    assert "pg-3" in " ".join(i["url"] for i in related_items(site, "pg-1"))
    assert next(site.glob("sessions/*/*_pg-1.html")).stat().st_mtime_ns == page_mtime


def _terms() -> dict[str, dict[str, int]]:
    return {
        "a": {"kafka": 5, "consumer": 3, "offset": 2},
        "b": {"kafka": 4, "consumer": 2, "rebalance": 2},
        "c": {"flexbox": 6, "layout": 3},
    }


def test_remembered_related_reads_back_the_lists_while_no_terms_change(tmp_path: Path) -> None:
    state = tmp_path / "related.json"
    first = remembered_related(state, _terms())
    assert first == related_sessions(_terms())
    # The state is what a later build trusts: while the terms are the same, its lists are used as kept.
    kept = orjson.loads(state.read_bytes())
    kept["related"] = {"a": ["c"]}
    state.write_bytes(orjson.dumps(kept))
    assert remembered_related(state, _terms()) == {"a": ["c"]}
    changed = {**_terms(), "c": {"kafka": 1, "flexbox": 6}}
    assert remembered_related(state, changed) == related_sessions(changed)


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"digest": 1, "related": {}}', b"[]"])
def test_a_broken_related_state_is_computed_again(tmp_path: Path, content: bytes) -> None:
    state = tmp_path / "related.json"
    state.write_bytes(content)
    assert remembered_related(state, _terms()) == related_sessions(_terms())
    assert orjson.loads(state.read_bytes())["related"] == related_sessions(_terms())


def test_related_lists_are_written_only_where_they_change_and_repaired_when_damaged(tmp_path: Path) -> None:
    agent, site = built_site(tmp_path)
    scripts = {path.name: path for path in site.glob("sessions/*/*.related.js")}
    assert len(scripts) == 3
    before = {name: path.stat().st_mtime_ns for name, path in scripts.items()}
    good = {name: path.read_bytes() for name, path in scripts.items()}
    result = build(site, agent)
    assert not [name for name in result.written if name.endswith(".related.js")]
    assert {name: path.stat().st_mtime_ns for name, path in scripts.items()} == before
    # A list cut short or removed by hand is written again by the next build that changes anything,
    # though these two lists themselves did not change.
    pg1 = next(path for name, path in scripts.items() if "_pg-1" in name)
    ui1 = next(path for name, path in scripts.items() if "_ui-1" in name)
    pg1.write_bytes(good[pg1.name][:-5])
    ui1.unlink()
    write(agent, "zz-1", "zebra quokka narwhal")
    result = build(site, agent)
    rewritten = {Path(name).name for name in result.written if name.endswith(".related.js")}
    assert {pg1.name, ui1.name} <= rewritten and not any("_pg-2" in name for name in rewritten)
    assert {name: path.read_bytes() for name, path in scripts.items()} == good


def test_lists_are_kept_while_the_vectors_are_the_same(tmp_path: Path) -> None:
    # "error" is in every session: too common to weigh, a change to its count changes no vector.
    terms = {f"s{i}": {"error": 3, f"topic{i % 4}": 2 + i % 3, f"own{i}": 1} for i in range(40)}
    state = tmp_path / "related.json"
    assert remembered_related(state, terms) == related_sessions(terms)
    kept = orjson.loads(state.read_bytes())
    kept["related"] = {"s0": ["marker"]}
    state.write_bytes(orjson.dumps(kept))
    more_errors = {**terms, "s7": {**terms["s7"], "error": 9}}
    assert remembered_related(state, more_errors) == {"s0": ["marker"]}
    # A weighed word's count changes that session's vector: the lists are computed again.
    more_topic = {**terms, "s7": {**terms["s7"], "topic3": 7}}
    assert remembered_related(state, more_topic) == related_sessions(more_topic)
