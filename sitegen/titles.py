"""Plain-text titles and one-line snippets: how every page, listing and search result names a session or entry."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "PATH_CHARS",
    "TITLE_CHARS",
    "clip",
    "clip_path",
    "first_line",
    "first_line_of",
    "is_file_tool",
    "is_slash_command",
    "plain_text",
    "relative_path",
    "session_title",
    "snippet",
    "tool_subject",
]

# A path in a row is at most this many characters: the page shortens it further in its middle to fit.
PATH_CHARS = 160
# A title or a snippet is at most this many characters, an ellipsis included.
TITLE_CHARS = 80

# Block syntax at the start of a line: heading marks, quote marks, list bullets and numbers, task boxes.
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)")
_HEADING_TAIL = re.compile(r"\s+#+\s*$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")
_RULE = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_TABLE_DIVIDER = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
# The characters a fence, a rule or a table divider can start with, and a list item ("" is never one).
_LINE_MARKS = frozenset("`~-*_|:")
_ITEM_MARKS = frozenset("-*+")
# Inline syntax: images and links keep their text, code spans their code, emphasis its words.
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:[^)\n]*)\)|\[([^\]\n]+)\]\[[^\]\n]*\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^>\s]+)>")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
# Single _ emphasis only at word edges, so snake_case names keep their underscores. Each branch starts
# with its mark and looks behind it after: a pattern that starts by looking behind is tried at every
# character of the line (seven times slower on a long first line).
_EMPHASIS = re.compile(r"\*(?<![\w*]\*)(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|_(?<!\w_)(?=\S)(.+?)(?<=\S)_(?!\w)")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_ESCAPE = re.compile(r"\\([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
_TABLE_PIPES = re.compile(r"\s*\|\s*")
_KEPT = re.compile("\x00(\\d+)\x00")
# A slash command typed alone: "/mode", "/model gpt-4o", "/skill:review"; a path is not one.
_SLASH_COMMAND = re.compile(r"/[A-Za-z][\w:-]*(?:\s+\S+)?")


def clip(text: str, limit: int = TITLE_CHARS) -> str:
    """Text on one line, at most limit characters: cut at a word boundary where one is near, with "…"."""
    return _cut(" ".join(text.split()), limit)


def _cut(line: str, limit: int) -> str:
    """clip of a line whose words are one space apart already."""
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit)
    if cut < limit * 2 // 3:  # one long word (a URL, a path): cut inside it
        cut = limit - 1
    return line[:cut].rstrip(" ,.;:") + "…"


def clip_path(path: str, limit: int = PATH_CHARS) -> str:
    """A path on one line, at most limit characters: a long one loses the middle of its folders, never
    its file name (rows that all read "packages/coding-agent/src/tui/user-…" cannot be told apart)."""
    line = " ".join(path.split())
    if len(line) <= limit:
        return line
    folders, slash, name = line.rpartition("/")
    if not slash or len(name) + 2 >= limit:
        return "…" + line[-(limit - 1) :]
    keep = limit - len(name) - 2
    return folders[: keep - keep // 2] + "…" + folders[len(folders) - keep // 2 :] + "/" + name


def _inline(line: str) -> str:
    """One line of markdown as the words a reader sees."""
    # Code spans and backslash escapes are literal: set aside first, put back last.
    kept: list[str] = []

    def keep(text: str) -> str:
        kept.append(text)
        return f"\x00{len(kept) - 1}\x00"

    line = line.replace("\x00", "")
    if "`" in line:
        line = _CODE_SPAN.sub(lambda m: keep(m.group(2).strip() or m.group(2)), line)
    if "\\" in line:
        line = _ESCAPE.sub(lambda m: keep(m.group(1)), line)
    if "[" in line:
        line = _IMAGE.sub(r"\1", line)
        line = _LINK.sub(lambda m: m.group(1) or m.group(2), line)
    if "<" in line:
        line = _AUTOLINK.sub(r"\1", line)
    if "*" in line or "_" in line:
        if "**" in line or "__" in line:  # snake_case names have single ones
            line = _STRONG.sub(r"\2", line)
        line = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), line)
    if "~~" in line:
        line = _STRIKE.sub(r"\1", line)
    if kept:
        line = _KEPT.sub(lambda m: kept[int(m.group(1))], line)
    return line


def _block(line: str) -> str | None:
    """A line without its block marks; None for a line that shows no words (a rule, a fence, a divider)."""
    # Each mark is its line's first character after blanks: a line of words (most lines) skips the patterns.
    mark = line.lstrip()[:1]
    if not mark:
        return line
    if mark in _LINE_MARKS and (_FENCE.match(line) or _RULE.match(line) or _TABLE_DIVIDER.match(line)):
        return None
    if mark == ">":
        line = _QUOTE.sub("", line)
        mark = line.lstrip()[:1]
    if mark == "#" and _HEADING.match(line):
        line = _HEADING_TAIL.sub("", _HEADING.sub("", line))
        mark = line.lstrip()[:1]
    if mark in _ITEM_MARKS or mark.isdigit():
        line = _LIST_ITEM.sub("", line)
        mark = line.lstrip()[:1]
    if mark == "|":
        line = _TABLE_PIPES.sub(" ", line)
    return line


def plain_text(markdown: str) -> str:
    """The whole text as plain words on one line: markdown marks dropped, code kept, whitespace collapsed."""
    words: list[str] = []
    for raw in markdown.splitlines():
        line = _block(raw)
        if line is not None and line.strip():
            words.append(_inline(line))
    return " ".join(" ".join(words).split())


# How far into a text its first line is looked for before all of it is split into lines: a row names
# a 35 KB prompt or a heredoc by its first words, and splitting the rest took most of the row's time.
_HEAD_CHARS = 2048


def _lines(text: str) -> Iterable[str]:
    """text.splitlines(), the lines of its first _HEAD_CHARS first: a caller that stops early never
    splits the rest of a long text."""
    return text.splitlines() if len(text) <= _HEAD_CHARS else _head_first(text)


def _head_first(text: str) -> Iterator[str]:
    """A long text's lines: the head's, then the rest's. The head's last line may go on past the cut,
    so it comes from the whole text."""
    head = text[:_HEAD_CHARS].splitlines()
    # Every line but the last ends inside the head ("\r\n" too: its "\n" is before the cut).
    yield from head[:-1]
    yield from text.splitlines()[len(head) - 1 :]


# How much of a line is read for its words: the inline patterns scan from each unclosed opener to the
# line's end, so a 30 KB first line of "*a " took 6 s. A snippet shows 80 characters; past this, a mark
# whose span crosses the cut stays as it is written.
_LINE_CHARS = 2048


def first_line(markdown: str) -> str:
    """The first line that shows words, as plain text (of its first _LINE_CHARS characters)."""
    for raw in _lines(markdown):
        if not raw.strip():
            continue
        if len(raw) > _LINE_CHARS:
            cut = raw.rfind(" ", _LINE_CHARS // 2, _LINE_CHARS)
            raw = raw[: cut if cut != -1 else _LINE_CHARS]
        line = _block(raw)
        if line is None:
            continue
        text = _one_spaced(_inline(line))
        if text:
            return text
    return ""


def _one_spaced(text: str) -> str:
    """The text's words one space apart, as " ".join(text.split()) puts them. A line of words usually is
    already: no blank but the space is printable, so a printable text without two spaces or one at an
    end is."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


def snippet(markdown: str, limit: int = TITLE_CHARS) -> str:
    """The first line of a message as plain text, at most limit characters."""
    return _cut(first_line(markdown), limit)  # its words are one space apart already


def is_slash_command(text: str) -> bool:
    """A prompt that is only a command to the agent ("/mode", "/model gpt-4o"), not words to the model."""
    return _SLASH_COMMAND.fullmatch(text.strip()) is not None


def session_title(name: str | None, prompts: Iterable[str], replies: Iterable[str] = (), fallback: str = "") -> str:
    """A session's title: its name, else its first prompt that is not only a slash command, else the first
    reply, else the fallback (the file name). Plain text, one line, at most TITLE_CHARS; never empty."""
    if name and (title := snippet(name)):
        return title
    for texts in (prompts, replies):
        for text in texts:
            if not is_slash_command(text) and (title := snippet(text)):
                return title
    return clip(fallback) or "(untitled session)"


def relative_path(path: str, cwd: str) -> str:
    """A path as the session's directory sees it: relative when inside it, as written otherwise."""
    if not cwd or not path.startswith("/"):
        return path
    base = cwd.rstrip("/")
    if path == base:
        return "."
    if base and path.startswith(base + "/"):
        return path[len(base) + 1 :]
    return path


# Tool names by what they do; agents name the same tool differently.
_SHELL_TOOLS = frozenset({"bash", "shell", "exec", "run_command", "execute_command", "python", "js"})
_FILE_TOOLS = frozenset(
    {"read", "read_file", "view", "write", "write_file", "create_file", "edit", "str_replace", "edit_file", "multiedit"}
)
_SEARCH_TOOLS = frozenset({"grep", "find", "glob", "rg", "search", "ls", "list_files"})
_TASK_TOOLS = frozenset({"task", "subagent", "agent", "spawn_agent"})
_PATH_KEYS = ("path", "file_path", "filePath", "file")
_COMMAND_KEYS = ("command", "cmd", "code", "script")
_PATTERN_KEYS = ("pattern", "query", "regex", "glob", "path")


def _first_str(args: Mapping[str, Any], keys: Iterable[str]) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _first_value(args: Mapping[str, Any]) -> str:
    """The first argument of an unknown tool, as short text."""
    for value in args.values():
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            return str(value)
    return ""


def tool_subject(name: str, arguments: Any, cwd: str = "") -> str:
    """What a tool call was about, on one line: the command, the path, the pattern, the task."""
    args: Mapping[str, Any] = arguments if isinstance(arguments, dict) else {}
    lowered = name.lower()
    if lowered in _SHELL_TOOLS:
        subject = _command_line(_first_str(args, _COMMAND_KEYS), cwd)
    elif lowered in _FILE_TOOLS:
        subject = relative_path(_first_str(args, _PATH_KEYS), cwd)
    elif lowered in _SEARCH_TOOLS:
        subject = _first_str(args, _PATTERN_KEYS)
        where = _first_str(args, ("path", "dir", "directory"))
        if subject and where and where != subject:
            subject = f"{subject} in {relative_path(where, cwd)}"
    elif lowered in _TASK_TOOLS:
        agent = _first_str(args, ("agent", "subagent_type", "name"))
        what = _first_str(args, ("description", "task", "prompt"))
        if not what and isinstance(args.get("tasks"), list):
            count = len(args["tasks"])
            what = f"{count} task{'s' if count != 1 else ''}"
        subject = f"{agent}: {what}" if agent and what else agent or what
    else:
        subject = _first_value(args) if args else (arguments if isinstance(arguments, str) else "")
    if lowered in _FILE_TOOLS:
        return clip_path(first_line_of(subject))
    return clip(first_line_of(subject), TITLE_CHARS)


def is_file_tool(name: str) -> bool:
    """Whether a tool is named by the file it reads or writes (its row's text is a path)."""
    return name.lower() in _FILE_TOOLS


# A command that starts by changing directory: "cd /work/app && npm test".
_CD_PREFIX = re.compile(r"cd\s+(\"[^\"]+\"|'[^']+'|\S+)\s*(?:&&|;)\s*")


def _command_line(command: str, cwd: str) -> str:
    """A command's first line; a leading cd into the session's directory is dropped, one below it is
    made relative, so the row says what was run."""
    line = first_line_of(command)
    match = _CD_PREFIX.match(line)
    if match is None or not cwd:
        return line
    target = relative_path(match.group(1).strip("\"'"), cwd)
    rest = line[match.end() :]
    if target == ".":
        return rest or line
    return line if target.startswith("/") else f"cd {target} && {rest}"


def first_line_of(text: str) -> str:
    """The first non-blank line of plain text (a command, an argument), stripped."""
    for line in _lines(text):
        if line.strip():
            return line.strip()
    return ""
