"""Related sessions: similar text ranks first, unrelated sessions are not listed, updates are incremental."""

from __future__ import annotations

from pathlib import Path

import orjson
from sessions import SessionBuilder, text
from site_helpers import build

from sitegen.site.related import related_sessions


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
    assert script.startswith(b"window.sitegenRelated(") and script.endswith(b");\n")
    items: list[dict[str, str]] = orjson.loads(script[len(b"window.sitegenRelated(") : -3])
    return items


def test_site_pages_list_related_sessions(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent, "pg-1", "postgres migration index vacuum replication postgres")
    write(agent, "pg-2", "postgres vacuum replication migration")
    write(agent, "ui-1", "react hooks component state rendering")
    site = tmp_path / "site"
    build(site, agent)
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
