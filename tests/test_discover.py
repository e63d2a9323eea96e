"""Agent dirs, cheap session metadata, listing, terminal breadcrumbs and SESSION argument resolution."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from sitegen.errors import AmbiguousSession, NotASession, SessionNotFound
from sitegen.session.discover import (
    agent_dirs,
    breadcrumb_session,
    default_agent_dirs,
    encode_cwd,
    env_session_dirs,
    list_all,
    list_sessions,
    most_recent,
    read_session_info,
    resolve_session,
    terminal_id,
)

ID_A = "6cc466c3-1111-4aaa-8000-000000000001"
ID_B = "6cc466c3-2222-4bbb-8000-000000000002"
ID_C = "9f00aa11-3333-4ccc-8000-000000000003"


def _line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


def user(text: str, entry_id: str = "u0000001") -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": None,
        "timestamp": "2026-06-01T14:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


def assistant(text: str, entry_id: str = "a0000001") -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": "u0000001",
        "timestamp": "2026-06-01T14:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": 2},
    }


def write_session(
    folder: Path,
    session_id: str,
    cwd: str,
    entries: list[dict[str, Any]] | None = None,
    *,
    timestamp: str = "2026-06-01T14:00:00.000Z",
    header: dict[str, Any] | None = None,
    title_slot: str | None = None,
    tail: bytes = b"",
    mtime: float | None = None,
    name: str | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stamp = timestamp.replace(":", "-").replace(".", "-")
    path = folder / (name or f"{stamp}_{session_id}.jsonl")
    body = b""
    if title_slot is not None:
        slot = {"type": "title", "v": 1, "title": title_slot, "updatedAt": timestamp, "pad": " " * 64}
        body += _line(slot)
    head = {"type": "session", "version": 3, "id": session_id, "timestamp": timestamp, "cwd": cwd}
    body += _line({**head, **(header or {})})
    for entry in entries if entries is not None else [user("hello"), assistant("hi")]:
        body += _line(entry)
    path.write_bytes(body + tail)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def pi_dir(isolated_home: Path) -> Path:
    agent = isolated_home / ".pi" / "agent"
    (agent / "sessions").mkdir(parents=True)
    return agent


# ---------------------------------------------------------------------------------------------
# Where the files are


@pytest.mark.parametrize(
    ("cwd", "encoded"),
    [
        ("/work/pi", "--work-pi--"),
        ("/", "----"),
        ("C:\\Users\\me\\proj", "--C--Users-me-proj--"),
        ("/a:b/c d", "--a-b-c d--"),
    ],
)
def test_encode_cwd(cwd: str, encoded: str) -> None:
    assert encode_cwd(cwd) == encoded


def test_default_agent_dirs_lists_existing_ones_in_order(isolated_home: Path) -> None:
    assert default_agent_dirs() == []
    for rel in (".xcsh/agent", ".pi/agent"):
        (isolated_home / rel).mkdir(parents=True)
    assert default_agent_dirs() == [isolated_home / ".pi/agent", isolated_home / ".xcsh/agent"]


def test_pi_coding_agent_dir_comes_first_with_tilde_expanded(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (isolated_home / ".omp/agent").mkdir(parents=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/custom-agent")
    assert default_agent_dirs() == [isolated_home / "custom-agent", isolated_home / ".omp/agent"]


def test_agent_dirs_puts_extra_first_and_drops_duplicates(isolated_home: Path, tmp_path: Path) -> None:
    pi = isolated_home / ".pi/agent"
    pi.mkdir(parents=True)
    extra = tmp_path / "elsewhere"
    assert agent_dirs([extra, pi, extra]) == [extra, pi]


def test_env_session_dirs(monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> None:
    assert env_session_dirs() == []
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", "~/flat")
    assert env_session_dirs() == [isolated_home / "flat"]


# ---------------------------------------------------------------------------------------------
# One file's metadata


def test_read_session_info_fields(tmp_path: Path) -> None:
    image_only = user("", "u0000000")
    image_only["message"]["content"] = [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    entries = [
        assistant("an assistant line before any user text", "a0000000"),
        image_only,
        user("  ZZ_FIRST_PROMPT_ZZ  "),
        {"type": "model_change", "id": "m0000001", "parentId": "u0000001", "model": "a/b"},
        assistant("done"),
        user("second prompt", "u0000002"),
    ]
    path = write_session(tmp_path, ID_A, "/work/a", entries, header={"parentSession": ID_C}, mtime=1_780_000_000.5)
    info = read_session_info(path)
    assert info is not None
    assert info.id == ID_A
    assert info.cwd == "/work/a"
    assert info.created == "2026-06-01T14:00:00.000Z"
    assert info.modified == 1_780_000_000_500
    assert info.message_count == 5
    assert info.first_message == "ZZ_FIRST_PROMPT_ZZ"
    assert info.parent_session == ID_C
    assert info.size == path.stat().st_size
    assert info.title is None
    assert info.to_json() == {
        "path": str(path),
        "id": ID_A,
        "cwd": "/work/a",
        "title": None,
        "created": "2026-06-01T14:00:00.000Z",
        "modified": 1_780_000_000_500,
        "messageCount": 5,
        "firstMessage": "ZZ_FIRST_PROMPT_ZZ",
        "parentSession": ID_C,
    }


def test_user_content_as_plain_string(tmp_path: Path) -> None:
    entry = user("x")
    entry["message"]["content"] = "plain string prompt"
    info = read_session_info(write_session(tmp_path, ID_A, "/w", [entry]))
    assert info is not None and info.first_message == "plain string prompt"


def test_v1_header_branched_from_is_the_parent(tmp_path: Path) -> None:
    header = {"version": None, "branchedFrom": "/old/file.jsonl"}
    info = read_session_info(write_session(tmp_path, ID_A, "/w", header=header))
    assert info is not None and info.parent_session == "/old/file.jsonl"


def test_not_a_session_gives_none(tmp_path: Path) -> None:
    other = tmp_path / "notes.jsonl"
    other.write_bytes(_line({"type": "message", "id": "x"}))
    assert read_session_info(other) is None
    assert read_session_info(tmp_path / "missing.jsonl") is None


def test_title_from_slot_then_header_then_latest_session_info(tmp_path: Path) -> None:
    slot = write_session(tmp_path / "a", ID_A, "/w", title_slot="ZZ_SLOT_TITLE_ZZ", header={"title": "hdr"})
    assert (info := read_session_info(slot)) is not None and info.title == "ZZ_SLOT_TITLE_ZZ"
    empty_slot = write_session(tmp_path / "b", ID_A, "/w", title_slot="", header={"title": "ZZ_HEADER_ZZ"})
    assert (info := read_session_info(empty_slot)) is not None and info.title == "ZZ_HEADER_ZZ"
    named = [
        user("x"),
        {"type": "session_info", "id": "s1", "parentId": "u0000001", "name": "first name"},
        {"type": "session_info", "id": "s2", "parentId": "s1", "name": "ZZ_LATEST_NAME_ZZ"},
    ]
    info_path = write_session(tmp_path / "c", ID_A, "/w", named, title_slot="slot")
    assert (info := read_session_info(info_path)) is not None and info.title == "ZZ_LATEST_NAME_ZZ"
    assert info.message_count == 1


def test_title_slot_file_from_the_real_fixtures(real_fixtures: Path) -> None:
    info = read_session_info(real_fixtures / "omp-large-session.title-v3.jsonl")
    assert info is not None
    assert info.id == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    assert info.cwd == "/Users/badlogic/workspaces/pi-mono"
    assert info.message_count == 914
    assert info.first_message == "/mode"


def test_message_count_matches_a_full_load_on_real_files(real_fixtures: Path) -> None:
    from sitegen.session.load import load_raw

    for path in sorted(real_fixtures.glob("*.jsonl")):
        info = read_session_info(path)
        assert info is not None
        raw = load_raw(path)
        assert info.message_count == sum(1 for e in raw.entries if e.get("type") == "message"), path.name


def test_invalid_later_lines_still_list_with_header_info_and_count(tmp_path: Path) -> None:
    tail = (
        b"this is not json at all\n"
        b'{"type":"message","id":"zz","message":{"role":"assistant","content":[\n'
        b"\n"
        b'{"id":"k1","parentId":null,"type":"message","message":{"role":"assistant","content":[]}}\n'
        b'{ "type" : "message", "id": "k2", "message": {"role": "user", "content": "spaced"}}\n'
        b'{"type":"message","id":"cut","message":{"role":"user","cont'
    )
    path = write_session(tmp_path, ID_A, "/work/a", [user("ZZ_OK_ZZ"), assistant("fine")], tail=tail)
    info = read_session_info(path)
    assert info is not None
    assert (info.id, info.cwd, info.first_message) == (ID_A, "/work/a", "ZZ_OK_ZZ")
    # two well-formed, the reordered one and the spaced one; the cut and unterminated lines are not
    assert info.message_count == 4


def test_message_lines_are_counted_without_being_parsed(tmp_path: Path) -> None:
    # Message lines after the first user prompt are never parsed: even bodies that are not JSON count.
    broken = b'{"type":"message","id":"b%d", NOT JSON BUT CLOSED }\n'
    tail = b"".join(broken % i for i in range(50))
    info = read_session_info(write_session(tmp_path, ID_A, "/w", [user("x")], tail=tail))
    assert info is not None and info.message_count == 51


# ---------------------------------------------------------------------------------------------
# Listing


def test_listing_per_project_and_all_newest_first(pi_dir: Path) -> None:
    sessions = pi_dir / "sessions"
    old_a = write_session(sessions / encode_cwd("/work/a"), ID_A, "/work/a", mtime=1_000)
    new_a = write_session(
        sessions / encode_cwd("/work/a"), ID_B, "/work/a", timestamp="2026-06-02T10:00:00.000Z", mtime=3_000
    )
    other = write_session(sessions / encode_cwd("/work/b"), ID_C, "/work/b", mtime=2_000)
    dirs = [pi_dir]
    assert [i.path for i in list_sessions("/work/a", dirs)] == [new_a, old_a]
    assert [i.path for i in list_sessions("/work/b", dirs)] == [other]
    assert [i.path for i in list_all(dirs)] == [new_a, other, old_a]
    assert all(i.agent_dir == pi_dir for i in list_all(dirs))
    assert most_recent("/work/a", dirs) == new_a
    assert most_recent("/work/none", dirs) is None
    assert list_sessions("/work/none", dirs) == []


def test_header_cwd_is_the_truth_not_the_folder_name(pi_dir: Path) -> None:
    sessions = pi_dir / "sessions"
    # newer omp names folders relative to home; a misplaced file keeps its own header cwd
    odd = write_session(sessions / "-projects-thing", ID_A, "/home/u/projects/thing")
    misplaced = write_session(sessions / encode_cwd("/work/a"), ID_B, "/work/b")
    assert [i.path for i in list_sessions("/home/u/projects/thing", [pi_dir])] == [odd]
    assert [i.path for i in list_sessions("/work/b", [pi_dir])] == [misplaced]
    assert list_sessions("/work/a", [pi_dir]) == []


def test_cwd_comparison_normalises_trailing_slash(pi_dir: Path) -> None:
    path = write_session(pi_dir / "sessions" / "x", ID_A, "/work/a/")
    assert [i.path for i in list_sessions("/work/a", [pi_dir])] == [path]


def test_several_agent_dirs_and_non_sessions_skipped(isolated_home: Path, pi_dir: Path) -> None:
    omp = isolated_home / ".omp" / "agent"
    in_pi = write_session(pi_dir / "sessions" / "p", ID_A, "/w", mtime=1_000)
    in_omp = write_session(omp / "sessions" / "q", ID_B, "/w", mtime=2_000)
    (omp / "sessions" / "q" / "junk.jsonl").write_bytes(b"not a session\n")
    (omp / "sessions" / "q" / "readme.txt").write_text("x")
    (omp / "sessions" / "stray.jsonl").write_bytes(b"")  # not inside a project folder
    infos = list_all(default_agent_dirs())
    assert [(i.path, i.agent_dir) for i in infos] == [(in_omp, omp), (in_pi, pi_dir)]


def test_same_dir_given_twice_lists_each_file_once(pi_dir: Path, tmp_path: Path) -> None:
    write_session(pi_dir / "sessions" / "p", ID_A, "/w")
    alias = tmp_path / "alias"
    alias.symlink_to(pi_dir)
    assert len(list_all([pi_dir, alias])) == 1


def test_flat_session_dir_from_env_and_argument(pi_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flat = tmp_path / "flat"
    in_flat = write_session(flat, ID_C, "/work/a", mtime=5_000)
    in_pi = write_session(pi_dir / "sessions" / "p", ID_A, "/work/a", mtime=1_000)
    assert [i.path for i in list_sessions("/work/a", [pi_dir])] == [in_pi]
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(flat))
    listed = list_sessions("/work/a", [pi_dir])
    assert [(i.path, i.agent_dir) for i in listed] == [(in_flat, None), (in_pi, pi_dir)]
    assert [i.path for i in list_all([], session_dirs=[flat])] == [in_flat]


# ---------------------------------------------------------------------------------------------
# Terminal breadcrumbs


def no_tty() -> None:
    return None


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, None),
        ({"SITEGEN_TERMINAL_ID": "pts/9"}, "pts-9"),
        ({"ZELLIJ_PANE_ID": "3", "ZELLIJ_SESSION_NAME": "a/b", "TMUX_PANE": "%1"}, "zellij-a-b-3"),
        ({"ZELLIJ_PANE_ID": "3"}, "zellij-3"),
        ({"TMUX_PANE": "%1", "KITTY_WINDOW_ID": "2"}, "tmux-%1"),
        ({"CMUX_SURFACE_ID": "s1"}, "cmux-s1"),
        ({"KITTY_WINDOW_ID": "2", "WEZTERM_PANE": "4"}, "kitty-2"),
        ({"WEZTERM_PANE": "4"}, "wezterm-4"),
        ({"TERM_SESSION_ID": "w0t0p0:ABC"}, "apple-w0t0p0:ABC"),
        ({"WT_SESSION": "guid"}, "wt-guid"),
    ],
)
def test_terminal_id_from_env(env: dict[str, str], expected: str | None) -> None:
    assert terminal_id(env, tty=no_tty) == expected


def test_terminal_id_prefers_the_tty_device_but_not_the_override() -> None:
    assert terminal_id({"TMUX_PANE": "%1"}, tty=lambda: "/dev/pts/3") == "pts-3"
    assert terminal_id({"SITEGEN_TERMINAL_ID": "mine"}, tty=lambda: "/dev/pts/3") == "mine"
    assert terminal_id({}, tty=lambda: "not-a-device") is None


def write_crumb(agent_dir: Path, ident: str, cwd: str, session: str) -> None:
    folder = agent_dir / "terminal-sessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ident).write_text(f"{cwd}\n{session}\ncwdstat 1 2\n")


def test_breadcrumb_session(pi_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEGEN_TERMINAL_ID", "pts-7")
    path = write_session(pi_dir / "sessions" / "x", ID_A, "/work/a")
    assert breadcrumb_session("/work/a", [pi_dir]) is None
    write_crumb(pi_dir, "pts-7", "/work/a", str(path))
    assert breadcrumb_session("/work/a", [pi_dir]) == path
    assert breadcrumb_session("/work/b", [pi_dir]) is None
    monkeypatch.setenv("SITEGEN_TERMINAL_ID", "pts-8")
    assert breadcrumb_session("/work/a", [pi_dir]) is None


def test_breadcrumb_to_a_missing_file_is_ignored(pi_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEGEN_TERMINAL_ID", "t")
    write_crumb(pi_dir, "t", "/work/a", str(pi_dir / "gone.jsonl"))
    assert breadcrumb_session("/work/a", [pi_dir]) is None


def test_breadcrumb_relative_path_and_subagent_root(
    pi_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITEGEN_TERMINAL_ID", "t")
    project = tmp_path / "proj"
    parent = write_session(project / "sessions", ID_A, str(project))
    child = write_session(parent.with_suffix(""), ID_B, str(project), name="Worker.jsonl")
    write_crumb(pi_dir, "t", str(project), str(child.relative_to(project)))
    assert breadcrumb_session(str(project), [pi_dir]) == parent


def test_continue_prefers_breadcrumb_then_most_recent(pi_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    older = write_session(pi_dir / "sessions" / "x", ID_A, "/work/a", mtime=1_000)
    newer = write_session(pi_dir / "sessions" / "x", ID_B, "/work/a", mtime=2_000)
    assert resolve_session(None, cwd="/work/a", dirs=[pi_dir]) == newer
    monkeypatch.setenv("SITEGEN_TERMINAL_ID", "t")
    write_crumb(pi_dir, "t", "/work/a", str(older))
    assert resolve_session(None, cwd="/work/a", dirs=[pi_dir]) == older


def test_continue_with_nothing_to_continue(pi_dir: Path) -> None:
    with pytest.raises(SessionNotFound, match=r"^No sessions found for /work/z; pass a session file or id$"):
        resolve_session(None, cwd="/work/z", dirs=[pi_dir])
    with pytest.raises(SessionNotFound, match=r"^No agent directory found"):
        resolve_session(None, cwd="/work/z", dirs=[])


# ---------------------------------------------------------------------------------------------
# SESSION arguments


@pytest.fixture
def projects(pi_dir: Path) -> dict[str, Path]:
    sessions = pi_dir / "sessions"
    return {
        "a1": write_session(sessions / "a", ID_A, "/work/a", mtime=1_000),
        "a2": write_session(sessions / "a", ID_B, "/work/a", timestamp="2026-06-03T09:30:00.000Z", mtime=2_000),
        "c": write_session(sessions / "c", ID_C, "/work/c", timestamp="2026-06-04T08:00:00.000Z"),
    }


def test_path_arguments(projects: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_session(str(projects["c"]), cwd="/work/a", dirs=[]) == projects["c"]
    monkeypatch.chdir(projects["c"].parent)
    assert resolve_session(projects["c"].name, cwd="/work/a", dirs=[]) == Path(projects["c"].name)
    missing = tmp_path / "nope" / "x.jsonl"
    with pytest.raises(SessionNotFound, match=rf"^File not found: {missing}$"):
        resolve_session(str(missing), cwd="/work/a", dirs=[])
    with pytest.raises(SessionNotFound, match=r"^File not found: gone\.jsonl$"):
        resolve_session("gone.jsonl", cwd="/work/a", dirs=[])
    with pytest.raises(NotASession, match=r"is a directory$"):
        resolve_session(str(tmp_path) + "/", cwd="/work/a", dirs=[])


def test_tilde_path_argument(projects: dict[str, Path], isolated_home: Path, pi_dir: Path) -> None:
    rel = projects["c"].relative_to(isolated_home)
    assert resolve_session(f"~/{rel}", cwd="/w", dirs=[pi_dir]) == projects["c"]


@pytest.mark.parametrize(
    ("arg", "key"),
    [
        ("6CC466C3-2222", "a2"),  # id prefix, any case
        (ID_A, "a1"),  # whole id
        ("2026-06-03T09", "a2"),  # file-name prefix
        ("2026-06-01t14-00-00-000z_6cc466c3-1", "a1"),  # file-name prefix through the id
        ("9f00", "c"),  # another project, found globally
    ],
)
def test_id_and_file_name_prefixes(projects: dict[str, Path], pi_dir: Path, arg: str, key: str) -> None:
    assert resolve_session(arg, cwd="/work/a", dirs=[pi_dir]) == projects[key]


def test_id_after_the_timestamp_in_the_file_name(pi_dir: Path) -> None:
    # the header id differs from the file's (a copied file): the file's id part still matches
    path = write_session(pi_dir / "sessions" / "x", ID_A, "/w", name="2026-06-01T14-00-00-000Z_feedbeef-0000.jsonl")
    assert resolve_session("FEEDBEEF", cwd="/w", dirs=[pi_dir]) == path


def test_current_project_wins_over_other_projects(pi_dir: Path) -> None:
    local = write_session(pi_dir / "sessions" / "a", "abc-local-1", "/work/a", mtime=1_000)
    write_session(pi_dir / "sessions" / "b", "abc-other-1", "/work/b", mtime=9_000)
    assert resolve_session("abc", cwd="/work/a", dirs=[pi_dir]) == local


def test_ambiguous_prefix(projects: dict[str, Path], pi_dir: Path) -> None:
    with pytest.raises(AmbiguousSession) as caught:
        resolve_session("6cc466c3", cwd="/work/a", dirs=[pi_dir])
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("'6cc466c3' matches 2 sessions: ")
    assert f"{ID_B} ({projects['a2']})" in message and f"{ID_A} ({projects['a1']})" in message
    # in another project the two are ambiguous too, found through the global search
    with pytest.raises(AmbiguousSession, match=r"matches 2 sessions"):
        resolve_session("6cc", cwd="/work/elsewhere", dirs=[pi_dir])


def test_ambiguity_lists_a_few_and_counts_the_rest(pi_dir: Path) -> None:
    for n in range(5):
        write_session(pi_dir / "sessions" / "a", f"dup-{n}", "/work/a", mtime=1_000 + n)
    with pytest.raises(AmbiguousSession, match=r"^'dup' matches 5 sessions: dup-4 .* and 2 more; give more"):
        resolve_session("dup", cwd="/work/a", dirs=[pi_dir])


def test_an_exact_id_beats_longer_ids_it_prefixes(pi_dir: Path) -> None:
    exact = write_session(pi_dir / "sessions" / "a", "abc", "/w")
    write_session(pi_dir / "sessions" / "a", "abcd", "/w")
    assert resolve_session("ABC", cwd="/w", dirs=[pi_dir]) == exact


def test_no_match(projects: dict[str, Path], pi_dir: Path) -> None:
    with pytest.raises(SessionNotFound, match=r"^No session found matching 'zzz' \(searched 3 sessions\)$"):
        resolve_session("zzz", cwd="/work/a", dirs=[pi_dir])
    with pytest.raises(SessionNotFound, match=r"^Empty session id"):
        resolve_session("  ", cwd="/work/a", dirs=[pi_dir])


def test_flat_session_dir_is_searched(tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    path = write_session(flat, ID_C, "/w")
    assert resolve_session("9f00aa11", cwd="/elsewhere", dirs=[], session_dirs=[flat]) == path
