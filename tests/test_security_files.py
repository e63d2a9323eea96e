"""Hostile files in an agent dir: blobs that link out of the store, pipes, wrong bytes, huge files."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from sessions import SessionBuilder, text
from site_helpers import make_session, run_sitegen
from test_robustness import _permission_checked

from sitegen.session.blobs import MAX_BLOB_BYTES, BlobStore
from sitegen.session.load import MAX_LINE_BYTES

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


# The CLI as the only child of a small process, which then prints the child's peak memory (KB).
_MEASURED = (
    "import resource, subprocess, sys\n"
    "cli = [sys.executable, '-c', 'import sys; from sitegen.cli import main; sys.exit(main())']\n"
    "done = subprocess.run([*cli, *sys.argv[1:]], capture_output=True, text=True)\n"
    "sys.stdout.write(done.stdout)\n"
    "sys.stderr.write(done.stderr + f'maxrss={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n')\n"
)


def _session_with_long_lines(path: Path, long_mb: int, tail_mb: int) -> Path:
    """A header and a message, a line of `long_mb` MB that ends, a message, then a line of `tail_mb`
    MB that never ends (the holes of a sparse file: no disk is used)."""
    b = SessionBuilder(session_id="long-1", cwd="/work/long")
    b.user("u1", "ZZ_BEFORE_ZZ")
    first = b"\n".join(orjson.dumps(x) for x in [b.header, *b.entries]) + b"\n"
    after = SessionBuilder(session_id="long-1")
    after.clock = b.clock
    after.leaf = b.leaf
    after.user("u2", "ZZ_AFTER_ZZ")
    second = orjson.dumps(after.entries[0]) + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.write(first)
        handle.seek(len(first) + (long_mb << 20))
        handle.write(b"\n" + second)
        handle.truncate(handle.tell() + (tail_mb << 20))
    return path


def test_a_line_too_long_is_listed_and_memory_stays_bounded(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    session = _session_with_long_lines(agent / "sessions" / "--work-long--" / "long.jsonl", 100, 512)
    # Lines past the cap (64 MB), the never-ending one large enough that holding it twice, as before,
    # would break the memory bound below.
    assert session.stat().st_size > 600 << 20
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, "export", str(session), "-o", str(tmp_path / "page.html")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert "Exported to" in done.stdout, done.stderr
    peak_mb = int(done.stderr.rsplit("maxrss=", 1)[1]) >> 10
    # Before, the never-ending line alone took twice its size (1 GB here): now a few times the cap.
    assert peak_mb < 3 * (MAX_LINE_BYTES >> 20) + 250, peak_mb
    page = (tmp_path / "page.html").read_text()
    assert "ZZ_BEFORE_ZZ" in page and "ZZ_AFTER_ZZ" in page
    assert "a line of 100 MB" in page and "a line of 512 MB" in page and "never ends" in page

    built = run_sitegen("build", "--agent-dir", str(agent), "--out", "site", cwd=tmp_path)
    assert built.returncode == 0 and "2 problems" in built.stdout, built.stdout + built.stderr
    problems = (tmp_path / "site" / "problems.html").read_text()
    assert "a line of 100 MB at byte" in problems and f"longer than the {MAX_LINE_BYTES >> 20} MB" in problems
    # A rewrite would lose the lines it could not read: refused, the file left as it is.
    before = session.stat()
    migrated = run_sitegen("migrate", str(session), "--write", cwd=tmp_path)
    assert (session.stat().st_size, session.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert migrated.returncode in (0, 1), migrated.stderr


def test_what_cannot_be_read_keeps_its_pages_and_is_listed(tmp_path: Path) -> None:
    prefix = _permission_checked()
    if prefix is None:
        pytest.skip("root reads a file whatever its mode, and setpriv cannot stop that here")
    agent = tmp_path / "agent"
    make_session(agent, "/work/one", "one-1", "ZZ_ONE_ZZ")
    locked_file = make_session(agent, "/work/one", "file-1", "ZZ_FILE_ZZ")
    locked_folder = make_session(agent, "/work/two", "two-1", "ZZ_TWO_ZZ").parent
    args = ("build", "--agent-dir", str(agent), "--out", "site")
    assert run_sitegen(*args, cwd=tmp_path, prefix=prefix).returncode == 0
    site = tmp_path / "site"
    before = {p: p.read_bytes() for p in site.glob("sessions/*/*.html")}
    assert len(before) == 3
    # A folder that cannot be listed, and a file changed since (its size) that cannot be read.
    with locked_file.open("ab") as handle:
        handle.write(b"\n")
    locked_folder.chmod(0)
    locked_file.chmod(0)
    try:
        done = run_sitegen(*args, cwd=tmp_path, prefix=prefix)
        assert done.returncode == 0, done.stderr
        assert "0 removed" in done.stdout and "2 problems" in done.stdout, done.stdout
        lines = done.stderr.splitlines()
        assert [line for line in lines if str(locked_folder) in line] == [
            f"problem: {locked_folder}: Cannot read this folder (Permission denied): "
            "the pages of its sessions are kept as they were"
        ]
        assert any(str(locked_file) in line and "Permission denied" in line for line in lines)
        # Every page is there as it was, and still listed.
        assert {p: p.read_bytes() for p in site.glob("sessions/*/*.html")} == before
        home = (site / "index.html").read_text() + "".join(p.read_text() for p in site.glob("projects/*.html"))
        assert "ZZ_TWO_ZZ" in home and "ZZ_FILE_ZZ" in home
        problems = (site / "problems.html").read_text()
        assert str(locked_folder) in problems and str(locked_file) in problems
    finally:
        locked_folder.chmod(0o755)
        locked_file.chmod(0o644)
    # Readable again: nothing is listed, the changed file is rendered again.
    again = run_sitegen(*args, cwd=tmp_path, prefix=prefix)
    assert again.returncode == 0 and "0 problems" in again.stdout, again.stdout + again.stderr
    assert "Cannot read" not in (site / "problems.html").read_text()
