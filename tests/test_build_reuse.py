"""What a build makes once and reuses: a session's subagent pages' shared options, the checkpoints' encoded entries."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from site_helpers import make_session

from sitegen import __version__
from sitegen.render.page import PageOptions
from sitegen.site.build import worker
from sitegen.site.build.pipeline import BuildConfig, BuildResult, claim_site
from sitegen.site.build.plan import open_site, plan_sessions
from sitegen.site.build.sessions import render_sessions
from sitegen.site.state import checkpoint
from sitegen.site.state.jobs import RenderJob
from sitegen.site.state.manifest import MANIFEST_PATH, ManifestEntry, SiteManifest
from sitegen.timings import PhaseClock


def _old_digest(job: RenderJob, sidecar: Path, options: PageOptions) -> str:
    """The digest as it was made before the shared options' text was kept: repr of the whole tuple."""
    stat = sidecar.stat()
    folder = sidecar.with_suffix("").stat().st_mtime_ns if sidecar.with_suffix("").exists() else 0
    parts = (
        __version__,
        worker._templates_hash(),
        stat.st_size,
        stat.st_mtime_ns,
        folder,
        job.default_agent_dirs,
        options,
    )
    return hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def test_subagent_inputs_digest_is_the_repr_of_its_parts(tmp_path: Path) -> None:
    """The digest kept in the fragment store must not change with how it is made: a site built before
    would render every subagent page again (and its stored digests are compared byte for byte)."""
    sidecar = tmp_path / "session" / "Alpha.jsonl"
    sidecar.parent.mkdir()
    sidecar.write_text('{"type": "session"}\n')
    (tmp_path / "session" / "Alpha").mkdir()
    job = RenderJob(
        str(tmp_path / "s.jsonl"), "pi", "k", "p", "sessions/p/k.html", str(tmp_path), {"page.css": "a/p.css"}
    )
    urls = {"Alpha": "Alpha.html", "Beta.Ünï 'q'": "Beta.%C3%9C.html"}
    options = worker._options(job, "sessions/p/k/Alpha.html")
    options.subagent_urls = urls
    options.parent_link = ("Started by the task call in “x”", "../k.html#entry-1")
    shared = {id(urls): repr(urls), id(options.asset_urls): repr(options.asset_urls)}
    expected = _old_digest(job, sidecar, options)
    assert worker._subagent_inputs(job, sidecar, options, shared) == expected
    assert worker._subagent_inputs(job, sidecar, options, {}) == expected


def _entry(key: str, problem: str) -> ManifestEntry:
    return ManifestEntry([1, 2, 3], "hash", key, "project", f"sessions/project/{key}.html", None, problem, "")


def test_a_save_reuses_the_bytes_of_entries_it_encoded_before_and_only_theirs(tmp_path: Path) -> None:
    manifest = SiteManifest("1", "t", "s", {"b": _entry("b", "first"), "a": _entry("a", "x")}, complete=False)
    encoded: dict[str, tuple[ManifestEntry, bytes]] = {}
    manifest.save(tmp_path, encoded)
    first = (tmp_path / MANIFEST_PATH).read_bytes()
    assert set(encoded) == {"a", "b"}
    manifest.save(tmp_path)
    assert (tmp_path / MANIFEST_PATH).read_bytes() == first

    # A session finished again is a new entry object: encoded again, not taken from the last save.
    manifest.sessions["b"] = _entry("b", "second")
    manifest.sessions["c"] = _entry("c", "new")
    manifest.save(tmp_path, encoded)
    kept = (tmp_path / MANIFEST_PATH).read_bytes()
    manifest.save(tmp_path)
    assert (tmp_path / MANIFEST_PATH).read_bytes() == kept
    assert b'"second"' in kept and b'"first"' not in kept
    assert SiteManifest.load(tmp_path).sessions["b"].problem == "second"


def test_the_checkpoints_let_go_of_their_encoded_entries_once_the_sessions_are_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the checkpoints keep to save faster is the manifest's size: not held through the rest of
    the build (the index pages and the search, where its memory peaks)."""
    monkeypatch.setattr(checkpoint, "CHECKPOINT_S", 0.0)  # a save after every session
    agent = tmp_path / "agent"
    for number in range(3):
        make_session(agent, "/work/keep", f"s{number}", f"words {number}")
    config = BuildConfig(out=tmp_path / "site", agent_dirs=[agent], use_default_dirs=False, jobs=1)
    saved: list[int] = []
    monkeypatch.setattr(checkpoint.Checkpoints, "due", lambda self: saved.append(self.kept_bytes) or True)
    with claim_site(config):
        site = open_site(config)
        result = BuildResult(full=site.full)
        plan = plan_sessions(config, site, result)
        render_sessions(config, site, plan, result, None, PhaseClock())
    assert len(saved) == 3 and saved[-1] > 0  # the saves kept their entries' bytes meanwhile
    assert site.checkpoints.kept_bytes == 0
    assert set(SiteManifest.load(tmp_path / "site").sessions) == set(plan.current)
