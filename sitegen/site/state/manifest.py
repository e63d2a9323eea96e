"""The build manifest: what each page was built from, so a rebuild renders only what changed."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from sitegen import __version__
from sitegen.errors import SitegenError
from sitegen.fileio import open_regular, replace_file, replacing, set_aside
from sitegen.gcpause import collector_paused
from sitegen.site.state.details import details_base
from sitegen.site.state.records import SessionRecord
from sitegen.site.state.shape import conforms

__all__ = ["MANIFEST_PATH", "ManifestEntry", "SiteManifest", "SiteStateError", "build_stamp", "content_hash"]

log = logging.getLogger("sitegen.site")

MANIFEST_PATH = ".sitegen/manifest.json"
# 2: usage kept as per-(model, day) sums, keys and rows as JSON text (sitegen.site.state.records.UsageLog).
# 3: typed prompts, terms, tool calls, activity and speed in a file per session (sitegen.site.state.details).
# 4: those in a file per session and page that reads them.
FORMAT = 4


class SiteStateError(SitegenError):
    """The site's build state is broken and cannot even be moved aside."""


def content_hash(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open_regular(path) as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _tuple_as_list(value: object) -> object:
    """orjson writes plain tuples but not NamedTuples (usage groups): write those as arrays too."""
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} to the manifest")


@dataclass(slots=True)
class ManifestEntry:
    fingerprint: list[int]  # size, mtime_ns, mtime_ns of the artifacts/audit beside it
    hash: str
    key: str
    project_slug: str
    page: str
    record: SessionRecord | None = None  # None when the session could not be rendered
    problem: str | None = None
    # What made the page (sitegen's version, templates, assets: build_stamp): a build stopped half
    # way through a full rebuild keeps the pages it made with the new ones.
    made_by: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "hash": self.hash,
            "key": self.key,
            "project_slug": self.project_slug,
            "page": self.page,
            "record": None if self.record is None else self.record.to_json(),
            "problem": self.problem,
            "made_by": self.made_by,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], made_by: str = "") -> ManifestEntry:
        record = data.get("record")
        return cls(
            fingerprint=list(data["fingerprint"]),
            hash=str(data["hash"]),
            key=str(data["key"]),
            project_slug=str(data["project_slug"]),
            page=str(data["page"]),
            record=SessionRecord.from_json(record) if record else None,
            problem=data.get("problem"),
            made_by=str(data.get("made_by") or made_by),
        )


# What each part of a manifest holds (sitegen.site.state.shape checks them before the build trusts them).
_TOP: dict[str, Any] = {
    "version": str,
    "templates": str,
    "static": str,
    "sessions": dict[str, dict[str, Any]],
    "projects": dict[str, list[Any]],
    "complete": bool,
    "indexed": list[str],
    "unnamed": dict[str, str],
}
_OPTIONAL = frozenset({"projects", "complete", "indexed", "unnamed"})
_ENTRY: dict[str, Any] = {
    "fingerprint": list[int],
    "hash": str,
    "key": str,
    "project_slug": str,
    "page": str,
    "record": SessionRecord | None,
    "problem": str | None,
    "made_by": str,
}
_ENTRY_OPTIONAL = frozenset({"record", "problem", "made_by"})


def _wrong_value(data: dict[str, Any]) -> str | None:
    """Where the manifest holds something of the wrong type (or lacks something), if anywhere."""
    for name, hint in _TOP.items():
        if name not in data:
            if name not in _OPTIONAL:
                return f"{name} (missing)"
        elif not conforms(data[name], hint):
            return name
    for source, entry in data["sessions"].items():
        for name, hint in _ENTRY.items():
            if name not in entry:
                if name not in _ENTRY_OPTIONAL:
                    return f"sessions[{source!r}].{name} (missing)"
            elif not conforms(entry[name], hint):
                return f"sessions[{source!r}].{name}"
        if len(entry["fingerprint"]) != 3:
            return f"sessions[{source!r}].fingerprint"
    return None


class _Digest(Protocol):
    """What the manifest needs of a hashlib object (its type, hashlib._Hash, is private)."""

    def update(self, data: bytes, /) -> None: ...
    def hexdigest(self) -> str: ...


def _digest_start() -> _Digest:
    """What this version of sitegen wrote, in short: another version's manifest never matches.
    SHA-256, not BLAKE2: CPUs hash it in hardware (half the time for a 3 MB manifest here)."""
    return hashlib.sha256(__version__.encode() + b"\0")


def _digest(payload: bytes) -> str:
    digest = _digest_start()
    digest.update(payload)
    return digest.hexdigest()[:32]


def _digest_path(path: Path) -> Path:
    return path.with_name(path.name + ".digest")


def _read_digest(path: Path) -> str | None:
    try:
        with open_regular(_digest_path(path)) as handle:
            return handle.read(64).decode("ascii", "replace")
    except OSError:
        return None


def build_stamp(version: str, templates: str, static: str) -> str:
    """What a page was made with: a change of any of them renders it again."""
    return f"{version}/{templates}/{static}"


@dataclass(slots=True)
class SiteManifest:
    """Per source path, what its page was built from; plus the build inputs that invalidate everything."""

    version: str = ""
    templates: str = ""
    static: str = ""
    sessions: dict[str, ManifestEntry] = field(default_factory=dict)
    # Per project page, the totals it shows: fork copies are counted once across projects, so a
    # change in one project can change another's totals, and that page must be written again.
    projects: dict[str, list[Any]] = field(default_factory=dict)
    # False while a build is under way (its progress saved as it goes): the index pages and search
    # still show the build before, and `indexed` names the sessions the search index is behind on.
    complete: bool = True
    indexed: list[str] = field(default_factory=list)
    # Session files whose names are not UTF-8 (shown with U+FFFD for the bytes that are not): they
    # cannot have a page or a manifest entry, but the problems page lists them. Name -> problem.
    unnamed: dict[str, str] = field(default_factory=dict)

    @property
    def stamp(self) -> str:
        return build_stamp(self.version, self.templates, self.static)

    @classmethod
    def load(cls, site_dir: Path) -> SiteManifest:
        """The previous build's manifest, or an empty one (a full build) when there is none. One that
        cannot be read, is cut short, has a wrong value or is of another format is set aside (with
        a warning), so that the build starts afresh instead of failing on it again and again."""
        path = site_dir / MANIFEST_PATH
        try:
            with open_regular(path) as handle:
                raw = handle.read()
        except FileNotFoundError:
            return cls()
        except OSError as error:
            return cls._set_aside(path, f"cannot be read ({error.strerror or error})")
        try:
            with collector_paused():
                data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return cls._set_aside(path, "is not whole JSON")
        if not isinstance(data, dict):
            return cls._set_aside(path, "is not a JSON object")
        if data.get("format") != FORMAT:
            return cls._set_aside(path, f"is of another format ({data.get('format')!r}, not {FORMAT})")
        # A manifest this version wrote, unchanged since (its digest beside it), has the right shape:
        # checking every value again was a tenth of a one-session rebuild.
        wrong = None if _digest(raw) == _read_digest(path) else _wrong_value(data)
        if wrong is not None:
            return cls._set_aside(path, f"has a wrong value at {wrong}")
        with collector_paused():
            manifest = cls._from_json(data)
        for entry in manifest.sessions.values():
            if entry.record is not None:
                entry.record.details_base = str(details_base(site_dir, entry.key))
        return manifest

    @classmethod
    def _set_aside(cls, path: Path, reason: str) -> SiteManifest:
        try:
            target = set_aside(path)
        except OSError as error:
            raise SiteStateError(
                f"The site's manifest {path} {reason}, and cannot be moved aside ({error.strerror or error}); "
                "delete it to build the site again"
            ) from None
        log.warning("The site's manifest %s; set aside as %s, and the site is built again", f"{path} {reason}", target)
        return cls()

    @classmethod
    def _from_json(cls, data: dict[str, Any]) -> SiteManifest:
        made_by = build_stamp(data["version"], data["templates"], data["static"])
        return cls(
            version=data["version"],
            templates=data["templates"],
            static=data["static"],
            sessions={k: ManifestEntry.from_json(v, made_by) for k, v in data["sessions"].items()},
            projects={str(k): list(v) for k, v in data.get("projects", {}).items()},
            complete=data.get("complete", True) is not False,
            indexed=[str(key) for key in data.get("indexed", [])],
            unnamed=dict(data.get("unnamed", {})),
        )

    def save(self, site_dir: Path, encoded: dict[str, tuple[ManifestEntry, bytes]] | None = None) -> None:
        """Written as it is made, an entry at a time (the bytes orjson gives the whole, and their digest):
        made whole first, at 2,000 sessions the manifest's text was another 56 MB of the build's peak.
        `encoded` keeps each entry's bytes from one save to the next of manifests with the same stamp
        (a build's checkpoints): an entry that is the same object as last time is not encoded again."""
        path = site_dir / MANIFEST_PATH
        digest = _digest_start()
        # Renamed into place but not synced, like the pages it describes: a manifest that survived a
        # crash they did not would call lost pages up to date. Self-checking: a manifest a crash left
        # as zeros is not JSON, and is set aside on load.
        with replacing(path, self_checking=True) as handle:

            def put(chunk: bytes) -> None:
                handle.write(chunk)
                digest.update(chunk)

            head = {"format": FORMAT, "version": self.version, "templates": self.templates, "static": self.static}
            put(orjson.dumps(head)[:-1] + b',"sessions":{')
            for number, key in enumerate(sorted(self.sessions)):
                entry = self.sessions[key]
                kept = encoded.get(key) if encoded is not None else None
                if kept is not None and kept[0] is entry:
                    text = kept[1]
                else:
                    text = orjson.dumps(key) + b":" + orjson.dumps(self._entry_json(entry), default=_tuple_as_list)
                    if encoded is not None:
                        encoded[key] = (entry, text)
                put(b"," * (number > 0) + text)
            tail = {
                "projects": {k: self.projects[k] for k in sorted(self.projects)},
                "complete": self.complete,
                "indexed": sorted(self.indexed),
                "unnamed": self.unnamed,
            }
            put(b"}," + orjson.dumps(tail, default=_tuple_as_list)[1:])
        replace_file(_digest_path(path), digest.hexdigest()[:32])

    def _entry_json(self, entry: ManifestEntry) -> dict[str, Any]:
        data = entry.to_json()
        if data["made_by"] == self.stamp:
            del data["made_by"]  # as the manifest's own (all of them, once a build is complete)
        return data

    def records(self) -> list[SessionRecord]:
        return [e.record for e in self.sessions.values() if e.record is not None]

    def defects(self) -> list[tuple[str, str]]:
        """(file, defect) of each part a rendered session's page could not show (sitegen.site.state.records)."""
        return sorted((s, d) for s, e in self.sessions.items() if e.record is not None for d in e.record.defects)

    def problems(self) -> list[tuple[str, str]]:
        """(file, problem) of each session file that has no page, named files included."""
        listed = [(source, e.problem) for source, e in self.sessions.items() if e.problem]
        return sorted([*listed, *self.unnamed.items()])
