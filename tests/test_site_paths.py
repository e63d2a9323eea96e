"""Site-relative URLs between pages: the same as posixpath.relpath gives, for every shape of path."""

from __future__ import annotations

import posixpath

from hypothesis import given
from hypothesis import strategies as st

from sitegen.site.state.jobs import relative_url

_part = st.sampled_from(["sessions", "projects", "a", "b", "k", "search", "assets"])
_file = st.sampled_from(["index.html", "k.html", "x.related.js", "app.3f2a.css"])
_path = st.builds(lambda folders, name: "/".join([*folders, name]), st.lists(_part, max_size=4), _file)


@given(_path, _path)
def test_relative_url_agrees_with_relpath(from_page: str, to_path: str) -> None:
    start = posixpath.dirname(from_page) or "."
    assert relative_url(from_page, to_path) == posixpath.relpath(to_path, start)


def test_relative_urls_the_site_uses() -> None:
    page = "sessions/my-proj/2025-k.html"
    assert relative_url(page, "index.html") == "../../index.html"
    assert relative_url(page, "sessions/my-proj/other.html") == "other.html"
    assert relative_url(page, "sessions/my-proj/2025-k/0-Sub.html") == "2025-k/0-Sub.html"
    assert relative_url(page, "sessions/other/x.html") == "../other/x.html"
    assert relative_url("index.html", page) == page


def test_names_from_session_folders_are_quoted_in_urls() -> None:
    page = "sessions/p/k.html"
    assert relative_url(page, "sessions/p/k/0-What?#now.html") == "k/0-What%3F%23now.html"
    assert relative_url(page, "sessions/p/k/javascript:x.html") == "k/javascript%3Ax.html"
    assert relative_url(page, "sessions/p/k/0-Code Reviewer.html") == "k/0-Code%20Reviewer.html"
