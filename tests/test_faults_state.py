"""A broken site folder never blocks: a bad manifest or fragment cache is set aside with one warning."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from fault_helpers import run_cli
from site_helpers import crawl, make_session

from sitegen.site.state.manifest import FORMAT

MANIFEST = Path(".sitegen/manifest.json")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(agent dir, a site built from it), to copy."""
    root = tmp_path_factory.mktemp("state")
    agent = root / "agent"
    for number in range(5):
        make_session(agent, "/work/alpha", f"alpha-{number}", f"ZZ_ALPHA{number}_ZZ")
    site = root / "site"
    assert run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "1").returncode == 0
    return agent, site


def _warnings(stderr: str) -> list[str]:
    """stderr without the progress lines."""
    return [line for line in stderr.splitlines() if not line.endswith(" written")]


def _edit(change: Callable[[dict[str, object]], None]) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        data = orjson.loads(path.read_bytes())
        change(data)
        path.write_bytes(orjson.dumps(data))

    return edit


def _first_record(data: dict[str, object]) -> dict[str, object]:
    sessions = data["sessions"]
    assert isinstance(sessions, dict)
    record: dict[str, object] = next(iter(sessions.values()))["record"]
    return record


BREAKAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "cut short": (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "is not whole JSON"),
    "empty": (lambda p: p.write_bytes(b""), "is not whole JSON"),
    "not an object": (lambda p: p.write_bytes(b"[1, 2]"), "is not a JSON object"),
    "another format": (_edit(lambda d: d.update(format=1)), f"is of another format (1, not {FORMAT})"),
    "a count that is text": (
        _edit(lambda d: _first_record(d).update(messages="many")),
        "has a wrong value at sessions[",
    ),
    "usage of the wrong shape": (
        _edit(lambda d: _first_record(d).update(usage={"keys": [], "groups": [[1]], "rows_json": "[]"})),
        "has a wrong value at sessions[",
    ),
    "a fingerprint that is text": (
        _edit(lambda d: next(iter(d["sessions"].values())).update(fingerprint="x")),  # type: ignore[attr-defined]
        ".fingerprint",
    ),
    "a folder": (lambda p: (p.unlink(), p.mkdir()), "cannot be read"),
    "a pipe": (lambda p: (p.unlink(), os.mkfifo(p)), "cannot be read"),
}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_a_broken_manifest_is_set_aside_and_the_site_built_again(
    tmp_path: Path, built: tuple[Path, Path], breakage: str
) -> None:
    agent, original = built
    site = tmp_path / "site"
    shutil.copytree(original, site)
    # A page marked, to see it is written again (the set-aside manifest vouched for it).
    stale = next(site.glob("sessions/*/*_alpha-0.html"))
    stale.write_text(stale.read_text().replace("ZZ_ALPHA0_ZZ", "ZZ_STALE_ZZ"))
    damage, reason = BREAKAGES[breakage]
    damage(site / MANIFEST)
    done = run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "1")
    assert done.returncode == 0, done.stderr
    [warning] = _warnings(done.stderr)
    assert warning.startswith(f"warning: The site's manifest {site / MANIFEST} ")
    assert reason in warning
    assert warning.endswith(f"; set aside as {site / MANIFEST}.broken, and the site is built again")
    assert (site / f"{MANIFEST}.broken").exists() or (site / f"{MANIFEST}.broken").is_fifo()
    assert "5 sessions, 5 rendered" in done.stdout
    assert "ZZ_STALE_ZZ" not in stale.read_text()
    assert crawl(site) == []
    again = run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", "1")
    assert again.returncode == 0 and again.stderr == "" and "is up to date" in again.stdout


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_broken_fragment_cache_is_set_aside(tmp_path: Path, jobs: str) -> None:
    """In the build's own process (one session) and in a worker (four): the warning is shown once."""
    agent = tmp_path / "agent"
    paths = [make_session(agent, "/work/beta", f"beta-{n}", f"ZZ_BETA{n}_ZZ") for n in range(4)]
    site = tmp_path / "site"
    assert run_cli("build", "--out", site, "--agent-dir", agent).returncode == 0
    cache = site / ".sitegen" / "fragments" / "2026-01-01T00-00-00-000Z_beta-0.json"
    cache.write_bytes(cache.read_bytes()[:10])
    for path in paths if jobs == "2" else paths[:1]:
        with path.open("ab") as handle:
            handle.write(b'{"type":"custom","customType":"zz","id":"zz000001","parentId":"r1"}\n')
    done = run_cli("build", "--out", site, "--agent-dir", agent, "--jobs", jobs)
    assert done.returncode == 0, done.stderr
    assert _warnings(done.stderr) == [
        f"warning: The highlighting cache {cache} is not whole JSON; set aside as {cache}.broken"
    ]
    assert "ZZ_BETA0_ZZ answer" in next(site.glob("sessions/*/*_beta-0.html")).read_text()
    assert orjson.loads(cache.read_bytes())["fragments"] is not None  # written anew


def test_only_a_manifest_as_this_version_wrote_it_skips_the_value_check(
    tmp_path: Path, built: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.site.state import manifest as manifest_module

    site = tmp_path / "site"
    shutil.copytree(built[1], site)
    path = site / MANIFEST
    checks: list[str] = []
    monkeypatch.setattr(manifest_module, "_wrong_value", lambda data: checks.append("checked"))

    def load() -> int:
        """How many times the values were checked in loading the manifest (0 or 1)."""
        before = len(checks)
        assert len(manifest_module.SiteManifest.load(site).sessions) == 5
        return len(checks) - before

    assert load() == 0  # as the build wrote it
    # The same data written otherwise (by hand, by another tool): checked.
    path.write_bytes(orjson.dumps(orjson.loads(path.read_bytes()), option=orjson.OPT_INDENT_2))
    assert load() == 1
    manifest_module.SiteManifest.load(site).save(site)
    assert load() == 0
    # Its digest gone: checked.
    (site / f"{MANIFEST}.digest").unlink()
    assert load() == 1
    # Written by another version of sitegen: checked.
    with monkeypatch.context() as other:
        other.setattr(manifest_module, "__version__", "0.0.0-other")
        manifest_module.SiteManifest.load(site).save(site)
    assert load() == 1
