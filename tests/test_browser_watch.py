"""sitegen watch in a real headless Chromium: append to a session, see the open page reload in place."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest
from sessions import SessionBuilder, text
from site_helpers import make_session

from sitegen.errors import SitegenError
from sitegen.site.build.pipeline import BuildConfig, BuildResult, ProgressCallback, build_site
from sitegen.site.live.watch import LiveSite

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

# The promise: the open page shows an appended entry within a second.
RELOAD_WITHIN_MS = 1000


def _config(tmp_path: Path, agent: Path) -> BuildConfig:
    return BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1)


def _append(session: Path, entry_id: str, parent: str, words: str) -> None:
    line = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-02T00:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": words}]},
    }
    with session.open("ab") as handle:
        handle.write(orjson.dumps(line) + b"\n")


def _page_of(result: BuildResult, key: str) -> str:
    return next(p for p in result.written if p.startswith("sessions/") and p.endswith(f"/{key}.html"))


def _open(browser: Browser, url: str, errors: list[str]) -> Page:
    """Open url and return once its reload stream is connected."""
    page = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.on(
        "response",
        lambda response: errors.append(f"{response.status} {response.url}") if response.status >= 400 else None,
    )
    with page.expect_response(lambda response: "/__sitegen__/events" in response.url):
        page.goto(url)
    page.evaluate("window.ZZ_NOT_RELOADED = true")
    return page


def _until(page: Page, expression: str, timeout_s: float) -> None:
    """Poll an expression from outside: the pages' CSP forbids wait_for_function's eval."""
    from playwright.sync_api import Error

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if page.evaluate(expression):
                return
        except Error:
            pass  # the page is between documents (reloading)
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout_s}s: {expression}")
        time.sleep(0.02)


def _reloaded(page: Page) -> bool:
    return not page.evaluate("window.ZZ_NOT_RELOADED === true")


def _wait_for_entry(page: Page, entry_id: str, words: str, timeout_ms: float) -> float:
    """Milliseconds until the entry is shown with its text (the page reloaded with it)."""
    started = time.perf_counter()
    page.wait_for_selector(f"#entry-{entry_id}:has-text('{words}')", state="visible", timeout=timeout_ms)
    return (time.perf_counter() - started) * 1000


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return tmp_path / "agent"


def test_appended_line_reloads_the_open_page_in_place(browser: Browser, tmp_path: Path, agent: Path) -> None:
    session = make_session(agent, "/work/alpha", "sess-alpha", "alpha", entries=60)
    errors: list[str] = []
    with LiveSite(_config(tmp_path, agent), port=0, paths=[agent / "sessions"]) as live:
        first = live.start()
        assert live.watching.wait(5)
        page = _open(browser, live.url + _page_of(first, session.stem), errors)
        page.evaluate("window.scrollTo(0, 900)")
        assert page.evaluate("window.scrollY") == 900

        _append(session, "zzappend", "u59", "ZZ_APPENDED_ZZ")  # u59 is the last entry
        elapsed = _wait_for_entry(page, "zzappend", "ZZ_APPENDED_ZZ", 5000)
        assert _reloaded(page)
        _until(page, "window.scrollY === 900", 2)
        assert elapsed < RELOAD_WITHIN_MS, f"the page showed the new entry after {elapsed:.0f} ms"
        page.context.close()
    assert errors == []


def test_reload_keeps_the_place_of_a_reader_who_came_by_a_deep_link(
    browser: Browser, tmp_path: Path, agent: Path
) -> None:
    session = make_session(agent, "/work/alpha", "sess-alpha", "alpha", entries=60)
    errors: list[str] = []
    with LiveSite(_config(tmp_path, agent), port=0, paths=[agent / "sessions"]) as live:
        first = live.start()
        assert live.watching.wait(5)
        page = _open(browser, live.url + _page_of(first, session.stem) + "#entry-u10", errors)
        page.wait_for_timeout(300)  # the page's own jump to the fragment has settled
        page.evaluate("window.scrollTo(0, 2400)")
        _append(session, "zzappend", "u59", "ZZ_APPENDED_ZZ")
        _wait_for_entry(page, "zzappend", "ZZ_APPENDED_ZZ", 5000)
        assert page.evaluate("location.hash") == "#entry-u10"
        # Where the reader had scrolled to, not back at the fragment's entry, and it stays there.
        _until(page, "window.scrollY === 2400", 2)
        page.wait_for_timeout(300)
        assert page.evaluate("window.scrollY") == 2400
        page.context.close()
    assert errors == []


def test_reader_at_the_end_stays_at_the_end(browser: Browser, tmp_path: Path, agent: Path) -> None:
    session = make_session(agent, "/work/alpha", "sess-alpha", "alpha", entries=60)
    errors: list[str] = []
    with LiveSite(_config(tmp_path, agent), port=0, paths=[agent / "sessions"]) as live:
        first = live.start()
        assert live.watching.wait(5)
        page = _open(browser, live.url + _page_of(first, session.stem), errors)
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        _append(session, "zztail", "u59", "ZZ_TAIL_ZZ " * 200)
        _wait_for_entry(page, "zztail", "ZZ_TAIL_ZZ", 5000)
        # Like tail -f: whoever followed the end of a growing session sees the new end.
        _until(page, "innerHeight + scrollY >= document.documentElement.scrollHeight - 2", 2)
        page.context.close()
    assert errors == []


def test_reload_keeps_the_shown_branch(browser: Browser, tmp_path: Path, agent: Path) -> None:
    b = SessionBuilder(session_id="sess-branch", cwd="/work/branch")
    b.user("u1", "ZZ_ROOT_ZZ start")
    b.assistant("a1", [text("first reply")])
    b.user("oldu", "ZZ_OLD_BRANCH_ZZ", parent="a1")
    b.assistant("olda", [text("old branch reply")])
    b.user("newu", "ZZ_NEW_BRANCH_ZZ", parent="a1")
    b.assistant("newa", [text("new branch reply")])
    session = b.write(agent / "sessions" / "--work-branch--" / "2026-01-01T00-00-00-000Z_sess-branch.jsonl")
    errors: list[str] = []
    with LiveSite(_config(tmp_path, agent), port=0, paths=[agent / "sessions"]) as live:
        first = live.start()
        assert live.watching.wait(5)
        url = live.url + _page_of(first, session.stem)
        page = _open(browser, url + "#entry-olda", errors)
        assert page.locator("#entry-oldu").is_visible() and not page.locator("#entry-newu").is_visible()
        # The page script keeps data-leaf on the shown branch; here the address no longer says which it is.
        page.evaluate("history.replaceState(null, '', location.pathname); document.body.dataset.leaf = 'olda'")

        _append(session, "zznewer", "newa", "ZZ_ON_THE_NEW_BRANCH_ZZ")
        _until(page, "window.ZZ_NOT_RELOADED !== true", 5)
        page.wait_for_selector("#entry-zznewer", state="attached", timeout=2000)
        _until(page, "location.hash === '#entry-olda'", 2)
        assert page.locator("#entry-oldu").is_visible()
        assert not page.locator("#entry-zznewer").is_visible()
        page.context.close()
    assert errors == []


def test_only_pages_that_changed_reload(browser: Browser, tmp_path: Path, agent: Path) -> None:
    alpha = make_session(agent, "/work/alpha", "sess-alpha", "alpha")
    beta = make_session(agent, "/work/beta", "sess-beta", "beta")
    errors: list[str] = []
    with LiveSite(_config(tmp_path, agent), port=0, paths=[agent / "sessions"]) as live:
        first = live.start()
        assert live.watching.wait(5)
        alpha_page = _open(browser, live.url + _page_of(first, alpha.stem), errors)
        beta_page = _open(browser, live.url + _page_of(first, beta.stem), errors)
        home = _open(browser, live.url, errors)

        _append(beta, "zzbeta", "r1", "ZZ_BETA_MORE_ZZ")
        _wait_for_entry(beta_page, "zzbeta", "ZZ_BETA_MORE_ZZ", 5000)
        _until(home, "window.ZZ_NOT_RELOADED !== true", 5)  # its list changed
        assert not _reloaded(alpha_page)
        for page in (alpha_page, beta_page, home):
            page.context.close()
    assert errors == []


def test_failed_rebuild_shows_why_and_keeps_the_page(browser: Browser, tmp_path: Path, agent: Path) -> None:
    session = make_session(agent, "/work/alpha", "sess-alpha", "alpha")
    broken = threading.Event()

    def flaky(config: BuildConfig, progress: ProgressCallback | None) -> BuildResult:
        if broken.is_set():
            raise SitegenError("ZZ_BUILD_BROKEN_ZZ <b>not markup</b>")
        return build_site(config, progress)

    errors: list[str] = []
    with LiveSite(_config(tmp_path, agent), port=0, build=flaky, paths=[agent / "sessions"]) as live:
        first = live.start()
        assert live.watching.wait(5)
        page = _open(browser, live.url + _page_of(first, session.stem), errors)

        broken.set()
        _append(session, "zzfirst", "r1", "ZZ_FIRST_MORE_ZZ")
        banner = page.wait_for_selector("#sitegen-rebuild-failed", timeout=5000)
        assert banner is not None
        assert "ZZ_BUILD_BROKEN_ZZ <b>not markup</b>" in banner.inner_text()
        assert not _reloaded(page)

        broken.clear()
        _append(session, "zzsecond", "zzfirst", "ZZ_SECOND_MORE_ZZ")
        _wait_for_entry(page, "zzsecond", "ZZ_SECOND_MORE_ZZ", 5000)
        assert page.locator("#entry-zzfirst").is_visible()
        assert page.locator("#sitegen-rebuild-failed").count() == 0
        page.context.close()
    assert errors == []


def test_page_reconnects_and_reloads_after_a_restart(browser: Browser, tmp_path: Path, agent: Path) -> None:
    session = make_session(agent, "/work/alpha", "sess-alpha", "alpha")
    config = _config(tmp_path, agent)
    errors: list[str] = []
    with LiveSite(config, port=0, paths=[agent / "sessions"]) as live:
        first = live.start()
        port = int(live.url.rsplit(":", 1)[1].strip("/"))
        page = _open(browser, live.url + _page_of(first, session.stem), errors)
    # The page keeps trying while the server is down, and reloads from the new one.
    with LiveSite(config, port=port, paths=[agent / "sessions"]) as again:
        again.start()
        _until(page, "window.ZZ_NOT_RELOADED !== true", 10)
        page.wait_for_selector("#entry-r1", timeout=2000)
        page.context.close()


def test_built_files_stay_clean(tmp_path: Path, agent: Path) -> None:
    make_session(agent, "/work/alpha", "sess-alpha", "alpha")
    with LiveSite(_config(tmp_path, agent), port=0, paths=[agent / "sessions"]) as live:
        live.start()
    pages: list[Any] = list((tmp_path / "site").rglob("*.html"))
    assert pages and not [p for p in pages if b"__sitegen__" in p.read_bytes()]
