"""Share an exported page through the user's share.py handler or, without one, a secret GitHub gist."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from sitegen.errors import ShareCancelled, ShareError, SitegenError
from sitegen.titles import session_title

if TYPE_CHECKING:
    from sitegen.transcript.model import Transcript

__all__ = [
    "GIST_PREVIEW_MAX_BYTES",
    "ShareOutcome",
    "find_share_handler",
    "gist_file_name",
    "gist_title",
    "run_handler",
    "share_session",
    "share_via_gist",
    "size_warning",
]

# GitHub's gist API returns at most one megabyte of each file's content and marks the rest `truncated`.
# gistpreview.github.io renders the `content` of that API response, so a larger page shows cut off (or
# not at all). Forks that follow `raw_url` for truncated files stop working past 10 MB, where the API
# drops even that. One decimal megabyte is the size a preview shows reliably.
GIST_PREVIEW_MAX_BYTES = 1_000_000

GIST_PREVIEW_URL = "https://gistpreview.github.io/?{id}"

# Seconds `gh` gets to exit after SIGTERM before it is killed.
KILL_GRACE_SECONDS = 3.0

# Share handlers other agents use; sitegen runs only Python ones, but must not silently go around them.
_FOREIGN_HANDLERS = ("share.ts", "share.js", "share.mjs")

_GIST_URL = re.compile(r"https?://[^\s/]+/(?:[^\s]*/)?(?P<id>[0-9A-Za-z]+)/?(?=\s|$)")


@dataclass(frozen=True)
class ShareOutcome:
    """What a share produced, for the CLI to print (and open, with --open)."""

    via: Literal["handler", "gist"]
    # The link to give people and to open: the handler's URL, or the gist's preview page.
    url: str | None = None
    message: str | None = None
    gist_url: str | None = None
    preview_url: str | None = None
    # Size of the exported page, for size_warning().
    page_bytes: int = 0


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _describe(exc: BaseException) -> str:
    detail = _one_line(str(exc))
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


# --- finding and running a share.py handler ------------------------------------------------------


def find_share_handler(agent_dirs: Sequence[Path], explicit: Path | None) -> Path | None:
    """The handler to use: `explicit` (--handler), else the first `share.py` in the agent dirs."""
    if explicit is not None:
        path = explicit.expanduser()
        if not path.is_file():
            raise ShareError(f"Share handler not found: {path}")
        return path
    for agent_dir in agent_dirs:
        candidate = agent_dir.expanduser() / "share.py"
        if candidate.is_file():
            return candidate
        # The user set up a handler for another agent; uploading a gist instead could publish a session
        # they meant to keep on their own server.
        for name in _FOREIGN_HANDLERS:
            foreign = agent_dir.expanduser() / name
            if foreign.is_file():
                raise ShareError(
                    f"Found {foreign}, but sitegen runs only Python handlers: write {candidate} or pass --handler PATH"
                )
    return None


def _load_handler(path: Path) -> Callable[[str], object]:
    # A unique name keeps two handlers (or a handler and a real module called `share`) apart.
    name = f"_sitegen_share_handler_{abs(hash(str(path.resolve())))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ShareError(f"Share handler {path} cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(spec)
        # Registered while it runs so dataclasses and pickling in the handler can find their module.
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        finally:
            sys.modules.pop(name, None)
    except ShareError:
        raise
    except (Exception, SystemExit) as exc:
        raise ShareError(f"Share handler {path} failed to load: {_describe(exc)}") from exc
    share = getattr(module, "share", None)
    if not callable(share):
        raise ShareError(f"Share handler {path} does not define share(html_path)")
    return cast(Callable[[str], object], share)


async def _wait_for(awaitable: Awaitable[object]) -> object:
    return await awaitable


def run_handler(handler_path: Path, html_path: Path) -> ShareOutcome:
    """Run `share(html_path)` from the handler module; an async share is awaited."""
    share = _load_handler(handler_path)
    try:
        result = share(str(html_path))
        if inspect.isawaitable(result):
            result = asyncio.run(_wait_for(result))
    except (Exception, SystemExit) as exc:
        raise ShareError(f"Share handler {handler_path} failed: {_describe(exc)}") from exc
    return _interpret(handler_path, result)


def _interpret(handler_path: Path, result: object) -> ShareOutcome:
    if isinstance(result, str):
        result = {"url": result}
    elif result is None:
        result = {}
    if not isinstance(result, dict):
        raise ShareError(
            f"Share handler {handler_path} returned {type(result).__name__}; "
            "expected a URL string, a dict with url and/or message, or None"
        )
    fields: dict[str, str | None] = {}
    for key in ("url", "message"):
        value = result.get(key)
        if value is not None and not isinstance(value, str):
            raise ShareError(
                f"Share handler {handler_path} returned a {key} of type {type(value).__name__}; expected a string"
            )
        # An empty string is "nothing", as the agents' own handlers treat falsy results.
        fields[key] = (value.strip() or None) if value else None
    url, message = fields["url"], fields["message"]
    if url is None and message is None:
        message = "Session shared"
    return ShareOutcome("handler", url=url, message=message)


# --- the gist fallback ---------------------------------------------------------------------------


def gist_title(transcript: Transcript, redact: Callable[[str], str] | None) -> str:
    """The page's title (as Transcript.display_title makes it) for the gist's description and file name.

    GitHub sees these even when the gist is secret. The text is redacted whole before it is folded
    onto one line and cut: a key's lines joined, or a token cut short, no longer match the patterns."""
    if redact is None:
        return transcript.display_title
    return session_title(
        redact(transcript.title) if transcript.title else None,
        map(redact, transcript.texts_of("user")),
        map(redact, transcript.texts_of("assistant")),
        redact(transcript.source_path.name),
    )


def gist_file_name(title: str) -> str:
    """`Réparer le build!` -> `Reparer-le-build.html`: a safe file name, so gists are recognisable."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_title).strip("-.")[:80].rstrip("-.")
    return f"{stem or 'session'}.html"


def _run_gh(argv: list[str], *, kill_grace: float) -> subprocess.CompletedProcess[str]:
    """Run gh to completion; on Ctrl-C stop it (terminate, then kill) and raise ShareCancelled."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env={**os.environ, "GH_PROMPT_DISABLED": "1"},
        )
    except OSError as exc:
        raise ShareError(f"Could not run {argv[0]}: {_describe(exc)}") from exc
    try:
        stdout, stderr = proc.communicate()
    except KeyboardInterrupt:
        _stop(proc, kill_grace)
        raise ShareCancelled("Share cancelled") from None
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _stop(proc: subprocess.Popen[str], kill_grace: float) -> None:
    try:
        proc.terminate()
        try:
            proc.wait(timeout=kill_grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    except KeyboardInterrupt:
        # A second Ctrl-C while waiting: stop at once.
        proc.kill()
        proc.wait()
    finally:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def share_via_gist(
    html_path: Path, title: str, *, public: bool = False, kill_grace: float = KILL_GRACE_SECONDS
) -> ShareOutcome:
    """Upload the page as a gist (secret unless `public`) with gh; the outcome has gist and preview URLs."""
    gh = shutil.which("gh")
    if gh is None:
        raise ShareError(
            "The GitHub CLI (gh) is not installed: install it from https://cli.github.com "
            "or put a share.py handler in your agent dir"
        )
    auth = _run_gh([gh, "auth", "status"], kill_grace=kill_grace)
    if auth.returncode != 0:
        raise ShareError("The GitHub CLI is not logged in: run `gh auth login`, then share again")
    with tempfile.TemporaryDirectory(prefix="sitegen-gist-") as folder:
        # gh names the gist's file after the file it uploads.
        upload = Path(folder) / gist_file_name(title)
        try:
            shutil.copyfile(html_path, upload)
        except OSError as exc:
            raise ShareError(f"Cannot read the page to upload: {_describe(exc)}") from exc
        visibility = "--public" if public else "--public=false"
        created = _run_gh(
            [gh, "gist", "create", visibility, f"--desc={_one_line(title)}", str(upload)], kill_grace=kill_grace
        )
    if created.returncode != 0:
        reason = _last_line(created.stderr) or _last_line(created.stdout) or f"exit status {created.returncode}"
        raise ShareError(f"gh gist create failed: {reason}")
    urls = [m for line in created.stdout.splitlines() if (m := _GIST_URL.search(line.strip()))]
    if not urls:
        raise ShareError(f"gh gist create printed no gist URL: {_last_line(created.stdout) or '(no output)'}")
    gist = urls[-1]
    gist_url = gist.group(0).rstrip("/")
    preview = GIST_PREVIEW_URL.format(id=gist.group("id"))
    return ShareOutcome("gist", url=preview, gist_url=gist_url, preview_url=preview)


# --- the whole flow ------------------------------------------------------------------------------


def share_session(
    export: Callable[[Path], None],
    *,
    title: str,
    agent_dirs: Sequence[Path],
    handler: Path | None,
    public: bool = False,
) -> ShareOutcome:
    """Export to a temporary page, hand it to the handler (or a gist), and always remove the page."""
    handler_path = find_share_handler(agent_dirs, handler)
    fd, name = tempfile.mkstemp(suffix=".html", prefix="sitegen-share-")
    os.close(fd)
    page = Path(name)
    try:
        try:
            export(page)
        except SitegenError:
            raise
        except OSError as exc:
            raise ShareError(f"Export failed: {_describe(exc)}") from exc
        page_bytes = page.stat().st_size if page.is_file() else 0
        if page_bytes == 0:
            raise ShareError("Export produced an empty page; nothing to share")
        if handler_path is not None:
            outcome = run_handler(handler_path, page)
        else:
            outcome = share_via_gist(page, title, public=public)
        return dataclasses.replace(outcome, page_bytes=page_bytes)
    except KeyboardInterrupt:
        raise ShareCancelled("Share cancelled") from None
    finally:
        page.unlink(missing_ok=True)


def size_warning(page_bytes: int, *, branch: bool = False) -> str | None:
    """A one-line warning when a page is too big for gist previews to show reliably, else None."""
    if page_bytes <= GIST_PREVIEW_MAX_BYTES:
        return None
    size = f"{page_bytes / 1_000_000:.1f} MB"
    limit = f"about {GIST_PREVIEW_MAX_BYTES / 1_000_000:.0f} MB"
    if branch:
        return f"The page is {size} even with --branch; gist previews show up to {limit}, so it may be cut off"
    return (
        f"The page is {size}; gist previews show up to {limit}, so it may be cut off: "
        "--branch shares only the shown path, a smaller page"
    )
