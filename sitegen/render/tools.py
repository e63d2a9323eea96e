"""Tool calls as views for the templates: bash, read, edit, write, task, and a generic fallback."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from sitegen.jsontext import json_text
from sitegen.render.ansi import ansi_to_html
from sitegen.render.base.text import FOLD_AFTER_LINES, PREVIEW_LINES, Folded, escape_text, fold_text
from sitegen.render.highlight.pygments_html import Highlighter
from sitegen.titles import relative_path, tool_subject
from sitegen.transcript.model import Part, ToolCall, ToolFrame, ToolResult

__all__ = ["DiffLine", "ImageView", "ToolView", "build_tool_view", "result_text"]

_IMAGE_MIME = re.compile(r"image/(?:png|jpeg|gif|webp)")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_EXIT_CODE = re.compile(r"(?:exit(?:ed with)? code|exit status)[:\s]+(-?\d+)", re.IGNORECASE)


@dataclass(slots=True)
class ImageView:
    src: str | None  # a data: URI, or None when the image cannot be shown
    mime: str
    note: str = ""


@dataclass(slots=True)
class DiffLine:
    kind: str  # "add", "del", "ctx" or "hunk"
    text: str


@dataclass(slots=True)
class Attachment:
    """Something a tool output refers to, inlined collapsed: an artifact or a subagent's output."""

    label: str
    body: Markup
    size: int
    # What the page left out and where the rest is (a page's budget for artifacts), or "".
    note: str = ""
    # Site pages: the script beside the page that holds the whole output, loaded when it is opened.
    src: str | None = None
    # Rendered HTML of an embedded subagent transcript, when its sidecar exists.
    transcript: Markup | None = None
    transcript_shown_before: bool = False  # embedded at an earlier call that named the same subagent


@dataclass(slots=True)
class FrameSegment:
    kind: str  # text | untrusted | omitted
    body: Folded | None
    source: str = ""
    closed: bool = True
    note: str = ""


@dataclass(slots=True)
class FrameView:
    """odek's TOOL RESULT box: its header, and the body with untrusted parts marked."""

    tool_name: str
    nonce: str
    label: str
    segments: list[FrameSegment]


@dataclass(slots=True)
class ToolView:
    kind: str  # bash | read | edit | write | task | generic
    name: str
    call_id: str
    summary: str  # one line: the command, the path, the task
    result_id: str | None
    status: str  # ok | error | pending
    arguments: Markup | None = None  # generic: the arguments as highlighted JSON
    language: str | None = None
    input: Folded | None = None  # write: the content; task: the prompt
    output: Folded | None = None
    diff: list[DiffLine] = field(default_factory=list)
    diff_rest: list[DiffLine] = field(default_factory=list)  # a long diff's folded remainder
    diff_stat: str = ""
    exit_code: int | None = None
    images: list[ImageView] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    frame: FrameView | None = None


def frame_view(frame: ToolFrame | None) -> FrameView | None:
    """The view of a result's odek frame (ToolResult.frame); None when absent or plain."""
    if frame is None:
        return None
    if not frame.framed and not any(s.kind != "text" for s in frame.segments):
        return None
    segments = []
    for segment in frame.segments:
        if segment.kind == "omitted":
            note = f"{segment.omitted_bytes or 0:,} bytes omitted (output was {segment.total_bytes or 0:,} bytes)"
            segments.append(FrameSegment("omitted", None, note=note))
        else:
            segments.append(
                FrameSegment(segment.kind, fold_text(segment.text), source=segment.source or "", closed=segment.closed)
            )
    return FrameView(frame.tool_name or "", frame.nonce or "", frame.label or "", segments)


def image_view(part: Part) -> ImageView:
    """A content image as a data: URI, only for raster types and well-formed base64."""
    mime = part.mime.lower()
    if part.data.startswith("blob:sha256:"):
        return ImageView(src=None, mime=mime, note=f"missing blob {part.data[12:24]}…")
    if not _IMAGE_MIME.fullmatch(mime):
        return ImageView(src=None, mime=mime, note=f"image of type {mime} not shown")
    if not _BASE64.fullmatch(part.data):
        return ImageView(src=None, mime=mime, note="image data is not base64")
    return ImageView(src=f"data:{mime};base64,{part.data}", mime=mime)


def result_text(result: ToolResult | None) -> str:
    return "" if result is None else result.shown_text


def _args(call: ToolCall) -> dict[str, Any]:
    return call.arguments if isinstance(call.arguments, dict) else {}


def _first_str(args: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def _stored_diff(diff: str) -> list[DiffLine]:
    """pi's details.diff: lines prefixed '+', '-' or ' ' (then a line number)."""
    lines: list[DiffLine] = []
    for line in diff.splitlines():
        if line.startswith("+"):
            lines.append(DiffLine("add", line))
        elif line.startswith("-"):
            lines.append(DiffLine("del", line))
        elif line.startswith("@@") or line.strip() == "...":
            lines.append(DiffLine("hunk", line))
        else:
            lines.append(DiffLine("ctx", line))
    return lines


def _computed_diff(old: str, new: str, path: str) -> list[DiffLine]:
    lines: list[DiffLine] = []
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", n=3, lineterm="")
    for line in diff:
        if line.startswith(("---", "+++")):
            continue
        kind = "hunk" if line.startswith("@@") else {"+": "add", "-": "del"}.get(line[:1], "ctx")
        lines.append(DiffLine(kind, line))
    return lines


_OLD_KEYS = ("oldText", "old_string", "old_str", "oldString")
_NEW_KEYS = ("newText", "new_string", "new_str", "newString")


def _edits_diff(args: Mapping[str, Any], path: str) -> list[DiffLine]:
    """The diff of an edit's arguments: one old/new pair, or a list of them under "edits"."""
    pairs: list[Mapping[str, Any]] = [args]
    edits = args.get("edits")
    if isinstance(edits, list):
        pairs += [edit for edit in edits if isinstance(edit, dict)]
    lines: list[DiffLine] = []
    for pair in pairs:
        old, new = _first_str(pair, *_OLD_KEYS), _first_str(pair, *_NEW_KEYS)
        if old or new:
            lines += _computed_diff(old, new, path)
    return lines


def _diff_stat(lines: list[DiffLine]) -> str:
    added = sum(1 for line in lines if line.kind == "add")
    removed = sum(1 for line in lines if line.kind == "del")
    return f"+{added} −{removed}"


AttachmentFinder = Callable[[str], list[Attachment]]


def build_tool_view(call: ToolCall, highlighter: Highlighter, attachments: AttachmentFinder, cwd: str = "") -> ToolView:
    """Choose the renderer by tool name; unknown tools get the generic view. Paths in the header are
    relative to the session's directory (cwd) when inside it."""
    result = call.result
    name = call.name
    lowered = name.lower()
    status = "pending" if result is None else ("error" if result.is_error else "ok")
    args = _args(call)
    text = result_text(result)
    view = ToolView(
        kind="generic",
        name=name,
        call_id=call.id,
        summary="",
        result_id=result.node_id if result is not None else None,
        status=status,
    )
    if result is not None:
        view.images = [image_view(part) for part in result.parts if part.kind == "image"]
        details_images = result.details.get("images")
        if isinstance(details_images, list):
            for image in details_images:
                if isinstance(image, dict) and isinstance(image.get("data"), str):
                    part = Part("image", mime=str(image.get("mimeType") or "image/png"), data=image["data"])
                    view.images.append(image_view(part))
    if lowered in ("bash", "shell", "exec", "run_command", "execute_command"):
        view.kind = "bash"
        view.summary = _first_str(args, "command", "cmd")
        view.output = fold_text(text, ansi_to_html)
        exit_code = result.details.get("exitCode") if result is not None else None
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            view.exit_code = exit_code
        else:
            match = _EXIT_CODE.search(text[-300:])
            view.exit_code = int(match.group(1)) if match else (None if status != "ok" else 0)
    elif lowered in ("read", "read_file", "view"):
        view.kind = "read"
        path = _first_str(args, "path", "file_path", "filePath")
        extras = [f"{key} {args[key]}" for key in ("offset", "limit") if isinstance(args.get(key), int)]
        view.summary = relative_path(path, cwd) + (f" ({', '.join(extras)})" if extras else "")
        # Highlighted where it shows at once; a folded remainder is plain (pygments is the cost of a page).
        view.output = fold_text(text, lambda chunk: highlighter.file(chunk, path), escape_text)
    elif lowered in ("edit", "str_replace", "edit_file", "multiedit"):
        view.kind = "edit"
        path = _first_str(args, "path", "file_path", "filePath")
        view.summary = relative_path(path, cwd)
        stored = result.details.get("diff") if result is not None else None
        view.diff = _stored_diff(stored) if isinstance(stored, str) and stored.strip() else _edits_diff(args, path)
        view.diff_stat = _diff_stat(view.diff) if view.diff else ""
        if len(view.diff) > FOLD_AFTER_LINES:
            view.diff, view.diff_rest = view.diff[:PREVIEW_LINES], view.diff[PREVIEW_LINES:]
        view.output = fold_text(text)
    elif lowered in ("write", "write_file", "create_file"):
        view.kind = "write"
        path = _first_str(args, "path", "file_path", "filePath")
        view.summary = relative_path(path, cwd)
        content = _first_str(args, "content", "text", "file_text", "contents", "data")
        if content:
            view.input = fold_text(content, lambda chunk: highlighter.file(chunk, path), escape_text)
        view.output = fold_text(text)
    elif lowered in ("task", "subagent", "agent", "spawn_agent"):
        view.kind = "task"
        view.summary = _first_str(args, "description", "agent", "subagent_type", "name")
        prompt = _first_str(args, "task", "prompt", "instructions")
        if not prompt and isinstance(args.get("tasks"), list):
            prompt = json_text(args["tasks"])
        view.input = fold_text(prompt) if prompt else None
        view.arguments = None if prompt else highlighter.code(json_text(call.arguments), "json")
        view.output = fold_text(text)
    else:
        # Any other tool is named by its main argument, as its tree row is (grep's pattern, a URL).
        view.summary = tool_subject(name, call.arguments, cwd)
        view.arguments = highlighter.code(json_text(call.arguments), "json")
        view.output = fold_text(text, ansi_to_html)
    if view.arguments is None and call.arguments and not _shows_arguments(view):
        # A known tool called with arguments its renderer does not read: show them as they are.
        view.arguments = highlighter.code(json_text(call.arguments), "json")
    if result is not None and result.frame is not None:
        view.frame = frame_view(result.frame)
        if view.frame is not None:
            view.output = None
    if text and ("artifact://" in text or "agent://" in text):
        view.attachments = attachments(text)
    return view


def _shows_arguments(view: ToolView) -> bool:
    """Whether a specialised view found what it needs in the arguments."""
    if view.kind == "edit":
        return bool(view.summary and view.diff)
    if view.kind == "write":
        return bool(view.summary and view.input)
    if view.kind == "task":
        return view.input is not None
    return bool(view.summary)
