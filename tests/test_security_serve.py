"""The watch server against a hostile web and a busy machine: guard headers on every response,
cross-origin subresource requests refused, hundreds of parallel clients, half-sent requests dropped."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sitegen.site.live.serve import SiteServer, make_server
from sitegen.site.live.serve_guard import cross_origin_refusal

PAGE = b"<!doctype html><html><head><title>t</title></head><body><p>ZZ_PAGE_ZZ</p></body></html>\n"
DATA = b'window.sitegen.search.add("index",{"sessions":[["ZZ_TITLE_ZZ"]]});\n'


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "search").mkdir(parents=True)
    (root / "index.html").write_bytes(PAGE)
    (root / "search" / "index.js").write_bytes(DATA)
    return root


@pytest.fixture
def server(site: Path) -> Iterator[SiteServer]:
    served = make_server(site, port=0, request_timeout=0.5)
    served.start()
    try:
        yield served
    finally:
        served.close()


def _port(server: SiteServer) -> int:
    return int(server.url.rsplit(":", 1)[1].strip("/"))


def _get(
    server: SiteServer, path: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", _port(server), timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        reply = connection.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read()
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/", {}, 200),
        ("GET", "/search/index.js", {}, 200),
        ("GET", "/nothing-here.html", {}, 404),
        ("GET", "/search", {}, 301),
        ("POST", "/", {}, 501),  # no do_POST: the handler's own error
        ("GET", "/__sitegen__/reload.js", {}, 200),
        ("GET", "/", {"Host": "evil.example"}, 403),
        ("GET", "/search/index.js", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, 403),
    ],
)
def test_every_response_carries_the_guard_headers(
    server: SiteServer, method: str, path: str, headers: dict[str, str], status: int
) -> None:
    got, sent, _ = _get(server, path, headers, method)
    assert got == status
    assert sent["Cross-Origin-Resource-Policy"] == "same-origin"
    assert sent["X-Content-Type-Options"] == "nosniff"
    # Once each, never doubled by the handler's own errors.
    assert list(sent).count("Cross-Origin-Resource-Policy") == 1


def test_a_foreign_page_cannot_load_a_data_file(server: SiteServer) -> None:
    host = f"127.0.0.1:{_port(server)}"
    refused = [
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},
        # Another port of the same host is "same-site" to a browser, and still another origin.
        {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"},
        {"Referer": "http://127.0.0.2:9000/attack.html"},
        {"Referer": f"http://localhost:{_port(server)}/attack.html"},
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
    ]
    for headers in refused:
        status, _, body = _get(server, "/search/index.js", headers)
        assert status == 403 and b"ZZ_TITLE_ZZ" not in body, headers
    served = [
        {},
        {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"},
        {"Referer": f"http://{host}/index.html"},
        {"Origin": f"http://{host}"},
    ]
    for headers in served:
        status, _, body = _get(server, "/search/index.js", headers)
        assert status == 200 and b"ZZ_TITLE_ZZ" in body, headers


def test_a_foreign_page_may_still_link_to_the_site(server: SiteServer) -> None:
    navigations = [
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
        {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"},
        # No fetch metadata (an older browser): a page opened from a link says where it came from.
        {"Referer": "http://elsewhere.example/list.html"},
    ]
    for headers in navigations:
        status, _, body = _get(server, "/", headers)
        assert status == 200 and b"ZZ_PAGE_ZZ" in body, headers


def test_refusal_rules() -> None:
    host = "127.0.0.1:8765"
    assert cross_origin_refusal({}, host, "/search/d/ab.js") is None
    assert cross_origin_refusal({"Referer": "http://127.0.0.1:8765/a/b.html"}, host, "/x.js") is None
    assert cross_origin_refusal({"Referer": "http://127.0.0.1:8766/"}, host, "/x.js") is not None
    assert cross_origin_refusal({"Referer": "https://127.0.0.1:8765/"}, host, "/x.js") is not None
    assert cross_origin_refusal({"Referer": "not a url"}, host, "/x.js") is not None
    assert cross_origin_refusal({"Referer": "http://evil.example/"}, host, "/sessions/p/") is None
    assert cross_origin_refusal({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}, host, "/a.html") is not None


def test_two_hundred_parallel_clients_are_all_answered(server: SiteServer) -> None:
    """A backlog of 5 dropped some of these; every one must get its page."""
    port = _port(server)
    start = threading.Barrier(200, timeout=30)

    def one(_: int) -> int:
        connection = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            start.wait()
            connection.sendall(f"GET /search/index.js HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            reply = b""
            while chunk := connection.recv(65536):
                reply += chunk
            return 200 if reply.startswith(b"HTTP/1.0 200") and reply.endswith(DATA) else 0
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=200) as pool:
        answers = list(pool.map(one, range(200)))
    assert answers.count(200) == 200


def test_half_sent_requests_are_dropped_and_their_threads_end(server: SiteServer) -> None:
    port = _port(server)
    before = threading.active_count()
    held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(60)]
    try:
        for connection in held:
            connection.sendall(b"GET /index.html HTTP/1.0\r\nHost: 127.0.0.1")  # never finished
        # The server closes each one (the 0.5 s timeout of this server): recv sees the end.
        for connection in held:
            assert connection.recv(1024) == b""
    finally:
        for connection in held:
            connection.close()
    deadline = time.monotonic() + 30
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= before
    # The server still answers afterwards.
    assert _get(server, "/")[0] == 200
