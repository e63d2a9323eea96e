"""Inline what tool output points at: artifact:// files and agent:// outputs with their transcripts."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from sitegen.errors import SitegenError
from sitegen.render.ansi import ansi_to_html
from sitegen.render.tools import Attachment, referenced_urls
from sitegen.session.artifacts import resolve_internal_url
from sitegen.session.session import open_session
from sitegen.transcript.from_pi import transcript_from_session
from sitegen.transcript.transform import map_transcript_text

if TYPE_CHECKING:
    from sitegen.render.page import PageRenderer

__all__ = ["MAX_ATTACHMENT_CHARS", "MAX_SUBAGENT_DEPTH", "AttachmentResolver"]

log = logging.getLogger("sitegen.render")

# An artifact bigger than this is cut, with a note: one runaway log must not make a 1 GB page.
MAX_ATTACHMENT_CHARS = 5_000_000
# Subagents can start subagents; embedding stops at this depth (deeper ones are linked by name).
MAX_SUBAGENT_DEPTH = 3


class AttachmentResolver:
    """Per page: resolves each URL once, embeds each subagent transcript once."""

    def __init__(
        self,
        artifacts_dirs: list[Path],
        renderer: PageRenderer,
        text_filter: Callable[[str], str] | None = None,
        depth: int = 0,
        linked: frozenset[str] = frozenset(),
        value_filter: Callable[[Any], Any] | None = None,
    ) -> None:
        self.artifacts_dirs = [d for d in artifacts_dirs if d.is_dir()]
        self.renderer = renderer
        self.text_filter = text_filter
        self.value_filter = value_filter
        self.depth = depth
        # Subagents that have their own page (site): linked there instead of embedded.
        self.linked = linked
        self._cache: dict[str, Attachment | None] = {}

    def attachments_for(self, text: str) -> list[Attachment]:
        found = []
        for url in referenced_urls(text):
            if url in self._cache:
                attachment = self._cache[url]
                # Named again later: the output again, but the transcript only once (its entry ids
                # must stay unique on the page).
                if attachment is not None and attachment.transcript is not None:
                    attachment = replace(attachment, transcript=None, transcript_shown_before=True)
            else:
                attachment = self._cache[url] = self._resolve(url)
            if attachment is not None:
                found.append(attachment)
        return found

    def _resolve(self, url: str) -> Attachment | None:
        if not self.artifacts_dirs:
            return None
        try:
            content = resolve_internal_url(url, self.artifacts_dirs)
        except SitegenError as error:
            log.info("not inlining %s: %s", url, error)
            return None
        except OSError as error:
            log.warning("cannot read %s: %s", url, error)
            return None
        size = len(content)
        if size > MAX_ATTACHMENT_CHARS:
            content = content[:MAX_ATTACHMENT_CHARS] + f"\n… [{size - MAX_ATTACHMENT_CHARS:,} more characters]"
        if self.text_filter is not None:
            content = self.text_filter(content)
        if url.startswith("artifact://"):
            return Attachment(label=url, body=ansi_to_html(content), size=size)
        agent_id = url.removeprefix("agent://")
        body = self.renderer.markdown.render(content)
        return Attachment(label=url, body=body, size=size, transcript=self._sidecar(agent_id))

    def _sidecar(self, agent_id: str) -> Markup | None:
        sidecar = next(
            (d / f"{agent_id}.jsonl" for d in self.artifacts_dirs if (d / f"{agent_id}.jsonl").is_file()),
            None,
        )
        if sidecar is None or self.depth >= MAX_SUBAGENT_DEPTH or agent_id in self.linked:
            return None
        try:
            transcript = transcript_from_session(open_session(sidecar))
        except SitegenError as error:
            return Markup('<p class="problem">') + escape(str(error)) + Markup("</p>")
        if self.text_filter is not None:
            map_transcript_text(transcript, self.text_filter, self.value_filter)
        # A subagent's artifacts live in a folder named like its sidecar, or in the parent's (adopted).
        dirs = [sidecar.with_suffix(""), *self.artifacts_dirs]
        nested = AttachmentResolver(
            dirs, self.renderer, self.text_filter, self.depth + 1, value_filter=self.value_filter
        )
        return self.renderer.render_nested(transcript, nested, prefix=f"sub-{agent_id}-")
