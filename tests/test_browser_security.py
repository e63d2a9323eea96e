"""A page on another loopback origin includes the watch server's data files as scripts: it reads nothing."""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import assert_clean, open_page
from sessions import SessionBuilder, text
from site_helpers import build, make_session

from sitegen.render.export import export_html, load_transcript
from sitegen.site.live.serve import make_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

SECRET = "ZZ_XSSI_SECRET_ZZ"
# What the site's data files call when they run: the attacker defines them to catch the data.
ATTACK = """<!doctype html><html><body><script>
window.stolen = []; window.loaded = 0; window.failed = 0;
const catcher = {add: (name, data) => window.stolen.push(JSON.stringify(data))};
const steal = (...args) => window.stolen.push(JSON.stringify(args));
window.sitegen = {search: catcher, prompts: catcher, keys: catcher, related: steal, sessionIndex: steal,
  artifact: steal, searchSpec: null};
</script>
%s
</body></html>
"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _static_server(host: str, folder: Path) -> Iterator[str]:
    """A plain second origin on loopback serving the attacker's page."""
    handler = functools.partial(_Quiet, directory=str(folder))
    httpd = ThreadingHTTPServer((host, 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _attack_page(site: Path, base: str) -> str:
    """Script tags for every data file of the site, each counting whether it ran."""
    files = sorted(p.relative_to(site).as_posix() for p in site.glob("*/**/*.js") if p.parts[-2] != "assets")
    assert any(f.startswith("search/") for f in files) and any(f.startswith("prompts/") for f in files)
    tags = "\n".join(
        f'<script src="{base}{name}" onload="window.loaded++" onerror="window.failed++"></script>' for name in files
    )
    return ATTACK % tags


def _read(browser: Browser, url: str) -> tuple[list[str], int, int]:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_load_state("load")
        stolen, loaded, failed = page.evaluate("[window.stolen, window.loaded, window.failed]")
        return stolen, loaded, failed
    finally:
        context.close()


def test_a_foreign_origin_reads_nothing_through_script_tags(browser: Browser, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    make_session(agent, f"/work/{SECRET}", "s1", f"{SECRET} words")
    site = tmp_path / "site"
    build(site, agent)
    server = make_server(site, host="127.0.0.1", port=0)
    server.start()
    try:
        page = _attack_page(site, server.url)
        count = page.count("<script src=")
        # The control: the same page on the server's own origin reads the data, so the tags are right.
        (site / "attack.html").write_text(page)
        stolen, loaded, failed = _read(browser, server.url + "attack.html")
        assert loaded == count and failed == 0 and any(SECRET in s for s in stolen)

        outside = tmp_path / "attacker"
        outside.mkdir()
        (outside / "attack.html").write_text(page)
        # 127.0.0.2 is another site to the browser; another port of 127.0.0.1 is the same site but
        # another origin: neither may run the files.
        for host in ("127.0.0.2", "127.0.0.1"):
            with _static_server(host, outside) as foreign:
                stolen, loaded, failed = _read(browser, foreign + "attack.html")
            assert stolen == [] and loaded == 0 and failed == count, host
    finally:
        server.close()


def test_an_unbroken_token_breaks_for_layout_and_copies_whole(browser: Browser, tmp_path: Path) -> None:
    token = "ZZTOKENZZ" + "".join(random.Random(9).choice("abcdef0123456789") for _ in range(200_000))
    b = SessionBuilder(session_id="token-1")
    b.user("u1", token)
    b.assistant("a1", [text(f"see {token} here")])
    page_path = tmp_path / "page.html"
    page_path.write_text(export_html(load_transcript(b.write(tmp_path / "token.jsonl"))))
    page, watch = open_page(browser, page_path, width=390)
    try:
        assert page.locator("#entry-u1 .long-word").count() == 1
        # What a reader copies is the token as written: nothing was added to break it.
        copied = page.evaluate(
            """() => { const p = document.querySelector('#entry-u1 .md p'); const range = document.createRange();
            range.selectNodeContents(p); const selection = getSelection(); selection.removeAllRanges();
            selection.addRange(range); return selection.toString(); }"""
        )
        assert copied == token
        assert page.evaluate("document.querySelector('#entry-a1 .md p').textContent") == f"see {token} here"
        # Broken into lines on a phone, not one line scrolling sideways.
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        assert page.evaluate("document.querySelector('#entry-u1 .long-word').getClientRects().length") > 100
        assert_clean(watch)
    finally:
        page.context.close()
