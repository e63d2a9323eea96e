"""`export -o` and `build --out` refuse the same places: an agent's folders, `/`, home, a session file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from site_helpers import make_session, run_sitegen

from sitegen.session.output_guard import refused_output


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """run_sitegen's HOME, holding a pi agent dir with one session."""
    agent = tmp_path / "home" / ".pi" / "agent"
    make_session(agent, "/work/places", "place-1", "ZZ_PLACE_ZZ")
    return tmp_path / "home"


def _session(home: Path) -> Path:
    return next((home / ".pi" / "agent").rglob("*.jsonl"))


def test_export_and_build_refuse_the_same_places(tmp_path: Path, home: Path) -> None:
    session = _session(home)
    copy = tmp_path / "elsewhere" / "copy.session"
    copy.parent.mkdir()
    shutil.copy(session, copy)  # a session under a name that does not say so
    before = {**_snapshot(home), "copy": copy.read_bytes()}
    places = {
        "an agent's session folder": session.parent,
        "a page in it": session.parent / "page.html",
        "the agent dir's parent": home / ".pi",
        "the root folder": Path("/"),
        "the home folder": home,
        "the session file": session,
        "a copy of a session": copy,
        "a .jsonl name": tmp_path / "new.jsonl",
    }
    for what, place in places.items():
        exported = run_sitegen("export", str(session), "-o", str(place), cwd=tmp_path)
        assert exported.returncode == 1, (what, exported.stdout, exported.stderr)
        assert exported.stderr.startswith("Refusing to write the page ") and len(exported.stderr.splitlines()) == 1
        built = run_sitegen("build", "--out", str(place), cwd=tmp_path)
        assert built.returncode == 1, (what, built.stdout, built.stderr)
        assert built.stderr.startswith("Refusing to write the site ") and len(built.stderr.splitlines()) == 1
    assert {**_snapshot(home), "copy": copy.read_bytes()} == before
    assert not (tmp_path / "new.jsonl").exists() and not Path("/place-1.html").exists()


def test_other_names_and_formats_are_written_anywhere_else(tmp_path: Path, home: Path) -> None:
    session = _session(home)
    for name in ("page.html", "data.json", "notes.md", "sub/folder/page.html"):
        done = run_sitegen("export", str(session), "-o", str(tmp_path / "out" / name), cwd=tmp_path)
        assert done.returncode == 0, (name, done.stderr)
        assert "ZZ_PLACE_ZZ" in (tmp_path / "out" / name).read_text()
    # Written once, an export of .json is not a session: writing it again is allowed.
    again = run_sitegen("export", str(session), "-o", str(tmp_path / "out" / "data.json"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_one_rule_for_every_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    agent = tmp_path / "me" / ".pi" / "agent"
    agent.mkdir(parents=True)
    assert refused_output(tmp_path / "site", [agent]) is None
    assert refused_output(tmp_path / "out.json", [agent]) is None
    assert "root folder" in (refused_output(Path("/"), [agent]) or "")
    assert "home folder" in (refused_output(tmp_path / "me", [agent]) or "")
    assert "overlaps" in (refused_output(agent / "x.md", [agent]) or "")
    assert "overlaps" in (refused_output(tmp_path / "me" / ".pi", [agent]) or "")
    assert "session file" in (refused_output(tmp_path / "x.jsonl", []) or "")
    assert "session file" in (refused_output(tmp_path / "s.html", [], [tmp_path / "s.html"]) or "")
    (tmp_path / "loop").symlink_to("loop")
    assert "link loop" in (refused_output(tmp_path / "loop" / "page.html", []) or "")
