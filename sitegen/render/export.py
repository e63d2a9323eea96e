"""sitegen export: one session file to one self-contained HTML page."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitegen.render.page import PageOptions, PageRenderer
from sitegen.transcript.load import load_transcript
from sitegen.transcript.model import Transcript
from sitegen.transcript.transform import map_transcript_text

__all__ = ["ExportResult", "export_html", "load_transcript", "write_page"]


@dataclass(slots=True)
class ExportResult:
    path: Path
    size: int
    transcript: Transcript


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
    """Write through a temporary name in the same folder, then rename: never a half-written page."""
    output.parent.mkdir(parents=True, exist_ok=True)
    data = html.encode("utf-8")
    temp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, output)
    finally:
        if temp.exists():
            temp.unlink()
    return len(data)
