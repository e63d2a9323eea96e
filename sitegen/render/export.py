"""sitegen export: one session file to one self-contained HTML page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sitegen.render.page import PageOptions, PageRenderer
from sitegen.transcript.attachments import resolve_attachments
from sitegen.transcript.load import load_transcript
from sitegen.transcript.model import Transcript
from sitegen.transcript.transform import map_transcript_text

__all__ = ["export_html", "export_page", "load_transcript"]


def _page_options(
    transcript: Transcript,
    branch_only: bool,
    text_filter: Callable[[str], str] | None,
    value_filter: Callable[[Any], Any] | None,
    parallel: bool,
    artifacts: str = "budget",
) -> PageOptions:
    if text_filter is not None:
        map_transcript_text(transcript, text_filter, value_filter)
    # What the page shows of artifacts and subagents is read now, through the same filters: rendering reads no file.
    resolve_attachments(transcript, text_filter=text_filter, value_filter=value_filter, artifacts=artifacts)
    return PageOptions(
        inline_assets=True,
        branch_only=branch_only,
        parallel=parallel,
        artifacts=artifacts,
    )


def export_page(
    transcript: Transcript,
    output: Path,
    *,
    branch_only: bool = False,
    text_filter: Callable[[str], str] | None = None,
    value_filter: Callable[[Any], Any] | None = None,
    parallel: bool = False,
    artifacts: str = "budget",
) -> int:
    """Write the self-contained page to output as it is rendered (through a temporary name, so never
    half a page); returns its size. Filters as for export_html; artifacts as PageOptions.artifacts."""
    options = _page_options(transcript, branch_only, text_filter, value_filter, parallel, artifacts)
    return PageRenderer().write(transcript, options, output)


def export_html(
    transcript: Transcript,
    *,
    branch_only: bool = False,
    text_filter: Callable[[str], str] | None = None,
    value_filter: Callable[[Any], Any] | None = None,
    renderer: PageRenderer | None = None,
    parallel: bool = False,
) -> str:
    """The self-contained page of a transcript; text_filter (redaction) is applied to all session text,
    value_filter to structured values such as tool arguments."""
    options = _page_options(transcript, branch_only, text_filter, value_filter, parallel)
    return (renderer or PageRenderer()).render(transcript, options)
