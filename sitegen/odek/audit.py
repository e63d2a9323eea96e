"""odek's own audit logs (audit/<id>.json), read as odek wrote them."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import orjson

from sitegen.errors import NotASession, SessionNotFound
from sitegen.odek.store import read_bytes_capped, validate_session_id
from sitegen.session.entries import clip_nesting
from sitegen.session.load import parse_json_leniently

__all__ = ["load_audit_log"]

log = logging.getLogger(__name__)


def _empty_log(session_id: str) -> dict[str, Any]:
    return {"session_id": session_id, "ingests": [], "turns": []}


def _dicts(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


# What the audit panel reads from each record, by the type it must have: a log written by another
# odek version (or edited by hand) with other types still renders.
_TEXT_FIELDS = ("user_message", "source", "content_hash", "at")
_LIST_FIELDS = ("tool_calls", "novel_resources", "untrusted_resources")
_FLAG_FIELDS = ("suspicious_divergence", "ingested_untrusted")


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # nested past the 255 levels orjson writes
        return orjson.dumps(clip_nesting(value)).decode()


def _typed(record: dict[str, Any]) -> dict[str, Any]:
    typed = dict(record)
    for key in _TEXT_FIELDS:
        if key in typed:
            typed[key] = _text(typed[key])
    for key in _LIST_FIELDS:
        if key in typed:
            value = typed[key]
            typed[key] = [_text(item) for item in value] if isinstance(value, list) else [_text(value)]
    for key in _FLAG_FIELDS:
        if key in typed:
            typed[key] = typed[key] is True
    if "turn" in typed and not isinstance(typed["turn"], int | str):
        typed["turn"] = _text(typed["turn"])
    return typed


def load_audit_log(store_dir: str | os.PathLike[str], session_id: str) -> dict[str, Any] | None:
    """audit/<id>.json as {session_id, ingests, turns}; None when there is none.

    Older odek writes one JSON object; newer odek appends JSON lines of
    {"type": "ingest"|"turn", ...}, and a torn last line is skipped as odek skips it.
    """
    path = Path(store_dir) / "audit" / f"{validate_session_id(session_id)}.json"
    try:
        data = read_bytes_capped(path, "odek audit log")
    except SessionNotFound:
        return None
    except NotASession as error:  # a folder, a pipe, too big: the session still has its page
        log.warning("Skipping odek audit log: %s", error)
        return None
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        whole = parse_json_leniently(data)  # None for several JSON lines: the append-only form
    if isinstance(whole, dict) and whole.get("type") not in ("ingest", "turn"):
        audit = _empty_log(session_id)
        audit.update(whole)
        audit["ingests"] = [_typed(item) for item in _dicts(whole.get("ingests"))]
        audit["turns"] = [_typed(item) for item in _dicts(whole.get("turns"))]
        return audit
    return _from_lines(data, path, session_id)


def _from_lines(data: bytes, path: Path, session_id: str) -> dict[str, Any]:
    audit = _empty_log(session_id)
    skipped = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = parse_json_leniently(line)
            if record is None:
                skipped += 1
                continue
        kind = record.get("type") if isinstance(record, dict) else None
        payload = record.get(kind) if isinstance(kind, str) else None
        if kind in ("ingest", "turn") and isinstance(payload, dict):
            audit["ingests" if kind == "ingest" else "turns"].append(_typed(payload))
        else:
            skipped += 1
    if skipped:
        log.warning("Skipped %d unreadable line(s) of odek audit log %s", skipped, path)
    return audit
