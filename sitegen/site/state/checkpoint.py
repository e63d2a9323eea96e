"""A build's progress saved as it goes (the manifest with the pages finished so far), and what a
build that was stopped leaves behind cleared up by the next one."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from pathlib import Path

from sitegen.site.state.manifest import ManifestEntry, SiteManifest

__all__ = ["Checkpoints", "sweep_temporaries"]


def _seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


# At least this long between two saves of the manifest during a build (SITEGEN_CHECKPOINT_S sets it:
# the fault tests save after every page, so that a build they stop has always saved some)...
CHECKPOINT_S = _seconds("SITEGEN_CHECKPOINT_S", 0.5)
# ...and at least this many times as long as the last save took, so saving stays a small part of it.
COST_FACTOR = 20
# sitegen.fileio.replacing's temporary files; a process killed while writing one leaves it behind.
_TEMPORARY = re.compile(r"\.sitegen-\d+-[0-9a-f]+\.tmp")


class Checkpoints:
    """Saves what a build has finished, every so often, so a build stopped at any moment loses at
    most the last second of its work. What is saved keeps the last build's entry for every session
    not yet rendered again (its page is still the old one, and still linked), and is marked
    incomplete: the next build writes the index pages and the search index again in any case."""

    def __init__(self, site_dir: Path, before: SiteManifest) -> None:
        self.site_dir = site_dir
        # A copy: the build goes on to change the manifest it loaded.
        self.before = SiteManifest(
            before.version, before.templates, before.static, dict(before.sessions), dict(before.projects)
        )
        self.before.indexed = list(before.indexed)
        self._last = time.monotonic()
        self._cost = 0.0
        # Each entry's bytes as the last save wrote them: a save encodes only the sessions finished
        # since (every save writes them all; encoding them all again made the saves quadratic).
        self._encoded: dict[str, tuple[ManifestEntry, bytes]] = {}

    def due(self) -> bool:
        return time.monotonic() - self._last >= max(CHECKPOINT_S, COST_FACTOR * self._cost)

    def save(self, current: dict[str, ManifestEntry], indexed: Iterable[str]) -> None:
        """Save now: `current` is each finished session's entry; `indexed`, the search keys whose
        entries were stored again (the search index is behind on them until the build ends)."""
        started = time.monotonic()
        before = self.before
        partial = SiteManifest(
            version=before.version,
            templates=before.templates,
            static=before.static,
            sessions={**before.sessions, **current},
            projects=before.projects,
            complete=False,
            indexed=sorted({*before.indexed, *indexed}),
        )
        partial.save(self.site_dir, self._encoded)
        self._last = time.monotonic()
        self._cost = self._last - started

    def done(self) -> None:
        """No more saves this build: the entries' bytes kept for them (the manifest's size, 56 MB at
        2,000 sessions) are let go before the site's pages are made."""
        self._encoded = {}

    @property
    def kept_bytes(self) -> int:
        """How many bytes of encoded entries are kept for the next save."""
        return sum(len(text) for _, text in self._encoded.values())


def sweep_temporaries(site_dir: Path) -> int:
    """Delete the temporary files of writes that never finished (a build killed in the middle of
    one); returns how many there were."""
    removed = 0
    for folder, _dirs, files in os.walk(site_dir):
        for name in files:
            if _TEMPORARY.fullmatch(name):
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    continue
                removed += 1
    return removed
