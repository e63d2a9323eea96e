"""Clipboard: stand-in clipboard tools on PATH, run as real processes."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from sitegen.clipboard import ClipboardError, clipboard_commands, copy_to_clipboard
from sitegen.errors import SitegenError

RECORDER = """#!{python}
import json, sys
from pathlib import Path
data = sys.stdin.buffer.read()
log = Path({log!r})
with log.open("a") as out:
    out.write(json.dumps({{"tool": Path(sys.argv[0]).name, "args": sys.argv[1:], "stdin": data.decode()}}) + "\\n")
"""

FAILING = """#!{python}
import sys
sys.stdin.read()
sys.stderr.write("Error: Can't open display: (null)\\n")
sys.exit(1)
"""

# Like the real xclip: leaves a process behind that holds the inherited stdout and stderr.
FORKING = """#!{python}
import subprocess, sys
from pathlib import Path
sys.stdin.read()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
Path({pidfile!r}).write_text(str(child.pid))
"""


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder that is the whole PATH, so only the stand-ins the test writes exist."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return folder


def install(bin_dir: Path, name: str, template: str, **values: str) -> Path:
    script = bin_dir / name
    script.write_text(template.format(python=sys.executable, **values))
    script.chmod(0o755)
    return script


def records(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_copies_with_xclip_to_the_clipboard_selection(bin_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    install(bin_dir, "xclip", RECORDER, log=str(log))
    text = "ZZ_DUMP_1_ZZ\nsystem prompt — naïve ✓\n"
    assert copy_to_clipboard(text) == "xclip"
    assert records(log) == [{"tool": "xclip", "args": ["-selection", "clipboard"], "stdin": text}]


@pytest.mark.parametrize(
    ("tool", "args"),
    [("xsel", ["--clipboard", "--input"]), ("pbcopy", []), ("wl-copy", [])],
)
def test_uses_whichever_tool_exists(bin_dir: Path, tmp_path: Path, tool: str, args: list[str]) -> None:
    log = tmp_path / "log.jsonl"
    install(bin_dir, tool, RECORDER, log=str(log))
    assert copy_to_clipboard("ZZ_COPY_2_ZZ") == tool
    assert records(log) == [{"tool": tool, "args": args, "stdin": "ZZ_COPY_2_ZZ"}]


def test_wayland_session_prefers_wl_copy(bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log.jsonl"
    for tool in ("xclip", "wl-copy"):
        install(bin_dir, tool, RECORDER, log=str(log))
    assert [Path(argv[0]).name for argv in clipboard_commands()] == ["xclip", "wl-copy"]
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert copy_to_clipboard("ZZ_WL_3_ZZ") == "wl-copy"
    assert [r["tool"] for r in records(log)] == ["wl-copy"]


def test_no_tool_is_a_clear_error(bin_dir: Path) -> None:
    with pytest.raises(ClipboardError) as caught:
        copy_to_clipboard("text")
    message = str(caught.value)
    assert "No clipboard tool found" in message and "xclip" in message and "\n" not in message
    assert isinstance(caught.value, SitegenError)


def test_failing_tool_reports_its_error_on_one_line(bin_dir: Path) -> None:
    install(bin_dir, "xclip", FAILING)
    with pytest.raises(ClipboardError) as caught:
        copy_to_clipboard("text")
    assert str(caught.value) == "Could not copy to the clipboard: xclip failed: Error: Can't open display: (null)"


def test_falls_back_to_the_next_tool_when_one_fails(bin_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    install(bin_dir, "xclip", FAILING)
    install(bin_dir, "xsel", RECORDER, log=str(log))
    assert copy_to_clipboard("ZZ_NEXT_4_ZZ") == "xsel"


def test_a_tool_that_stays_in_the_background_does_not_hang(bin_dir: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    install(bin_dir, "xclip", FORKING, pidfile=str(pidfile))
    try:
        # With pipes on stdout/stderr this would wait for the background child and time out.
        assert copy_to_clipboard("ZZ_FORK_5_ZZ") == "xclip"
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
