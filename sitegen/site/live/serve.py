"""Serve the built site for `sitegen watch`: files as built, plus the reload script and its event stream."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import mimetypes
import re
import secrets
import socket
import threading
from collections import deque
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

from sitegen.errors import SitegenError
from sitegen.fileio import open_regular
from sitegen.resources import resource_dir
from sitegen.site.live.serve_guard import FETCH_HEADERS, GUARD_HEADERS, allowed_host, cross_origin_refusal

__all__ = [
    "EVENTS_URL",
    "RELOAD_URL",
    "Response",
    "ServeError",
    "SiteApp",
    "SiteServer",
    "SiteVersion",
    "make_server",
]

log = logging.getLogger("sitegen.serve")

RELOAD_URL = "/__sitegen__/reload.js"
_REPEATED_SLASHES = re.compile("//+")
EVENTS_URL = "/__sitegen__/events"
# How long a page request waits for a running build before serving what is on disk anyway.
WAIT_TIMEOUT_S = 30.0
# A comment line this often lets the stream notice a closed tab (the write fails).
KEEPALIVE_S = 15.0
# EventSource waits this long before reconnecting after the server went away.
RETRY_MS = 1000
# Changes remembered for clients that reconnect; older clients simply reload.
HISTORY = 64
# A change writing more files than this is sent as "everything" (every open page reloads).
MAX_LISTED = 2000
# Connections the kernel queues before the server accepts them: a page of many parallel requests
# (or several tabs reloading at once) must not see refused connections.
BACKLOG = 512
# A client that sends nothing (or half a request) for this long is dropped, so threads stay bounded.
REQUEST_TIMEOUT_S = 10.0

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".log": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}
_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)


class ServeError(SitegenError):
    """The server cannot start (e.g. the port is taken)."""


def content_type(path: Path) -> str:
    """A fixed table for what the site contains (the system's mimetypes vary), then mimetypes."""
    suffix = path.suffix.lower()
    if suffix in _TYPES:
        return _TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


class SiteVersion:
    """The *wanted* and *visible* versions of the site (as in MkDocs' live server).

    A build bumps `wanted` when it starts; page requests wait until every started build has settled,
    so a half-built site is never served. A build that changed files bumps `visible`, which tells
    open pages to reload; a failed build settles without it, so the last good site stays visible.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        # Tokens from another server run never match, so pages reconnecting after a restart reload.
        self.instance = secrets.token_hex(4)
        self._wanted = 0
        self._settled = 0
        self._visible = 0
        self._history: deque[tuple[int, frozenset[str] | None]] = deque(maxlen=HISTORY)
        self._failure: str | None = None
        self._status = 0  # bumped whenever the failure message changes
        self._closed = False
        # A build shown as it goes (the first one in `sitegen watch`): its progress in words.
        self._building: str | None = None

    @property
    def token(self) -> str:
        with self._cond:
            return self._token()

    def _token(self) -> str:
        return f"{self.instance}-{self._visible}"

    @property
    def failure(self) -> str | None:
        with self._cond:
            return self._failure

    @property
    def closed(self) -> bool:
        with self._cond:
            return self._closed

    def begin(self) -> int:
        """A build starts (or is about to): hold page requests until it settles; returns its ticket."""
        with self._cond:
            self._wanted += 1
            return self._wanted

    @property
    def building(self) -> str | None:
        with self._cond:
            return self._building

    def _show(self, written: Sequence[str] | None) -> None:
        if written is None or written:
            self._visible += 1
            listed = None if written is None or len(written) > MAX_LISTED else frozenset(written)
            self._history.append((self._visible, listed))

    def publish(self, written: Sequence[str] | None, building: str | None) -> None:
        """Files that a build shown as it goes (one that holds no request) has just written, and its
        progress in words (None once it is done): open pages that show them reload."""
        with self._cond:
            self._show(written)
            self._building = building
            self._cond.notify_all()

    def succeeded(self, ticket: int, written: Sequence[str] | None) -> None:
        """The build `ticket` finished; `written` is what it wrote (None: possibly everything)."""
        with self._cond:
            self._settled = max(self._settled, ticket)
            self._show(written)
            if self._failure is not None:
                self._failure = None
                self._status += 1
            self._cond.notify_all()

    def failed(self, ticket: int, message: str) -> None:
        """The build `ticket` failed: stop holding requests, keep the visible site, show why."""
        with self._cond:
            self._settled = max(self._settled, ticket)
            self._failure = message
            self._status += 1
            self._cond.notify_all()

    def close(self) -> None:
        """Release every waiting request and end every event stream."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def wait_settled(self, timeout: float) -> bool:
        """Wait until no build is running; False if it timed out."""
        with self._cond:
            return self._cond.wait_for(lambda: self._closed or self._settled >= self._wanted, timeout)

    def changes_since(self, token: str) -> tuple[str, list[str] | None] | None:
        """(current token, files written since `token`, None meaning unknown/everything), or None if current."""
        with self._cond:
            return self._changes_since(token)

    def _changes_since(self, token: str) -> tuple[str, list[str] | None] | None:
        current = self._token()
        if token == current:
            return None
        instance, _, number = token.rpartition("-")
        if instance != self.instance or not number.isdigit():
            return current, None
        since = int(number)
        entries = [(n, files) for n, files in self._history if n > since]
        # A gap means the history no longer reaches back to the client's version.
        if not entries or entries[0][0] != since + 1 or any(files is None for _, files in entries):
            return current, None
        union: set[str] = set()
        for _, files in entries:
            union.update(files or ())
        return current, sorted(union)

    def wait_news(self, token: str, status: int, timeout: float) -> tuple[str, list[str] | None] | None:
        """Wait until the visible version differs from `token`, the failure status changes, or close."""
        with self._cond:
            self._cond.wait_for(
                lambda: self._closed or self._status != status or self._token() != token,
                timeout,
            )
            return self._changes_since(token)

    def status(self) -> tuple[int, str | None]:
        with self._cond:
            return self._status, self._failure


@dataclass(slots=True)
class Response:
    """What the server sends: a status, headers, then a body or a stream of chunks."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    stream: Generator[bytes, None, None] | None = None


def _split_target(target: str) -> SplitResult:
    """The request target's path and query; urlsplit alone would read "//name/x" as a host name."""
    if target.startswith(("http://", "https://")):
        return urlsplit(target)
    path, _, query = target.split("#", 1)[0].partition("?")
    return SplitResult("", "", path, query, "")


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


class SiteApp:
    """The server's behaviour without a socket: `handle(method, target)` returns a Response."""

    def __init__(
        self,
        root: Path,
        version: SiteVersion | None = None,
        *,
        wait_timeout: float = WAIT_TIMEOUT_S,
        keepalive: float = KEEPALIVE_S,
    ) -> None:
        self.root = root.resolve()
        self.version = version if version is not None else SiteVersion()
        self.wait_timeout = wait_timeout
        self.keepalive = keepalive

    def handle(self, method: str, target: str) -> Response:
        if method not in ("GET", "HEAD"):
            return self._plain(HTTPStatus.METHOD_NOT_ALLOWED, "Only GET and HEAD are served.", Allow="GET, HEAD")
        parts = _split_target(target)
        # Pages name the script by a relative URL, which "//" in a page's address can leave doubled.
        own_path = _REPEATED_SLASHES.sub("/", parts.path)
        if own_path == RELOAD_URL:
            return self._reload_script()
        if own_path == EVENTS_URL:
            since = parse_qs(parts.query).get("since", [""])[0]
            return self._events(since)
        if not self.version.wait_settled(self.wait_timeout):
            log.warning("a build is still running after %.0fs; serving %s as it is", self.wait_timeout, parts.path)
        # Read the token before the file: a page is then never newer than the version it reports.
        token = self.version.token
        found = self._locate(parts.path)
        if found is None and parts.path == "/favicon.ico":
            # Browsers ask for it on their own; an empty answer keeps their consoles free of 404s.
            return Response(HTTPStatus.NO_CONTENT, self._headers())
        if found is None:
            return self._not_found(parts.path, token)
        if found.is_dir():
            if not parts.path.endswith("/"):
                query = f"?{parts.query}" if parts.query else ""
                # One leading slash: "//name/" would send the browser to another host.
                trimmed = parts.path.strip("/")
                location = (f"/{trimmed}/" if trimmed else "/") + query
                return Response(HTTPStatus.MOVED_PERMANENTLY, self._headers(Location=location))
            found = found / "index.html"
        try:
            # Not a pipe or a device someone put in the folder: a server thread would wait on it.
            with open_regular(found) as handle:
                data = handle.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return self._not_found(parts.path, token)
        except OSError as error:
            log.warning("cannot read %s: %s", found, error)
            return self._plain(HTTPStatus.FORBIDDEN, "This file cannot be read.")
        kind = content_type(found)
        if kind.startswith("text/html"):
            data = inject(data, token, parts.path)
        return Response(HTTPStatus.OK, self._headers(**{"Content-Type": kind}), data)

    def _locate(self, url_path: str) -> Path | None:
        """The file or folder a URL path names inside the site, or None (hidden, outside or missing)."""
        try:
            decoded = unquote(url_path, errors="strict")
        except UnicodeDecodeError:
            return None
        if "\x00" in decoded or "\\" in decoded:
            return None
        segments = [s for s in decoded.split("/") if s]
        # Dot names cover "..", the manifest folder and the build's temporary files.
        if any(s.startswith(".") for s in segments):
            return None
        candidate = self.root.joinpath(*segments)
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        # A symlink inside the site must not lead out of it.
        if resolved != self.root and self.root not in resolved.parents:
            return None
        return resolved

    def _headers(self, **extra: str) -> dict[str, str]:
        headers = {"Cache-Control": "no-cache", **GUARD_HEADERS}
        headers.update(extra)
        return headers

    def _plain(self, status: HTTPStatus, message: str, **extra: str) -> Response:
        headers = self._headers(**{"Content-Type": "text/plain; charset=utf-8", **extra})
        return Response(status, headers, message.encode() + b"\n")

    def _not_found(self, url_path: str, token: str) -> Response:
        # An HTML 404 carries the reload script too: the page appears once a build creates it.
        building = self.version.building
        page = not_found_page(url_path) if building is None else pending_page(url_path, building)
        headers = self._headers(**{"Content-Type": "text/html; charset=utf-8"})
        return Response(HTTPStatus.NOT_FOUND, headers, inject(page, token, url_path))

    def _reload_script(self) -> Response:
        data = (resource_dir("static") / "reload.js").read_bytes()
        return Response(HTTPStatus.OK, self._headers(**{"Content-Type": "text/javascript; charset=utf-8"}), data)

    def _events(self, since: str) -> Response:
        headers = self._headers(**{"Content-Type": "text/event-stream; charset=utf-8"})
        return Response(HTTPStatus.OK, headers, stream=self._event_stream(since))

    def _event_stream(self, since: str) -> Generator[bytes, None, None]:
        """Server-sent events: `reload` when the visible site changes, `failure` when a rebuild fails or recovers."""
        version = self.version
        token = since or version.token
        status, failure = version.status()
        yield f"retry: {RETRY_MS}\n\n".encode()
        if failure is not None:
            yield _event("failure", {"message": failure})
        news = version.changes_since(token)
        while not version.closed:
            if news is not None:
                token, written = news
                yield _event("reload", {"version": token, "written": written})
            current, failure = version.status()
            if current != status:
                status = current
                yield _event("failure", {"message": failure})
            elif news is None:
                yield b": keepalive\n\n"
            news = version.wait_news(token, status, self.keepalive)


# The served stand-ins for a page that is not there: readable on a phone and in the dark, with a way home.
_STANDIN_STYLE = (
    ":root{color-scheme:light dark}body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;"
    "padding:0 1rem}code{overflow-wrap:anywhere}"
)


def _standin_page(url_path: str, title: str, message: str) -> bytes:
    home = "../" * max(0, url_path.count("/") - 1) + "index.html"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title} · sitegen</title><style>{_STANDIN_STYLE}</style></head>"
        f'<body><h1>{title}</h1><p>{message}</p><p><a href="{escape(home)}">Home page</a></p></body></html>\n'
    ).encode()


def not_found_page(url_path: str) -> bytes:
    return _standin_page(url_path, "Not found", f"Nothing is built at <code>{escape(url_path)}</code> yet.")


def pending_page(url_path: str, building: str) -> bytes:
    """What a page not written yet says while the first build runs: it comes when it is written."""
    return _standin_page(
        url_path,
        "Being built",
        f"sitegen is building the site ({escape(building)}, newest first). "
        f"<code>{escape(url_path)}</code> is not written yet: this page shows it as soon as it is. "
        "The home page lists the sessions written so far.",
    )


def inject(html: bytes, token: str, url_path: str = "/") -> bytes:
    """The page served at url_path with the reload script before its last </body> (or at the end when
    there is none), named relative to the page so the site works under any path prefix or proxy."""
    up = "../" * max(0, url_path.count("/") - 1)
    tag = f'<script src="{escape(up)}{RELOAD_URL[1:]}" data-version="{escape(token)}"></script>'.encode()
    # Look near the end first: pages are long and </body> is in their last lines.
    matches = list(_BODY_END.finditer(html, max(0, len(html) - 4096))) or list(_BODY_END.finditer(html))
    if not matches:
        return html + tag
    last = matches[-1]
    return html[: last.start()] + tag + html[last.start() :]


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer that can close its open connections, so shutdown never waits on a client."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], app: SiteApp, request_timeout: float = REQUEST_TIMEOUT_S) -> None:
        self.app = app
        self.request_timeout = request_timeout
        self.bound_host = address[0]
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        if isinstance(request, socket.socket):
            with self._open_lock:
                self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        if isinstance(request, socket.socket):
            with self._open_lock:
                self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        # The base class prints a traceback to stderr; the core logs instead.
        log.exception("request from %s failed", client_address)

    def close_connections(self) -> None:
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "sitegen"
    # One request per connection: no idle keep-alive sockets to wait for at shutdown.
    protocol_version = "HTTP/1.0"
    _guarded = False

    def setup(self) -> None:
        super().setup()
        # The socket's timeout: a silent or half-sent request ends instead of holding its thread.
        self.connection.settimeout(self.server.request_timeout)

    def send_header(self, keyword: str, value: str) -> None:
        self._guarded = self._guarded or keyword in GUARD_HEADERS
        super().send_header(keyword, value)

    def end_headers(self) -> None:
        # Every response carries them, the server's own errors (send_error) included.
        if not self._guarded:
            for name, value in GUARD_HEADERS.items():
                super().send_header(name, value)
        self._guarded = False
        super().end_headers()

    def do_GET(self) -> None:
        self._respond(head=False)

    def do_HEAD(self) -> None:
        self._respond(head=True)

    def _respond(self, *, head: bool) -> None:
        if not allowed_host(self.headers.get("Host"), self.server.bound_host, self.server.server_address[1]):
            # DNS rebinding: a web page must not reach the sessions under a host name of its own.
            self.send_error(HTTPStatus.FORBIDDEN, "Unknown host name")
            return
        asked = {name: value for name in FETCH_HEADERS if (value := self.headers.get(name)) is not None}
        refusal = cross_origin_refusal(asked, self.headers.get("Host", ""), self.path)
        if refusal is not None:
            # Another origin's page may link to the site, never read it: see serve_guard.
            log.info("refused %s: %s", self.path, refusal)
            self.send_error(HTTPStatus.FORBIDDEN, "Cross-origin request refused")
            return
        try:
            response = self.server.app.handle(self.command, self.path)
        except Exception:
            log.exception("serving %s failed", self.path)
            response = Response(HTTPStatus.INTERNAL_SERVER_ERROR, {"Content-Type": "text/plain; charset=utf-8"})
            response.body = b"sitegen could not serve this file; see the watch output.\n"
        try:
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            if response.stream is None:
                self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if head:
                return
            if response.stream is None:
                self.wfile.write(response.body)
                return
            for chunk in response.stream:
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the tab went away
        finally:
            if response.stream is not None:
                response.stream.close()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)


class SiteServer:
    """The HTTP server in its own thread; `close()` ends streams, stops it and joins its threads."""

    def __init__(
        self, app: SiteApp, host: str = "127.0.0.1", port: int = 8000, *, request_timeout: float = REQUEST_TIMEOUT_S
    ) -> None:
        self.app = app
        try:
            self._httpd = _Server((host, port), app, request_timeout)
        except OSError as error:
            advice = "choose another --port" if error.errno in (errno.EADDRINUSE, errno.EACCES) else "check --host"
            raise ServeError(f"Cannot serve on {host}:{port}: {error.strerror or error}; {advice}") from None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        shown = host if isinstance(host, str) else host.decode()
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{port}/"

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name="sitegen-server", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.app.version.close()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.close_connections()
        self._httpd.server_close()  # joins the request threads

    def __enter__(self) -> SiteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_server(
    root: Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    version: SiteVersion | None = None,
    wait_timeout: float = WAIT_TIMEOUT_S,
    request_timeout: float = REQUEST_TIMEOUT_S,
) -> SiteServer:
    """A server for the site in `root`, bound but not started (port 0 picks a free port)."""
    app = SiteApp(root, version, wait_timeout=wait_timeout)
    return SiteServer(app, host, port, request_timeout=request_timeout)
