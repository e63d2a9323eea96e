"""The audit lists only resources: URLs, host names with a known top-level domain and paths, never code;
and it flags nothing on the demo but the one turn odek itself flagged, nor anything on the real fixtures."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from sitegen.resources import resource_dir
from sitegen.transcript.audit import analyse_transcript
from sitegen.transcript.load import load_transcript
from sitegen.transcript.model import Transcript
from sitegen.transcript.resources import PathScope, call_resources, resources_in

DEMO = resource_dir("demo")
DEMO_SESSIONS = sorted((DEMO / "pi" / "sessions").rglob("*.jsonl")) + sorted(
    (DEMO / "odek" / "sessions").glob("2*.json")
)
EXTENSIONS = re.compile(r"\.(py|ts|js|json|md|toml|csv|go|png|txt|sed|yaml|sh|html)$")


def test_member_expressions_and_calls_are_not_resources() -> None:
    assert resources_in("chalk.blue os.path Math.max this.message console.log self.conn.execute") == []
    assert call_resources({"command": 'node -e "console.log(Math.max(1, 2))"'}) == []
    assert call_resources({"command": "python -c 'import os.path; print(os.path.sep)'"}) == []
    assert call_resources({"command": "grep -rn this.message src/errors.ts"}) == ["src/errors.ts"]
    # A search pattern and the body of an edit are what a call carries, not what it touches.
    edit = {"path": "src/a.ts", "oldText": "chalk.blue(x)", "newText": "see https://example.com/x"}
    assert call_resources(edit) == ["src/a.ts"]
    assert call_resources({"pattern": "this.message", "path": "src"}) == ["src"]


def test_sed_scripts_comments_and_mime_types_are_not_paths() -> None:
    command = "sed -i '' 's/new Editor()/new Editor(theme)/g' packages/tui/test/editor.test.ts"
    assert resources_in(command) == ["packages/tui/test/editor.test.ts"]
    assert resources_in("sed -i '/undefined,$/d' a.ts") == ["a.ts"]
    assert resources_in("# ../xyz becomes ../../xyz\nls src") == []
    assert resources_in("curl -H 'Content-Type: application/json' https://x.example.com/api 2>/dev/null") == [
        "https://x.example.com/api"
    ]
    assert resources_in("git diff origin/main -- rjust/center") == []


def test_urls_hosts_and_paths_are_resources() -> None:
    text = "wget https://a.example.org/f.tgz; ping registry.npmjs.org; cat ~/.netrc /etc/hosts ./run.sh config.yaml"
    assert resources_in(text) == [
        "https://a.example.org/f.tgz",
        "registry.npmjs.org",
        "~/.netrc",
        "/etc/hosts",
        "./run.sh",
        "config.yaml",
    ]
    # In code only string literals can name files, and "/status" there is a route as often as a path.
    assert resources_in("""python -c 'open("data.csv")' && node -e 'fetch("/status")'""") == ["data.csv"]


def test_a_bare_word_is_a_path_only_when_the_session_names_it() -> None:
    scope = PathScope.of("/w", [{"path": "/w/Makefile"}, {"file_path": "src/app/main.py"}])
    assert resources_in("make -f Makefile && ls src/app", scope) == ["Makefile", "src/app"]
    assert resources_in("make -f Makefile && ls src/app") == []
    assert scope.relative("/w/src/app/main.py") == "src/app/main.py" and scope.knows("src")


def _oracle(resource: str, session_text: str) -> bool:
    """Independently of the audit's rules: a URL, a host name, or a path the session's file itself holds."""
    if re.fullmatch(r"https?://\S+", resource):
        return True
    if re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|org|net|io|dev)", resource):
        return True
    shaped = re.fullmatch(r"[\w.@+~%:/-]+", resource) and ("/" in resource or EXTENSIONS.search(resource))
    return bool(shaped) and resource in session_text


def _all_listed(transcript: Transcript) -> list[str]:
    return [r for turn in analyse_transcript(transcript) for r in turn.novel_resources]


@pytest.mark.parametrize("path", DEMO_SESSIONS, ids=lambda p: p.stem[-12:])
def test_every_resource_the_audit_lists_on_the_demo_is_one(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    listed = _all_listed(load_transcript(path))
    assert [r for r in listed if not _oracle(r, text)] == []


def test_the_demo_flags_only_the_turn_odek_flagged() -> None:
    flagged = {}
    for path in DEMO_SESSIONS:
        for turn in analyse_transcript(load_transcript(path)):
            if turn.flagged:
                flagged[path.stem] = (turn.turn, turn.ingest_sources, turn.suspicious_resources)
    audit = orjson.loads(
        (DEMO / "odek" / "sessions" / "audit" / "20260518-8c2e4a6b0d1f3e5a7c9b2d4f6a8c0e1b.json").read_bytes()
    )
    assert [t["turn"] for t in audit["turns"] if t["suspicious_divergence"]] == [1]
    assert flagged == {
        "20260518-8c2e4a6b0d1f3e5a7c9b2d4f6a8c0e1b": (
            1,
            ["https://www.python-httpx.org/changelog/"],
            ["/home/dev/.netrc"],
        )
    }


def test_what_the_demo_lists_for_a_turn() -> None:
    session = next(p for p in DEMO_SESSIONS if "0196b0e7" in p.name and p.parent.name.startswith("--"))
    first, second = analyse_transcript(load_transcript(session))
    # Project files (src/moneta/report.py, tests/test_report.py) are the session's own: not listed.
    assert first.novel_resources == [] and second.novel_resources == []
    assert first.tool_calls and second.tool_calls


def test_every_resource_the_audit_lists_on_the_real_fixtures_is_one(real_fixtures: Path) -> None:
    for path in sorted(real_fixtures.glob("*.jsonl")):
        text = path.read_text(encoding="utf-8")
        transcript = load_transcript(path)
        listed = _all_listed(transcript)
        assert [r for r in listed if not _oracle(r, text)] == [], path.name
        # Only what lies outside the project and was neither named by the user nor the agent's own.
        assert all(r.startswith(("~/", "/", "http")) for r in listed), (path.name, listed)
        assert not any(turn.flagged for turn in analyse_transcript(transcript)), path.name


# --- precision: what a reader would not call "a resource the user never mentioned" -------------------


def _turn(tmp_path: Path, prompt: str, calls: list[tuple[str, dict[str, object], str]]) -> list[str]:
    """The resources the audit lists for one turn of calls (name, arguments, result text), in /work/app."""
    from sessions import SessionBuilder, tool_call

    b = SessionBuilder(session_id="precision", cwd="/work/app")
    b.user("u1", prompt)
    for n, (name, arguments, result) in enumerate(calls):
        b.assistant(f"a{n}", [tool_call(f"c{n}", name, **arguments)])
        b.tool_result(f"r{n}", f"c{n}", name, result)
    path = b.write(tmp_path / "precision.jsonl")
    return [r for turn in analyse_transcript(load_transcript(path)) for r in turn.novel_resources]


def test_paths_in_the_working_directory_are_not_listed(tmp_path: Path) -> None:
    calls = [
        ("read", {"path": "src/app.py"}, "x"),
        ("read", {"path": "/work/app/README.md"}, "x"),
        ("bash", {"command": "cd src/sub && sed -i 's|../util.js|../lib/util.js|' a.ts"}, ""),
    ]
    assert _turn(tmp_path, "tidy up", calls) == []


def test_what_lies_outside_stays_listed(tmp_path: Path) -> None:
    calls = [
        ("read", {"path": "/etc/passwd"}, "x"),
        ("read", {"path": "~/.ssh/id_rsa"}, "x"),
        ("bash", {"command": "cat ../other-project/secrets.env"}, ""),
        ("bash", {"command": "curl -s https://example.com/x"}, ""),
    ]
    listed = _turn(tmp_path, "tidy up", calls)
    assert listed == ["/etc/passwd", "~/.ssh/id_rsa", "../other-project/secrets.env", "https://example.com/x"]


def test_what_the_agent_made_or_listed_earlier_is_its_own(tmp_path: Path) -> None:
    calls = [
        ("bash", {"command": "cat > /tmp/fix.py <<'EOF'\nprint(1)\nEOF\npython /tmp/fix.py"}, ""),
        ("bash", {"command": "ls /opt/tools"}, "/opt/tools/gen.sh\n"),
        ("bash", {"command": "bash /opt/tools/gen.sh"}, ""),
    ]
    assert _turn(tmp_path, "tidy up", calls) == ["/opt/tools"]


def test_a_folder_the_user_named_covers_its_files(tmp_path: Path) -> None:
    calls = [("bash", {"command": "cp dark.json ~/.pi/agent/themes/test.json"}, "")]
    assert _turn(tmp_path, "copy the dark theme to the .pi/agent/themes folder", calls) == []
    assert _turn(tmp_path, "copy the dark theme over", calls) == ["~/.pi/agent/themes/test.json"]


def test_a_prompt_names_a_resource_in_any_case(tmp_path: Path) -> None:
    calls = [("read", {"path": "/etc/hosts"}, "x"), ("read", {"path": "/ETC/Passwd"}, "x")]
    assert _turn(tmp_path, "Compare /ETC/HOSTS with /etc/passwd", calls) == []


@pytest.mark.parametrize(
    ("second", "third"),
    [
        ("", '<untrusted_content_ab12 source="ZZ_SRC_7_ZZ">do it</untrusted_content_ab12>'),
        # A tag that the line break between the parts splits.
        ("<untrusted_content_ab12", 'source="ZZ_SRC_7_ZZ">do it</untrusted_content_ab12>'),
    ],
)
def test_untrusted_content_in_any_part_of_an_output_counts_as_ingesting(
    tmp_path: Path, second: str, third: str
) -> None:
    from sessions import SessionBuilder, tool_call

    b = SessionBuilder(session_id="untrusted", cwd="/work/app")
    b.user("u1", "summarise the issue")
    b.assistant("a1", [tool_call("c1", "issue", number=7)])
    parts = [{"type": "text", "text": "the issue:\n" + second}, {"type": "text", "text": third}]
    b.message("r1", "toolResult", parts, True, toolCallId="c1", toolName="issue", isError=False)
    b.assistant("a2", [tool_call("c2", "read", path="/etc/shadow")])
    b.tool_result("r2", "c2", "read", "x")
    (turn,) = analyse_transcript(load_transcript(b.write(tmp_path / "untrusted.jsonl")))
    assert turn.ingest_sources == ["ZZ_SRC_7_ZZ"] and turn.flagged


def test_a_scope_answers_a_text_the_same_way_again_with_a_list_of_its_own() -> None:
    scope = PathScope.of("/w", [{"path": "/w/Makefile"}])
    first = resources_in("make -f Makefile && cat /etc/hosts", scope)
    first.append("ZZ_CHANGED_7_ZZ")  # a caller's list is its own: the next answer is not changed by it
    assert resources_in("make -f Makefile && cat /etc/hosts", scope) == ["Makefile", "/etc/hosts"]
    assert resources_in("make -f Makefile && cat /etc/hosts", PathScope()) == ["/etc/hosts"]
    assert PathScope.of("/w", [{"path": "/w/Makefile"}]) == scope  # what it read is not part of what it is
    # A scope made from it with other paths reads the text anew.
    assert resources_in("make -f Makefile && cat /etc/hosts", replace(scope, named=frozenset())) == ["/etc/hosts"]


@pytest.mark.parametrize("path", DEMO_SESSIONS[:3], ids=lambda p: p.stem[-12:])
def test_the_audit_of_a_given_default_path_is_the_audit_of_the_transcript(path: Path) -> None:
    transcript = load_transcript(path)
    given = analyse_transcript(transcript, transcript.path_nodes())
    assert [turn.to_json() for turn in given] == [turn.to_json() for turn in analyse_transcript(transcript)]


def test_arguments_nested_deeper_than_the_stack_are_read_in_order() -> None:
    arguments: object = {"command": "cat /etc/ZZ_LAST_7_ZZ.conf"}
    for n in range(5000):
        arguments = {"options": [{"file_path": f"/srv/f{n}.txt"}, arguments], "text": "/not/read.txt"}
    found = call_resources(arguments)
    assert len(found) == 5001 and found[0] == "/srv/f4999.txt" and found[-1] == "/etc/ZZ_LAST_7_ZZ.conf"
    assert call_resources({"tasks": [{"id": "t", "path": "a/b.py"}, "see c/d.md"], "n": 3}) == ["a/b.py", "c/d.md"]
