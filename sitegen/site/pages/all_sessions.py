"""The site's list of every session: the All sessions page, and the data file it, the palette (Ctrl+K)
and the next/previous keys of session pages load as a script, which works from file:// too."""

from __future__ import annotations

import orjson

from sitegen.render.header import short_model
from sitegen.site.state.jobs import relative_url
from sitegen.site.state.records import SessionRecord
from sitegen.visible import visible

__all__ = ["ALL_SESSIONS_DATA", "ALL_SESSIONS_PAGE", "FIRST_ROWS", "listing_order", "session_index_script"]

ALL_SESSIONS_PAGE = "sessions.html"
ALL_SESSIONS_DATA = "sessions.js"
# Rows the page carries itself (read without scripts); the rest are drawn from the data file as the
# reader scrolls, so that 2,000 sessions never cost 2,000 rows at once.
FIRST_ROWS = 100
# The data file's columns, named once here and read by static/palette.js and static/allsessions.js.
COLUMNS = ("url", "title", "project", "projectSlug", "modified", "messages", "cost", "models", "family")


def listing_order(records: list[SessionRecord]) -> list[SessionRecord]:
    """Newest activity first, as every listing orders sessions (ties by key, so the order is stable)."""
    return sorted(records, key=lambda r: (-(r.modified_ms or 0), r.key))


def _project_name(record: SessionRecord, names: dict[str, str]) -> str:
    name = names.get(record.project_slug, record.project)
    return name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or name


def session_index_script(records: list[SessionRecord], project_names: dict[str, str]) -> str:
    """`window.sitegen.sessionIndex(columns, rows)` with one row per session in listing order; URLs relative to
    the site's root. Session text is JSON inside a script: "</" is escaped so none can end it."""
    rows = [
        [
            relative_url("index.html", record.page),
            visible(record.title),  # shown as text: no control character or bidi override raw
            visible(_project_name(record, project_names)),
            record.project_slug,
            record.modified_ms or 0,
            record.messages,
            round(record.cost, 4) if record.usage_known else None,  # None: not recorded (odek), shown "—"
            [visible(short_model(model)) for model in record.models[:2]],
            record.family,
        ]
        for record in listing_order(records)
    ]
    data = orjson.dumps([list(COLUMNS), rows]).decode().replace("</", "<\\/")
    # U+2028 and U+2029 end a line in older JavaScript parsers, though JSON allows them in strings.
    data = data.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"window.sitegen.sessionIndex && window.sitegen.sessionIndex({data});\n"
