"""Write pi-family sessions: append entries to the tree, defer persistence, truncate and externalize."""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import os
import secrets
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import orjson

from sitegen.errors import NotASession, PersistError
from sitegen.session.blobs import BlobStore, is_blob_ref, store_dirs_for_session
from sitegen.session.entries import CURRENT_VERSION, Entry, Header, is_header
from sitegen.session.migrate import migrate
from sitegen.session.storage import (
    BlobSink,
    FileSessionStorage,
    MemoryBlobStore,
    MemorySessionStorage,
    SessionStorage,
    SessionStorageWriter,
)

__all__ = [
    "BLOB_EXTERNALIZE_THRESHOLD",
    "MAX_PERSIST_CHARS",
    "TRUNCATION_NOTICE",
    "SessionWriter",
    "iso_timestamp",
    "prepare_entry_for_persistence",
    "session_file_name",
]

log = logging.getLogger("sitegen.writer")

MAX_PERSIST_CHARS = 500_000
TRUNCATION_NOTICE = "[Session persistence truncated large content]"
_TRUNCATION_SUFFIX = "\n\n" + TRUNCATION_NOTICE
BLOB_EXTERNALIZE_THRESHOLD = 1024
# A cut signature is worse than none: providers reject it, so it is cleared instead.
_SIGNATURE_KEYS = frozenset({"thinkingSignature", "thoughtSignature", "textSignature"})
# Streaming leftovers that only matter while a response is arriving.
_TRANSIENT_KEYS = frozenset({"partialJson", "jsonlEvents"})

_BASE_KEYS = frozenset({"type", "id", "parentId", "timestamp"})

Clock = Callable[[], datetime]
IdFactory = Callable[[], str]


def iso_timestamp(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds and a Z, as the agents write it."""
    utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def session_file_name(timestamp: str, session_id: str) -> str:
    """`<timestamp with : and . as ->_<id>.jsonl`, the agents' session file name."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


# --- preparing entries for disk -------------------------------------------------------------------


def _truncate(value: str) -> str:
    return value[: MAX_PERSIST_CHARS - len(_TRUNCATION_SUFFIX)] + _TRUNCATION_SUFFIX


def _decode_image(data: str) -> bytes | None:
    """The bytes of strict base64 that encodes back to the same string, else None."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    # Rehydration re-encodes the bytes; anything that would not come back identical stays inline.
    return raw if base64.b64encode(raw).decode("ascii") == data else None


def _is_data_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith("data:image/") and ";base64," in value


def _externalize_block(block: dict[str, Any], blobs: BlobSink) -> dict[str, Any]:
    """A copy of a content block with its inline image moved to the blob store, when it qualifies."""
    if block.get("type") == "image":
        data = block.get("data")
        if isinstance(data, str) and len(data) >= BLOB_EXTERNALIZE_THRESHOLD and not is_blob_ref(data):
            raw = _decode_image(data)
            if raw is not None:
                return {**block, "data": blobs.put(raw)}
        return block
    image_url = block.get("image_url")
    if _is_data_url(image_url):
        return {**block, "image_url": blobs.put(str(image_url).encode("utf-8"))}
    if isinstance(image_url, dict) and _is_data_url(image_url.get("url")):
        url = str(image_url["url"])
        return {**block, "image_url": {**image_url, "url": blobs.put(url.encode("utf-8"))}}
    return block


def _prepare(value: Any, key: str | None, blobs: BlobSink | None) -> Any:
    if isinstance(value, str):
        if len(value) <= MAX_PERSIST_CHARS:
            return value
        return "" if key in _SIGNATURE_KEYS else _truncate(value)
    if isinstance(value, list | tuple):
        items = list(value)
        if key == "content" and blobs is not None:
            # Before truncation, so a large image is moved out whole rather than cut.
            items = [_externalize_block(item, blobs) if isinstance(item, dict) else item for item in items]
        return [_prepare(item, None, blobs) for item in items]
    if isinstance(value, dict):
        prepared = {k: _prepare(v, k, blobs) for k, v in value.items() if k not in _TRANSIENT_KEYS}
        content = prepared.get("content")
        if "lineCount" in prepared and isinstance(content, str) and content is not value.get("content"):
            prepared["lineCount"] = content.count("\n") + 1
        return prepared
    return value


def prepare_entry_for_persistence(entry: Entry, blob_store: BlobSink | None) -> Entry:
    """A copy of an entry fit for disk: large strings cut, transient fields gone, images in the blob store.

    Without a blob store, images stay inline.
    """
    prepared: Entry = _prepare(entry, None, blob_store)
    return prepared


def _dumps(record: Mapping[str, Any]) -> str:
    return orjson.dumps(record).decode("utf-8")


# --- the writer -----------------------------------------------------------------------------------


def _parse_line(line: str) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


class SessionWriter:
    """The write side of a session: an append-only entry tree, a leaf pointer, and the file behind it.

    Nothing is written until the session holds an assistant message (or flush(force=True)); then the
    whole session is written at once and later entries are appended.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: Header,
        entries: Sequence[Entry] = (),
        *,
        storage: SessionStorage | None = None,
        blob_store: BlobSink | None = None,
        clock: Clock | None = None,
        entry_ids: IdFactory | None = None,
        on_storage: bool = False,
    ) -> None:
        self.path = Path(path)
        self.header = header
        self.entries: list[Entry] = list(entries)
        self.storage: SessionStorage = storage if storage is not None else FileSessionStorage()
        self.blob_store = _default_blob_store(self.storage, self.path) if blob_store is None else blob_store
        self._clock = clock or _utc_now
        self._entry_ids = entry_ids or (lambda: secrets.token_hex(4))
        self.by_id: dict[str, Entry] = {}
        for entry in self.entries:
            if isinstance(entry.get("id"), str):
                # A repeated id names its last record, as in pi's and omp's index (and open_session).
                self.by_id[entry["id"]] = entry
        last_id = self.entries[-1].get("id") if self.entries else None
        self.leaf_id: str | None = last_id if isinstance(last_id, str) else None
        self._has_assistant = any(_is_assistant(entry) for entry in self.entries)
        # How much of the session the stored file already holds.
        self._on_storage = on_storage
        self._written = len(self.entries) if on_storage else 0
        # Lines of an opened file that are not entries, kept so a rewrite loses no bytes:
        # lines before the header (the omp title slot), and (entries before it, line) after it.
        self._preamble: list[str] = []
        self._unparsed: list[tuple[int, str]] = []
        self._needs_newline = False
        self._writer: SessionStorageWriter | None = None
        self._error: PersistError | None = None

    @classmethod
    def create(
        cls,
        sessions_dir: str | os.PathLike[str],
        *,
        cwd: str,
        storage: SessionStorage | None = None,
        blob_store: BlobSink | None = None,
        clock: Clock | None = None,
        entry_ids: IdFactory | None = None,
        session_id: str | None = None,
        parent_session: str | None = None,
        title: str | None = None,
    ) -> SessionWriter:
        """A new, empty session in sessions_dir, named after its start time and id (not yet written)."""
        clock = clock or _utc_now
        header = _new_header(clock, cwd, session_id, parent_session, title)
        path = Path(sessions_dir) / session_file_name(header["timestamp"], header["id"])
        return cls(path, header, storage=storage, blob_store=blob_store, clock=clock, entry_ids=entry_ids)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        cwd: str | None = None,
        storage: SessionStorage | None = None,
        blob_store: BlobSink | None = None,
        clock: Clock | None = None,
        entry_ids: IdFactory | None = None,
    ) -> SessionWriter:
        """Open a session file to append to it, leaf at its last entry; a missing or empty file starts anew.

        An older format version is migrated and the file rewritten atomically, since v3 entries cannot
        be appended to it. Blob refs stay refs: the writer never needs the image bytes back.
        """
        storage = storage if storage is not None else FileSessionStorage()
        clock = clock or _utc_now
        try:
            text = storage.read_text(path) if storage.exists(path) else ""
        except OSError as error:
            raise PersistError(f"Cannot read session file {path}: {error}") from error
        options: dict[str, Any] = {
            "storage": storage,
            "blob_store": blob_store,
            "clock": clock,
            "entry_ids": entry_ids,
        }
        if not text.strip():
            return cls(path, _new_header(clock, cwd or os.getcwd(), None, None, None), **options)
        preamble, header, entries, unparsed = _parse_session_text(text, path)
        writer = cls(path, header, entries, on_storage=True, **options)
        writer._preamble = preamble
        writer._unparsed = unparsed
        # A half-written last line must not swallow the first appended entry.
        writer._needs_newline = not text.endswith("\n")
        if migrate(header, writer.entries).changed:
            writer.rewrite()
        return writer

    @property
    def session_id(self) -> str:
        return str(self.header["id"])

    @property
    def is_persisted(self) -> bool:
        """Whether the stored file holds every entry in memory."""
        return self._on_storage and self._written == len(self.entries)

    def append_entry(self, entry_type: str, fields: Mapping[str, Any]) -> str:
        """Append one entry of any type under the leaf, make it the leaf, persist it; return its id.

        Fields whose value is None are left out, as the agents leave out absent optional fields.
        """
        self._check()
        if not _BASE_KEYS.isdisjoint(fields):
            raise ValueError(f"entry fields cannot set {sorted(_BASE_KEYS.intersection(fields))}")
        entry_id = self._new_entry_id()
        entry: Entry = {
            "type": entry_type,
            "id": entry_id,
            "parentId": self.leaf_id,
            "timestamp": iso_timestamp(self._clock()),
        }
        entry.update((key, value) for key, value in fields.items() if value is not None)
        self.entries.append(entry)
        self.by_id[entry_id] = entry
        self.leaf_id = entry_id
        self._has_assistant = self._has_assistant or _is_assistant(entry)
        self._persist(force=False)
        return entry_id

    def append_message(self, message: Mapping[str, Any]) -> str:
        return self.append_entry("message", {"message": dict(message)})

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self.append_entry("thinking_level_change", {"thinkingLevel": thinking_level})

    def append_model_change(self, model: str, role: str | None = None) -> str:
        return self.append_entry("model_change", {"model": model, "role": role})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        *,
        short_summary: str | None = None,
        details: Any = None,
        preserve_data: Any = None,
        from_extension: bool = False,
    ) -> str:
        fields = {
            "summary": summary,
            "shortSummary": short_summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
            "details": details,
            "preserveData": preserve_data,
            "fromExtension": from_extension,
        }
        return self.append_entry("compaction", fields)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        return self.append_entry("custom", {"customType": custom_type, "data": data})

    def append_custom_message(self, custom_type: str, content: Any, display: bool = True, details: Any = None) -> str:
        fields = {"customType": custom_type, "content": content, "display": display, "details": details}
        return self.append_entry("custom_message", fields)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Label an entry; None clears its label."""
        self._require(target_id)
        return self.append_entry("label", {"targetId": target_id, "label": label})

    def append_ttsr_injection(self, injected_rules: Sequence[str]) -> str:
        return self.append_entry("ttsr_injection", {"injectedRules": list(injected_rules)})

    def append_session_init(
        self, system_prompt: str, task: str, tools: Sequence[str], output_schema: Any = None
    ) -> str:
        fields = {
            "systemPrompt": system_prompt,
            "task": task,
            "tools": list(tools),
            "outputSchema": output_schema,
        }
        return self.append_entry("session_init", fields)

    def append_mode_change(self, mode: str, data: Any = None) -> str:
        return self.append_entry("mode_change", {"mode": mode, "data": data})

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an existing entry; the next append starts a new branch there."""
        self._check()
        self._require(entry_id)
        self.leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Clear the leaf, so the next append makes a new root."""
        self._check()
        self.leaf_id = None

    def branch_with_summary(
        self, target_id: str | None, summary: str, details: Any = None, from_extension: bool = False
    ) -> str:
        """Move the leaf to target_id (None: the root) and append a summary of the branch left behind."""
        self._check()
        if target_id is not None:
            self._require(target_id)
        self.leaf_id = target_id
        fields = {
            "fromId": "root" if target_id is None else target_id,
            "summary": summary,
            "details": details,
            "fromExtension": from_extension,
        }
        return self.append_entry("branch_summary", fields)

    def flush(self, *, force: bool = False) -> None:
        """Write what is pending and fsync it; force writes even a session with no assistant message yet."""
        self._check()
        self._persist(force=force)
        if self._writer is not None:
            self._guard(self._writer.flush)
            self._guard(self._writer.fsync)

    def rewrite(self) -> None:
        """Replace the stored file atomically with the session in memory (after edits to entries)."""
        self._check()
        if not self._on_storage and not self._has_assistant:
            return  # still deferred: the first write will carry the change
        self._close_writer()
        self._guard(self._write_whole)

    def set_title(self, title: str) -> None:
        """Name the session in its header (and title slot, if any), rewriting the file atomically."""
        self._check()
        self.header["title"] = title
        for index, line in enumerate(self._preamble):
            record = _parse_line(line)
            if isinstance(record, dict) and record.get("type") == "title":
                record["title"] = title
                record["updatedAt"] = iso_timestamp(self._clock())
                self._preamble[index] = _dumps(record)
        self.rewrite()

    def close(self) -> None:
        """Flush what is pending and release the file; raise the first persistence error, if any."""
        if self._error is None:
            with contextlib.suppress(PersistError):  # latched, and raised below
                self.flush()
        try:
            self._close_writer()
        except OSError as error:
            if self._error is None:
                self._latch(error)
        self._check()

    def _new_entry_id(self) -> str:
        while True:
            entry_id = self._entry_ids()
            if entry_id not in self.by_id:
                return entry_id

    def _require(self, entry_id: str) -> None:
        if entry_id not in self.by_id:
            raise ValueError(f"Entry {entry_id} not found in session {self.session_id}")

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def _latch(self, error: Exception) -> PersistError:
        reason = " ".join(str(error).split()) or type(error).__name__
        self._error = PersistError(f"Cannot write session file {self.path}: {reason}")
        log.error("%s", self._error)
        return self._error

    def _fail(self, error: Exception) -> NoReturn:
        raise self._latch(error) from error

    def _guard(self, step: Callable[[], None]) -> None:
        """Run a storage step; its first failure is latched as the session's PersistError."""
        try:
            step()
        except (OSError, ValueError, TypeError) as error:
            # ValueError: a closed writer; TypeError: orjson meeting a value it cannot encode.
            self._fail(error)

    def _persist(self, *, force: bool) -> None:
        if not (self._has_assistant or force):
            return  # the seed's rule: a session that never got an answer is not worth a file
        if not self._on_storage:
            self._guard(self._write_whole)
        elif self._written < len(self.entries):
            self._guard(self._append_pending)

    def _render(self) -> str:
        lines = [*self._preamble, _dumps(self.header)]
        pending = sorted(self._unparsed, key=lambda item: item[0])
        at = 0
        for index, entry in enumerate(self.entries):
            while at < len(pending) and pending[at][0] <= index:
                lines.append(pending[at][1])
                at += 1
            lines.append(_dumps(prepare_entry_for_persistence(entry, self.blob_store)))
        lines.extend(line for _, line in pending[at:])
        return "".join(line + "\n" for line in lines)

    def _write_whole(self) -> None:
        self.storage.ensure_dir(self.path.parent)
        self.storage.write_text(self.path, self._render())
        self._on_storage = True
        self._written = len(self.entries)
        self._needs_newline = False

    def _append_pending(self) -> None:
        if self._writer is None:
            self._writer = self.storage.open_writer(self.path)
        writer = self._writer
        failure = writer.error()
        if failure is not None:
            raise failure
        if self._needs_newline:
            writer.write_line("")
            self._needs_newline = False
        while self._written < len(self.entries):
            entry = self.entries[self._written]
            writer.write_line(_dumps(prepare_entry_for_persistence(entry, self.blob_store)))
            self._written += 1
        # Readers (sitegen serve) watch the file: hand each batch to the OS without waiting for fsync.
        writer.flush()

    def _close_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


# --- helpers --------------------------------------------------------------------------------------


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _is_assistant(entry: Entry) -> bool:
    message = entry.get("message")
    return isinstance(message, Mapping) and entry.get("type") == "message" and message.get("role") == "assistant"


def _new_header(
    clock: Clock, cwd: str, session_id: str | None, parent_session: str | None, title: str | None
) -> Header:
    header: Header = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session_id or str(uuid.uuid4()),
        "timestamp": iso_timestamp(clock()),
        "cwd": cwd,
    }
    header.update((k, v) for k, v in (("title", title), ("parentSession", parent_session)) if v is not None)
    return header


def _default_blob_store(storage: SessionStorage, path: Path) -> BlobSink | None:
    """Blobs beside the sessions folder on disk, in memory for memory storage, else none (images inline)."""
    if isinstance(storage, MemorySessionStorage):
        return MemoryBlobStore()
    dirs = store_dirs_for_session(path, ())
    return BlobStore(dirs) if dirs else None


def _parse_session_text(
    text: str, path: str | os.PathLike[str]
) -> tuple[list[str], Header, list[Entry], list[tuple[int, str]]]:
    """Split a session file into lines before the header, the header, entries and unparsed lines."""
    preamble: list[str] = []
    header: Header | None = None
    entries: list[Entry] = []
    unparsed: list[tuple[int, str]] = []
    # Only \n ends a JSONL line; splitlines() would also cut at U+2028 and friends inside strings.
    for line in text.split("\n"):
        if not line.strip():
            continue
        record = _parse_line(line)
        if header is not None:
            if isinstance(record, dict):
                entries.append(record)
            else:
                unparsed.append((len(entries), line))
        elif isinstance(record, dict) and is_header(record):
            header = record
        elif isinstance(record, dict) and record.get("type") != "title":
            raise NotASession(f"Not a session file: {path} (first record is not a session header)")
        else:
            preamble.append(line)
    if header is None:
        raise NotASession(f"Not a session file: {path} (no session header)")
    return preamble, header, entries, unparsed
