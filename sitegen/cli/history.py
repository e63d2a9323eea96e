"""What `sitegen history` prints: the prompts of every history.db and of every session, newest first, and
each store's problems."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from sitegen.cli.text import json_line, visible
from sitegen.history.query import StoredPrompt, search_history
from sitegen.history.store import HISTORY_FILE, Prompt, history_stores, is_note
from sitegen.render.page import format_time
from sitegen.session.discover import env_session_dirs, session_files
from sitegen.session.typed import TypedPrompt, read_typed_prompts

__all__ = ["print_history"]


def _where(cwd: str | None) -> str:
    """A prompt's folder, with the home folder as ~."""
    if not cwd:
        return "?"
    home = (os.environ.get("HOME") or str(Path.home())).rstrip("/")
    if home and (cwd == home or cwd.startswith(home + "/")):
        return "~" + cwd[len(home) :]
    return cwd


def _odek_typed() -> list[tuple[Path, TypedPrompt]]:
    """The prompts typed in the sessions of the odek stores (~/.odek/sessions)."""
    from sitegen.errors import SitegenError
    from sitegen.odek.store import OdekStore, default_odek_dirs
    from sitegen.site.prompts.session_prompts import typed_prompts
    from sitegen.transcript.load import load_transcript

    found: list[tuple[Path, TypedPrompt]] = []
    for folder in default_odek_dirs():
        for entry in OdekStore(folder).list():
            try:
                transcript = load_transcript(entry.path)
            except (SitegenError, OSError):
                continue  # `sitegen build` lists it as a problem; here it has no prompt to give
            for entry_id, time_ms, _, text in typed_prompts(transcript):
                found.append((entry.path, TypedPrompt(entry_id, time_ms, text, transcript.session_id, "")))
    return found


def _typed(agent_dirs: list[Path]) -> list[StoredPrompt]:
    """The prompts typed in every session of the agent dirs and the odek stores, each once (a /fork
    copy repeats its original's entries, ids and times)."""
    files = sorted(path for path, _ in session_files(agent_dirs, env_session_dirs()))
    typed = [(path, prompt) for path in files for prompt in read_typed_prompts(path)]
    found: list[StoredPrompt] = []
    seen: set[tuple[str, int | None, str]] = set()
    for path, prompt in [*typed, *_odek_typed()]:
        if prompt.entry_id is not None:
            copy = (prompt.entry_id, prompt.time_ms, prompt.text)
            if copy in seen:
                continue
            seen.add(copy)
        seconds = prompt.time_ms // 1000 if prompt.time_ms is not None else None
        row = Prompt(len(found) + 1, prompt.text, seconds, prompt.cwd or None, prompt.session_id or None, None)
        found.append(StoredPrompt(path, row, prompt.entry_id))
    return found


def print_history(query: str, agent_dirs: list[Path], *, project: Path | None, as_json: bool) -> bool:
    """Print the matching prompts to stdout and each store's problems to stderr; False when no store
    could be read and no session holds a prompt (the command then exits 1)."""
    stores = history_stores(agent_dirs)
    typed = _typed(agent_dirs)
    if not stores and not typed:
        looked = ", ".join(str(folder / HISTORY_FILE) for folder in agent_dirs) or "~/.omp/agent, ~/.xcsh/agent"
        typer.echo(visible(f"No prompt history found (looked for {looked})."), err=True)
        return False
    folder = os.path.abspath(project.expanduser()) if project is not None else None
    found = search_history(stores, query, folder, typed)
    for store, problem in found.problems:
        typer.echo(visible(f"{'note' if is_note(problem) else 'warning'}: {store}: {problem}"), err=True)
    unreadable = bool(stores) and found.readable == 0
    if unreadable and not typed:
        typer.echo("No prompt history could be read.", err=True)
        return False
    out = sys.stdout
    for item in found.prompts:
        prompt = item.prompt
        seconds = prompt.created_s
        if as_json:
            record = {
                "time": format_time(seconds * 1000) if seconds is not None else None,
                "created_at": seconds,
                "project": prompt.cwd,
                "prompt": prompt.text,
                "session_id": prompt.session_id,
                "use_count": prompt.use_count,
                "id": prompt.id,
                "store": str(item.store),
            }
            if item.entry_id is not None:
                record["entry_id"] = item.entry_id  # a prompt found in a session: store is its file
            out.write(json_line(record) + "\n")
            continue
        when = format_time(seconds * 1000)[:16] if seconds is not None else "(no time)".ljust(16)
        # Continuation lines indented, so each prompt reads as one block.
        text = prompt.text.rstrip("\n").replace("\n", "\n  ")
        out.write(visible(f"{when}  {_where(prompt.cwd)}  {text}") + "\n")
    if unreadable:
        # The sessions' prompts are printed, but no store could be read: the command still fails.
        typer.echo("No prompt history could be read.", err=True)
        return False
    if not found.prompts and not as_json:
        typer.echo("No prompts match." if query or project else "No prompts in the history yet.", err=True)
    return True
