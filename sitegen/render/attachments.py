"""Place what tool output points at on a page: artifact:// files and agent:// outputs with their transcripts,
as sitegen.transcript.attachments resolved them, within the page's budget."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from sitegen.render.ansi import ansi_to_html
from sitegen.render.base.text import human_size
from sitegen.render.tools import Attachment
from sitegen.transcript.model import TRANSCRIPT_BYTES, Output, Subagent, Transcript, read_or_left_off, referenced_urls

if TYPE_CHECKING:
    from sitegen.render.page import PageRenderer


__all__ = [
    "ARTIFACT_MODES",
    "MAX_ATTACHMENT_CHARS",
    "ArtifactBudget",
    "AttachmentViews",
    "ExternalWriter",
]

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


def _at_line_ends(first: str, last: str, head: int, tail: int) -> tuple[str, str]:
    """A long output's first and last parts, cut back to whole lines where a line ends in their second half."""
    cut = first.rfind("\n")
    first = first[: cut + 1] if cut > head // 2 else first
    cut = last.find("\n")
    last = last[cut + 1 :] if 0 <= cut < tail // 2 else last
    return first, last


class AttachmentViews:
    """Per page, and per subagent transcript embedded in it: each URL a tool output names placed once,
    each subagent's transcript embedded once (its entry ids must stay unique on the page)."""

    def __init__(
        self,
        transcript: Transcript,
        renderer: PageRenderer,
        budget: ArtifactBudget | None = None,
    ) -> None:
        self.transcript = transcript
        self.renderer = renderer
        self._cache: dict[str, Attachment | None] = {}
        # One budget per page: embedded subagents spend from their parent's.
        self.budget = budget if budget is not None else ArtifactBudget()

    def attachments_for(self, text: str) -> list[Attachment]:
        found = []
        for url in referenced_urls(text):
            if url in self._cache:
                attachment = self._cache[url]
            else:
                attachment = later = self._place(url)
                if attachment is not None and attachment.transcript is not None:
                    # Named again later: the output again, but the transcript only once (its HTML is not kept).
                    later = replace(attachment, transcript=None, transcript_shown_before=True)
                self._cache[url] = later
            if attachment is not None:
                found.append(attachment)
        return found

    def _place(self, url: str) -> Attachment | None:
        attached = self.transcript.attachments.get(url)
        if attached is None:
            return None
        output = attached.output
        render = ansi_to_html if url.startswith("artifact://") else self.renderer.markdown.render
        # Outputs are read here, as they are placed: a file that vanished or cannot be read since it was
        # resolved leaves only its own attachment off the page.
        placed = read_or_left_off(url, lambda: (*self.budget.place(url, output, render), output.size))
        if placed is None:
            return None
        body, note, src, size = placed
        if url.startswith("artifact://"):
            return Attachment(label=url, body=body, size=size, note=note, src=src)
        transcript = self._embedded(attached.subagent) if attached.subagent is not None else None
        left_out = _left_out(attached.subagent) if attached.subagent is not None else ""
        note = f"{note} {left_out}" if note and left_out else note or left_out
        return Attachment(label=url, body=body, size=size, note=note, src=src, transcript=transcript)

    def _embedded(self, subagent: Subagent) -> Markup | None:
        if subagent.left_out:  # (one with a page of its own is not resolved: transcript/attachments.py)
            return None
        if subagent.transcript is None:
            return Markup('<p class="problem">') + escape(subagent.problem) + Markup("</p>")
        nested = AttachmentViews(subagent.transcript, self.renderer, self.budget)
        return self.renderer.render_nested(subagent.transcript, nested, prefix=f"sub-{subagent.agent_id}-")


def _left_out(subagent: Subagent) -> str:
    """Why a subagent's transcript is not on the page, and where it is; "" when it is."""
    if not subagent.left_out:
        return ""
    where = f"its transcript is {subagent.file_name} ({human_size(subagent.file_size)}) in the artifact folder"
    if subagent.left_out == "none":
        return f"Not on this page (--artifacts none): {where}."
    return f"Not on this page (its {human_size(TRANSCRIPT_BYTES)} for subagent transcripts are spent): {where}."
