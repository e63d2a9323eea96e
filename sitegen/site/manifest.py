"""The build manifest: what each page was built from, so a rebuild renders only what changed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sitegen.fileio import replace_file
from sitegen.gcpause import collector_paused
from sitegen.site.records import SessionRecord

__all__ = ["MANIFEST_PATH", "ManifestEntry", "SiteManifest", "build_stamp", "content_hash"]

MANIFEST_PATH = ".sitegen/manifest.json"
# 2: usage kept as per-(model, day) sums, keys and rows as JSON text (sitegen.site.records.UsageLog).
FORMAT = 2


def content_hash(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
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
            "record": self.record,
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

    @property
    def stamp(self) -> str:
        return build_stamp(self.version, self.templates, self.static)

    @classmethod
    def load(cls, site_dir: Path) -> SiteManifest:
        """The previous build's manifest, or an empty one (a full build) when missing or unreadable."""
        try:
            with collector_paused():
                return cls._from_json(orjson.loads((site_dir / MANIFEST_PATH).read_bytes()))
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return cls()

    @classmethod
    def _from_json(cls, data: Any) -> SiteManifest:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return cls()
        made_by = build_stamp(data["version"], data["templates"], data["static"])
        return cls(
            version=data["version"],
            templates=data["templates"],
            static=data["static"],
            sessions={k: ManifestEntry.from_json(v, made_by) for k, v in data["sessions"].items()},
            projects={str(k): list(v) for k, v in data.get("projects", {}).items()},
            complete=data.get("complete", True) is not False,
            indexed=[str(key) for key in data.get("indexed", [])],
        )

    def save(self, site_dir: Path) -> None:
        data = {
            "format": FORMAT,
            "version": self.version,
            "templates": self.templates,
            "static": self.static,
            "sessions": {k: self._entry_json(self.sessions[k]) for k in sorted(self.sessions)},
            "projects": {k: self.projects[k] for k in sorted(self.projects)},
            "complete": self.complete,
            "indexed": sorted(self.indexed),
        }
        # Renamed into place but not synced, like the pages it describes: a manifest that survived a
        # crash they did not would call lost pages up to date.
        replace_file(site_dir / MANIFEST_PATH, orjson.dumps(data, default=_tuple_as_list))

    def _entry_json(self, entry: ManifestEntry) -> dict[str, Any]:
        data = entry.to_json()
        if data["made_by"] == self.stamp:
            del data["made_by"]  # as the manifest's own (all of them, once a build is complete)
        return data

    def records(self) -> list[SessionRecord]:
        return [e.record for e in self.sessions.values() if e.record is not None]

    def problems(self) -> list[tuple[str, str]]:
        return sorted((source, e.problem) for source, e in self.sessions.items() if e.problem)
