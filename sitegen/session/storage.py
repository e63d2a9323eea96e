"""Where session files live: the storage interface a writer needs, on disk or in memory, and atomic writes."""

from __future__ import annotations

import codecs
import contextlib
import errno
import hashlib
import os
import stat as stat_module
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from sitegen.fileio import open_regular
from sitegen.session.blobs import BLOB_REF_PREFIX

__all__ = [
    "BlobSink",
    "FileSessionStorage",
    "MemoryBlobStore",
    "MemorySessionStorage",
    "SessionStorage",
    "SessionStorageWriter",
    "StorageStat",
    "atomic_write_bytes",
]

StrPath = str | os.PathLike[str]

# Session files are UTF-8, but a damaged file may not be: surrogateescape carries its bytes
# through a read and a rewrite unchanged instead of replacing them.
_ENCODING = "utf-8"
_ERRORS = "surrogateescape"


@dataclass(frozen=True, slots=True)
class StorageStat:
    """The little a writer or a session list needs to know about a stored file."""

    size: int
    mtime_ns: int


class SessionStorageWriter(Protocol):
    """An append handle on one session file; the first error is kept and raised again."""

    def write_line(self, line: str) -> None: ...
    def flush(self) -> None: ...
    def fsync(self) -> None: ...
    def close(self) -> None: ...
    def error(self) -> OSError | None: ...


class SessionStorage(Protocol):
    """Every file operation the session writer uses; errors are OSErrors, as from the real filesystem."""

    def ensure_dir(self, path: StrPath) -> None: ...
    def exists(self, path: StrPath) -> bool: ...
    def read_text(self, path: StrPath) -> str: ...
    def read_text_prefix(self, path: StrPath, max_bytes: int) -> str: ...
    def write_text(self, path: StrPath, text: str) -> None: ...
    def rename(self, source: StrPath, target: StrPath) -> None: ...
    def unlink(self, path: StrPath) -> None: ...
    def stat(self, path: StrPath) -> StorageStat: ...
    def list_files(self, folder: StrPath, suffix: str = "") -> list[Path]: ...
    def open_writer(self, path: StrPath) -> SessionStorageWriter: ...


class BlobSink(Protocol):
    """Where externalized image bytes go: BlobStore on disk, MemoryBlobStore in memory."""

    def put(self, data: bytes) -> str: ...


def _decode_prefix(data: bytes) -> str:
    """Decode a byte prefix, dropping a multi-byte character the cut left incomplete."""
    decoder = codecs.getincrementaldecoder(_ENCODING)(errors=_ERRORS)
    return decoder.decode(data, final=False)


def _fsync_dir(folder: Path) -> None:
    # Directories cannot be opened for fsync on Windows; the rename is as durable as it gets there.
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: StrPath, data: bytes) -> None:
    """Replace a file's contents so readers see the old file or the new one, never a mix."""
    target = Path(path)
    folder = target.parent
    try:
        mode = stat_module.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp makes 0600 files: keep a rewritten file's mode, and sessions stay private.
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_dir(folder)


class _FileWriter:
    """Appends lines to a real file through one buffered handle."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._handle: BinaryIO | None = open(path, "ab")  # noqa: SIM115 - held open across appends
        self._error: OSError | None = None

    def _live(self) -> BinaryIO:
        if self._error is not None:
            raise self._error
        if self._handle is None:
            raise ValueError(f"writer for {self._path} is closed")
        return self._handle

    def _failed(self, error: OSError) -> None:
        if self._error is None:
            self._error = error

    def write_line(self, line: str) -> None:
        handle = self._live()
        try:
            handle.write(line.encode(_ENCODING, _ERRORS) + b"\n")
        except OSError as error:
            self._failed(error)
            raise

    def flush(self) -> None:
        handle = self._live()
        try:
            handle.flush()
        except OSError as error:
            self._failed(error)
            raise

    def fsync(self) -> None:
        handle = self._live()
        try:
            handle.flush()
            os.fsync(handle.fileno())
        except OSError as error:
            self._failed(error)
            raise

    def close(self) -> None:
        """Close even after an error, then raise the first error seen (earlier or from the close)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError as error:
                self._failed(error)
        if self._error is not None:
            raise self._error

    def error(self) -> OSError | None:
        return self._error


class FileSessionStorage:
    """The real filesystem; whole-file writes are atomic."""

    def ensure_dir(self, path: StrPath) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)

    def exists(self, path: StrPath) -> bool:
        return Path(path).exists()

    def read_text(self, path: StrPath) -> str:
        with open_regular(path) as handle:
            return handle.read().decode(_ENCODING, _ERRORS)

    def read_text_prefix(self, path: StrPath, max_bytes: int) -> str:
        with open_regular(path) as handle:
            return _decode_prefix(handle.read(max_bytes))

    def write_text(self, path: StrPath, text: str) -> None:
        atomic_write_bytes(path, text.encode(_ENCODING, _ERRORS))

    def rename(self, source: StrPath, target: StrPath) -> None:
        os.replace(source, target)

    def unlink(self, path: StrPath) -> None:
        os.unlink(path)

    def stat(self, path: StrPath) -> StorageStat:
        info = os.stat(path)
        return StorageStat(size=info.st_size, mtime_ns=info.st_mtime_ns)

    def list_files(self, folder: StrPath, suffix: str = "") -> list[Path]:
        """Files directly in a folder whose names end with suffix, sorted; none for a missing folder."""
        try:
            with os.scandir(folder) as listing:
                names = [e.name for e in listing if e.name.endswith(suffix) and _is_file(e)]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [Path(folder) / name for name in sorted(names)]

    def open_writer(self, path: StrPath) -> SessionStorageWriter:
        return _FileWriter(Path(path))


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a link loop: is_file() raises where Path.is_file() says False
        return False


def _key(path: StrPath) -> str:
    return os.path.normpath(os.fspath(path))


def _missing(path: StrPath) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))


@dataclass(slots=True)
class _MemoryFile:
    text: str
    mtime_ns: int


class _MemoryWriter:
    """Appends lines to a MemorySessionStorage file; flush and fsync have nothing to do."""

    def __init__(self, storage: MemorySessionStorage, path: str) -> None:
        self._storage = storage
        self._path = path
        self._closed = False

    def write_line(self, line: str) -> None:
        if self._closed:
            raise ValueError(f"writer for {self._path} is closed")
        self._storage._append(self._path, line + "\n")

    def flush(self) -> None:
        return None

    def fsync(self) -> None:
        return None

    def close(self) -> None:
        self._closed = True

    def error(self) -> OSError | None:
        return None


class MemorySessionStorage:
    """Session files in a dict, for tests and sessions that should never touch the disk."""

    def __init__(self) -> None:
        self._files: dict[str, _MemoryFile] = {}
        self._dirs: set[str] = {_key(os.sep)}
        self._last_mtime = 0

    def _tick(self) -> int:
        # Strictly increasing, so "most recent" ordering holds even within one clock tick.
        self._last_mtime = max(time.time_ns(), self._last_mtime + 1)
        return self._last_mtime

    def _need_parent(self, key: str) -> None:
        if os.path.dirname(key) not in self._dirs:
            raise _missing(key)

    def _append(self, key: str, text: str) -> None:
        current = self._files.get(key)
        if current is None:
            self._need_parent(key)
            current = self._files[key] = _MemoryFile("", 0)
        current.text += text
        current.mtime_ns = self._tick()

    def ensure_dir(self, path: StrPath) -> None:
        key = _key(path)
        created: list[str] = []
        while key not in self._dirs:
            if key in self._files:
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), key)
            created.append(key)
            key = os.path.dirname(key)
        self._dirs.update(created)

    def exists(self, path: StrPath) -> bool:
        key = _key(path)
        return key in self._files or key in self._dirs

    def _file(self, path: StrPath) -> _MemoryFile:
        found = self._files.get(_key(path))
        if found is None:
            raise _missing(path)
        return found

    def read_text(self, path: StrPath) -> str:
        return self._file(path).text

    def read_text_prefix(self, path: StrPath, max_bytes: int) -> str:
        data = self._file(path).text.encode(_ENCODING, _ERRORS)[:max_bytes]
        return _decode_prefix(data)

    def write_text(self, path: StrPath, text: str) -> None:
        key = _key(path)
        self._need_parent(key)
        self._files[key] = _MemoryFile(text, self._tick())

    def rename(self, source: StrPath, target: StrPath) -> None:
        moved = self._file(source)
        target_key = _key(target)
        self._need_parent(target_key)
        del self._files[_key(source)]
        self._files[target_key] = moved

    def unlink(self, path: StrPath) -> None:
        self._file(path)
        del self._files[_key(path)]

    def stat(self, path: StrPath) -> StorageStat:
        found = self._file(path)
        return StorageStat(size=len(found.text.encode(_ENCODING, _ERRORS)), mtime_ns=found.mtime_ns)

    def list_files(self, folder: StrPath, suffix: str = "") -> list[Path]:
        """Files directly in a folder whose names end with suffix, sorted; none for a missing folder."""
        folder_key = _key(folder)
        names = [
            os.path.basename(key) for key in self._files if os.path.dirname(key) == folder_key and key.endswith(suffix)
        ]
        return [Path(folder) / name for name in sorted(names)]

    def open_writer(self, path: StrPath) -> SessionStorageWriter:
        key = _key(path)
        if key not in self._files:
            self._need_parent(key)
            self._files[key] = _MemoryFile("", self._tick())
        return _MemoryWriter(self, key)


class MemoryBlobStore:
    """Content-addressed blobs in a dict, with the same refs as the on-disk BlobStore."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        self.blobs.setdefault(digest, data)
        return BLOB_REF_PREFIX + digest

    def get(self, digest: str) -> bytes | None:
        return self.blobs.get(digest)
