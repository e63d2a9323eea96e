"""Which agent's context rules a session file follows: omp 18's for the files omp wrote, else pi 0.73's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import Any

from sitegen.session.context import OMP_RULES, PI_RULES
from sitegen.session.entries import Entry

__all__ = ["OMP_ONLY_ENTRY_TYPES", "context_rules", "written_by_omp"]

# Entry types pi 0.73 never writes: a file holding one was written by omp (or a fork of it).
OMP_ONLY_ENTRY_TYPES = frozenset(
    {
        "ttsr_injection",
        "session_init",
        "mode_change",
        "title_change",
        "model_usage",
        "service_tier_change",
        "credential_pin",
        "reset_boundary",
        "session_exit",
    }
)
# Agent dirs by the folder that holds them: ~/.omp/agent, $XDG_DATA_HOME/omp, ~/.pi/agent, ~/.xcsh/agent.
_OMP_DIRS = frozenset({".omp"})
_OTHER_DIRS = frozenset({".pi", ".xcsh"})


def _dir_says(path: PurePath) -> bool | None:
    """True under an omp agent dir, False under another agent's, None when the path does not tell."""
    parts = path.parts
    for index in range(len(parts) - 1, -1, -1):
        part = parts[index]
        if part in _OMP_DIRS:
            return True
        if part in _OTHER_DIRS:
            return False
        # omp's XDG layout: $XDG_DATA_HOME/omp/sessions/<folder>/<file>.
        if part == "omp" and index + 1 < len(parts) and parts[index + 1] == "sessions":
            return True
    return None


def written_by_omp(path: PurePath | None, title_slot: dict[str, Any] | None, entries: Iterable[Entry]) -> bool:
    """omp wrote the file: it sits in omp's agent dir, or starts with omp's title slot, or holds an
    entry of a type only omp writes."""
    said = _dir_says(path) if path is not None else None
    if said is not None:
        return said
    if title_slot is not None:
        return True
    return any(isinstance(kind := entry.get("type"), str) and kind in OMP_ONLY_ENTRY_TYPES for entry in entries)


def context_rules(path: PurePath | None, title_slot: dict[str, Any] | None, entries: Sequence[Entry]) -> str:
    """OMP_RULES for a file omp wrote, PI_RULES for pi's and every other tool's."""
    return OMP_RULES if written_by_omp(path, title_slot, entries) else PI_RULES
