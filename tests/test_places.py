"""Sessions found where the agents keep them: $XDG_DATA_HOME/omp, $XDG_STATE_HOME/omp, profiles,
PI_CONFIG_DIR and omp's registry of sessions kept elsewhere; a profile's projects listed under its name."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from history_helpers import HistoryRow, omp_store
from site_helpers import run_sitegen

from sitegen.session.artifacts import list_artifacts, subagent_transcripts
from sitegen.session.discover import breadcrumb_session, list_all, resolve_session
from sitegen.session.places import default_agent_dirs, profile_of
from sitegen.site.build.pipeline import BuildConfig, build_site


def _session(path: Path, session_id: str, cwd: str, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-03-01T10:00:00.000Z", "cwd": cwd},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-03-01T10:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        },
    ]
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return path


def _places(root: Path) -> tuple[Path, dict[str, str]]:
    """A home with a session in each place omp 18 keeps them, and the environment naming them."""
    home = root / "home"
    data, state = root / "xdg-data", root / "xdg-state"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(data), "XDG_STATE_HOME": str(state), "PI_CONFIG_DIR": ".ompx"}
    _session(data / "omp" / "sessions" / "--w-xdg--" / "a_xdg-1.jsonl", "xdg-1", "/w/xdg", "ZZ_XDG_ZZ")
    work = home / ".omp" / "profiles" / "work" / "agent"
    _session(work / "sessions" / "--w-app--" / "a_prof-1.jsonl", "prof-1", "/w/app", "ZZ_PROFILE_ZZ")
    _session(home / ".xcsh" / "profiles" / "lab" / "agent" / "sessions" / "--w-lab--" / "a_lab-1.jsonl",
             "lab-1", "/w/lab", "ZZ_XCSH_PROFILE_ZZ")  # fmt: skip
    _session(home / ".ompx" / "agent" / "sessions" / "--w-cfg--" / "a_cfg-1.jsonl", "cfg-1", "/w/cfg", "ZZ_CONFIG_ZZ")
    # Kept outside the sessions folder (`omp --session`), listed in the registry under $XDG_STATE_HOME.
    elsewhere = _session(root / "elsewhere" / "notes.jsonl", "custom-1", "/w/custom", "ZZ_CUSTOM_ZZ")
    registry = state / "omp" / "custom-session-files"
    registry.mkdir(parents=True)
    (registry / "marker-1").write_text(str(elsewhere) + "\n")
    (registry / "marker-gone").write_text(str(root / "deleted.jsonl"))
    # The same folder in another profile is another project.
    _session(work / "sessions" / "--w-xdg--" / "a_prof-2.jsonl", "prof-2", "/w/xdg", "ZZ_PROFILE_SAME_FOLDER_ZZ")
    return home, env


def test_every_place_is_an_agent_dir(tmp_path: Path) -> None:
    home, env = _places(tmp_path)
    dirs = default_agent_dirs(env)
    assert tmp_path / "xdg-data" / "omp" in dirs
    assert home / ".ompx" / "agent" in dirs
    assert home / ".omp" / "profiles" / "work" / "agent" in dirs
    assert home / ".xcsh" / "profiles" / "lab" / "agent" in dirs
    assert [profile_of(d) for d in dirs if profile_of(d)] == ["work", "lab"]
    ids = sorted(info.id for info in list_all(dirs, session_dirs=[], env=env))
    assert ids == ["cfg-1", "custom-1", "lab-1", "prof-1", "prof-2", "xdg-1"]
    # SESSION prefixes reach them too.
    found = resolve_session("custom", cwd="/elsewhere", dirs=dirs, session_dirs=[], env=env)
    assert found == tmp_path / "elsewhere" / "notes.jsonl"


def test_ls_all_lists_them_in_its_own_process(tmp_path: Path) -> None:
    _, env = _places(tmp_path)
    done = run_sitegen("ls", "--all", "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(item["id"] for item in json.loads(done.stdout)) == [
        "cfg-1", "custom-1", "lab-1", "prof-1", "prof-2", "xdg-1",
    ]  # fmt: skip
    # Without the variables, omp's XDG folders are not looked at.
    bare = run_sitegen("ls", "--all", "--json", cwd=tmp_path)
    assert "xdg-1" not in bare.stdout and "custom-1" not in bare.stdout


def test_breadcrumbs_under_xdg_state(tmp_path: Path) -> None:
    _, env = _places(tmp_path)
    crumbs = tmp_path / "xdg-state" / "omp" / "terminal-sessions"
    crumbs.mkdir(parents=True)
    session = tmp_path / "xdg-data" / "omp" / "sessions" / "--w-xdg--" / "a_xdg-1.jsonl"
    (crumbs / "pts-7").write_text(f"/w/xdg\n{session}\n")
    env["SITEGEN_TERMINAL_ID"] = "pts-7"
    assert breadcrumb_session("/w/xdg", default_agent_dirs(env), env=env) == session


def test_history_db_under_xdg_data_is_read(tmp_path: Path) -> None:
    _, env = _places(tmp_path)
    omp_store(tmp_path / "xdg-data" / "omp" / "history.db", [HistoryRow("ZZ_XDG_HISTORY_ZZ", 1770000000, "/w", None)])
    done = run_sitegen("history", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "ZZ_XDG_HISTORY_ZZ" in done.stdout


def test_build_groups_a_profiles_projects_under_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, env = _places(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    build_site(BuildConfig(out=tmp_path / "site", jobs=1))
    site = tmp_path / "site"
    home_page = (site / "index.html").read_text()
    assert "work › /w/app" in home_page
    assert "work › /w/xdg" in home_page and 'title="/w/xdg"' in home_page  # the same folder, two projects
    assert "lab › /w/lab" in home_page
    pages = "".join(path.read_text() for path in (site / "sessions").rglob("*.html"))
    for token in ("ZZ_XDG_ZZ", "ZZ_PROFILE_ZZ", "ZZ_CONFIG_ZZ", "ZZ_CUSTOM_ZZ", "ZZ_XCSH_PROFILE_ZZ"):
        assert token in pages


def test_leftover_temporary_artifacts_are_ignored(tmp_path: Path) -> None:
    session = _session(tmp_path / "s" / "a_tmp-1.jsonl", "tmp-1", "/w", "hi")
    folder = tmp_path / "s" / "a_tmp-1"
    folder.mkdir()
    (folder / "1.bash.log").write_text("out")
    uuid = "0b6d6a5e-1c2f-4f2a-9a57-6c1f0d7e9b11"
    (folder / f"2.bash.log.tmp-{uuid}").write_text("half")
    _session(folder / "Child.jsonl", "child", "/w", "child")
    (folder / f"Other.jsonl.tmp-{uuid}").write_bytes((folder / "Child.jsonl").read_bytes())
    (folder / f"Child.md.tmp-{uuid}").write_text("half an output")
    assert [a.path.name for a in list_artifacts(folder)] == ["1.bash.log"]
    transcripts = subagent_transcripts(folder)
    assert [t.id for t in transcripts] == ["Child"] and transcripts[0].output is None
    (session.parent / f"{session.name}.tmp-{uuid}").write_bytes(session.read_bytes())
    assert [info.id for info in list_all([], session_dirs=[session.parent], env={})] == ["tmp-1"]


def test_watch_looks_at_every_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.site.live.watch import history_paths, watch_paths

    home, env = _places(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = BuildConfig(out=tmp_path / "site")
    watched = watch_paths(config)
    assert (tmp_path / "xdg-data" / "omp" / "sessions").resolve() in watched
    assert (home / ".omp" / "profiles" / "work" / "agent" / "sessions").resolve() in watched
    assert (tmp_path / "xdg-state" / "omp" / "custom-session-files").resolve() in watched
    assert (tmp_path / "elsewhere").resolve() in watched  # the folder of a registered session
    assert tmp_path / "xdg-data" / "omp" / "history.db" in history_paths(config)
