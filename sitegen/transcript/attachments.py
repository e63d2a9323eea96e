"""What tool output points at, resolved before a page is rendered: artifact:// files, agent:// outputs with
their subagents' own transcripts, and odek's tool frames."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitegen.errors import SitegenError
from sitegen.gcpause import collector_paused
from sitegen.odek.framing import ToolFrame
from sitegen.session.artifacts import ArtifactFile, open_output, resolve_internal_url
from sitegen.session.session import open_session
from sitegen.transcript.from_pi import transcript_from_session
from sitegen.transcript.model import (
    TRANSCRIPT_BYTES,
    Attached,
    Output,
    Subagent,
    ToolResult,
    Transcript,
    read_or_left_off,
    referenced_urls,
)
from sitegen.transcript.transform import map_transcript_text

__all__ = [
    "MAX_SUBAGENT_DEPTH",
    "FileOutput",
    "FilteredFileOutput",
    "TextOutput",
    "TranscriptAllowance",
    "resolve_attachments",
]


# Subagents can start subagents; embedding stops at this depth (deeper ones are linked by name).
MAX_SUBAGENT_DEPTH = 3


@dataclass(slots=True)
class TranscriptAllowance:
    """How much subagent transcript a page carries, by the size of their files, in the order the session
    names them: "budget" about TRANSCRIPT_BYTES (then each is named with its file and size), "full" all,
    "none" none. A long session's folder can hold more transcript than session (52 MB beside a 50 MB
    one), and each transcript costs as much to read and render as its share of a session; one left out
    is never read. Decided here, before a page is rendered, so the page is the same however its
    rendering is split between processes."""

    mode: str = "budget"
    total: int = TRANSCRIPT_BYTES
    spent: int = 0

    def admit(self, size: int) -> str:
        """ "" when a transcript of this many bytes goes on the page (spent), else why not: "none" or "spent"."""
        if self.mode == "full":
            return ""
        if self.mode == "none":
            return "none"
        if self.spent + size <= self.total:
            self.spent += size
            return ""
        return "spent"


TextMap = Callable[[str], str]
ValueMap = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class TextOutput:
    """An output already in memory (a subagent's answer), measured in characters."""

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


# Artifacts stay handles to their files, read when a page shows them and only as far as it does: a page
# carries the head and tail of a 20 MB build log (or only its name, past its budget), and a session's
# logs can add up to gigabytes, so reading them all here would hold them all in memory at once.


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


@dataclass(slots=True, eq=False)
class _LastRead:
    """The filtered text last measured, kept for the showing that follows its measuring: one at a time."""

    owner: object = None
    text: str = ""


@dataclass(slots=True, eq=False)
class FilteredFileOutput:
    """An artifact's file through a text filter (redaction), which must see the whole text (a secret can
    straddle where a head would be cut): measured in characters of the filtered text. Measuring it reads
    and filters the file; the text is kept (in `last`, shared by a transcript's outputs) only until the
    next output is measured, so a page that shows it just after measuring it reads it once."""

    file: ArtifactFile
    text_filter: TextMap
    last: _LastRead = field(repr=False)
    _size: int | None = None

    @property
    def size(self) -> int:
        if self._size is None:
            text = self.text_filter(self.file.text())
            self._size = len(text)
            self.last.owner, self.last.text = self, text
        return self._size

    def text(self) -> str:
        if self.last.owner is self:
            text = self.last.text
            self.last.owner, self.last.text = None, ""
            return text
        return self.text_filter(self.file.text())

    def ends(self, head: int, tail: int) -> tuple[str, str]:
        text = self.text()
        return text[:head], text[-tail:]

    def measure(self, part: str) -> int:
        return len(part)


def _frame(result: ToolResult) -> None:
    """The result's stored odek frame (details["odekFrame"], redacted with the rest of its details), parsed."""
    data = result.details.get("odekFrame")
    result.frame = ToolFrame.from_json(data) if isinstance(data, dict) else None


def _results(transcript: Transcript) -> Iterator[ToolResult]:
    """Every tool result once: on its own entry, and paired into its call (usually the same object)."""
    seen: set[int] = set()
    for node in transcript.nodes:
        for result in (node.result, *(call.result for call in node.tool_calls)):
            if result is not None and id(result) not in seen:
                seen.add(id(result))
                yield result


def _named_urls(transcript: Transcript) -> list[str]:
    """The URLs the outputs of the transcript's tool calls name (as their cards show them), each once,
    those on the shown branch first: they spend the page's transcript allowance before other branches'
    (a --branch-only page and an embedded subagent show that branch alone). Part by part: a URL never
    spans the line the card puts between two parts."""
    urls: dict[str, None] = {}
    shown = transcript.path_nodes()
    on_path = {id(node) for node in shown}
    for node in itertools.chain(shown, (node for node in transcript.nodes if id(node) not in on_path)):
        for call_part in node.parts:  # not node.tool_calls, which makes a list per node (40,000 in a long session)
            call = call_part.call
            for part in call.result.parts if call is not None and call.result is not None else ():
                if part.kind in ("text", "other") and ("artifact://" in part.text or "agent://" in part.text):
                    urls.update(dict.fromkeys(referenced_urls(part.text)))
    return list(urls)


@dataclass(slots=True)
class _Resolver:
    """One transcript's places: its artifacts folders, and what is applied to what is read from them."""

    dirs: list[Path]
    text_filter: TextMap | None
    value_filter: ValueMap | None
    linked: frozenset[str]
    depth: int
    allowance: TranscriptAllowance
    last: _LastRead = field(default_factory=_LastRead)

    def resolve(self, transcript: Transcript) -> None:
        # Only odek's results carry a frame (transcript/from_odek.py).
        for result in _results(transcript) if transcript.family == "odek" else ():
            if "odekFrame" in result.details:
                _frame(result)
        if not self.dirs:
            return
        for url in _named_urls(transcript):
            attached = self._attached(url)
            if attached is not None:
                transcript.attachments[url] = attached

    def _attached(self, url: str) -> Attached | None:
        output = read_or_left_off(url, lambda: self._output(url))
        if output is None:
            return None
        if url.startswith("artifact://"):
            return Attached(url, output)
        return Attached(url, output, self._subagent(url.removeprefix("agent://")))

    def _output(self, url: str) -> Output:
        """What url names: an artifact or an agent's whole output as a handle to its file (read when shown:
        not at all past the page's budget), a part of an agent's output (a path, ?q=) as text. Through a
        text filter, an agent's output is text, whole or a part: looked up and read once, here."""
        if self.text_filter is not None and url.startswith("agent://"):
            return TextOutput(self.text_filter(resolve_internal_url(url, self.dirs)))
        file = open_output(url, self.dirs)
        if file is None:
            text = resolve_internal_url(url, self.dirs)
            return TextOutput(self.text_filter(text) if self.text_filter is not None else text)
        if self.text_filter is None:
            return FileOutput(file)
        return FilteredFileOutput(file, self.text_filter, self.last)

    def _subagent(self, agent_id: str) -> Subagent | None:
        """The subagent's transcript from <id>.jsonl beside its output, resolved in turn; none past
        MAX_SUBAGENT_DEPTH or for a subagent with a page of its own (linked)."""
        if self.depth >= MAX_SUBAGENT_DEPTH or agent_id in self.linked:
            return None
        sidecar = next((d / f"{agent_id}.jsonl" for d in self.dirs if (d / f"{agent_id}.jsonl").is_file()), None)
        if sidecar is None:
            return None
        try:
            size = sidecar.stat().st_size
        except OSError:
            return None
        left_out = self.allowance.admit(size)
        if left_out:
            return Subagent(agent_id, None, left_out=left_out, file_name=sidecar.name, file_size=size)
        try:
            transcript = transcript_from_session(open_session(sidecar))
        except SitegenError as error:
            return Subagent(agent_id, None, str(error))
        if self.text_filter is not None:
            map_transcript_text(transcript, self.text_filter, self.value_filter)
        # A subagent's artifacts live in a folder named like its sidecar, or in the parent's (adopted).
        nested = _Resolver(
            _existing([sidecar.with_suffix(""), *self.dirs]),
            self.text_filter,
            self.value_filter,
            frozenset(),
            self.depth + 1,
            self.allowance,
            self.last,
        )
        nested.resolve(transcript)
        return Subagent(agent_id, transcript, file_name=sidecar.name, file_size=size)


def _existing(dirs: list[Path]) -> list[Path]:
    return [d for d in dirs if d.is_dir()]


def resolve_attachments(
    transcript: Transcript,
    *,
    text_filter: TextMap | None = None,
    value_filter: ValueMap | None = None,
    linked: frozenset[str] = frozenset(),
    artifacts: str = "budget",
) -> Transcript:
    """Resolve, in place, what the transcript's tool outputs point at (Transcript.attachments, each embedded
    subagent's transcript resolved in turn) and the odek frames of its results (ToolResult.frame); returns
    it. text_filter applies to what is read (redaction, as map_transcript_text applied it to the session),
    value_filter to the structured values of subagent transcripts; linked names subagents with pages of
    their own, whose transcripts are not read; artifacts (budget, full, none) says how much subagent
    transcript the page carries (TranscriptAllowance)."""
    dirs = _existing([transcript.artifacts_dir] if transcript.artifacts_dir is not None else [])
    # Each subagent's file is loaded with the collector paused, and each time it came back on, its next
    # pass walked the whole session's objects again: a tenth of a second for 174 transcripts.
    with collector_paused():
        _Resolver(dirs, text_filter, value_filter, linked, 0, TranscriptAllowance(artifacts)).resolve(transcript)
    return transcript
