"""A forked session's page names its parent by title and links to the parent's page when the site has
it (the file name otherwise); a subagent's page links back to the call that started it."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from sessions import SessionBuilder, text
from site_helpers import build, crawl

from sitegen.site.state.jobs import RenderJob, link_parents


def write(agent: Path, builder: SessionBuilder, name: str) -> Path:
    return builder.write(agent / "sessions" / "--work-app--" / name)


def parent_link(page: Path) -> tuple[str, str] | None:
    html = page.read_text(encoding="utf-8")
    start = html.find('<a class="parent-session" href="')
    if start < 0:
        return None
    href_start = start + len('<a class="parent-session" href="')
    href_end = html.index('"', href_start)
    text_end = html.index("</a>", href_end)
    return html[href_start:href_end], html[href_end + 2 : text_end]


def test_a_fork_links_its_parent_by_title(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    parent = SessionBuilder(session_id="parent", cwd="/work/app")
    parent.user("u1", "## Make the `upload` handler stream\n\nIt reads whole files.")
    parent.assistant("a1", [text("Streaming now.")])
    parent_file = write(agent, parent, "2026-01-01T00-00-00-000Z_parent.jsonl")
    # The fork names its parent by another spelling of the same path.
    spelled = str(parent_file.parent / ".." / parent_file.parent.name / parent_file.name)
    fork = SessionBuilder(session_id="fork", cwd="/work/app", parentSession=spelled)
    fork.user("u1", "## Make the `upload` handler stream\n\nIt reads whole files.")
    fork.user("u2", "Now try it with chunked encoding")
    write(agent, fork, "2026-01-02T00-00-00-000Z_fork.jsonl")
    orphan = SessionBuilder(session_id="orphan", cwd="/work/app", parentSession="/gone/2025_old.jsonl")
    orphan.user("u1", "Where did this come from?")
    write(agent, orphan, "2026-01-03T00-00-00-000Z_orphan.jsonl")
    site = tmp_path / "site"
    build(site, agent)
    pages = {page.stem.rsplit("_", 1)[-1]: page for page in site.glob("sessions/*/*.html")}

    link = parent_link(pages["fork"])
    assert link is not None
    href, title = link
    assert title == "Make the upload handler stream"
    assert (pages["fork"].parent / unquote(href)).resolve() == pages["parent"].resolve()
    # No parent in the site: its file name, unlinked.
    assert parent_link(pages["orphan"]) is None
    assert '<code title="/gone/2025_old.jsonl">2025_old.jsonl</code>' in pages["orphan"].read_text(encoding="utf-8")
    assert parent_link(pages["parent"]) is None
    assert crawl(site) == []
    # The fork grows and is rendered again alone: its parent's title now comes from the manifest.
    fork.user("u3", "And with gzip?")
    write(agent, fork, "2026-01-02T00-00-00-000Z_fork.jsonl")
    build(site, agent)
    assert parent_link(pages["fork"]) == link


def test_link_parents_only_for_sessions_with_a_page() -> None:
    def job(source: str) -> RenderJob:
        return RenderJob(source, "pi", source, "p", f"sessions/p/{source}.html", "/site", {})

    parents = {"a": None, "b": "a", "c": "missing", "d": "d"}
    linked = link_parents([job("a"), job("b"), job("c"), job("d")], {"a": "sessions/p/a.html"}, parents.get)
    assert [(j.source, j.parent_source, j.parent_page) for j in linked] == [
        ("a", "", ""),
        ("b", "a", "sessions/p/a.html"),
        ("c", "", ""),
        ("d", "", ""),
    ]
    # A parent the manifest already holds comes with its title: the worker need not read its file.
    titled = link_parents([job("b")], {"a": "sessions/p/a.html"}, parents.get, {"a": "Parent title"})
    assert titled[0].parent_title == "Parent title"
