"""Inline what tool output points at: artifact:// files and agent:// outputs with their transcripts."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from markupsafe import Markup, escape

from sitegen.errors import SitegenError
from sitegen.render.ansi import ansi_to_html
from sitegen.render.base.text import human_size
from sitegen.render.tools import Attachment, referenced_urls
from sitegen.session.artifacts import ArtifactFile, open_output, resolve_internal_url
from sitegen.session.session import open_session
from sitegen.transcript.from_pi import transcript_from_session
from sitegen.transcript.transform import map_transcript_text

if TYPE_CHECKING:
    from sitegen.render.page import PageRenderer

__all__ = [
    "ARTIFACT_MODES",
    "MAX_ATTACHMENT_CHARS",
    "MAX_SUBAGENT_DEPTH",
    "ArtifactBudget",
    "AttachmentResolver",
    "ExternalWriter",
]

log = logging.getLogger("sitegen.render")

# --artifacts full: an artifact bigger than this is still cut, with a note: no 1 GB page.
MAX_ATTACHMENT_CHARS = 50_000_000
ARTIFACT_MODES = ("budget", "full", "none")
# A site page's writer of an output too big to inline: (key, rendered HTML) -> the URL of its script.
ExternalWriter = Callable[[str, Markup], str]


@dataclass(slots=True)
class ArtifactBudget:
    """How much of what tool output points at a page carries. "budget": each output whole up to `each`
    (an artifact file's bytes, other text's characters), a longer one by its head and tail, and `total`
    in all per page; then only their names.
    "full": everything; "none": only their names. A site page (external set) never inlines an output
    over the budget: it is written beside the page and loaded when opened."""

    mode: str = "budget"
    total: int = 5_000_000
    each: int = 256_000
    head: int = 64_000
    tail: int = 64_000
    external: ExternalWriter | None = None
    spent: int = 0

    def place(self, url: str, output: Output, render: Callable[[str], Markup]) -> tuple[Markup, str, str | None]:
        """The HTML the page carries for an output, a note of what it left out, and its script URL.
        Only what is shown is read: an output over the budget by its two ends, one left out not at all."""
        size = output.size
        where = f"the full output is in {url}"
        if self.mode == "none":
            return Markup(""), f"Not on this page (--artifacts none): {where} ({human_size(size)}).", None
        if self.mode == "full":
            text = output.text()
            if len(text) <= MAX_ATTACHMENT_CHARS:
                return render(text), "", None
            note = f"{human_size(len(text) - MAX_ATTACHMENT_CHARS)} more: {where}."
            return render(text[:MAX_ATTACHMENT_CHARS]), note, None
        whole = size <= self.each and self.spent + size <= self.total
        if whole:
            self.spent += size
            return render(output.text()), "", None
        if self.external is not None:
            return Markup(""), f"{human_size(size)}, loaded when opened.", self.external(url, render(output.text()))
        if self.spent + self.head + self.tail <= self.total:
            head, tail = _at_line_ends(*output.ends(self.head, self.tail), self.head, self.tail)
            self.spent += len(head) + len(tail)
            left = size - output.measure(head) - output.measure(tail)
            note = f"{human_size(left)} more: {where}."
            cut = Markup('<span class="artifact-cut">… ') + note + Markup(" …</span>\n")
            return render(head) + cut + render(tail), note, None
        return Markup(""), f"Not on this page (its {human_size(self.total)} for outputs are spent): {where}.", None

    def admit(self, name: str, size: int) -> str:
        """Whether a subagent's transcript (its file: name, size in bytes) goes on the page, spent from
        the same budget as outputs: "" when it does, else a note of why not and where it is. A long
        session's folder can hold more transcript than session; each rendered costs as much as its
        share of the session does."""
        where = f"its transcript is {name} ({human_size(size)}) in the artifact folder"
        if self.mode == "full":
            return ""
        if self.mode == "none":
            return f"Not on this page (--artifacts none): {where}."
        if self.spent + size <= self.total:
            self.spent += size
            return ""
        return f"Not on this page (its {human_size(self.total)} for outputs are spent): {where}."


class Output(Protocol):
    """What an attachment shows, read as far as the budget needs: its size, all of it, or its two ends."""

    @property
    def size(self) -> int: ...

    def text(self) -> str: ...

    def ends(self, head: int, tail: int) -> tuple[str, str]: ...

    def measure(self, part: str) -> int:
        """A part's size in the unit of size."""
        ...


@dataclass(frozen=True, slots=True)
class TextOutput:
    """An output already in memory (a subagent's answer, a redacted artifact), measured in characters."""

    content: str

    @property
    def size(self) -> int:
        return len(self.content)

    def text(self) -> str:
        return self.content

    def ends(self, head: int, tail: int) -> tuple[str, str]:
        return self.content[:head], self.content[-tail:]

    def measure(self, part: str) -> int:
        return len(part)


@dataclass(frozen=True, slots=True)
class FileOutput:
    """An artifact's file, measured in bytes as on disk, read only when and as far as it is shown."""

    file: ArtifactFile

    @property
    def size(self) -> int:
        return self.file.size

    def text(self) -> str:
        return self.file.text()

    def ends(self, head: int, tail: int) -> tuple[str, str]:
        return self.file.ends(head, tail)

    def measure(self, part: str) -> int:
        return len(part.encode("utf-8", "surrogatepass"))


def _at_line_ends(first: str, last: str, head: int, tail: int) -> tuple[str, str]:
    """A long output's first and last parts, cut back to whole lines where a line ends in their second half."""
    cut = first.rfind("\n")
    first = first[: cut + 1] if cut > head // 2 else first
    cut = last.find("\n")
    last = last[cut + 1 :] if 0 <= cut < tail // 2 else last
    return first, last


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
        budget: ArtifactBudget | None = None,
    ) -> None:
        self.artifacts_dirs = [d for d in artifacts_dirs if d.is_dir()]
        self.renderer = renderer
        self.text_filter = text_filter
        self.value_filter = value_filter
        self.depth = depth
        # Subagents that have their own page (site): linked there instead of embedded.
        self.linked = linked
        self._cache: dict[str, Attachment | None] = {}
        # One budget per page: embedded subagents spend from their parent's.
        self.budget = budget if budget is not None else ArtifactBudget()

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
            output = self._output(url)
        except SitegenError as error:
            log.info("not inlining %s: %s", url, error)
            return None
        except OSError as error:
            log.warning("cannot read %s: %s", url, error)
            return None
        if url.startswith("artifact://"):
            body, note, src = self.budget.place(url, output, ansi_to_html)
            return Attachment(label=url, body=body, size=output.size, note=note, src=src)
        agent_id = url.removeprefix("agent://")
        body, note, src = self.budget.place(url, output, self.renderer.markdown.render)
        transcript, left_out = self._sidecar(agent_id)
        note = f"{note} {left_out}" if note and left_out else note or left_out
        return Attachment(label=url, body=body, size=output.size, note=note, src=src, transcript=transcript)

    def _output(self, url: str) -> Output:
        """What url names. An artifact or a subagent's whole output is read only as far as it is shown,
        but for redaction, which must see the whole text (a secret can straddle where a head would be cut)."""
        if self.text_filter is None and (file := open_output(url, self.artifacts_dirs)) is not None:
            return FileOutput(file)
        content = resolve_internal_url(url, self.artifacts_dirs)
        return TextOutput(self.text_filter(content) if self.text_filter is not None else content)

    def _sidecar(self, agent_id: str) -> tuple[Markup | None, str]:
        """The subagent's transcript rendered for the page, or a note of why it is not on it."""
        sidecar = next(
            (d / f"{agent_id}.jsonl" for d in self.artifacts_dirs if (d / f"{agent_id}.jsonl").is_file()),
            None,
        )
        if sidecar is None or self.depth >= MAX_SUBAGENT_DEPTH or agent_id in self.linked:
            return None, ""
        try:
            left_out = self.budget.admit(sidecar.name, sidecar.stat().st_size)
        except OSError:
            return None, ""
        if left_out:
            return None, left_out
        try:
            transcript = transcript_from_session(open_session(sidecar))
        except SitegenError as error:
            return Markup('<p class="problem">') + escape(str(error)) + Markup("</p>"), ""
        if self.text_filter is not None:
            map_transcript_text(transcript, self.text_filter, self.value_filter)
        # A subagent's artifacts live in a folder named like its sidecar, or in the parent's (adopted).
        dirs = [sidecar.with_suffix(""), *self.artifacts_dirs]
        nested = AttachmentResolver(
            dirs, self.renderer, self.text_filter, self.depth + 1, value_filter=self.value_filter, budget=self.budget
        )
        return self.renderer.render_nested(transcript, nested, prefix=f"sub-{agent_id}-"), ""
