"""Open any supported session file (pi-family JSONL or an odek JSON document) as a transcript."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sitegen.gcpause import collector_paused, file_as_old
from sitegen.odek.audit import load_audit_log
from sitegen.odek.store import load_odek_file
from sitegen.session.session import open_session
from sitegen.transcript.from_odek import transcript_from_odek
from sitegen.transcript.from_pi import transcript_from_session
from sitegen.transcript.model import Transcript

__all__ = ["family_of", "load_transcript"]


def family_of(path: Path) -> str:
    """ "odek" for a .json session document, "pi" for everything else (JSONL)."""
    return "odek" if path.suffix == ".json" else "pi"


def load_transcript(path: Path, default_agent_dirs: Iterable[Path] = ()) -> Transcript:
    """Read a session the way its agent does, without writing anything."""
    with collector_paused():
        if family_of(path) == "odek":
            session = load_odek_file(path)
            audit = load_audit_log(path.parent, session.id)
            transcript = transcript_from_odek(session.data, path, audit)
        else:
            transcript = transcript_from_session(open_session(path, default_agent_dirs=default_agent_dirs))
        # What was loaded lives as long as the transcript: filed as old, it is not walked again and again.
        file_as_old()
        return transcript
