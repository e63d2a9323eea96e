"""What `sitegen history` prints: the prompts of every history.db, newest first, and each store's problems."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from sitegen.cli.text import json_line, visible
from sitegen.history.query import search_history
from sitegen.history.store import HISTORY_FILE, history_stores, is_note
from sitegen.render.page import format_time

__all__ = ["print_history"]


def _where(cwd: str | None) -> str:
    """A prompt's folder, with the home folder as ~."""
    if not cwd:
        return "?"
    home = (os.environ.get("HOME") or str(Path.home())).rstrip("/")
    if home and (cwd == home or cwd.startswith(home + "/")):
        return "~" + cwd[len(home) :]
    return cwd


def print_history(query: str, agent_dirs: list[Path], *, project: Path | None, as_json: bool) -> bool:
    """Print the matching prompts to stdout and each store's problems to stderr; False when no
    store could be read at all (the command then exits 1)."""
    stores = history_stores(agent_dirs)
    if not stores:
        looked = ", ".join(str(folder / HISTORY_FILE) for folder in agent_dirs) or "~/.omp/agent, ~/.xcsh/agent"
        typer.echo(visible(f"No prompt history found (looked for {looked})."), err=True)
        return False
    folder = os.path.abspath(project.expanduser()) if project is not None else None
    found = search_history(stores, query, folder)
    for store, problem in found.problems:
        typer.echo(visible(f"{'note' if is_note(problem) else 'warning'}: {store}: {problem}"), err=True)
    if found.readable == 0:
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
            out.write(json_line(record) + "\n")
            continue
        when = format_time(seconds * 1000)[:16] if seconds is not None else "(no time)".ljust(16)
        # Continuation lines indented, so each prompt reads as one block.
        text = prompt.text.rstrip("\n").replace("\n", "\n  ")
        out.write(visible(f"{when}  {_where(prompt.cwd)}  {text}") + "\n")
    if not found.prompts and not as_json:
        typer.echo("No prompts match." if query or project else "No prompts in the history yet.", err=True)
    return True
