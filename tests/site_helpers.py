"""Helpers for site and CLI tests: generated multi-project agent dirs, a crawler for internal links,
and the CLI run in its own process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import orjson
from sessions import SessionBuilder, text, tool_call

from sitegen.site.build.pipeline import BuildConfig, BuildResult, build_site


def make_session(agent: Path, cwd: str, session_id: str, words: str, *, entries: int = 2) -> Path:
    """A small session in <agent>/sessions/<encoded cwd>/ with a tool call and a subagent."""
    b = SessionBuilder(session_id=session_id, cwd=cwd)
    b.user("u1", f"{words} first question")
    b.assistant("a1", [text(f"{words} answer"), tool_call("c1", "bash", command="ls")])
    b.tool_result("r1", "c1", "bash", "file.txt\n")
    for index in range(entries - 2):
        b.user(f"u{index + 2}", f"{words} follow-up {index}")
    folder = agent / "sessions" / ("--" + cwd.strip("/").replace("/", "-") + "--")
    return b.write(folder / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl")


def make_agent(agent: Path) -> Path:
    """An agent dir of three small sessions: two in project alpha, one in beta."""
    make_session(agent, "/work/alpha", "alpha-1", "ZZ_ALPHA1_ZZ")
    make_session(agent, "/work/alpha", "alpha-2", "ZZ_ALPHA2_ZZ")
    make_session(agent, "/work/beta", "beta-1", "ZZ_BETA1_ZZ")
    return agent


def session_page(site: Path, session_id: str) -> Path:
    """The page of the session of this id in a built site."""
    return next(site.glob(f"sessions/*/*_{session_id}.html"))


def append_user_line(path: Path, entry_id: str, parent: str) -> None:
    """A user message appended to a session file, as an agent appends it; its text is ZZ_<entry_id>_ZZ."""
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-02-01T00:00:00.000Z",
        "message": {"role": "user", "content": f"ZZ_{entry_id}_ZZ", "timestamp": 1},
    }
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(entry) + b"\n")


def build(out: Path, agent: Path, **kwargs: object) -> BuildResult:
    config = BuildConfig(out=out, agent_dirs=[agent], use_default_dirs=False, jobs=1, **kwargs)  # type: ignore[arg-type]
    return build_site(config)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("href", "src"):
                self.links.append(value)
            if name == "id":
                self.ids.add(value)


def crawl(site: Path) -> list[str]:
    """Broken internal links of every page: missing files and missing #anchors."""
    pages: dict[Path, _Links] = {}
    for page in site.rglob("*.html"):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page.resolve()] = parser
    broken = []
    for page, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("data:") or link.startswith("//"):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(site.resolve())}: {link}")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if parts.fragment not in ids:
                    broken.append(f"{page.relative_to(site.resolve())}: {link} (no such anchor)")
    return broken


def page_text(path: Path) -> str:
    return re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))


def run_sitegen(
    *args: str, cwd: Path, env: dict[str, str] | None = None, prefix: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, with a time limit, with HOME inside the test's folder."""
    command = [*prefix, sys.executable, "-m", "sitegen.cli", *args]
    environment = {**os.environ, "HOME": str(cwd / "home")}
    environment.pop("PI_CODING_AGENT_DIR", None)
    environment.pop("PI_CODING_AGENT_SESSION_DIR", None)
    for name in ("PI_CONFIG_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME"):  # omp's other places: none of the machine's
        environment.pop(name, None)
    environment.update(env or {})
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60, check=False, env=environment)


def written_on_reload(stream: Iterable[bytes]) -> list[str]:
    """The pages the next reload event of a live site's event stream names as written."""
    for raw in stream:
        if raw.startswith(b"data: ") and b'"written"' in raw:
            written: list[str] = json.loads(raw.removeprefix(b"data: "))["written"]
            return written
    raise AssertionError("the event stream ended without a reload")
