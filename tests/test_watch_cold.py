"""sitegen watch on a cold site (issue 19, point 2), as a user runs it: served from the start, the
home page with a progress note and the sessions written so far, every page it links to there or
saying it is being built, the note gone at the end, and then the same site a plain build makes.

The build is held in the middle by stopping its worker processes (SIGSTOP) once they are there:
nothing here depends on how fast the machine is."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin

import pytest
from fault_helpers import DEADLINE_S, finish, needs_proc, run_cli, start_cli, wait_for_workers
from site_helpers import _Links

from sitegen.session.load import read_header
from sitegen.site.pages.early import EARLY_MIN_JOBS
from sitegen.site.state.sources import project_slug, safe_key

SESSIONS = 24  # the `corpus` fixture's
# watch renders on one worker per core (it has no --jobs): the build is held by stopping them.
needs_workers = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="watch has worker processes from 2 cores")
NOTE = re.compile(r'<p id="build-progress"[^>]*>Building the site: (\d+) of (\d+) sessions written')


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=DEADLINE_S) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def read_until(process: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    """The first line of the process's output that matches (each line read as it comes)."""
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"no line matched {pattern!r}: {seen}")


@contextmanager
def held(pids: Sequence[int]) -> Iterator[None]:
    """The processes stopped for the block (they go on where they were after it)."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def session_pages(agent: Path) -> list[str]:
    """Each session's page, site-relative, as the build names it (sitegen.site.build.plan._plan_key)."""
    pages = []
    for path in sorted((agent / "sessions").glob("*/*.jsonl")):
        found = read_header(path)
        assert found is not None
        pages.append(f"sessions/{project_slug(found[0]['cwd'])}/{safe_key(path.stem)}.html")
    return pages


def site_files(site: Path) -> dict[str, bytes]:
    """The site as a reader gets it: every file but the build's own state."""
    return {
        str(path.relative_to(site)): path.read_bytes()
        for path in site.rglob("*")
        if path.is_file() and ".sitegen" not in path.relative_to(site).parts
    }


@needs_proc
@needs_workers
def test_a_cold_site_is_served_as_it_is_built_and_ends_as_a_plain_build(tmp_path: Path, corpus: Path) -> None:
    site = tmp_path / "site"
    watch = start_cli("watch", "--port", "0", "--out", site, "--agent-dir", corpus)
    workers: list[int] = []
    try:
        workers = wait_for_workers(watch)
        with held(workers):
            url = read_until(watch, r"^Serving .* at (http://127\.0\.0\.1:\d+/)").group(1)
            status, home = get(url)
            assert status == 200
            note = NOTE.search(home)
            assert note is not None, home
            done, total = int(note.group(1)), int(note.group(2))
            assert total == SESSIONS and done < SESSIONS
            # Every link of the home page leads to a page that is there, or to one that says it is
            # being built (the search, stats and prompts pages come at the end).
            links = _Links()
            links.feed(home)
            pending = []
            for link in {link for link in links.links if not link.startswith(("http", "#"))}:
                status, body = get(url + link)
                if status != 200:
                    assert status == 404 and "Being built" in body and "sessions written" in body, link
                    pending.append(link)
                elif link.startswith("sessions/"):
                    assert "</html>" in body  # a page listed is whole
            assert "search.html" in pending
            assert not [link for link in pending if link.startswith(("sessions/", "projects/"))]
            # A session not written yet is pending too, and its page reloads once it is written.
            missing = [page for page in session_pages(corpus) if not (site / page).exists()]
            assert missing
            status, body = get(url + missing[0])
            assert status == 404 and "Being built" in body and "__sitegen__/reload.js" in body
            # It leads home from any depth, where the sessions written so far are listed.
            home_link = re.search(r'<a href="([^"]*index\.html)">Home page</a>', body)
            assert home_link is not None and get(urljoin(url + missing[0], home_link.group(1)))[0] == 200
        read_until(watch, r"^Built .* in [\d.]+s: 24 rendered, 0 problems")
        status, home = get(url)
        assert status == 200 and 'id="build-progress"' not in home
        status, _ = get(url + missing[0])
        assert status == 200
    finally:
        watch.send_signal(signal.SIGINT)
        finish(watch, workers)
    assert watch.returncode == 0
    assert 'id="build-progress"' not in (site / "index.html").read_text()

    plain = tmp_path / "plain"
    built = run_cli("build", "--out", plain, "--agent-dir", corpus)
    assert built.returncode == 0, built.stderr
    shown, expected = site_files(site), site_files(plain)
    assert sorted(shown) == sorted(expected)
    assert [name for name in sorted(shown) if shown[name] != expected[name]] == []


def test_a_short_first_build_is_served_when_it_is_done(tmp_path: Path, corpus: Path) -> None:
    """Below EARLY_MIN_JOBS sessions a build takes about a second: no note, served at the end."""
    agent = tmp_path / "agent"
    for path in sorted((corpus / "sessions").glob("*/*.jsonl"))[: EARLY_MIN_JOBS - 1]:
        target = agent / "sessions" / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    site = tmp_path / "site"
    watch = start_cli("watch", "--port", "0", "--out", site, "--agent-dir", agent)
    try:
        url = read_until(watch, r"^Serving .* at (http://127\.0\.0\.1:\d+/)").group(1)
        # Said once the build is done: the home page is the finished one.
        assert 'id="build-progress"' not in get(url)[1]
        assert "Building the site" not in (site / "index.html").read_text()
    finally:
        watch.send_signal(signal.SIGINT)
        finish(watch)
    assert watch.returncode == 0


@needs_proc
@needs_workers
@pytest.mark.browser
def test_the_open_home_page_follows_the_build_and_drops_its_note(tmp_path: Path, corpus: Path) -> None:
    """In Chromium: the home page opened during the build shows the note, and a session page not
    written yet says it is being built; both reload by themselves as the build goes, and the note is
    gone at the end."""
    from browser import chromium
    from test_browser_watch import _open, _until

    site = tmp_path / "site"
    watch = start_cli("watch", "--port", "0", "--out", site, "--agent-dir", corpus)
    workers: list[int] = []
    errors: list[str] = []
    try:
        with chromium() as browser:
            workers = wait_for_workers(watch)
            with held(workers):
                url = read_until(watch, r"^Serving .* at (http://127\.0\.0\.1:\d+/)").group(1)
                home = _open(browser, url, errors)
                note = home.locator("#build-progress").inner_text()
                assert re.fullmatch(r"Building the site: \d+ of 24 sessions written, newest first\..*", note)
                missing = [page for page in session_pages(corpus) if not (site / page).exists()]
                pending = browser.new_context().new_page()
                with pending.expect_response(lambda response: "/__sitegen__/events" in response.url):
                    pending.goto(url + missing[-1])
                assert pending.locator("h1").inner_text() == "Being built"
            # However long the build takes on a busy machine: the pages reload once it is done.
            read_until(watch, r"^Built ")
            # Read once a document is whole: between two, the new one may have no body yet.
            done = "document.readyState === 'complete' && document.querySelector('footer') !== null"
            _until(home, f"{done} && !document.getElementById('build-progress')", DEADLINE_S)
            # Checked in one go: the end of the build reloads every open page once more, and a page read
            # between two statements may be in the middle of it.
            _until(
                pending,
                f"{done} && document.title !== 'Being built' && document.querySelectorAll('h1.title').length === 1",
                DEADLINE_S,
            )
            _until(home, f"{done} && document.querySelectorAll('#recent tbody tr').length === 20", DEADLINE_S)
    finally:
        watch.send_signal(signal.SIGINT)
        finish(watch, workers)
    assert errors == []
