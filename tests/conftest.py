"""Shared test fixtures: an isolated HOME, the real session files, no browser windows, and a headless Chromium."""

from __future__ import annotations

import os
import signal
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

# Fixtures shared by the sharing tests (a stand-in gh on PATH, a private temp folder) and the
# fault tests (a generated corpus).
pytest_plugins = ["share_fixtures", "fault_helpers"]

# ../shared beside the checkout; SITEGEN_SHARED names it for a checkout kept elsewhere (a worktree).
SHARED = Path(os.environ.get("SITEGEN_SHARED") or Path(__file__).resolve().parent.parent.parent / "shared")
REAL_FIXTURES = SHARED / "fixtures" / "real"


def pytest_configure(config: pytest.Config) -> None:
    # A suite started in the background (`python -m pytest &` in a script) inherits Ctrl-C ignored, and
    # so would every process a test starts: the tests that stop a build, watch or share with SIGINT
    # would wait for it forever. Python's own handler here leaves the children theirs.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty HOME so no real agent dir is ever read or written."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "PI_CODING_AGENT_DIR",
        "PI_CODING_AGENT_SESSION_DIR",
        "SITEGEN_TERMINAL_ID",
        "TERM_SESSION_ID",
        # omp's other places (sitegen.session.places): a machine's own must not leak into a test.
        "PI_CONFIG_DIR",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True)
def no_browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record webbrowser.open calls instead of opening anything."""
    opened: list[str] = []

    def record(url: str, *args: object, **kwargs: object) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(webbrowser, "open", record)
    return opened


@pytest.fixture(scope="session")
def real_fixtures() -> Path:
    """The folder of real session files from the agents' test suites; skip when ../shared is absent."""
    if not REAL_FIXTURES.is_dir():
        pytest.skip(f"real fixtures not found at {REAL_FIXTURES} (../shared is absent)")
    return REAL_FIXTURES


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium per test module (tests/browser.py launches it; imported here only when a
    test asks for it, so tests without a browser do not load Playwright)."""
    from browser import chromium

    with chromium() as launched:
        yield launched
