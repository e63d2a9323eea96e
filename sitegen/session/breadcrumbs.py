"""Which session a terminal used last: omp's breadcrumbs, named the way omp names the terminal."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from sitegen.fileio import read_regular_file
from sitegen.session.places import state_dirs

__all__ = ["TERMINAL_ID_ENV", "SameDir", "breadcrumb_session", "terminal_id"]

TERMINAL_ID_ENV = "SITEGEN_TERMINAL_ID"
# A breadcrumb inside a subagent's folder points back at its parent after this many levels at most.
_MAX_NESTING = 8
# A breadcrumb is a cwd and a path: more than this is not one.
_MAX_CRUMB_BYTES = 64 << 10


class SameDir:
    """cwd equality: as written, normalised, or through symlinks (macOS /tmp is /private/tmp)."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.norm = os.path.normpath(cwd) if cwd else ""
        self._real: str | None = None

    def __call__(self, other: str) -> bool:
        if not other or not self.cwd:
            return False
        if other == self.cwd or os.path.normpath(other) == self.norm:
            return True
        if self._real is None:
            self._real = os.path.realpath(self.cwd)
        return os.path.realpath(other) == self._real


def _stdin_tty() -> str | None:
    try:
        if not os.isatty(0):
            return None
        ttyname: Callable[[int], str] | None = getattr(os, "ttyname", None)
        return ttyname(0) if ttyname is not None else None
    except OSError:
        return None


def terminal_id(env: Mapping[str, str] = os.environ, *, tty: Callable[[], str | None] = _stdin_tty) -> str | None:
    """This terminal's breadcrumb name, derived the way omp does; SITEGEN_TERMINAL_ID overrides it."""
    override = env.get(TERMINAL_ID_ENV, "").strip()
    if override:
        return re.sub(r"[/\\]", "-", override)
    # The stdin TTY device is unique per terminal tab: /dev/pts/3 becomes pts-3.
    device = tty()
    if device and device.startswith("/dev/"):
        return device[5:].replace("/", "-")
    pane = env.get("ZELLIJ_PANE_ID")
    if pane:
        session = re.sub(r"[/\\]", "-", env.get("ZELLIJ_SESSION_NAME", ""))
        return f"zellij-{session}-{pane}" if session else f"zellij-{pane}"
    for name, prefix in (
        ("TMUX_PANE", "tmux"),
        ("CMUX_SURFACE_ID", "cmux"),
        ("KITTY_WINDOW_ID", "kitty"),
        ("WEZTERM_PANE", "wezterm"),
        ("TERM_SESSION_ID", "apple"),
        ("WT_SESSION", "wt"),
    ):
        value = env.get(name)
        if value:
            return f"{prefix}-{value}"
    return None


def _interactive_root(session_file: Path) -> Path:
    """A subagent transcript (<parent>/<agent>.jsonl) stands for the session that owns the folder."""
    current = session_file
    for _ in range(_MAX_NESTING):
        parent_file = Path(str(current.parent) + ".jsonl")
        if current.parent == current or not parent_file.is_file():
            break
        current = parent_file
    return current


def breadcrumb_session(cwd: str, dirs: Sequence[Path], *, env: Mapping[str, str] = os.environ) -> Path | None:
    """The session this terminal last used in cwd, from <agent dir>/terminal-sessions/<terminal id>
    (or the same under $XDG_STATE_HOME/omp for an agent dir under $XDG_DATA_HOME/omp)."""
    ident = terminal_id(env)
    if not ident:
        return None
    same = SameDir(cwd)
    for state, _ in state_dirs(dirs, env):
        try:
            data = read_regular_file(state / "terminal-sessions" / ident, _MAX_CRUMB_BYTES)
        except OSError:
            continue
        text = data.decode("utf-8", errors="replace")
        lines = text.strip().split("\n")
        if len(lines) < 2:
            continue
        crumb_cwd, recorded = lines[0].rstrip("\r"), lines[1].rstrip("\r")
        if not recorded or not same(crumb_cwd):
            continue
        # A relative session path was recorded relative to the breadcrumb's cwd.
        session_file = Path(crumb_cwd) / recorded
        if session_file.is_file():
            return _interactive_root(session_file)
    return None
