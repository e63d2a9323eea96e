"""Hostile files in an agent dir: blobs that link out of the store, pipes, wrong bytes, huge files."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest
from sessions import SessionBuilder, text
from site_helpers import run_sitegen

from sitegen.session.blobs import MAX_BLOB_BYTES, BlobStore

SECRET = b"root:x:0:0:ZZ_SECRET_LINE_ZZ:/root:/bin/bash\n"
PNG = b"\x89PNG\r\n\x1a\nZZ_REAL_IMAGE_ZZ"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def _agent_with_blobs(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An agent dir whose session shows five images: one good, four whose blob files are hostile."""
    agent = tmp_path / "agent"
    blobs = agent / "blobs"
    blobs.mkdir(parents=True)
    secret = tmp_path / "outside" / "passwd"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    good = hashlib.sha256(PNG).hexdigest()
    (blobs / good).write_bytes(PNG)
    names = {"link": _digest("link"), "pipe": _digest("pipe"), "wrong": _digest("wrong"), "huge": _digest("huge")}
    (blobs / names["link"]).symlink_to(secret)
    os.mkfifo(blobs / names["pipe"])
    (blobs / names["wrong"]).write_bytes(SECRET)  # bytes that do not hash to the name
    with (blobs / names["huge"]).open("wb") as handle:
        handle.truncate(MAX_BLOB_BYTES + 1)  # sparse: no disk taken
    b = SessionBuilder(session_id="blobs-1", cwd="/work/blobs")
    images = [{"type": "image", "data": f"blob:sha256:{h}", "mimeType": "image/png"} for h in [good, *names.values()]]
    b.message("u1", "user", [text("ZZ_IMAGES_ZZ"), *images])
    b.assistant("a1", [text("seen")])
    b.write(agent / "sessions" / "--work-blobs--" / "2026-01-01T00-00-00-000Z_blobs-1.jsonl")
    return agent, {"good": good, **names}


def _leaks(html: str) -> bool:
    encoded = base64.b64encode(SECRET).decode()
    return "ZZ_SECRET_LINE_ZZ" in html or encoded[:40] in html


def test_hostile_blobs_are_missing_images_with_their_reasons(tmp_path: Path) -> None:
    agent, names = _agent_with_blobs(tmp_path)
    done = run_sitegen("build", "--agent-dir", str(agent), "--out", "site", cwd=tmp_path)
    assert done.returncode == 0 and "1 rendered" in done.stdout and "4 problems" in done.stdout, done.stdout
    site = tmp_path / "site"
    page = next(site.glob("sessions/*/*blobs-1.html")).read_text()
    assert base64.b64encode(PNG).decode() in page  # the good one is shown
    assert not _leaks(page)
    for kind in ("link", "pipe", "wrong", "huge"):
        assert f"missing blob {names[kind][:12]}" in page, kind
    problems = (site / "problems.html").read_text()
    assert "symbolic link" in problems and "pipe" in problems
    assert "do not hash to its name" in problems and f"larger than {MAX_BLOB_BYTES >> 20} MB" in problems
    assert not any(_leaks(p.read_text(errors="replace")) for p in site.rglob("*") if p.is_file())


def test_export_and_share_never_carry_a_linked_file(tmp_path: Path) -> None:
    agent, _ = _agent_with_blobs(tmp_path)
    session = next(agent.rglob("*.jsonl"))
    done = run_sitegen("export", str(session), "-o", "page.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not _leaks((tmp_path / "page.html").read_text())
    handler = tmp_path / "share.py"
    handler.write_text(
        "import pathlib\n"
        "def share(html_path):\n"
        f"    pathlib.Path({str(tmp_path / 'shared.html')!r}).write_bytes(pathlib.Path(html_path).read_bytes())\n"
        "    return 'https://example.invalid/x'\n"
    )
    shared = run_sitegen("share", str(session), "--handler", str(handler), cwd=tmp_path)
    assert shared.returncode == 0, shared.stderr
    assert "ZZ_IMAGES_ZZ" in (tmp_path / "shared.html").read_text()
    assert not _leaks((tmp_path / "shared.html").read_text())


def test_a_blob_is_read_only_when_it_is_what_its_name_says(tmp_path: Path) -> None:
    agent, names = _agent_with_blobs(tmp_path)
    store = BlobStore([agent / "blobs"])
    assert store.get(names["good"]) == PNG
    for kind in ("link", "pipe", "wrong", "huge"):
        assert store.get(names[kind]) is None, kind
    assert set(store.refused) == {names[k] for k in ("link", "pipe", "wrong", "huge")}
    assert store.get(_digest("absent")) is None and _digest("absent") not in store.refused


@pytest.mark.parametrize("inside", [True, False])
def test_a_link_is_refused_wherever_it_points(tmp_path: Path, inside: bool) -> None:
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    good = hashlib.sha256(PNG).hexdigest()
    target = blobs / "copy.png" if inside else tmp_path / "copy.png"
    target.write_bytes(PNG)
    (blobs / good).symlink_to(target)
    store = BlobStore([blobs])
    assert store.get(good) is None and "symbolic link" in store.refused[good]
