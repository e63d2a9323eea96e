"""sitegen export: one session file to one self-contained HTML page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sitegen.fileio import replace_file
from sitegen.render.page import PageOptions, PageRenderer
from sitegen.transcript.load import load_transcript
from sitegen.transcript.model import Transcript
from sitegen.transcript.transform import map_transcript_text

__all__ = ["export_html", "load_transcript", "write_page"]


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
    if text_filter is not None:
        map_transcript_text(transcript, text_filter, value_filter)
    options = PageOptions(inline_assets=True, branch_only=branch_only, text_filter=text_filter, parallel=parallel)
    return (renderer or PageRenderer()).render(transcript, options)


def write_page(html: str, output: Path) -> int:
    """Write a page through a temporary name and rename it: never a half-written page."""
    return replace_file(output, html)
