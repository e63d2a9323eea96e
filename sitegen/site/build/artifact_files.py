"""Tool outputs too big for a site page: each written once beside the page as a script, loaded when opened."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath

import orjson
from markupsafe import Markup

from sitegen.fileio import remove_file, replace_file
from sitegen.site.state.jobs import relative_url

__all__ = ["ArtifactFiles"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class ArtifactFiles:
    """The scripts of one page's big outputs, in `<page>/artifacts/`: `window.sitegen.artifact(url, html)` each.
    A file is named by its content's hash, so an unchanged output is not written again, and the ones a
    new render of the page no longer names are pruned."""

    def __init__(self, site_dir: Path, page: str) -> None:
        self.site_dir = site_dir
        self.page = page
        self.folder = PurePosixPath(page).with_suffix("") / "artifacts"
        self.written: set[str] = set()

    def write(self, url: str, html: Markup) -> str:
        """Write the output's script (unless it is there already); return its URL relative to the page."""
        body = b"window.sitegen.artifact(" + orjson.dumps(url) + b"," + orjson.dumps(str(html)) + b");\n"
        digest = hashlib.blake2b(body, digest_size=8).hexdigest()
        name = f"{_UNSAFE.sub('-', url.split('://', 1)[-1])[:60]}.{digest}.js"
        path = self.site_dir / self.folder / name
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, body)
        self.written.add(name)
        return relative_url(self.page, str(self.folder / name))

    def prune(self) -> None:
        """Remove the scripts of outputs the page no longer names."""
        folder = self.site_dir / self.folder
        if not folder.is_dir():
            return
        for path in folder.iterdir():
            if path.is_file() and path.name not in self.written:
                remove_file(path)
        if not self.written:
            folder.rmdir()
