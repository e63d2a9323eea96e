"""Stand-ins for sharing tests: a fake `gh` first on PATH and a private temp folder (fixtures)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

GIST_ID = "0123456789abcdef0123456789abcdef"

# A stand-in for the GitHub CLI: records every call (arguments and uploaded files) and behaves as
# gh.json next to it says.
FAKE_GH = """#!{python}
import json, os, signal, sys, time
from pathlib import Path
here = Path(__file__).resolve().parent
config = json.loads((here / "gh.json").read_text())
args = sys.argv[1:]
files = {{Path(a).name: Path(a).read_text() for a in args if a.endswith(".html") and Path(a).is_file()}}
with (here / "gh-calls.jsonl").open("a") as log:
    log.write(json.dumps({{"args": args, "files": files}}) + "\\n")
if args[:2] == ["auth", "status"]:
    if config.get("auth_rc", 0):
        sys.stderr.write("You are not logged into any GitHub hosts. Run gh auth login to authenticate.\\n")
    sys.exit(config.get("auth_rc", 0))
mode = config.get("create", "ok")
if mode in ("hang", "stubborn"):
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    (here / "gh.pid").write_text(str(os.getpid()))
    time.sleep(600)
if mode == "fail":
    sys.stderr.write("- Creating gist...\\nX Failed to create gist: HTTP 422: Validation Failed\\n")
    sys.exit(1)
if mode == "nourl":
    print("created")
    sys.exit(0)
sys.stderr.write("- Creating gist ZZ.html\\n")
print(config.get("url", "https://gist.github.com/{gist_id}"))
"""


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tempfile's folder for this test, so a leftover temporary page would show."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


@pytest.fixture
def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Install the stand-in gh first on PATH; call it with its behaviour; returns its folder."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    script = folder / "gh"
    script.write_text(FAKE_GH.format(python=sys.executable, gist_id=GIST_ID))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")

    def configure(**config: object) -> Path:
        (folder / "gh.json").write_text(json.dumps(config))
        return folder

    configure()
    return configure


def gh_calls(folder: Path) -> list[dict[str, object]]:
    log = folder / "gh-calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
