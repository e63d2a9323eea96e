"""What omp 18 records about a session besides its entries: the header's details and the agent's init."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sitegen.session.entries import Entry, json_text

__all__ = ["Detail", "agent_details", "session_details"]

# (label, values): one line of a details list; a value is text as the file had it (escaped when shown).
Detail = tuple[str, list[str]]

_TITLE_SOURCES = {"auto": "generated from the first prompt", "user": "set by the user"}
# session_init's fields that say which agent ran and how, in the order a reader looks for them.
_AGENT_FIELDS = (
    ("agent", "Agent"),
    ("modelRole", "Model role"),
    ("resolvedModel", "Model"),
    ("readOnly", "Read-only"),
    ("spawns", "May start"),
    ("advisor", "Advisor"),
    ("isolated", "Isolated worktree"),
)


def _texts(value: object) -> list[str]:
    if isinstance(value, list):
        return [item if isinstance(item, str) else json_text(item) for item in value if item not in (None, "")]
    return [] if value in (None, "") else [value if isinstance(value, str) else json_text(value)]


def _title_source(header: Mapping[str, Any], title_slot: Mapping[str, Any] | None, entries: Iterable[Entry]) -> str:
    """Who named the session: the latest title_change that says so, else the title slot's, else the header's."""
    source: object = None
    for entry in entries:
        if entry.get("type") == "title_change" and entry.get("source") is not None:
            source = entry.get("source")
    if source is None and title_slot is not None:
        source = title_slot.get("source")
    if source is None:
        source = header.get("titleSource")
    if not isinstance(source, str) or not source:
        return ""
    return f"{source} ({_TITLE_SOURCES[source]})" if source in _TITLE_SOURCES else source


def session_details(
    header: Mapping[str, Any], title_slot: Mapping[str, Any] | None, entries: Iterable[Entry]
) -> list[Detail]:
    """The header's details omp 18 writes: the title's source, the workspace's other folders, and the
    files the session was kept in before it moved."""
    found: list[Detail] = []
    source = _title_source(header, title_slot, entries)
    if source:
        found.append(("Title", [source]))
    extra = _texts(header.get("additionalDirectories"))
    if extra:
        found.append(("Other folders", extra))
    previous = _texts(header.get("previousSessionFiles"))
    if previous:
        found.append(("Earlier files", previous))
    return found


def _yes_no(value: object) -> str:
    return "yes" if value is True else "no" if value is False else ""


def agent_details(init: Mapping[str, Any]) -> list[Detail]:
    """The agent a session_init entry names and how it ran (omp 18: subagents and their roles)."""
    found: list[Detail] = []
    for key, label in _AGENT_FIELDS:
        value = init.get(key)
        if isinstance(value, bool):
            shown = [_yes_no(value)]
        elif key == "spawns" and value == "":
            shown = ["none"]
        elif key == "spawns" and value == "*":
            shown = ["any agent"]
        else:
            shown = _texts(value)
        if shown:
            found.append((label, shown))
    return found
