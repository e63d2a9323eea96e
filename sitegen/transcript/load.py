"""Open any supported session file (pi-family JSONL or an odek JSON document) as a transcript."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sitegen.odek.audit import load_audit_log
from sitegen.odek.store import load_odek_file
from sitegen.session.session import open_session
from sitegen.transcript.from_odek import transcript_from_odek
from sitegen.transcript.from_pi import transcript_from_session
from sitegen.transcript.model import Transcript

__all__ = ["collector_paused", "family_of", "load_transcript"]


def family_of(path: Path) -> str:
    """ "odek" for a .json session document, "pi" for everything else (JSONL)."""
    return "odek" if path.suffix == ".json" else "pi"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Loading makes hundreds of thousands of dicts and lists and no garbage cycles, so the cyclic
    collector would walk them again and again for nothing: a third of the time of a 50 MB load."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_transcript(path: Path, default_agent_dirs: Iterable[Path] = ()) -> Transcript:
    """Read a session the way its agent does, without writing anything."""
    with collector_paused():
        if family_of(path) == "odek":
            session = load_odek_file(path)
            audit = load_audit_log(path.parent, session.id)
            return transcript_from_odek(session.data, path, audit)
        return transcript_from_session(open_session(path, default_agent_dirs=default_agent_dirs))
