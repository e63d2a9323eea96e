"""Highlighted code and rendered markdown kept between site builds, per session: a session that grew
by one line is not highlighted and parsed again from scratch (pygments and markdown-it are most of
a page's cost, and a cold process must first compile every lexer it uses)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import sys
from functools import cache
from pathlib import Path

import orjson

from sitegen.fileio import open_regular, replace_file, set_aside

__all__ = ["FragmentStore", "fragment_key"]

log = logging.getLogger("sitegen.render")

# sitegen's code that makes a fragment: a change to it, or to a package _namespace names, makes every
# stored fragment stale.
_MAKERS = (
    "highlight/pygments_html.py",
    "highlight/lexing.py",
    "highlight/rule_lexers.py",
    "highlight/yaml_rules.py",
    "base/text.py",
    "markdown/render.py",
)


def fragment_key(kind: str, text: str) -> str:
    """A fragment's key: what made it (a lexer alias, or "#markdown") and a hash of its source."""
    return f"{kind}:{hashlib.blake2b(text.encode('utf-8', 'surrogatepass'), digest_size=16).hexdigest()}"


def _installed(module: str) -> str:
    """A package's identity without importing it, or importlib.metadata (a twentieth of a small
    rebuild): its __init__ file's size and time, which any reinstall or upgrade changes."""
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    if not origin:
        return f"{module} ?"
    stat = os.stat(origin)
    return f"{module} {stat.st_size}/{stat.st_mtime_ns}"


@cache
def _namespace() -> str:
    # The packages whose code shapes the HTML, and Python's own (its HTML entities and Unicode data).
    packages = ", ".join(_installed(name) for name in ("pygments", "markdown_it", "mdurl", "markupsafe"))
    versions = f"{packages}, Python {sys.version_info.major}.{sys.version_info.minor}"
    digest = hashlib.blake2b(versions.encode(), digest_size=12)
    for name in _MAKERS:
        digest.update((Path(__file__).parents[1] / name).read_bytes())
    return digest.hexdigest()


def _set_aside(path: Path, reason: str) -> None:
    """A broken cache file is moved out of the way (the page is rendered without it), once."""
    try:
        target = set_aside(path)
    except OSError:
        log.warning("The highlighting cache %s %s; rendering without it", path, reason)
    else:
        log.warning("The highlighting cache %s %s; set aside as %s", path, reason, target)


class FragmentStore:
    """The fragments one page may reuse (loaded from its file) and those it used (saved back), so a
    page's file holds exactly what its latest render needed."""

    def __init__(self) -> None:
        self._stored: dict[str, str] = {}
        self._used: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self._stored.get(key)

    def keep(self, key: str, html: str) -> None:
        self._used[key] = html

    def load(self, path: Path) -> None:
        """Start a page: what its file holds becomes reusable; a missing or stale file is no error."""
        self._used = {}
        self._stored = {}
        try:
            with open_regular(path) as handle:
                data = orjson.loads(handle.read())
        except FileNotFoundError:
            return
        except OSError as error:
            _set_aside(path, f"cannot be read ({error.strerror or error})")
            return
        except orjson.JSONDecodeError:
            _set_aside(path, "is not whole JSON")
            return
        if not isinstance(data, dict) or not isinstance(data.get("fragments"), dict):
            _set_aside(path, "is not a cache of fragments")
        elif data.get("namespace") == _namespace():
            self._stored = {k: v for k, v in data["fragments"].items() if isinstance(v, str)}

    def save(self, path: Path) -> None:
        """End a page: its file now holds the fragments this render used."""
        used, self._stored, self._used = self._used, {}, {}
        with contextlib.suppress(OSError):  # without it the next render is only slower
            replace_file(path, orjson.dumps({"namespace": _namespace(), "fragments": used}))
