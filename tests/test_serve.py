"""The live server: files and content types, no-cache, the injected reload script, traversal, waiting, events."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Generator
from pathlib import Path
from typing import BinaryIO

import pytest

from sitegen.site.live.serve import EVENTS_URL, RELOAD_URL, SiteApp, SiteVersion, inject, make_server

PAGE = b"<!doctype html><html><head><title>t</title></head><body><p>ZZ_PAGE_ZZ</p></body></html>\n"
TAG = b'__sitegen__/reload.js" data-version='


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "sessions" / "proj").mkdir(parents=True)
    (root / "assets").mkdir()
    (root / ".sitegen").mkdir()
    (root / "index.html").write_bytes(PAGE)
    (root / "sessions" / "proj" / "one.html").write_bytes(PAGE.replace(b"ZZ_PAGE_ZZ", b"ZZ_ONE_ZZ"))
    (root / "assets" / "site.abc.css").write_bytes(b"body { color: red } /* </body> */\n")
    (root / "assets" / "site.abc.js").write_bytes(b"var x = '</body>';\n")
    (root / "assets" / "chart.svg").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'></svg>")
    (root / "assets" / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "assets" / "data.json").write_bytes(b"{}")
    (root / "assets" / "blob").write_bytes(b"\x00\x01")
    (root / ".sitegen" / "manifest.json").write_bytes(b'{"ZZ_MANIFEST_ZZ": 1}')
    (tmp_path / "secret.txt").write_bytes(b"ZZ_SECRET_ZZ")
    return root


@pytest.fixture
def app(site: Path) -> SiteApp:
    return SiteApp(site, wait_timeout=5.0, keepalive=0.05)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("/index.html", "text/html; charset=utf-8"),
        ("/assets/site.abc.css", "text/css; charset=utf-8"),
        ("/assets/site.abc.js", "text/javascript; charset=utf-8"),
        ("/assets/chart.svg", "image/svg+xml"),
        ("/assets/shot.png", "image/png"),
        ("/assets/data.json", "application/json"),
        ("/assets/blob", "application/octet-stream"),
    ],
)
def test_content_types_and_no_cache(app: SiteApp, url: str, kind: str) -> None:
    response = app.handle("GET", url)
    assert response.status == 200
    assert response.headers["Content-Type"] == kind
    assert response.headers["Cache-Control"] == "no-cache"


def test_script_injected_into_html_only(app: SiteApp, site: Path) -> None:
    page = app.handle("GET", "/sessions/proj/one.html").body
    assert page.count(TAG) == 1
    assert page.index(TAG) < page.index(b"</body>") and page.index(b"ZZ_ONE_ZZ") < page.index(TAG)
    # The files on disk stay as built.
    assert TAG not in (site / "sessions" / "proj" / "one.html").read_bytes()
    for url in ("/assets/site.abc.css", "/assets/site.abc.js", "/assets/chart.svg"):
        assert TAG not in app.handle("GET", url).body


def test_injection_goes_before_the_last_body_end() -> None:
    html = b"<body><pre>&lt;/body&gt; </body> in text</pre></BODY >\n"
    out = inject(html, "v-1")
    assert out.endswith(b'<script src="__sitegen__/reload.js" data-version="v-1"></script></BODY >\n')
    assert inject(b"<p>no end", "v-1").endswith(b"</script>")
    long = b"<body>" + b"x" * 10_000 + b"</body>" + b"y" * 10_000
    assert inject(long, "v-1").index(b"<script") == 6 + 10_000


def test_script_is_named_relative_to_the_page(app: SiteApp) -> None:
    # Relative, so the site also works mounted under a path prefix behind a proxy.
    for url, src in (
        ("/", b'src="__sitegen__/reload.js"'),
        ("/index.html", b'src="__sitegen__/reload.js"'),
        ("/sessions/proj/one.html", b'src="../../__sitegen__/reload.js"'),
        ("/sessions/proj/missing.html", b'src="../../__sitegen__/reload.js"'),
    ):
        assert src in app.handle("GET", url).body, url
    assert app.handle("GET", "//__sitegen__/reload.js").status == 200
    assert app.handle("GET", "/sessions//__sitegen__/reload.js").status == 404


def test_root_and_folders(app: SiteApp) -> None:
    assert b"ZZ_PAGE_ZZ" in app.handle("GET", "/").body
    moved = app.handle("GET", "/sessions?x=1")
    assert moved.status == 301 and moved.headers["Location"] == "/sessions/?x=1"
    assert app.handle("GET", "//sessions").headers["Location"] == "/sessions/"  # never to another host
    assert app.handle("GET", "http://localhost:8000/sessions").headers["Location"] == "/sessions/"
    assert app.handle("GET", "http://localhost:8000").headers["Location"] == "/"
    # A folder without index.html is not listed.
    assert app.handle("GET", "/sessions/").status == 404


def test_query_and_escapes(app: SiteApp) -> None:
    assert b"ZZ_ONE_ZZ" in app.handle("GET", "/sessions/proj/one.html?v=2#x").body
    assert b"ZZ_ONE_ZZ" in app.handle("GET", "/sessions/proj/%6Fne.html").body


@pytest.mark.parametrize(
    "url",
    [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/sessions/..%2f..%2f..%2fsecret.txt",
        "/sessions/proj/../../../secret.txt",
        "/assets/..%5c..%5csecret.txt",
        "//../secret.txt",
        "/index.html%00.png",
        "/.sitegen/manifest.json",
        "/%2esitegen/manifest.json",
        "/link-out/secret.txt",
        "/secret-link",
        "/%ff",
    ],
)
def test_nothing_outside_the_site_or_hidden(app: SiteApp, site: Path, url: str) -> None:
    (site / "link-out").symlink_to(site.parent, target_is_directory=True)
    (site / "secret-link").symlink_to(site.parent / "secret.txt")
    response = app.handle("GET", url)
    assert response.status == 404
    assert b"ZZ_SECRET_ZZ" not in response.body and b"ZZ_MANIFEST_ZZ" not in response.body


def test_not_found_is_escaped_html_with_the_script(app: SiteApp) -> None:
    response = app.handle("GET", "/nope/<script>alert(1)</script>.html")
    assert response.status == 404
    assert response.headers["Cache-Control"] == "no-cache"
    assert b"<script>alert" not in response.body and b"&lt;script&gt;" in response.body
    # A page that does not exist yet reloads by itself once a build writes it.
    assert TAG in response.body


def test_missing_favicon_is_no_content(app: SiteApp, site: Path) -> None:
    assert app.handle("GET", "/favicon.ico").status == 204
    (site / "favicon.ico").write_bytes(b"ZZ_ICON_ZZ")
    response = app.handle("GET", "/favicon.ico")
    assert response.status == 200 and response.headers["Content-Type"] == "image/x-icon"


def test_methods(app: SiteApp) -> None:
    assert app.handle("POST", "/index.html").status == 405
    assert app.handle("HEAD", "/index.html").status == 200


def test_reload_script_served(app: SiteApp) -> None:
    response = app.handle("GET", RELOAD_URL)
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/javascript")
    assert response.headers["Cache-Control"] == "no-cache"
    assert b"EventSource" in response.body


def _in_thread(app: SiteApp, url: str) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []
    thread = threading.Thread(target=lambda: got.append(app.handle("GET", url).body))
    thread.start()
    return thread, got


def test_page_requests_wait_while_a_build_runs(app: SiteApp, site: Path) -> None:
    ticket = app.version.begin()
    (site / "index.html").write_bytes(PAGE.replace(b"ZZ_PAGE_ZZ", b"ZZ_HALF_BUILT_ZZ"))
    thread, got = _in_thread(app, "/index.html")
    thread.join(0.3)
    assert thread.is_alive() and not got
    # The reload script and the events are never held.
    assert app.handle("GET", RELOAD_URL).status == 200
    (site / "index.html").write_bytes(PAGE.replace(b"ZZ_PAGE_ZZ", b"ZZ_FINISHED_ZZ"))
    app.version.succeeded(ticket, ["index.html"])
    thread.join(2)
    assert got and b"ZZ_FINISHED_ZZ" in got[0]
    assert f'data-version="{app.version.token}"'.encode() in got[0]


def test_waiting_has_a_timeout(site: Path) -> None:
    app = SiteApp(site, wait_timeout=0.05)
    app.version.begin()
    assert b"ZZ_PAGE_ZZ" in app.handle("GET", "/index.html").body


def test_failed_rebuild_keeps_the_last_good_site(app: SiteApp) -> None:
    first = app.version.begin()
    app.version.succeeded(first, ["index.html"])
    token = app.version.token
    second = app.version.begin()
    app.version.failed(second, "ZZ_BROKEN_ZZ")
    response = app.handle("GET", "/index.html")  # served at once, not held
    assert b"ZZ_PAGE_ZZ" in response.body
    assert app.version.token == token and app.version.failure == "ZZ_BROKEN_ZZ"
    third = app.version.begin()
    app.version.succeeded(third, [])
    assert app.version.failure is None and app.version.token == token


def test_versions_and_history() -> None:
    version = SiteVersion()
    start = version.token
    assert version.changes_since(start) is None
    for written in (["a.html"], ["b.html", "a.html"]):
        version.succeeded(version.begin(), written)
    assert version.changes_since(start) == (version.token, ["a.html", "b.html"])
    # No change, no new version.
    before = version.token
    version.succeeded(version.begin(), [])
    assert version.token == before
    # Another server run, or a change too big to list: the page cannot tell, so it reloads.
    assert version.changes_since("feedbeef-3") == (version.token, None)
    assert version.changes_since("garbage") == (version.token, None)
    version.succeeded(version.begin(), None)
    assert version.changes_since(before) == (version.token, None)


def _chunks(stream: Generator[bytes, None, None], count: int) -> list[str]:
    return [next(stream).decode() for _ in range(count)]


def _next_event(stream: Generator[bytes, None, None]) -> tuple[str, object]:
    """The next event's name and data, skipping keepalive comments."""
    for chunk in stream:
        text = chunk.decode()
        if text.startswith("event: "):
            name, data = text.split("\n")[:2]
            return name.removeprefix("event: "), json.loads(data.removeprefix("data: "))
    raise AssertionError("the stream ended")


def test_event_stream(app: SiteApp) -> None:
    token = app.version.token
    response = app.handle("GET", f"{EVENTS_URL}?since={token}")
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert response.headers["Cache-Control"] == "no-cache"
    stream = response.stream
    assert stream is not None
    assert _chunks(stream, 2) == ["retry: 1000\n\n", ": keepalive\n\n"]

    def later() -> None:
        time.sleep(0.1)
        app.version.succeeded(app.version.begin(), ["sessions/proj/one.html"])

    threading.Thread(target=later).start()
    assert _next_event(stream) == ("reload", {"version": app.version.token, "written": ["sessions/proj/one.html"]})
    app.version.failed(app.version.begin(), "ZZ_WHY_ZZ")
    assert _next_event(stream) == ("failure", {"message": "ZZ_WHY_ZZ"})
    app.version.succeeded(app.version.begin(), [])
    assert _next_event(stream) == ("failure", {"message": None})
    app.version.close()
    assert all(chunk.startswith(b":") for chunk in stream)


def test_event_stream_catches_up(app: SiteApp) -> None:
    old = app.version.token
    app.version.succeeded(app.version.begin(), ["index.html"])
    app.version.failed(app.version.begin(), "ZZ_STILL_BROKEN_ZZ")
    stream = app.handle("GET", f"{EVENTS_URL}?since={old}").stream
    assert stream is not None
    retry, failure, reload = _chunks(stream, 3)
    assert retry.startswith("retry: ")
    assert "ZZ_STILL_BROKEN_ZZ" in failure
    assert json.loads(reload.split("data: ", 1)[1])["written"] == ["index.html"]
    stream.close()


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_end_to_end_on_port_0(site: Path) -> None:
    version = SiteVersion()
    server = make_server(site, port=0, version=version)
    assert server.url.startswith("http://127.0.0.1:") and not server.url.endswith(":0/")
    server.start()
    try:
        status, headers, body = _get(server.url + "sessions/proj/one.html")
        assert status == 200 and headers["Cache-Control"] == "no-cache"
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert int(headers["Content-Length"]) == len(body) and TAG in body
        assert _get(server.url + "..%2fsecret.txt")[0] == 404
        assert _get(server.url + "__sitegen__/reload.js")[0] == 200

        # An open event stream gets the reload, and does not keep the server from closing.
        token = version.token
        events = urllib.request.urlopen(f"{server.url}__sitegen__/events?since={token}", timeout=5)
        assert events.readline() == b"retry: 1000\n"
        version.succeeded(version.begin(), ["sessions/proj/one.html"])
        lines = [events.readline() for _ in range(4)]
        assert b"event: reload\n" in lines
    finally:
        started = time.perf_counter()
        server.close()
    assert time.perf_counter() - started < 2
    assert not [t for t in threading.enumerate() if t.name == "sitegen-server"]
    events.close()


def test_port_in_use_is_a_sitegen_error(site: Path) -> None:
    from sitegen.site.live.serve import ServeError

    first = make_server(site, port=0)
    port = int(first.url.rsplit(":", 1)[1].strip("/"))
    try:
        with pytest.raises(ServeError, match="choose another --port"):
            make_server(site, port=port)
    finally:
        first.close()


def test_unreadable_file_is_refused(app: SiteApp, site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.site.live import serve

    open_regular = serve.open_regular

    def refuse(path: Path) -> BinaryIO:
        if Path(path).name == "index.html":
            raise PermissionError(13, "Permission denied")
        return open_regular(path)

    # Through a patch: the tests may run as root, who reads every file.
    monkeypatch.setattr(serve, "open_regular", refuse)
    assert app.handle("GET", "/index.html").status == 403
