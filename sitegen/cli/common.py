"""What every command shares: one-line errors and exit codes, SESSION arguments, agent dirs, --open."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from sitegen.cli.text import visible as _visible
from sitegen.errors import SitegenError

__all__ = [
    "AgentDirOption",
    "OdekDirOption",
    "check_given_dirs",
    "fail",
    "given_agent_dirs",
    "open_in_browser",
    "pi_only",
    "resolve_argument",
    "user_errors",
]

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(_visible(message), err=True)  # messages can quote a session's names and paths
    return typer.Exit(code)


def user_errors(command: F) -> F:
    """Turn core errors into one line on stderr and exit 1; never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.BadParameter):
            # Usage mistakes found by the command itself (typer.BadParameter): the usage hint, exit 2.
            raise
        except SitegenError as error:
            raise fail(str(error)) from None
        except KeyboardInterrupt:
            raise fail("Interrupted", 130) from None
        except OSError as error:
            where = f": {error.filename}" if error.filename else ""
            raise fail(f"{error.strerror or error}{where}") from None
        except Exception as error:
            if os.environ.get("SITEGEN_DEBUG"):
                raise
            raise fail(
                f"Internal error: {type(error).__name__}: {error} (SITEGEN_DEBUG=1 shows the traceback)", 2
            ) from None

    return wrapper  # type: ignore[return-value]


def given_agent_dirs(extra: list[Path] | None) -> list[Path]:
    from sitegen.session.discover import agent_dirs

    return agent_dirs([p.expanduser() for p in extra or []])


def resolve_argument(session: str | None, agent_dir: list[Path] | None, odek_dir: list[Path] | None = None) -> Path:
    """A SESSION argument: pi-family sessions first, then ids of the odek stores."""
    from sitegen.errors import SessionNotFound
    from sitegen.odek.store import OdekStore, default_odek_dirs
    from sitegen.session.discover import resolve_session

    try:
        return resolve_session(session, cwd=os.getcwd(), dirs=given_agent_dirs(agent_dir))
    except SessionNotFound:
        if session is None or "/" in session or "\\" in session or session.endswith((".jsonl", ".json")):
            raise
        for store in default_odek_dirs(odek_dir or []):
            try:
                return OdekStore(store).resolve(session).path
            except SessionNotFound:
                continue
        raise


def pi_only(path: Path, command: str) -> None:
    """Commands that work on the pi-family entry model say so for odek sessions."""
    if path.suffix == ".json":
        raise fail(f"sitegen {command} works on pi, omp and xcsh sessions; {path.name} is an odek session")


def open_in_browser(path_or_url: str) -> None:
    url = path_or_url if "://" in path_or_url else Path(path_or_url).resolve().as_uri()
    import webbrowser  # only --open pays for its import

    webbrowser.open(url)


AgentDirOption = Annotated[
    list[Path] | None,
    typer.Option("--agent-dir", help="An agent dir to read besides ~/.pi/agent, ~/.omp/agent, ~/.xcsh/agent."),
]
OdekDirOption = Annotated[
    list[Path] | None,
    typer.Option("--odek-dir", help="An odek session store besides ~/.odek/sessions."),
]


def check_given_dirs(agent_dir: list[Path] | None, odek_dir: list[Path] | None) -> None:
    """A folder named on the command line must exist: a typo would otherwise build an empty site."""
    for option, given in (("--agent-dir", agent_dir), ("--odek-dir", odek_dir)):
        for folder in given or []:
            if not folder.expanduser().is_dir():
                raise fail(f"Not a folder: {option} {folder}")
