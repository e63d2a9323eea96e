"""Fingerprinted copies of static/ in the site's assets/ folder, and the hashes that invalidate a build."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitegen.fileio import remove_file, replace_file
from sitegen.resources import resource_dir
from sitegen.site.search.spec import spec_script

__all__ = ["ASSETS_DIR", "folder_hash", "publish_assets", "remove_stale_assets"]

ASSETS_DIR = "assets"
# Only these kinds of static file are published; anything else in static/ is a source, not an asset.
_PUBLISHED = (".css", ".js")
# Served by `sitegen watch` only, never part of a built site (nor of what invalidates one).
_SERVER_ONLY = frozenset({"reload.js"})


def folder_hash(folder: Path) -> str:
    """A hash over every file's relative name and bytes: a template or asset change rebuilds all pages."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        if path.name in _SERVER_ONLY:
            continue
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def publish_assets(site_dir: Path) -> dict[str, str]:
    """Copy each static asset to assets/<stem>.<hash><ext>; return name -> site-relative path."""
    target = site_dir / ASSETS_DIR
    target.mkdir(parents=True, exist_ok=True)
    published: dict[str, str] = {}
    for source in sorted(resource_dir("static").iterdir()):
        if not source.is_file() or source.suffix not in _PUBLISHED or source.name in _SERVER_ONLY:
            continue
        data = source.read_bytes()
        name = f"{source.stem}.{hashlib.sha256(data).hexdigest()[:10]}{source.suffix}"
        path = target / name
        if not path.exists():
            replace_file(path, data)
        published[source.name] = f"{ASSETS_DIR}/{name}"
    # The search specification (static/search-spec.json) as a script: the page splits queries by it.
    published["search-spec.js"] = _publish(target, "search-spec.js", spec_script())
    return published


def _publish(target: Path, source_name: str, data: bytes) -> str:
    stem, _, suffix = source_name.rpartition(".")
    name = f"{stem}.{hashlib.sha256(data).hexdigest()[:10]}.{suffix}"
    if not (target / name).exists():
        replace_file(target / name, data)
    return f"{ASSETS_DIR}/{name}"


def remove_stale_assets(site_dir: Path, published: dict[str, str]) -> None:
    """Delete assets no page refers to any more (after the pages that used them were rewritten)."""
    keep = {Path(p).name for p in published.values()}
    for stale in (site_dir / ASSETS_DIR).iterdir():
        if stale.is_file() and stale.name not in keep:
            remove_file(stale)
