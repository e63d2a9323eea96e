"""sitegen build and subagent transcripts: their pages, links both ways, rendering again, search documents."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from sessions import SessionBuilder, tool_call
from site_helpers import append_user_line, build, crawl, make_session, session_page

from sitegen.site.search import store as search_store
from sitegen.site.state.manifest import MANIFEST_PATH


def test_subagent_pages_link_both_ways(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path = make_session(agent, "/work/sub", "parent-1", "ZZ_PARENT_ZZ")
    artifacts = path.with_suffix("")
    artifacts.mkdir()
    (artifacts / "Scout.md").write_text("found it")
    sub = SessionBuilder(session_id="sub-1", cwd="/work/sub")
    sub.user("s1", "ZZ_SUBTASK_ZZ")
    sub.write(artifacts / "Scout.jsonl")
    b = SessionBuilder(session_id="parent-1", cwd="/work/sub")
    b.user("u1", "delegate")
    b.assistant("a1", [tool_call("c1", "task", task="scout")])
    b.tool_result("r1", "c1", "task", "see agent://Scout")
    b.write(path)
    site = tmp_path / "site"
    build(site, agent)
    parent = session_page(site, "parent-1")
    sub_page = parent.with_suffix("") / "Scout.html"
    assert sub_page.is_file() and "ZZ_SUBTASK_ZZ" in sub_page.read_text()
    assert 'href="2026-01-01T00-00-00-000Z_parent-1/Scout.html"' in parent.read_text()
    assert "../2026-01-01T00-00-00-000Z_parent-1.html#entry-r1" in sub_page.read_text()
    assert crawl(site) == []


def _parent_with_scout(agent: Path, number: int, words: str) -> tuple[Path, Path]:
    """A session in /work/sub with a subagent "Scout" whose sidecar transcript says words: (session, sidecar)."""
    path = make_session(agent, "/work/sub", f"parent-{number}", "ZZ_PARENT_ZZ")
    artifacts = path.with_suffix("")
    artifacts.mkdir()
    sidecar = SessionBuilder(session_id=f"sub-{number}", cwd="/work/sub")
    sidecar.user("s1", words)
    return path, sidecar.write(artifacts / "Scout.jsonl")


def test_subagent_page_is_rendered_again_only_when_its_inputs_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    path, _ = _parent_with_scout(agent, 2, "ZZ_SUBTASK_ZZ")
    artifacts = path.with_suffix("")
    site = tmp_path / "site"
    build(site, agent)
    sub_page = session_page(site, "parent-2").with_suffix("") / "Scout.html"
    sub_page.write_text("ZZ_KEPT_ZZ")  # stands for the page the last build wrote

    append_user_line(path, "late0001", "r1")
    result = build(site, agent)
    assert result.rendered == ["2026-01-01T00-00-00-000Z_parent-2"]
    assert sub_page.read_text() == "ZZ_KEPT_ZZ"  # the parent grew; its subagent did not

    append_user_line(artifacts / "Scout.jsonl", "late0002", "s1")
    append_user_line(path, "late0003", "late0001")
    build(site, agent)
    assert "ZZ_late0002_ZZ" in sub_page.read_text()

    sub_page.write_text("ZZ_KEPT_ZZ")
    manifest_path = site / MANIFEST_PATH
    manifest = orjson.loads(manifest_path.read_bytes())
    manifest["templates"] = "something-else"
    manifest_path.write_bytes(orjson.dumps(manifest))
    monkeypatch.setattr("sitegen.site.build.worker._templates_hash", lambda: "changed templates")
    build(site, agent)
    assert "ZZ_SUBTASK_ZZ" in sub_page.read_text()


def test_nested_subagent_appending_in_place_renders_the_page_again(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path = make_session(agent, "/work/sub", "parent-4", "ZZ_PARENT_ZZ")
    artifacts = path.with_suffix("")
    (artifacts / "Alpha").mkdir(parents=True)
    for name in ("Alpha", "Alpha/Child"):
        sidecar = SessionBuilder(session_id=name, cwd="/work/sub")
        sidecar.user("s1", f"ZZ_{name}_ZZ")
        sidecar.write(artifacts / f"{name}.jsonl")
    site = tmp_path / "site"
    build(site, agent)
    stamps = {p: p.stat().st_mtime_ns for p in (path, artifacts, artifacts / "Alpha", artifacts / "Alpha.jsonl")}

    append_user_line(artifacts / "Alpha" / "Child.jsonl", "late0005", "s1")  # only the child's file moves
    for folder, stamp in stamps.items():
        os.utime(folder, ns=(stamp, stamp))
    assert build(site, agent).rendered == ["2026-01-01T00-00-00-000Z_parent-4"]
    assert build(site, agent).rendered == []


def test_subagent_pages_are_searchable_documents_kept_across_rebuilds(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path, _ = _parent_with_scout(agent, 5, "zzsidecarword here")
    site = tmp_path / "site"

    def indexed() -> tuple[str, bool]:
        index = (site / "search" / "index.js").read_text()
        shards = "".join(p.read_text() for p in (site / "search" / "t").glob("*.js"))
        return index, '"zzsidecarword":' in shards

    build(site, agent)
    index, found = indexed()
    assert found and '"Scout"' in index and "subagent of ZZ_PARENT_ZZ first question" in index
    append_user_line(path, "late0009", "r1")  # the parent grows; its subagent page is not rendered again
    result = build(site, agent)
    assert not any(p.endswith("Scout.html") for p in result.written)
    index, found = indexed()
    assert found and '"Scout"' in index
    path.unlink()
    build(site, agent)
    index, found = indexed()
    assert not found and '"Scout"' not in index


def test_subagent_search_entries_of_an_older_release_are_extracted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    path, _ = _parent_with_scout(agent, 6, "zzsidecarword here")
    site = tmp_path / "site"
    with monkeypatch.context() as older:
        older.setattr(search_store, "VERSION", search_store.VERSION + 1)
        build(site, agent)
    search_store.close_connections()  # as a new process of this release opens it
    # The parent grows, so its segment is exported again; the subagent did not change, but the
    # database is of another layout, so it is made again and the subagent's entries are stored again (once).
    append_user_line(path, "late0006", "r1")
    build(site, agent)
    shards = "".join(p.read_text() for p in (site / "search" / "t").glob("*.js"))
    assert '"zzsidecarword":' in shards
    assert build(site, agent).rendered == []


def test_subagent_appending_in_place_renders_its_page_again(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path, sidecar_path = _parent_with_scout(agent, 3, "ZZ_SUBTASK_ZZ")
    artifacts = path.with_suffix("")
    site = tmp_path / "site"
    build(site, agent)
    folder_mtime = artifacts.stat().st_mtime_ns
    session_mtime = path.stat().st_mtime_ns

    append_user_line(sidecar_path, "late0004", "s1")  # a running subagent writes; nothing else moves
    os.utime(artifacts, ns=(folder_mtime, folder_mtime))
    assert path.stat().st_mtime_ns == session_mtime
    result = build(site, agent)
    assert result.rendered == ["2026-01-01T00-00-00-000Z_parent-3"]
    sub_page = session_page(site, "parent-3").with_suffix("") / "Scout.html"
    assert "ZZ_late0004_ZZ" in sub_page.read_text()
    assert build(site, agent).rendered == []
