"""Sharing: handler modules and a stand-in `gh` written to tmp_path, run for real."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from share_fixtures import GIST_ID, gh_calls

import sitegen
from sitegen.errors import ShareCancelled, ShareError
from sitegen.share import (
    GIST_PREVIEW_MAX_BYTES,
    ShareOutcome,
    find_share_handler,
    gist_file_name,
    run_handler,
    share_session,
    share_via_gist,
    size_warning,
)

REPO_ROOT = Path(sitegen.__file__).resolve().parent.parent
PAGE = "<!doctype html><title>ZZ_PAGE_1_ZZ</title><p>ZZ_BODY_1_ZZ</p>\n"


def write_page(content: str = PAGE) -> Callable[[Path], None]:
    def export(path: Path) -> None:
        path.write_text(content, encoding="utf-8")

    return export


def write_handler(folder: Path, body: str, name: str = "share.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


# --- finding a handler ---------------------------------------------------------------------------


def test_explicit_handler_wins(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_handler(agent, "def share(p): return None\n")
    explicit = write_handler(tmp_path / "mine", "def share(p): return None\n", name="upload.py")
    assert find_share_handler([agent], explicit) == explicit


def test_missing_explicit_handler_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ShareError, match=r"Share handler not found: .*nope\.py"):
        find_share_handler([], tmp_path / "nope.py")


def test_first_agent_dir_with_share_py(tmp_path: Path) -> None:
    omp, pi = tmp_path / ".omp" / "agent", tmp_path / ".pi" / "agent"
    omp.mkdir(parents=True)
    second = write_handler(pi, "def share(p): return None\n")
    assert find_share_handler([omp, pi], None) == second
    first = write_handler(omp, "def share(p): return None\n")
    assert find_share_handler([omp, pi], None) == first


def test_no_handler_anywhere(tmp_path: Path) -> None:
    assert find_share_handler([tmp_path / "missing", tmp_path], None) is None


def test_a_javascript_handler_is_not_silently_skipped(tmp_path: Path) -> None:
    agent = tmp_path / ".omp" / "agent"
    write_handler(agent, "export default async (p) => 'x'\n", name="share.ts")
    with pytest.raises(ShareError, match=r"share\.ts, but sitegen runs only Python handlers"):
        find_share_handler([agent], None)


# --- running a handler ---------------------------------------------------------------------------

RESULTS = [
    ("url-string", "return 'https://share.example/s/ZZ1'", ShareOutcome("handler", url="https://share.example/s/ZZ1")),
    ("empty-string", "return ''", ShareOutcome("handler", message="Session shared")),
    ("none", "return None", ShareOutcome("handler", message="Session shared")),
    (
        "dict-url-message",
        "return {'url': 'https://share.example/s/ZZ2', 'message': 'Uploaded to the team wiki'}",
        ShareOutcome("handler", url="https://share.example/s/ZZ2", message="Uploaded to the team wiki"),
    ),
    (
        "dict-url",
        "return {'url': 'https://share.example/s/ZZ3'}",
        ShareOutcome("handler", url="https://share.example/s/ZZ3"),
    ),
    (
        "dict-message",
        "return {'message': 'Copied to /srv/share'}",
        ShareOutcome("handler", message="Copied to /srv/share"),
    ),
    ("dict-empty", "return {}", ShareOutcome("handler", message="Session shared")),
]


@pytest.mark.parametrize(("body", "expected"), [r[1:] for r in RESULTS], ids=[r[0] for r in RESULTS])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_handler_results(tmp_path: Path, body: str, expected: ShareOutcome, is_async: bool) -> None:
    seen = tmp_path / "seen.txt"
    handler = write_handler(
        tmp_path / "agent",
        f"""
        import asyncio
        from pathlib import Path

        {"async " if is_async else ""}def share(html_path: str):
            {"await asyncio.sleep(0)" if is_async else "pass"}
            Path({str(seen)!r}).write_text(Path(html_path).read_text())
            {body}
        """,
    )
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    assert run_handler(handler, page) == expected
    assert seen.read_text() == PAGE


FAILURES = [
    ("syntax-error", "def share(p) return 1\n", "failed to load: SyntaxError"),
    ("import-error", "import sitegen_no_such_module\ndef share(p): pass\n", "failed to load: ModuleNotFoundError"),
    ("no-share", "def upload(p): return 'x'\n", "does not define share(html_path)"),
    ("share-not-callable", "share = 'https://x'\n", "does not define share(html_path)"),
    ("raises", "def share(p):\n    raise RuntimeError('quota\\nexceeded')\n", "failed: RuntimeError: quota exceeded"),
    ("async-raises", "async def share(p):\n    raise ValueError('bad token')\n", "failed: ValueError: bad token"),
    ("exits", "import sys\ndef share(p):\n    sys.exit(3)\n", "failed: SystemExit: 3"),
    ("returns-int", "def share(p):\n    return 42\n", "returned int; expected a URL string"),
    ("returns-list", "def share(p):\n    return ['https://x']\n", "returned list; expected a URL string"),
    ("url-not-str", "def share(p):\n    return {'url': 5}\n", "returned a url of type int; expected a string"),
]


@pytest.mark.parametrize(("source", "expected"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_handler_failures(tmp_path: Path, source: str, expected: str) -> None:
    handler = write_handler(tmp_path / "agent", source)
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    with pytest.raises(ShareError) as caught:
        run_handler(handler, page)
    message = str(caught.value)
    assert expected in message and str(handler) in message
    assert "\n" not in message


# --- the whole flow with a handler ---------------------------------------------------------------


def test_share_session_with_handler_removes_the_page(tmp_path: Path, temp_dir: Path) -> None:
    seen = tmp_path / "seen.json"
    agent = tmp_path / ".pi" / "agent"
    write_handler(
        agent,
        f"""
        import json
        from pathlib import Path

        def share(html_path):
            p = Path(html_path)
            Path({str(seen)!r}).write_text(json.dumps([html_path, p.read_text()]))
            return "https://share.example/ZZ4"
        """,
    )
    outcome = share_session(write_page(), title="T", agent_dirs=[agent], handler=None, public=False)
    assert outcome == ShareOutcome("handler", url="https://share.example/ZZ4", page_bytes=len(PAGE.encode()))
    html_path, content = json.loads(seen.read_text())
    assert content == PAGE
    assert Path(html_path).parent == temp_dir and html_path.endswith(".html")
    assert list(temp_dir.iterdir()) == []


def test_failing_handler_does_not_fall_back_to_a_gist(
    tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path]
) -> None:
    folder = fake_gh()
    agent = tmp_path / "agent"
    write_handler(agent, "def share(p):\n    raise ConnectionError('server down')\n")
    with pytest.raises(ShareError, match="failed: ConnectionError: server down"):
        share_session(write_page(), title="T", agent_dirs=[agent], handler=None, public=False)
    assert gh_calls(folder) == []
    assert list(temp_dir.iterdir()) == []


@pytest.mark.parametrize(
    ("export", "expected"),
    [
        ("sitegen-error", "Cannot export in-memory session to HTML"),
        ("os-error", "Export failed: PermissionError"),
        ("nothing", "Export produced an empty page"),
    ],
)
def test_export_failure_ends_the_share(
    temp_dir: Path, fake_gh: Callable[..., Path], export: str, expected: str
) -> None:
    folder = fake_gh()

    def failing(path: Path) -> None:
        if export == "sitegen-error":
            raise ShareError("Cannot export in-memory session to HTML")
        if export == "os-error":
            raise PermissionError(13, "Permission denied", str(path))

    with pytest.raises(ShareError, match=expected):
        share_session(failing, title="T", agent_dirs=[], handler=None, public=False)
    assert gh_calls(folder) == []
    assert list(temp_dir.iterdir()) == []


# --- the gist fallback ---------------------------------------------------------------------------


def test_gist_fallback_uploads_a_secret_gist_named_after_the_title(
    temp_dir: Path, fake_gh: Callable[..., Path]
) -> None:
    folder = fake_gh()
    outcome = share_session(
        write_page(), title="Fix the build: naïve cache!", agent_dirs=[], handler=None, public=False
    )
    preview = f"https://gistpreview.github.io/?{GIST_ID}"
    assert outcome == ShareOutcome(
        "gist",
        url=preview,
        gist_url=f"https://gist.github.com/{GIST_ID}",
        preview_url=preview,
        page_bytes=len(PAGE.encode()),
    )
    auth, create = gh_calls(folder)
    assert auth == {"args": ["auth", "status"], "files": {}}
    args = create["args"]
    assert isinstance(args, list)
    assert args[:4] == ["gist", "create", "--public=false", "--desc=Fix the build: naïve cache!"]
    assert Path(args[4]).name == "Fix-the-build-naive-cache.html"
    assert create["files"] == {"Fix-the-build-naive-cache.html": PAGE}
    assert list(temp_dir.iterdir()) == []


def test_public_gist_when_asked(temp_dir: Path, fake_gh: Callable[..., Path]) -> None:
    folder = fake_gh()
    share_session(write_page(), title="T", agent_dirs=[], handler=None, public=True)
    args = gh_calls(folder)[1]["args"]
    assert isinstance(args, list) and args[2] == "--public"


def test_gist_url_with_owner_is_parsed(tmp_path: Path, fake_gh: Callable[..., Path]) -> None:
    fake_gh(url=f"https://gist.github.com/octocat/{GIST_ID}")
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    outcome = share_via_gist(page, "T")
    assert outcome.gist_url == f"https://gist.github.com/octocat/{GIST_ID}"
    assert outcome.preview_url == f"https://gistpreview.github.io/?{GIST_ID}"


def test_gh_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    with pytest.raises(ShareError, match=r"GitHub CLI \(gh\) is not installed: install it from https://cli.github.com"):
        share_via_gist(page, "T")


def test_gh_not_logged_in(tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path]) -> None:
    folder = fake_gh(auth_rc=1)
    with pytest.raises(ShareError, match=r"not logged in: run `gh auth login`"):
        share_session(write_page(), title="T", agent_dirs=[], handler=None, public=False)
    assert [call["args"] for call in gh_calls(folder)] == [["auth", "status"]]
    assert list(temp_dir.iterdir()) == []


def test_gist_create_failure_shows_ghs_reason(tmp_path: Path, fake_gh: Callable[..., Path]) -> None:
    fake_gh(create="fail")
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    with pytest.raises(ShareError) as caught:
        share_via_gist(page, "T")
    assert str(caught.value) == "gh gist create failed: X Failed to create gist: HTTP 422: Validation Failed"


def test_gist_create_without_a_url(tmp_path: Path, fake_gh: Callable[..., Path]) -> None:
    fake_gh(create="nourl")
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    with pytest.raises(ShareError, match="gh gist create printed no gist URL: created"):
        share_via_gist(page, "T")


def test_real_gh_reports_not_logged_in(tmp_path: Path, temp_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("gh") is None:
        pytest.skip("the GitHub CLI (Debian package gh) is not installed")
    config = tmp_path / "gh-config"
    monkeypatch.setenv("GH_CONFIG_DIR", str(config))
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ShareError) as caught:
        share_session(write_page(), title="T", agent_dirs=[], handler=None, public=False)
    assert str(caught.value) == "The GitHub CLI is not logged in: run `gh auth login`, then share again"
    assert list(temp_dir.iterdir()) == []


# --- cancellation with a real SIGINT -------------------------------------------------------------

CHILD = """
import signal, sys
from pathlib import Path
from sitegen.errors import ShareCancelled
from sitegen.share import share_session, share_via_gist

# Python's Ctrl-C handling, even if whatever started this process ignored SIGINT.
signal.signal(signal.SIGINT, signal.default_int_handler)
page = Path(sys.argv[2])
try:
    if sys.argv[1] == "session":
        export = lambda p: p.write_text("<p>ZZ_CANCEL_ZZ</p>")
        share_session(export, title="T", agent_dirs=[], handler=None, public=False)
    else:
        page.write_text("<p>ZZ_CANCEL_ZZ</p>")
        share_via_gist(page, "T", kill_grace=0.5)
except ShareCancelled as exc:
    print(exc)
    sys.exit(130)
print("not cancelled")
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


def _wait_until(predicate: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.parametrize(("entry", "mode"), [("session", "hang"), ("gist", "stubborn")])
def test_ctrl_c_stops_gh_and_cleans_up(
    tmp_path: Path, temp_dir: Path, fake_gh: Callable[..., Path], entry: str, mode: str
) -> None:
    """SIGINT while gh runs: gh is stopped (killed, if it ignores SIGTERM), nothing is left behind."""
    folder = fake_gh(create=mode)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "TMPDIR": str(temp_dir)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, entry, str(tmp_path / "page.html")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pidfile = folder / "gh.pid"
    try:
        assert _wait_until(pidfile.exists, 30), "the stand-in gh never started"
        gh_pid = int(pidfile.read_text())
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    try:
        assert child.returncode == 130, stderr
        assert stdout.strip() == "Share cancelled"
        assert _wait_until(lambda: not _alive(gh_pid), 5), "gh was left running"
        assert list(temp_dir.iterdir()) == []
    finally:
        if _alive(gh_pid):
            os.kill(gh_pid, signal.SIGKILL)


def test_keyboard_interrupt_in_a_handler_cancels_the_share(tmp_path: Path, temp_dir: Path) -> None:
    agent = tmp_path / "agent"
    write_handler(agent, "def share(p):\n    raise KeyboardInterrupt\n")
    with pytest.raises(ShareCancelled, match="Share cancelled"):
        share_session(write_page(), title="T", agent_dirs=[agent], handler=None, public=False)
    assert list(temp_dir.iterdir()) == []


# --- names and sizes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Fix the build", "Fix-the-build.html"),
        ("../../etc/passwd", "etc-passwd.html"),
        ("Réparer le cache: v2.1", "Reparer-le-cache-v2.1.html"),
        ("修复", "session.html"),
        ("", "session.html"),
        ("x" * 200, "x" * 80 + ".html"),
    ],
)
def test_gist_file_name(title: str, name: str) -> None:
    assert gist_file_name(title) == name


def test_size_warning() -> None:
    assert size_warning(GIST_PREVIEW_MAX_BYTES) is None
    warning = size_warning(3_200_000)
    assert warning is not None
    assert warning.startswith("The page is 3.2 MB; gist previews show up to about 1 MB")
    assert "--branch" in warning and "\n" not in warning
    branch_warning = size_warning(3_200_000, branch=True)
    assert branch_warning is not None and "even with --branch" in branch_warning
