"""A session's artifacts folder: tool output logs, subagent outputs and transcripts, artifact:// and agent://."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qs, unquote

from sitegen.errors import ArtifactError
from sitegen.fileio import open_regular, read_regular_file
from sitegen.session.entries import clip_nesting
from sitegen.session.load import read_header

__all__ = [
    "Artifact",
    "ArtifactFile",
    "SubagentTranscript",
    "artifacts_dir_for",
    "list_artifacts",
    "open_artifact",
    "open_output",
    "parse_query",
    "resolve_internal_url",
    "subagent_transcripts",
]

_ARTIFACT_NAME = re.compile(r"(\d+)\.([A-Za-z0-9_-]+)\.log")
_IDENT = re.compile(r"[A-Za-z0-9_-]+")
# Nested subagent folders deeper than this are not walked (and symlinked folders never are).
_MAX_DEPTH = 8
# What is read of one artifact or output at most: far more than a page shows, bounded for a runaway log.
MAX_READ_BYTES = 256 * 2**20
_MISSING = object()


@dataclass(frozen=True, slots=True)
class Artifact:
    """A full tool output kept beside the session as <id>.<tool>.log."""

    id: int
    tool: str
    path: Path
    size: int


@dataclass(frozen=True, slots=True)
class SubagentTranscript:
    """A subagent's own session file in the artifacts folder, with its .md output when there is one."""

    id: str  # the file stem: "Child" for Alpha/Child.jsonl
    qualified_id: str  # dot-joined through its parents, the agent:// form: "Alpha.Child"
    parent: str | None  # the parent's qualified id when the parent's transcript exists
    path: Path
    output: Path | None
    depth: int  # 0 for a direct child of the session


def artifacts_dir_for(session_path: str | os.PathLike[str]) -> Path | None:
    """The folder named like the session file without .jsonl; None for a name that leaves no folder
    name ("..jsonl" would make it the sessions folder itself, every other session its "subagent")."""
    path = Path(session_path)
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else ""
    return path.with_name(stem) if stem not in ("", ".", "..") else None


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda entry: entry.name)
    except OSError:
        return []


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a link loop: is_file() raises where Path.is_file() says False
        return False


def list_artifacts(directory: str | os.PathLike[str]) -> list[Artifact]:
    """The tool output logs in an artifacts folder, by numeric id; empty when the folder is missing."""
    found: list[Artifact] = []
    for entry in _entries(Path(directory)):
        match = _ARTIFACT_NAME.fullmatch(entry.name)
        if match is None or not _is_file(entry):
            continue
        try:
            size = entry.stat().st_size
        except OSError:
            continue
        found.append(Artifact(id=int(match.group(1)), tool=match.group(2), path=Path(entry.path), size=size))
    found.sort(key=lambda artifact: (artifact.id, artifact.tool))
    return found


def subagent_transcripts(directory: str | os.PathLike[str]) -> list[SubagentTranscript]:
    """Subagent session files (<AgentId>.jsonl, nested as Alpha/Child.jsonl), parents before children."""
    root = Path(directory)
    found: list[SubagentTranscript] = []
    _walk(root, root, (), None, found)
    return found


def _walk(
    root: Path,
    folder: Path,
    chain: tuple[str, ...],
    parent: str | None,
    found: list[SubagentTranscript],
) -> None:
    if len(chain) > _MAX_DEPTH:
        return
    entries = _entries(folder)
    folders = {e.name: e for e in entries if e.is_dir(follow_symlinks=False)}
    for entry in entries:
        if not entry.name.endswith(".jsonl") or not _is_file(entry):
            continue
        path = Path(entry.path)
        if read_header(path) is None:
            continue
        stem = entry.name[: -len(".jsonl")]
        qualified = ".".join((*chain, stem))
        found.append(
            SubagentTranscript(
                id=stem,
                qualified_id=qualified,
                parent=parent,
                path=path,
                output=_output_for(root, folder, stem, qualified),
                depth=len(chain),
            )
        )
        child_folder = folders.pop(stem, None)
        if child_folder is not None:
            _walk(root, Path(child_folder.path), (*chain, stem), qualified, found)
    # Folders without a transcript of their own may still hold nested ones.
    for name, entry in folders.items():
        _walk(root, Path(entry.path), (*chain, name), None, found)


def _output_for(root: Path, folder: Path, stem: str, qualified: str) -> Path | None:
    # omp writes a nested output either beside the transcript or as a dotted id at the top.
    for candidate in (folder / f"{stem}.md", root / f"{qualified}.md"):
        if candidate.is_file():
            return candidate
    return None


# ---------------------------------------------------------------------------------------------
# artifact:// and agent://


def resolve_internal_url(url: str, dirs: Sequence[Path]) -> str:
    """The text an artifact:// or agent:// URL names, looked up in the given artifacts folders."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ArtifactError(f"Not an internal URL: {url}")
    rest = rest.split("#", 1)[0]
    location, _, query = rest.partition("?")
    host, slash, path = location.partition("/")
    if scheme == "artifact":
        return _resolve_artifact(host, dirs)
    if scheme == "agent":
        return _resolve_agent(host, (slash + path) if slash else "", query, dirs)
    raise ArtifactError(f"Unsupported internal URL scheme: {scheme}://")


@dataclass(frozen=True, slots=True)
class _Listing:
    """What references are looked up in: an artifacts folder's names, read once."""

    names: frozenset[str]
    artifacts: dict[str, str]  # artifact id as written in the name -> the first such name, sorted
    available: tuple[int, ...]
    outputs: tuple[str, ...]  # subagent output ids (<id>.md), sorted
    # Names that were regular files, not links, when listed (the listing's file types, no stat each):
    # opened without following a link, they need no check of where a link leads.
    plain: frozenset[str]


# Folder -> (its mtime when listed, the listing). A page or an export looks up thousands of
# references in one folder of thousands of files: listing it for each took 20,000 getdents64 calls
# (4 s of system time) for one 50 MB session. A changed folder has a new mtime and is listed again.
_LISTINGS: dict[str, tuple[int, _Listing]] = {}
# A folder changed within this many nanoseconds of its listing may change again within the same
# mtime tick (coarse file systems): its listing is not kept.
_RACY_NS = 2_000_000_000


def _listing(folder: Path) -> _Listing | None:
    """The folder's listing, from the cache while its mtime is what it was; None when it is missing."""
    key = str(folder)
    try:
        mtime = os.stat(folder).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):
        _LISTINGS.pop(key, None)
        return None
    except OSError as error:
        raise ArtifactError(f"Cannot read {folder}: {error.strerror}") from None
    held = _LISTINGS.get(key)
    if held is not None and held[0] == mtime:
        return held[1]
    try:
        with os.scandir(folder) as listed:
            entries = list(listed)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise ArtifactError(f"Cannot read {folder}: {error.strerror}") from None
    names = sorted(entry.name for entry in entries)
    artifacts: dict[str, str] = {}
    for name in names:
        match = _ARTIFACT_NAME.fullmatch(name)
        if match is not None:
            artifacts.setdefault(match.group(1), name)
    listing = _Listing(
        frozenset(names),
        artifacts,
        tuple(sorted({int(number) for number in artifacts})),
        tuple(sorted({name[:-3] for name in names if name.endswith(".md")})),
        frozenset(entry.name for entry in entries if _is_plain(entry)),
    )
    if time.time_ns() - mtime > _RACY_NS:
        _LISTINGS[key] = (mtime, listing)
    return listing


def _is_plain(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


# Where a link can be refused as a file is opened (O_NOFOLLOW), a name the listing saw plain needs no look.
_REFUSES_LINKS = hasattr(os, "O_NOFOLLOW")


def _target(path: Path, plain: bool) -> Path:
    """What is opened for path: path itself when its folder's listing saw a plain file, else where it
    leads, resolved once. A link out of its folder is not followed, so what a page inlines (and share
    uploads) stays what the session's own folder holds; and as the target is opened without following a
    link (_open), a file swapped for a link since it was found is refused, not followed."""
    if plain and _REFUSES_LINKS:
        return path
    try:
        resolved = path.resolve()
        inside = path.parent.resolve() in resolved.parents
    except (OSError, RuntimeError) as error:  # RuntimeError: a link loop
        raise ArtifactError(f"Cannot read {path}: {error}") from None
    if not inside:
        raise ArtifactError(f"Cannot read {path}: it links outside {path.parent}")
    return resolved


def _still(path: Path, target: Path) -> Path:
    """target, when path still leads there: O_NOFOLLOW guards only a path's last name, so a link's
    target is looked up again right before each read (a folder on its way swapped for a link out of
    the session's folder since it was found is refused, not followed)."""
    if target != path and _target(path, False) != target:
        raise ArtifactError(f"Cannot read {path}: it changed since it was found")
    return target


def _open(path: Path, target: Path) -> BinaryIO:
    """path's file, opened at target (_target) without following a link; a FIFO, a device or a folder
    is refused (a FIFO would wait for a writer forever, /dev/zero never ends)."""
    try:
        return open_regular(_still(path, target), buffering=0, follow_links=False)
    except OSError as error:
        raise ArtifactError(f"Cannot read {path}: {error.strerror}") from None


def _read_text(path: Path, plain: bool) -> str:
    """A file's text (found as _target finds it, opened as _open opens it), at most MAX_READ_BYTES of it."""
    return _read_target(path, _target(path, plain))


def _read_target(path: Path, target: Path) -> str:
    try:
        data = read_regular_file(_still(path, target), MAX_READ_BYTES, follow_links=False)
    except OSError as error:
        raise ArtifactError(f"Cannot read {path}: {error.strerror}") from None
    text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_READ_BYTES:
        text += f"\n… [cut: the file is longer than {MAX_READ_BYTES // 2**20} MB]"
    return text


@dataclass(frozen=True, slots=True)
class ArtifactFile:
    """The file an artifact:// URL names, read only as far as it is shown: a page that carries the
    head and tail of a 20 MB build log, or only its name, need not read (and decode) all of it."""

    path: Path
    size: int  # in bytes
    # What is opened, each time without following a link (see _target): path, or where its link
    # led inside its folder when it was found.
    target: Path

    def text(self) -> str:
        return _read_target(self.path, self.target)

    def ends(self, head: int, tail: int) -> tuple[str, str]:
        """Its first head and last tail bytes (fewer when they overlap), as text cut at whole
        characters: UTF-8's continuation bytes are left off at either cut."""
        with _open(self.path, self.target) as handle:
            try:
                first = handle.read(head)
                handle.seek(max(len(first), self.size - tail))
                last = handle.read(tail)
            except OSError as error:
                raise ArtifactError(f"Cannot read {self.path}: {error.strerror}") from None
        return _decode_cut(first, at_end=True), _decode_cut(last, at_end=False)


def _decode_cut(data: bytes, at_end: bool) -> str:
    """Bytes cut out of UTF-8 text, as text: a character the cut split is dropped, not replaced."""
    if at_end:
        # The last character's lead byte and its continuations, when they are fewer than it needs.
        back = 0
        while back < min(4, len(data)) and data[-1 - back] & 0xC0 == 0x80:
            back += 1
        if back < len(data) and data[-1 - back] >= 0xC0 and back + 1 < _utf8_length(data[-1 - back]):
            data = data[: -1 - back]
    else:
        skip = 0
        while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
            skip += 1
        data = data[skip:]
    return data.decode("utf-8", errors="replace")


def _utf8_length(lead: int) -> int:
    return 4 if lead >= 0xF0 else 3 if lead >= 0xE0 else 2


def open_artifact(url: str, dirs: Sequence[Path]) -> ArtifactFile:
    """The file an artifact:// URL names, found as resolve_internal_url finds it, not yet read."""
    scheme, _, rest = url.partition("://")
    if scheme != "artifact":
        raise ArtifactError(f"Not an artifact:// URL: {url}")
    return _opened(*_artifact_path(rest.split("#", 1)[0].partition("?")[0].partition("/")[0], dirs))


def open_output(url: str, dirs: Sequence[Path]) -> ArtifactFile | None:
    """The file an artifact:// URL or a whole agent://<id> output names, found as resolve_internal_url
    finds it, not yet read; None for an agent:// URL that picks a part of its output (a path, ?q=),
    which only the whole text answers. A page that names a subagent's output without showing it (over
    its budget, --artifacts none) need not read it."""
    scheme, sep, rest = url.partition("://")
    if scheme != "agent" or not sep:
        return open_artifact(url, dirs)
    location, _, query = rest.split("#", 1)[0].partition("?")
    output_id, slash, path = location.partition("/")
    if (slash + path) not in ("", "/") or parse_qs(query, keep_blank_values=True).get("q"):
        return None
    folder, listing = _agent_folder(output_id, _agent_listings(output_id, dirs))
    name = f"{output_id}.md"
    return _opened(folder / name, name in listing.plain)


# Opening a file only for its size: never following a link, nor waiting on a FIFO.
_SIZE_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def _opened(path: Path, plain: bool) -> ArtifactFile:
    """The file, its size read from the open file; opened again (as _open opens it) when it is read.
    One its folder's listing saw as a plain file needs no other look (see _target). Only an open and
    an fstat, not open_regular's file object: a long session's page sizes thousands of files."""
    target = _target(path, plain)
    try:
        fd = os.open(target, _SIZE_FLAGS)
        try:
            status = os.fstat(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise ArtifactError(f"Cannot read {path}: {error.strerror}") from None
    if not stat.S_ISREG(status.st_mode):
        raise ArtifactError(f"Cannot read {path}: not a regular file")
    return ArtifactFile(path, status.st_size, target)


def _resolve_artifact(artifact_id: str, dirs: Sequence[Path]) -> str:
    return _read_text(*_artifact_path(artifact_id, dirs))


def _artifact_path(artifact_id: str, dirs: Sequence[Path]) -> tuple[Path, bool]:
    """The artifact's file, and whether its folder's listing saw it as a plain file."""
    if not artifact_id:
        raise ArtifactError("artifact:// URL requires a numeric ID: artifact://0")
    if not artifact_id.isascii() or not artifact_id.isdigit():
        raise ArtifactError(f"artifact:// ID must be numeric, got: {artifact_id}")
    if not dirs:
        raise ArtifactError("No session - artifacts unavailable")
    any_dir = False
    available: set[int] = set()
    for folder in dirs:
        listing = _listing(folder)
        if listing is None:
            continue
        any_dir = True
        name = listing.artifacts.get(artifact_id)
        if name is not None:
            path = folder / name
            plain = name in listing.plain
            if not plain and path.is_dir():
                raise ArtifactError(f"Artifact {artifact_id} resolved to a directory, not a file")
            return path, plain
        available.update(listing.available)
    if not any_dir:
        raise ArtifactError("No artifacts directory found")
    listed = ", ".join(str(n) for n in sorted(available)) or "none"
    raise ArtifactError(f"Artifact {artifact_id} not found. Available: {listed}")


def _agent_listings(output_id: str, dirs: Sequence[Path]) -> list[tuple[Path, _Listing]]:
    """The listings an agent:// output is looked up in."""
    if not dirs:
        raise ArtifactError("No session - agent outputs unavailable")
    listings = [(folder, names) for folder in dirs if (names := _listing(folder)) is not None]
    if not listings:
        raise ArtifactError("No artifacts directory found")
    if not output_id:
        raise ArtifactError("agent:// URL requires an output ID: agent://<id>")
    return listings


def _agent_folder(output_id: str, listings: list[tuple[Path, _Listing]]) -> tuple[Path, _Listing]:
    """The first folder that holds <output_id>.md, with its listing."""
    found = next(((folder, listing) for folder, listing in listings if f"{output_id}.md" in listing.names), None)
    if found is None:
        ids = sorted({output for _, listing in listings for output in listing.outputs})
        raise ArtifactError(f"Not found: {output_id}. Available: {', '.join(ids) or 'none'}")
    return found


def _resolve_agent(output_id: str, path: str, query: str, dirs: Sequence[Path]) -> str:
    listings = _agent_listings(output_id, dirs)
    q_values = parse_qs(query, keep_blank_values=True).get("q", [])
    q = q_values[0] if q_values else ""
    by_path = path not in ("", "/")
    if by_path and q:
        raise ArtifactError("agent:// URL cannot combine path extraction with ?q=")
    found, listing = _agent_folder(output_id, listings)
    text = _read_text(found / f"{output_id}.md", f"{output_id}.md" in listing.plain)
    if not by_path and not q:
        return text
    value = _load_json(found, output_id, text)
    tokens = _path_tokens(path) if by_path else parse_query(q)
    result = _apply(value, tokens)
    if result is _MISSING:
        return "null"
    try:
        return json.dumps(result, indent=2, ensure_ascii=False)
    except RecursionError:  # read, but deeper than the encoder reaches: shown clipped
        return json.dumps(clip_nesting(result), indent=2, ensure_ascii=False)


def _load_json(folder: Path, output_id: str, text: str) -> Any:
    # Newer omp also writes the structured result as <id>.json beside the markdown; prefer it.
    sidecar = folder / f"{output_id}.json"
    try:
        if sidecar.is_file():
            try:
                return json.loads(_read_text(sidecar, False))
            except ValueError:
                pass  # a partly written sidecar: fall back to the .md
        try:
            return json.loads(text)
        except ValueError as error:
            raise ArtifactError(f"Output {output_id} is not valid JSON: {error}") from None
    except RecursionError:
        raise ArtifactError(f"Output {output_id} is nested too deeply to query") from None


def _index(digits: str) -> int:
    """A list index from its digits; one too long for int() is past the end of any list anyway."""
    return int(digits) if len(digits) <= 18 else sys.maxsize


def _path_tokens(path: str) -> list[str | int]:
    """agent://id/a/0/b: each segment percent-decoded; all-digit segments index lists."""
    tokens: list[str | int] = []
    for segment in path.split("/"):
        if not segment:
            continue
        decoded = unquote(segment)
        tokens.append(_index(decoded) if decoded.isascii() and decoded.isdigit() else decoded)
    return tokens


def parse_query(query: str) -> list[str | int]:
    """A jq-like path (.a.b[0]["odd key"]) as keys and list indexes; raises ArtifactError when malformed."""
    text = query.strip()
    if text.startswith("."):
        text = text[1:]
    tokens: list[str | int] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == ".":
            i += 1
            continue
        if char == "[":
            close = text.find("]", i + 1)
            if close == -1:
                raise ArtifactError(f"Invalid query: missing ] in {query}")
            inner = text[i + 1 : close].strip()
            if not inner:
                raise ArtifactError(f"Invalid query: empty [] in {query}")
            if len(inner) >= 2 and inner[0] in "\"'" and inner[-1] == inner[0]:
                tokens.append(re.sub(r"\\([\"'\\])", r"\1", inner[1:-1]))
            elif inner.isascii() and inner.isdigit():
                tokens.append(_index(inner))
            else:
                tokens.append(inner)
            i = close + 1
            continue
        ident = _IDENT.match(text, i)
        if ident is None:
            raise ArtifactError(f"Invalid query: unexpected token '{char}' in {query}")
        tokens.append(ident.group(0))
        i = ident.end()
    return tokens


def _apply(value: Any, tokens: Sequence[str | int]) -> Any:
    """Walk keys and indexes; a miss anywhere is _MISSING, which renders as null."""
    current = value
    for token in tokens:
        if isinstance(token, int):
            if not isinstance(current, list) or token >= len(current):
                return _MISSING
            current = current[token]
        elif isinstance(current, dict):
            if token not in current:
                return _MISSING
            current = current[token]
        elif isinstance(current, list) and token.isascii() and token.isdigit() and _index(token) < len(current):
            current = current[_index(token)]
        else:
            return _MISSING
    return current
