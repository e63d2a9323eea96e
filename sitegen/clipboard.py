"""Copy text to the system clipboard with whichever clipboard tool is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping

from sitegen.errors import SitegenError

__all__ = ["ClipboardError", "clipboard_commands", "copy_to_clipboard"]

# Seconds a clipboard tool gets to take the text; they return at once, so more means it is stuck.
_TIMEOUT_SECONDS = 10.0

_WAYLAND = ("wl-copy",)
_X11 = (("xclip", "-selection", "clipboard"), ("xsel", "--clipboard", "--input"))
_MACOS = ("pbcopy",)


class ClipboardError(SitegenError):
    """No clipboard tool is installed, or the one found failed."""


def clipboard_commands(env: Mapping[str, str] = os.environ) -> list[list[str]]:
    """The clipboard commands on PATH, the one for the running display server first."""
    order = [_WAYLAND, *_X11, _MACOS]
    # wl-copy fails without a Wayland session and xclip without X; prefer what the session runs.
    if not env.get("WAYLAND_DISPLAY"):
        order = [*_X11, _MACOS, _WAYLAND]
    path = env.get("PATH")
    return [[found, *argv[1:]] for argv in order if (found := shutil.which(argv[0], path=path)) is not None]


def copy_to_clipboard(text: str) -> str:
    """Put `text` on the clipboard; return the name of the tool that did it."""
    commands = clipboard_commands()
    if not commands:
        raise ClipboardError("No clipboard tool found: install wl-clipboard, xclip or xsel (pbcopy on macOS)")
    failure = ""
    for argv in commands:
        name = os.path.basename(argv[0])
        # xclip and wl-copy stay in the background to serve the selection, holding on to inherited
        # pipes; stderr goes to a file and stdout nowhere so waiting for them never hangs.
        with tempfile.TemporaryFile() as errors:
            try:
                done = subprocess.run(
                    argv,
                    input=text.encode("utf-8"),
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    timeout=_TIMEOUT_SECONDS,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                failure = f"{name} did not finish within {_TIMEOUT_SECONDS:.0f} seconds"
                continue
            except OSError as exc:
                failure = f"{name} could not run: {exc.strerror or exc}"
                continue
            if done.returncode == 0:
                return name
            errors.seek(0)
            lines = errors.read().decode("utf-8", "replace").strip().splitlines()
            failure = f"{name} failed: {lines[-1].strip() if lines else f'exit status {done.returncode}'}"
    raise ClipboardError(f"Could not copy to the clipboard: {failure}")
