"""Who may read what `sitegen watch` serves: only its own pages, never a script tag on a foreign page."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["FETCH_HEADERS", "GUARD_HEADERS", "allowed_host", "cross_origin_refusal"]

# Sent on every response: a foreign page's <script>, <img> or <link> gets nothing (CORP), and no
# browser runs a data file as anything but its declared type (nosniff).
GUARD_HEADERS = {"Cross-Origin-Resource-Policy": "same-origin", "X-Content-Type-Options": "nosniff"}

# The request headers the decision reads.
FETCH_HEADERS = ("Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest", "Origin", "Referer")
# What the browser itself reports about a request; absent in older browsers and in curl.
_OWN_SITE = ("same-origin", "none")


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a URL or Origin header, or None when it names no origin ("null")."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    return scheme, parts.hostname.lower(), port if port is not None else (443 if scheme == "https" else 80)


def _is_page(url_path: str) -> bool:
    """A URL a reader opens in the address bar: a folder or an HTML page (never a data file)."""
    last = url_path.split("?", 1)[0].rsplit("/", 1)[-1]
    return last == "" or "." not in last or last.lower().endswith((".html", ".htm"))


def cross_origin_refusal(headers: Mapping[str, str], host: str, url_path: str) -> str | None:
    """Why a request must be refused as coming from another origin, or None when it may be served.

    A page on any other origin (another port of this host included) may still open the site in the
    address bar or by a link; it may not load a file of it as a subresource: a script tag would run
    the search data and prompt chunks in the foreign page and hand it every session's text."""
    fetch_site = (headers.get("Sec-Fetch-Site") or "").lower()
    mode = (headers.get("Sec-Fetch-Mode") or "").lower()
    dest = (headers.get("Sec-Fetch-Dest") or "").lower()
    if fetch_site or mode:
        navigation = mode == "navigate" and dest in ("", "document")
    else:
        # No fetch metadata: an old browser or a command-line client; only a page may be opened.
        navigation = _is_page(url_path)
    if navigation:
        return None
    if fetch_site and fetch_site not in _OWN_SITE:
        return f"a {fetch_site} request for a data file"
    own = _origin(f"http://{host}")
    for name in ("Origin", "Referer"):
        value = headers.get(name)
        if value is None:
            continue
        if _origin(value) != own:
            return f"a request from another origin ({name})"
    return None


def allowed_host(header: str | None, bound_host: str, port: int) -> bool:
    """The Host header names this server by address or as localhost, on its port.

    A DNS-rebinding page reaches the server under a domain name of its own, so any other name is
    refused; an IP address (the LAN address when serving on 0.0.0.0) cannot be rebound."""
    if not header:
        return False
    host = header.strip().lower()
    name, given_port = host, ""
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        given_port = rest.removeprefix(":")
    elif host.count(":") == 1:
        name, _, given_port = host.partition(":")
    if given_port and given_port != str(port):
        return False
    if name in ("localhost", bound_host.lower()):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
