"""The prompts the user typed in a pi-family session file, read without parsing every line."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sitegen.fileio import open_regular
from sitegen.session.entries import entry_time_ms, message_text
from sitegen.session.load import parse_json_leniently, read_header

__all__ = ["TypedPrompt", "is_typed_message", "read_typed_prompts"]

# Only a line holding a user message can hold a prompt: the others are not parsed.
_USER_ROLE = re.compile(rb'"role"\s*:\s*"user"')


@dataclass(frozen=True, slots=True)
class TypedPrompt:
    """One user message the user typed, with where and when."""

    entry_id: str | None
    time_ms: int | None
    text: str
    session_id: str
    cwd: str


def is_typed_message(message: object) -> bool:
    """A user message the user typed, not one the agent injected (omp 18's attribution "agent", or
    synthetic); tool results have their own role."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    return message.get("attribution") != "agent" and message.get("synthetic") is not True


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return parse_json_leniently(line)


def read_typed_prompts(path: str | os.PathLike[str]) -> list[TypedPrompt]:
    """Every prompt typed in the file, in file order; [] for a file that is no session (or unreadable)."""
    found = read_header(path)
    if found is None:
        return []
    header = found[0]
    session_id = str(header["id"])
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
    prompts: list[TypedPrompt] = []
    try:
        with open_regular(Path(path)) as handle:
            for line in handle:
                if not _USER_ROLE.search(line):
                    continue
                record = _parse(line)
                if not isinstance(record, dict) or record.get("type") != "message":
                    continue
                message = record.get("message")
                if not is_typed_message(message):
                    continue
                assert isinstance(message, dict)
                text = message_text(message.get("content"))
                if not text.strip():
                    continue
                entry_id = record.get("id")
                prompts.append(
                    TypedPrompt(
                        entry_id if isinstance(entry_id, str) else None,
                        entry_time_ms(record),
                        text,
                        session_id,
                        str(cwd),
                    )
                )
    except OSError:
        return prompts
    return prompts
