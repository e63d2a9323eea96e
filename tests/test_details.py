"""Each session's details files (.sitegen/details/<key>.<part>.json, a file per page that reads them):
written by its render, kept out of the manifest, read back by the pages that need them, each once a build,
and made again when one goes missing or is damaged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest
from fault_helpers import run_cli
from site_helpers import make_session

from sitegen.site.state.details import PARTS, KeptPart, SessionDetails, details_paths, read_details, write_details

DETAILS = Path(".sitegen/details")
MANIFEST = Path(".sitegen/manifest.json")


def _built(root: Path) -> tuple[Path, Path]:
    """(agent dir, a site built from it)."""
    agent = root / "agent"
    for number in range(3):
        make_session(agent, "/work/gamma", f"gamma-{number}", f"ZZ_GAMMA{number}_ZZ", entries=3)
    site = root / "site"
    assert run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "1").returncode == 0
    return agent, site


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _built(tmp_path_factory.mktemp("details"))


def _details(site: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((site / DETAILS).iterdir())}


def _build(site: Path, agent: Path, jobs: str = "1") -> str:
    done = run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", jobs)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_a_file_per_session_holds_what_the_manifest_does_not(built: tuple[Path, Path]) -> None:
    _, site = built
    files = _details(site)
    key = "2026-01-01T00-00-00-000Z_gamma-"
    assert sorted(files) == sorted(f"{key}{n}.{part}.json" for n in range(3) for part in PARTS)
    prompts = orjson.loads(files[f"{key}1.prompts.json"])
    assert [prompt[3] for prompt in prompts["typed_prompts"]] == [
        "ZZ_GAMMA1_ZZ first question",
        "ZZ_GAMMA1_ZZ follow-up 0",
    ]
    assert sorted(prompts) == ["typed_prompts"]
    assert sorted(orjson.loads(files[f"{key}1.terms.json"])) == ["terms"]
    activity = orjson.loads(files[f"{key}1.activity.json"])
    assert sorted(activity) == ["active", "speed", "tools"] and activity["tools"]["names"] == ["bash"]
    manifest = (site / MANIFEST).read_text()
    assert "ZZ_GAMMA1_ZZ follow-up" not in manifest and '"terms"' not in manifest and '"tools"' not in manifest
    # What the pages made of them.
    assert "ZZ_GAMMA1_ZZ follow-up 0" in "".join(p.read_text() for p in (site / "prompts").rglob("*.js"))


def test_the_same_sessions_give_the_same_bytes(built: tuple[Path, Path], tmp_path: Path) -> None:
    agent, site = built
    again = tmp_path / "site"
    _build(again, agent, jobs="2")
    assert _details(again) == _details(site)


def test_a_changed_session_rewrites_its_file_alone(tmp_path: Path) -> None:
    agent, site = _built(tmp_path)
    before = _details(site)
    session = next(agent.glob("sessions/*/*_gamma-2.jsonl"))
    with session.open("ab") as handle:
        line: dict[str, object] = {
            "type": "message",
            "id": "zz000009",
            "parentId": "u2",
            "timestamp": "2026-01-01T00:05:00.000Z",
        }
        line["message"] = {"role": "user", "content": [{"type": "text", "text": "ZZ_ADDED_ZZ"}], "timestamp": 0}
        handle.write(orjson.dumps(line) + b"\n")
    assert "1 rendered" in _build(site, agent)
    after = _details(site)
    changed = [name for name in after if after[name] != before[name]]
    assert changed and all(name.startswith("2026-01-01T00-00-00-000Z_gamma-2.") for name in changed)
    typed = orjson.loads(after["2026-01-01T00-00-00-000Z_gamma-2.prompts.json"])["typed_prompts"]
    assert typed[-1][3] == "ZZ_ADDED_ZZ"
    assert "ZZ_ADDED_ZZ" in "".join(p.read_text() for p in (site / "prompts").rglob("*.js"))
    # A session gone takes its file with it.
    session.unlink()
    _build(site, agent)
    assert sorted(_details(site)) == sorted(name for name in before if "_gamma-2." not in name)


@pytest.mark.parametrize("part", sorted(PARTS))
def test_a_missing_file_renders_its_session_again(tmp_path: Path, part: str) -> None:
    agent, site = _built(tmp_path)
    before = _details(site)
    (site / DETAILS / f"2026-01-01T00-00-00-000Z_gamma-0.{part}.json").unlink()
    assert "1 rendered" in _build(site, agent)
    assert _details(site) == before
    assert "is up to date" in _build(site, agent)


@pytest.mark.parametrize(
    "damage", [b"", b"{not json", b'{"terms": "many"}', b'{"terms": {}, "typed_prompts": []}', b"\0" * 64]
)
def test_a_damaged_file_reads_as_none_and_its_session_is_rendered_again(tmp_path: Path, damage: bytes) -> None:
    agent, site = _built(tmp_path)
    before = _details(site)
    base = site / DETAILS / "2026-01-01T00-00-00-000Z_gamma-1"
    path = details_paths(base)["terms"]
    path.write_bytes(damage)
    assert read_details(base, "terms") == SessionDetails()
    assert not path.exists()  # removed: the next build renders the session again
    assert "1 rendered" in _build(site, agent)
    assert _details(site) == before


def test_details_round_trip(tmp_path: Path) -> None:
    details = SessionDetails(
        typed_prompts=[["e1", 1000, "k1", "hello <b>"]],
        terms={"word": 3, "other": 1},
        tools={"names": ["bash"], "days": ["2026-01-01"], "rows": [[0, 0, 0, 1, 20, -1]]},
        active=[[1000, 2000]],
        speed=[["m", "2026-01-01", 10, 500]],
    )
    base = tmp_path / "d"
    write_details(base, details)
    first = {part: path.read_bytes() for part, path in details_paths(base).items()}
    assert read_details(base, "prompts") == SessionDetails(typed_prompts=details.typed_prompts)
    assert read_details(base, "terms") == SessionDetails(terms=details.terms)
    assert read_details(base, "activity") == SessionDetails(
        tools=details.tools, active=details.active, speed=details.speed
    )
    whole = SessionDetails()
    for part, fields in PARTS.items():
        for name in fields:
            setattr(whole, name, getattr(read_details(base, part), name))
    assert whole == details
    write_details(base, whole)
    assert {part: path.read_bytes() for part, path in details_paths(base).items()} == first


def test_held_terms_are_read_again_when_a_new_file_takes_the_old_ones_time_and_size(tmp_path: Path) -> None:
    """watch's held part (KeptPart) keys a file by its inode too: a session rendered again renames a new
    file into place, which a file system with coarse times can give the old one's time and size."""
    base = tmp_path / "d"
    write_details(base, SessionDetails(terms={"alpha": 1}))
    path = details_paths(base)["terms"]
    before = path.stat()
    kept = KeptPart("terms")
    assert [details.terms for details in kept.read([base])] == [{"alpha": 1}]
    write_details(base, SessionDetails(terms={"gamma": 1}))  # the same length, through a new file
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert after.st_ino != before.st_ino
    assert [details.terms for details in kept.read([base])] == [{"gamma": 1}]
    # The same file, its time and size as they were, is not parsed again: what is held is handed out.
    text = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(text.replace(b"gamma", b"delta"))
    os.utime(path, ns=(after.st_atime_ns, after.st_mtime_ns))
    assert [details.terms for details in kept.read([base])] == [{"gamma": 1}]


def test_the_manifest_written_an_entry_at_a_time_is_whole_json(built: tuple[Path, Path], tmp_path: Path) -> None:
    """The bytes orjson gives the whole manifest, and a digest the next load accepts (no value check)."""
    from sitegen.site.state import manifest as manifest_module

    _, site = built
    raw = (site / MANIFEST).read_bytes()
    assert orjson.dumps(orjson.loads(raw)) == raw
    assert manifest_module._digest(raw) == (site / f"{MANIFEST}.digest").read_text()
    copy = tmp_path / "site"
    manifest_module.SiteManifest.load(site).save(copy)
    assert (copy / MANIFEST).read_bytes() == raw


def test_a_damaged_file_a_build_reads_is_said_and_made_again_by_the_next(tmp_path: Path) -> None:
    agent, site = _built(tmp_path)
    before = _details(site)
    damaged = site / DETAILS / "2026-01-01T00-00-00-000Z_gamma-1.activity.json"
    damaged.write_bytes(b"{not json")
    # Another session changed: the stats pages are made again, reading every file of theirs.
    with next(agent.glob("sessions/*/*_gamma-0.jsonl")).open("ab") as handle:
        handle.write(b'{"type":"custom","customType":"zz","id":"zz000001","parentId":"u2"}\n')
    done = run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "1")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: The session details {damaged} is not whole JSON; the session is rendered again by the next build"
    ]
    assert not damaged.exists()
    assert "1 rendered" in _build(site, agent)
    after = _details(site)
    assert after[damaged.name] == before[damaged.name]
    assert "ZZ_GAMMA1_ZZ follow-up 0" in "".join(p.read_text() for p in (site / "prompts").rglob("*.js"))


def _prompt_in_gamma_0(agent: Path, text: str) -> None:
    """A prompt appended to the session gamma-0, as its agent would."""
    line = {
        "type": "message",
        "id": "zz000002",
        "parentId": "u2",
        "timestamp": "2026-01-01T01:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }
    with next(agent.glob("sessions/*/*_gamma-0.jsonl")).open("ab") as handle:
        handle.write(orjson.dumps(line) + b"\n")


def test_a_prompts_page_made_from_a_damaged_file_is_made_again_by_the_next_build(tmp_path: Path) -> None:
    agent, site = _built(tmp_path)
    (site / DETAILS / "2026-01-01T00-00-00-000Z_gamma-1.prompts.json").write_bytes(b"\0" * 64)
    # A new prompt in another session: the Prompts page is made again, reading the damaged file as none.
    _prompt_in_gamma_0(agent, "ZZ_NEW_PROMPT_ZZ")
    _build(site, agent)

    def prompts_data() -> str:
        return "".join(path.read_text(encoding="utf-8") for path in sorted((site / "prompts").rglob("*.js")))

    assert "ZZ_NEW_PROMPT_ZZ" in prompts_data() and "ZZ_GAMMA1_ZZ follow-up 0" not in prompts_data()
    # The session is rendered again with the same record: the page is not taken as up to date.
    assert "1 rendered" in _build(site, agent)
    assert "ZZ_GAMMA1_ZZ follow-up 0" in prompts_data()


def test_related_lists_made_from_a_damaged_terms_file_are_made_again_by_the_next_build(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    for number in range(4):
        make_session(agent, "/work/gamma", f"gamma-{number}", f"ZZ_GAMMA{number}_ZZ apple banana cherry", entries=3)
    site = tmp_path / "site"
    _build(site, agent)
    (site / DETAILS / "2026-01-01T00-00-00-000Z_gamma-1.terms.json").write_bytes(b"{not json")
    _prompt_in_gamma_0(agent, "zebra xylophone quartz")
    _build(site, agent)  # gamma-1 had no terms for this build's lists; it is rendered again by the next
    _build(site, agent)
    fresh = tmp_path / "fresh"
    _build(fresh, agent)

    def related(out: Path) -> dict[str, str]:
        return {path.relative_to(out).as_posix(): path.read_text() for path in sorted(out.rglob("*.related.js"))}

    assert related(site) == related(fresh)


# A build in its own process that names, through an audit hook, each details file it opens for reading (a line
# each time, written at once: the CLI ends without the interpreter's teardown).
_COUNTING = """
import os, sys
out = os.open(os.environ["READS_OUT"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
def hook(event, args):
    if event != "open" or not isinstance(args[0], str) or "/.sitegen/details/" not in args[0]:
        return
    mode, flags = args[1], args[2]
    if (("r" in mode and "+" not in mode) if mode is not None else (flags & os.O_ACCMODE) == os.O_RDONLY):
        os.write(out, os.path.basename(args[0]).encode() + b"\\n")
sys.addaudithook(hook)
from sitegen.cli import main
sys.exit(main())
"""


def _counted_build(site: Path, agent: Path, tmp_path: Path) -> Counter[str]:
    """The build's reads of details files, by file name."""
    out = tmp_path / "reads.txt"
    command = [sys.executable, "-c", _COUNTING, "build", "--out", str(site), "--agent-dir", str(agent), "--jobs", "1"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "READS_OUT": str(out)})
    assert done.returncode == 0, done.stderr
    return Counter(out.read_text().split())


def test_a_build_reads_each_details_file_at_most_once(tmp_path: Path) -> None:
    agent, site = _built(tmp_path)
    # The site built again from nothing but the manifest's sessions: every page reads the files.
    (site / "index.html").unlink()
    shutil.rmtree(site / ".sitegen" / "prompts")
    for path in (site / ".sitegen").glob("related*.json"):
        path.unlink()
    session = next(agent.glob("sessions/*/*_gamma-0.jsonl"))
    line: dict[str, object] = {
        "type": "message",
        "id": "zz000003",
        "parentId": "u2",
        "timestamp": "2026-01-01T02:00:00.000Z",
    }
    line["message"] = {"role": "user", "content": [{"type": "text", "text": "ZZ_ONE_MORE_ZZ"}], "timestamp": 0}
    with session.open("ab") as handle:
        handle.write(orjson.dumps(line) + b"\n")
    reads = _counted_build(site, agent, tmp_path)
    # The Prompts, related and stats pages were made again, each from every session's part of its own.
    assert sorted(reads) == sorted(_details(site))
    assert set(reads.values()) == {1}
    assert "ZZ_ONE_MORE_ZZ" in "".join(p.read_text() for p in (site / "prompts").rglob("*.js"))
    # A build with nothing to do reads none.
    assert _counted_build(site, agent, tmp_path) == Counter()
    # A line that changes neither a typed prompt nor a related term: the stats pages alone read theirs.
    with next(agent.glob("sessions/*/*_gamma-1.jsonl")).open("ab") as handle:
        handle.write(b'{"type":"custom","customType":"zz","id":"zz000005","parentId":"u2"}\n')
    reads = _counted_build(site, agent, tmp_path)
    assert sorted(reads) == sorted(name for name in _details(site) if name.endswith(".activity.json"))
    assert set(reads.values()) == {1}


# Two builds in one process, as `sitegen watch` makes them, a line appended to a session between them; the
# details files the second opens for reading are named as above.
_TWICE = """
import os, sys
from pathlib import Path
from sitegen.site.build.config import BuildConfig
from sitegen.site.build.pipeline import build_site
site, agent, session, line, out = sys.argv[1:]
config = BuildConfig(out=Path(site), agent_dirs=[Path(agent)], use_default_dirs=False, jobs=1)
build_site(config)
with open(session, "ab") as handle:
    handle.write(line.encode() + b"\\n")
written = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
def hook(event, args):
    if event != "open" or not isinstance(args[0], str) or "/.sitegen/details/" not in args[0]:
        return
    mode, flags = args[1], args[2]
    if (("r" in mode and "+" not in mode) if mode is not None else (flags & os.O_ACCMODE) == os.O_RDONLY):
        os.write(written, os.path.basename(args[0]).encode() + b"\\n")
sys.addaudithook(hook)
assert len(build_site(config).rendered) == 1
"""


def test_a_rebuild_in_the_same_process_reads_the_terms_of_changed_sessions_alone(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    for number in range(4):
        make_session(agent, "/work/gamma", f"gamma-{number}", f"ZZ_GAMMA{number}_ZZ shared words", entries=3)
    site, out = tmp_path / "site", tmp_path / "reads.txt"
    session = next(agent.glob("sessions/*/*_gamma-2.jsonl"))
    line: dict[str, object] = {"type": "message", "id": "zz000004", "parentId": "u2"}
    line["timestamp"] = "2026-01-01T03:00:00.000Z"
    line["message"] = {"role": "user", "content": [{"type": "text", "text": "ZZ_WATCHED_ZZ words"}], "timestamp": 0}
    command = [sys.executable, "-c", _TWICE, str(site), str(agent), str(session), orjson.dumps(line).decode(), str(out)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    reads = Counter(out.read_text().split())
    assert set(reads.values()) == {1}
    key = "2026-01-01T00-00-00-000Z_gamma-"
    # The Prompts and stats pages read every session's part; the related lists only the changed session's.
    assert sorted(name for name in reads if name.endswith(".terms.json")) == [f"{key}2.terms.json"]
    assert {name for name in reads if not name.endswith(".terms.json")} == {
        f"{key}{n}.{part}.json" for n in range(4) for part in ("prompts", "activity")
    }
    # What the held terms made is what a build in a fresh process makes of the same sessions.
    fresh = tmp_path / "fresh"
    _build(fresh, agent)
    related = sorted(path.relative_to(site) for path in site.rglob("*.related.js"))
    assert related and related == sorted(path.relative_to(fresh) for path in fresh.rglob("*.related.js"))
    for relative in related:
        assert (site / relative).read_bytes() == (fresh / relative).read_bytes()
    assert (site / ".sitegen" / "related.json").read_bytes() == (fresh / ".sitegen" / "related.json").read_bytes()


def test_a_site_of_the_whole_files_format_is_built_again_without_them(tmp_path: Path) -> None:
    """A site an older version built (format 3: a whole details file per session) is built again, and
    its whole files go."""
    agent, site = _built(tmp_path)
    parts = _details(site)
    for number in range(3):
        (site / DETAILS / f"2026-01-01T00-00-00-000Z_gamma-{number}.json").write_bytes(b'{"terms": {}}')
    manifest = orjson.loads((site / MANIFEST).read_bytes())
    manifest["format"] = 3
    (site / MANIFEST).write_bytes(orjson.dumps(manifest))
    output = _build(site, agent)
    assert "3 rendered" in output and "is of another format (3, not 4)" in output
    assert _details(site) == parts
