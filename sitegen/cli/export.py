"""`sitegen export --format md|json`: write the text export where `export` would write the page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sitegen.errors import SitegenError
from sitegen.fileio import replacing
from sitegen.odek.store import is_session_filename, load_odek_file
from sitegen.render.export_text import json_export, markdown_export
from sitegen.session.context import LAST_ENTRY, SessionContext, build_session_context
from sitegen.session.session import open_session
from sitegen.transcript.model import Transcript
from sitegen.transcript.transform import map_transcript_text

__all__ = ["export_text", "refused_text_target"]


def _is_odek_session(path: Path) -> bool:
    """A file odek would load as one of its sessions (a name odek gives them, a document it reads)."""
    if not is_session_filename(path.name):
        return False
    try:
        load_odek_file(path)
    except (SitegenError, OSError, ValueError):
        return False
    return True


def refused_text_target(target: Path, session: Path) -> str | None:
    """Why `export --format md|json` must not write `target`, or None. The one place its rule lives, so
    that the rule `build --out` follows (no agent dir, /, home, a session file) can be called from here
    once it is shared: never over the session, another pi session (.jsonl) or an odek session."""
    if target.suffix == ".jsonl":
        return f"Refusing to write over a session file: {target}"
    if target.exists():
        if target.resolve() == session.resolve():
            return f"Refusing to write over the session file: {target}"
        if target.suffix == ".json" and _is_odek_session(target):
            return f"Refusing to write over an odek session file: {target}"
    return None


def _context(source: Path, transcript: Transcript, agent_dirs: list[Path]) -> SessionContext | None:
    """What the agent's rules make of the context at the shown leaf; pi-family sessions only."""
    if transcript.family != "pi":
        return None
    session = open_session(source, default_agent_dirs=agent_dirs)
    leaf = transcript.default_leaf
    return build_session_context(session.entries, leaf if leaf is not None else LAST_ENTRY, session.by_id)


def export_text(
    transcript: Transcript,
    source: Path,
    target: Path,
    export_format: str,
    agent_dirs: list[Path],
    *,
    text_filter: Callable[[str], str] | None = None,
    value_filter: Callable[[Any], Any] | None = None,
) -> None:
    """Write `transcript` as Markdown ("md") or JSON ("json") to target (checked by the caller: never a
    session file), through a temporary name. Filters redact as they do for the page."""
    if text_filter is not None:
        map_transcript_text(transcript, text_filter, value_filter)
    if export_format == "md":
        text = markdown_export(transcript)
    else:
        context = _context(source, transcript, agent_dirs)
        if context is not None and text_filter is not None:
            context.messages = []  # only counted in the export, and not redacted
        text = json_export(transcript, context)
    with replacing(target, undoable=False) as handle:
        handle.write(text.encode("utf-8", "surrogatepass"))
