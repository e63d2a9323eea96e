"""Artifacts folders: listing logs and subagent transcripts, and resolving artifact:// and agent:// URLs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from sitegen.errors import ArtifactError
from sitegen.session.artifacts import (
    Artifact,
    artifacts_dir_for,
    list_artifacts,
    parse_query,
    resolve_internal_url,
    subagent_transcripts,
)


def write_transcript(path: Path, session_id: str = "sub") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/w",
    }
    path.write_bytes(orjson.dumps(header) + b"\n")
    return path


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "sessions" / "--w--" / "2026-06-01T14-00-00-000Z_abc.jsonl"
    write_transcript(path, "abc")
    return path


@pytest.fixture
def art(session_file: Path) -> Path:
    folder = artifacts_dir_for(session_file)
    folder.mkdir()
    (folder / "0.bash.log").write_text("ZZ_BASH_OUTPUT_ZZ\n")
    (folder / "2.read.log").write_text("read output")
    (folder / "10.python_exec.log").write_text("py")
    (folder / "notes.log").write_text("not an artifact")
    (folder / "3.bad name.log").write_text("not an artifact either")
    report = {"summary": "ZZ_SUMMARY_ZZ", "items": [{"name": "one"}, {"name": "two"}], "odd key": {"x": 1}}
    (folder / "0-Scout.md").write_text(json.dumps(report))
    (folder / "1-Writer.md").write_text("# ZZ_PLAIN_MARKDOWN_ZZ\n\nnot json")
    return folder


def test_artifacts_dir_for(tmp_path: Path) -> None:
    assert artifacts_dir_for(tmp_path / "a_b.jsonl") == tmp_path / "a_b"
    assert artifacts_dir_for("/x/2026_id.jsonl") == Path("/x/2026_id")
    # Names that leave no folder name of their own: never the sessions folder itself.
    for name in ("..jsonl", ".jsonl", "notes.txt"):
        assert artifacts_dir_for(tmp_path / name) is None, name


def test_list_artifacts(art: Path) -> None:
    assert list_artifacts(art) == [
        Artifact(0, "bash", art / "0.bash.log", len("ZZ_BASH_OUTPUT_ZZ\n")),
        Artifact(2, "read", art / "2.read.log", len("read output")),
        Artifact(10, "python_exec", art / "10.python_exec.log", 2),
    ]
    assert list_artifacts(art / "missing") == []


def test_subagent_transcripts(tmp_path: Path) -> None:
    root = tmp_path / "art"
    alpha = write_transcript(root / "Alpha.jsonl")
    (root / "Alpha.md").write_text("alpha out")
    child = write_transcript(root / "Alpha" / "Child.jsonl")
    (root / "Alpha" / "Child.md").write_text("child out")
    grand = write_transcript(root / "Alpha" / "Child" / "Grand.jsonl")
    beta = write_transcript(root / "Beta.jsonl")
    gamma = write_transcript(root / "Gamma.jsonl")
    gamma_kid = write_transcript(root / "Gamma" / "Kid.jsonl")
    (root / "Gamma.Kid.md").write_text("dotted output at the top")
    orphan = write_transcript(root / "Orphan" / "Lost.jsonl")
    (root / "Alpha" / "junk.jsonl").write_bytes(b'{"type":"message"}\n')
    (root / "0.bash.log").write_text("x")

    found = subagent_transcripts(root)
    assert [(t.qualified_id, t.parent, t.depth) for t in found] == [
        ("Alpha", None, 0),
        ("Alpha.Child", "Alpha", 1),
        ("Alpha.Child.Grand", "Alpha.Child", 2),
        ("Beta", None, 0),
        ("Gamma", None, 0),
        ("Gamma.Kid", "Gamma", 1),
        ("Orphan.Lost", None, 1),
    ]
    by_id = {t.qualified_id: t for t in found}
    assert by_id["Alpha"].path == alpha and by_id["Alpha"].output == root / "Alpha.md"
    assert by_id["Alpha.Child"].path == child and by_id["Alpha.Child"].output == root / "Alpha" / "Child.md"
    assert by_id["Alpha.Child"].id == "Child"
    assert by_id["Alpha.Child.Grand"].path == grand and by_id["Alpha.Child.Grand"].output is None
    assert by_id["Beta"].path == beta and by_id["Beta"].output is None
    assert by_id["Gamma"].path == gamma
    assert by_id["Gamma.Kid"].path == gamma_kid and by_id["Gamma.Kid"].output == root / "Gamma.Kid.md"
    assert by_id["Orphan.Lost"].path == orphan
    assert subagent_transcripts(tmp_path / "missing") == []


# ---------------------------------------------------------------------------------------------
# artifact://


def test_artifact_url(art: Path, tmp_path: Path) -> None:
    assert resolve_internal_url("artifact://0", [art]) == "ZZ_BASH_OUTPUT_ZZ\n"
    assert resolve_internal_url("artifact://10", [tmp_path / "missing", art]) == "py"


def test_artifact_url_searches_folders_in_order(art: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    (first / "2.edit.log").write_text("ZZ_FIRST_FOLDER_ZZ")
    assert resolve_internal_url("artifact://2", [first, art]) == "ZZ_FIRST_FOLDER_ZZ"


@pytest.mark.parametrize(
    ("url", "dirs", "message"),
    [
        ("artifact://abc", "art", "artifact:// ID must be numeric, got: abc"),
        ("artifact://-1", "art", "artifact:// ID must be numeric, got: -1"),
        ("artifact://", "art", "artifact:// URL requires a numeric ID: artifact://0"),
        ("artifact://1", "none", "No session - artifacts unavailable"),
        ("artifact://1", "missing", "No artifacts directory found"),
        ("artifact://7", "art", "Artifact 7 not found. Available: 0, 2, 10"),
        ("artifact://7", "empty", "Artifact 7 not found. Available: none"),
        ("artifact://abc", "none", "artifact:// ID must be numeric, got: abc"),
    ],
)
def test_artifact_url_errors(art: Path, tmp_path: Path, url: str, dirs: str, message: str) -> None:
    (tmp_path / "empty").mkdir()
    folders = {
        "art": [art],
        "none": [],
        "missing": [tmp_path / "gone", tmp_path / "also-gone"],
        "empty": [tmp_path / "empty"],
    }[dirs]
    with pytest.raises(ArtifactError) as caught:
        resolve_internal_url(url, folders)
    assert str(caught.value) == message


def test_artifact_named_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "4.bash.log").mkdir()
    with pytest.raises(ArtifactError, match=r"^Artifact 4 resolved to a directory, not a file$"):
        resolve_internal_url("artifact://4", [tmp_path])


# ---------------------------------------------------------------------------------------------
# agent://


def test_agent_url_plain_returns_the_text(art: Path) -> None:
    assert resolve_internal_url("agent://1-Writer", [art]) == "# ZZ_PLAIN_MARKDOWN_ZZ\n\nnot json"
    assert resolve_internal_url("agent://1-Writer/", [art]) == "# ZZ_PLAIN_MARKDOWN_ZZ\n\nnot json"
    assert resolve_internal_url("agent://1-Writer?q=", [art]) == "# ZZ_PLAIN_MARKDOWN_ZZ\n\nnot json"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("agent://0-Scout/summary", '"ZZ_SUMMARY_ZZ"'),
        ("agent://0-Scout/items/1/name", '"two"'),
        ("agent://0-Scout/items/1", '{\n  "name": "two"\n}'),
        ("agent://0-Scout/odd%20key/x", "1"),
        ("agent://0-Scout/items/9", "null"),
        ("agent://0-Scout/nope/deeper", "null"),
        ("agent://0-Scout/summary/0", "null"),
        ("agent://0-Scout?q=.items[0].name", '"one"'),
        ("agent://0-Scout?q=items.1.name", '"two"'),
        ("agent://0-Scout?q=.%5B%22odd+key%22%5D.x", "1"),
        ("agent://0-Scout?q=['odd key']", '{\n  "x": 1\n}'),
        ("agent://0-Scout?q=.&other=1", None),
        ("agent://0-Scout//", None),
    ],
)
def test_agent_url_json_extraction(art: Path, url: str, expected: str | None) -> None:
    whole = json.loads((art / "0-Scout.md").read_text())
    result = resolve_internal_url(url, [art])
    if expected is None:
        assert json.loads(result) == whole
        assert result.startswith("{\n  ")
    else:
        assert result == expected


def test_agent_url_extraction_prefers_a_json_sidecar(art: Path) -> None:
    (art / "2-Report.md").write_text("# a markdown report")
    (art / "2-Report.json").write_text('{"score": 7}')
    assert resolve_internal_url("agent://2-Report/score", [art]) == "7"
    (art / "2-Report.json").write_text('{"score": ')  # half written: the .md is used, and is not JSON
    with pytest.raises(ArtifactError, match=r"^Output 2-Report is not valid JSON: "):
        resolve_internal_url("agent://2-Report/score", [art])


def test_agent_url_nested_dotted_id(art: Path) -> None:
    (art / "0-Parent.1-Child.md").write_text("ZZ_NESTED_ZZ")
    assert resolve_internal_url("agent://0-Parent.1-Child", [art]) == "ZZ_NESTED_ZZ"


def test_agent_url_searches_folders_in_order(art: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    (first / "0-Scout.md").write_text("ZZ_FIRST_ZZ")
    assert resolve_internal_url("agent://0-Scout", [tmp_path / "gone", first, art]) == "ZZ_FIRST_ZZ"
    assert resolve_internal_url("agent://1-Writer", [first, art]).startswith("# ZZ_PLAIN")


@pytest.mark.parametrize(
    ("url", "dirs", "message"),
    [
        ("agent://0-Scout", "none", "No session - agent outputs unavailable"),
        ("agent://0-Scout", "missing", "No artifacts directory found"),
        ("agent://", "art", "agent:// URL requires an output ID: agent://<id>"),
        ("agent://Nobody", "art", "Not found: Nobody. Available: 0-Scout, 1-Writer"),
        ("agent://Nobody", "empty", "Not found: Nobody. Available: none"),
        ("agent://0-Scout/items?q=.summary", "art", "agent:// URL cannot combine path extraction with ?q="),
        (
            "agent://1-Writer/title",
            "art",
            "Output 1-Writer is not valid JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        (
            "agent://1-Writer?q=.a",
            "art",
            "Output 1-Writer is not valid JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        ("agent://0-Scout?q=.items[0", "art", "Invalid query: missing ] in .items[0"),
        ("agent://0-Scout?q=.items[]", "art", "Invalid query: empty [] in .items[]"),
        ("agent://0-Scout?q=.items|x", "art", "Invalid query: unexpected token '|' in .items|x"),
    ],
)
def test_agent_url_errors(art: Path, tmp_path: Path, url: str, dirs: str, message: str) -> None:
    (tmp_path / "empty").mkdir()
    folders = {"art": [art], "none": [], "missing": [tmp_path / "gone"], "empty": [tmp_path / "empty"]}[dirs]
    with pytest.raises(ArtifactError) as caught:
        resolve_internal_url(url, folders)
    assert str(caught.value) == message


def test_other_urls_are_refused(art: Path) -> None:
    with pytest.raises(ArtifactError, match=r"^Unsupported internal URL scheme: skill://$"):
        resolve_internal_url("skill://x", [art])
    with pytest.raises(ArtifactError, match=r"^Not an internal URL: 0-Scout$"):
        resolve_internal_url("0-Scout", [art])


@pytest.mark.parametrize(
    ("query", "tokens"),
    [
        ("", []),
        (".", []),
        (".foo.bar[0].baz", ["foo", "bar", 0, "baz"]),
        ("foo['special-key']", ["foo", "special-key"]),
        ('["a \\" b"]', ['a " b']),
        ("[x y]", ["x y"]),
        ("a..b", ["a", "b"]),
    ],
)
def test_parse_query(query: str, tokens: list[str | int]) -> None:
    assert parse_query(query) == tokens


# ---- the folder is listed once ------------------------------------------------------------------


def _aged(folder: Path) -> None:
    """The folder's mtime well in the past, as a folder an agent finished with has it."""
    import os
    import time

    past = time.time() - 600
    os.utime(folder, (past, past))


def test_a_folder_is_listed_once_for_all_its_references(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from sitegen.session import artifacts

    folder = tmp_path / "session"
    folder.mkdir()
    for number in range(300):
        (folder / f"{number}.bash.log").write_text(f"log {number}\n")
        (folder / f"{number}-Task.md").write_text(f"output {number}\n")
    _aged(folder)
    listed: list[str] = []
    real = os.scandir

    def counted(path: str | os.PathLike[str] = ".") -> Iterator[os.DirEntry[str]]:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(artifacts.os, "scandir", counted)
    for number in range(300):
        assert resolve_internal_url(f"artifact://{number}", [folder]) == f"log {number}\n"
        assert resolve_internal_url(f"agent://{number}-Task", [folder]) == f"output {number}\n"
    with pytest.raises(ArtifactError, match="Available: 0, 1, 2"):
        resolve_internal_url("artifact://999", [folder])
    assert listed == [str(folder)]


def test_a_folder_changed_since_its_listing_is_listed_again(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    (folder / "0.bash.log").write_text("first\n")
    _aged(folder)
    assert resolve_internal_url("artifact://0", [folder]) == "first\n"
    (folder / "1.bash.log").write_text("written later\n")  # the folder's mtime is now
    assert resolve_internal_url("artifact://1", [folder]) == "written later\n"
    (folder / "2-Late.md").write_text("a late output\n")
    assert resolve_internal_url("agent://2-Late", [folder]) == "a late output\n"


def test_a_file_listed_plain_then_made_a_link_out_is_not_followed(tmp_path: Path) -> None:
    # The listing (kept while the folder's mtime stays) saw a plain file: it is opened without following
    # a link, so a link put in its place since, out of the folder, is refused rather than read.
    import os

    from sitegen.session.artifacts import open_artifact, open_output

    folder = tmp_path / "session"
    folder.mkdir()
    (folder / "0.bash.log").write_text("the log\n")
    (folder / "1-Task.md").write_text("the output\n")
    _aged(folder)
    assert open_artifact("artifact://0", [folder]).size == 8
    file = open_output("agent://1-Task", [folder])
    assert file is not None and file.size == 11
    assert open_output("agent://1-Task/result?q=.a", [folder]) is None  # a part of it: read whole
    secret = tmp_path / "secret.txt"
    secret.write_text("ZZ_OUTSIDE_ZZ")
    mtime = folder.stat().st_mtime_ns
    for name in ("0.bash.log", "1-Task.md"):
        (folder / name).unlink()
        (folder / name).symlink_to(secret)
    os.utime(folder, ns=(mtime, mtime))  # the same mtime: the listing is still trusted
    with pytest.raises(ArtifactError, match="Cannot read"):
        open_artifact("artifact://0", [folder])
    with pytest.raises(ArtifactError, match="Cannot read"):
        open_output("agent://1-Task", [folder])


def test_a_folder_on_a_links_way_swapped_for_a_link_out_is_not_followed(tmp_path: Path) -> None:
    # A log that is a link into a subfolder of the session's folder, found; then the subfolder is
    # swapped for a link out of it: the read looks the link up again and refuses it.
    import shutil

    from sitegen.session.artifacts import open_artifact

    folder = tmp_path / "session"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "real.log").write_text("the log\n")
    (folder / "0.bash.log").symlink_to("sub/real.log")
    found = open_artifact("artifact://0", [folder])
    assert found is not None and found.text() == "the log\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.log").write_text("ZZ_OUTSIDE_ZZ")
    shutil.rmtree(folder / "sub")
    (folder / "sub").symlink_to(outside)
    with pytest.raises(ArtifactError, match=r"^Cannot read "):
        found.text()
    with pytest.raises(ArtifactError, match=r"^Cannot read "):
        found.ends(4, 4)


@pytest.mark.parametrize("linked", [False, True])
def test_a_found_file_swapped_for_a_link_out_is_not_read(tmp_path: Path, linked: bool) -> None:
    # Found (and sized) first, read later as far as a page shows it: a link put in the file's place in
    # between, out of the folder, is refused by every read, whether the file was found plain or through
    # a link inside its folder (then where that link led is what is read).
    import os

    from sitegen.session.artifacts import open_artifact, open_output

    folder = tmp_path / "session"
    folder.mkdir()
    if linked:
        (folder / "kept.txt").write_text("the log\n")
        (folder / "0.bash.log").symlink_to("kept.txt")
        (folder / "1-Task.md").symlink_to(folder / "kept.txt")
    else:
        (folder / "0.bash.log").write_text("the log\n")
        (folder / "1-Task.md").write_text("the log\n")
    found = [open_artifact("artifact://0", [folder]), open_output("agent://1-Task", [folder])]
    assert [file.text() if file else None for file in found] == ["the log\n", "the log\n"]
    secret = tmp_path / "secret.txt"
    secret.write_text("ZZ_OUTSIDE_ZZ")
    for name in ("kept.txt", "0.bash.log", "1-Task.md") if linked else ("0.bash.log", "1-Task.md"):
        (folder / name).unlink()
        os.symlink(secret, folder / name)
    for file in found:
        assert file is not None
        with pytest.raises(ArtifactError, match=r"^Cannot read "):
            file.ends(4, 4)
        with pytest.raises(ArtifactError, match=r"^Cannot read "):
            file.text()
